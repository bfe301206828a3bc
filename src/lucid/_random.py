"""lucid's random number generator: one MLX key, split for every random op. Keeping the key here (rather than
in MLX's global state) lets lucid save and restore it: ``get_rng_state`` / ``set_rng_state``, and checkpointing
replays the same dropout masks."""
from __future__ import annotations

import os

import mlx.core as mx

_key = [mx.random.key(int.from_bytes(os.urandom(4), "little"))]


def manual_seed(seed: int) -> None:
    """Seed lucid's random number generator (all of lucid's random ops draw from it)."""
    _key[0] = mx.random.key(int(seed))


def next_key() -> mx.array:
    """A fresh key for one random op; the generator moves on."""
    _key[0], sub = mx.random.split(_key[0])
    return sub


def get_rng_state():
    """The generator's state (a Tensor), for ``set_rng_state``."""
    from ._tensor import _wrap
    return _wrap(_key[0])


def set_rng_state(state) -> None:
    _key[0] = state.mlx if hasattr(state, "mlx") else mx.array(state)
