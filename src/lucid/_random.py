"""lucid's random number generator: one MLX key, split for every random op. Keeping the key here (rather than
in MLX's global state) lets lucid save and restore it: ``get_rng_state`` / ``set_rng_state``, and checkpointing
replays the same dropout masks.

As PyTorch's default generator, it is shared by all threads: each draw splits the key under ``lock``, so
concurrent draws never reuse or lose a key (which thread gets which key depends on the scheduling; a thread that
needs reproducible draws uses its own ``lucid.Generator``). An RLock: ``lucid.compile`` holds it for a whole
step, whose trace draws keys itself."""
from __future__ import annotations

import os
import threading

import mlx.core as mx

from ._threads import adopt_thread

lock = threading.RLock()
_initial_seed = [int.from_bytes(os.urandom(8), "little")]  # PyTorch seeds its default generator from the OS too
_key = [mx.random.key(_initial_seed[0])]


def manual_seed(seed: int) -> None:
    """Seed lucid's random number generator (all of lucid's random ops draw from it). As PyTorch, any integer in
    [-2**63, 2**64) is a seed: a negative one counts as its 64-bit two's complement (-1 seeds as 2**64 - 1)."""
    seed = int(seed)
    if not -(1 << 63) <= seed < 1 << 64:
        raise ValueError("Overflow when unpacking long long")  # PyTorch's error for a seed outside 64 bits
    key = mx.random.key(seed % (1 << 64))
    with lock:
        _key[0] = key
        _initial_seed[0] = seed % (1 << 64)


def seed() -> int:
    """Seed lucid's generator from the operating system's entropy, as ``torch.seed()``; returns the seed."""
    s = int.from_bytes(os.urandom(8), "little")
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of lucid's generator: the last ``manual_seed``, or the one drawn from the OS at start."""
    return _initial_seed[0]


def next_key() -> mx.array:
    """A fresh key for one random op; the generator moves on."""
    adopt_thread()  # the split below is an op: it must land on the shared stream
    with lock:
        _key[0], sub = mx.random.split(_key[0])
    return sub


def get_rng_state():
    """The generator's state (a Tensor), for ``set_rng_state``."""
    from ._tensor import _wrap
    with lock:
        return _wrap(_key[0])


def set_rng_state(state) -> None:
    """Restore the global random state saved by ``get_rng_state``."""
    key = state.mlx if hasattr(state, "mlx") else mx.array(state)
    with lock:
        _key[0] = key
