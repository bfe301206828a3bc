"""``lucid.Generator``: a seedable source of randomness for samplers, ``random_split`` and data loaders.

A Generator holds its own MLX key, split once per draw, exactly like lucid's global generator (``lucid._random``).
Data loading needs index permutations as Python ints, so a draw turns one fresh key into a numpy seed and lets
numpy do the shuffling: this is host-side bookkeeping, not a tensor op, so evaluating the key here is fine.
"""
from __future__ import annotations

import os
import threading

import mlx.core as mx
import numpy as np

from ... import _dtype, _random
from ..._random import next_key
from ..._threads import adopt_thread, tolist

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed: a fresh Generator is deterministic, as there
_U64 = 1 << 64


class Generator:
    """A random number generator with its own state: ``Generator().manual_seed(0)`` makes the shuffles of a
    ``DataLoader(..., shuffle=True, generator=g)`` reproducible without touching lucid's global seed.

    :param device: accepted for PyTorch's signature (MLX's random draws are device independent).

    >>> import lucid
    >>> g = lucid.Generator().manual_seed(0)
    >>> g.initial_seed()
    0
    """

    def __init__(self, device="cpu"):
        self.device = _dtype.device(device)
        self._lock = threading.Lock()  # a Generator shared by threads: each draw's split is atomic
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> "Generator":
        """Reset the state from ``seed`` (an int in [-2**63, 2**64)); returns the generator."""
        seed = int(seed)
        if not -(1 << 63) <= seed < _U64:
            raise ValueError(f"Overflow when unpacking long long: seed {seed} is outside [-2**63, 2**64)")
        self._seed = seed % _U64  # negative seeds wrap, as in PyTorch
        self._key = mx.random.key(self._seed)
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The current state (a uint32 Tensor), for ``set_state``."""
        from ..._tensor import _wrap
        return _wrap(self._key)

    def set_state(self, new_state) -> "Generator":
        key = new_state.mlx if hasattr(new_state, "mlx") else mx.array(new_state)
        if key.shape != (2,):
            raise RuntimeError(f"Generator state must be a key of shape (2,), got shape {tuple(key.shape)}")
        self._key = key.astype(mx.uint32)
        return self

    def next_key(self) -> mx.array:
        """A fresh MLX key for one draw; the generator moves on."""
        adopt_thread()
        with self._lock:
            self._key, sub = mx.random.split(self._key)
        return sub

    def __repr__(self):
        return f"<lucid.Generator object, initial_seed={self._seed}>"


class DefaultGenerator(Generator):
    """``lucid.default_generator``: the global generator (``lucid.manual_seed``, ``lucid.get_rng_state``, the
    random ops called without ``generator=``) seen as a Generator, as PyTorch's ``torch.default_generator``."""

    def __init__(self):
        self.device = _dtype.device("cpu")

    def manual_seed(self, seed: int) -> "DefaultGenerator":
        _random.manual_seed(seed)
        return self

    def seed(self) -> int:
        return _random.seed()

    def initial_seed(self) -> int:
        return _random.initial_seed()

    def get_state(self):
        return _random.get_rng_state()

    def set_state(self, new_state) -> "DefaultGenerator":
        _random.set_rng_state(new_state)
        return self

    def next_key(self) -> mx.array:
        return _random.next_key()

    def __repr__(self):
        return "<lucid.default_generator>"


default_generator = DefaultGenerator()


def numpy_rng(generator: Generator | None) -> np.random.Generator:
    """A numpy generator seeded by one draw from ``generator``, or from lucid's global generator when it is None
    (so ``lucid.manual_seed`` makes the draw reproducible)."""
    key = next_key() if generator is None else generator.next_key()
    hi, lo = tolist(key)
    return np.random.default_rng((hi << 32) | lo)


def randperm(n: int, generator: Generator | None = None) -> list[int]:
    """A random permutation of range(n) as Python ints."""
    return numpy_rng(generator).permutation(n).tolist()
