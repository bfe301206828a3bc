"""lucid.mps: PyTorch's ``torch.mps``, for MLX's Metal GPU (an Apple Silicon Mac). Without Metal, the calls that
need it raise PyTorch's RuntimeError and ``manual_seed`` does nothing, as PyTorch's. The random state is lucid's one
generator, which every device's random ops draw from."""
from __future__ import annotations

import mlx.core as _mx

from ._random import get_rng_state as _get_rng_state
from ._random import manual_seed as _manual_seed
from ._random import seed as _seed
from ._random import set_rng_state as _set_rng_state


def is_available() -> bool:
    """Whether MLX runs on a Metal GPU here."""
    return _mx.metal.is_available()


def _require(call: str) -> None:
    if not _mx.metal.is_available():
        raise RuntimeError(f"Cannot execute {call}() without MPS backend (lucid runs on MLX, which has no Metal GPU "
                           "here).")


def device_count() -> int:
    """1 on a Mac with Metal (MLX drives one GPU), else 0."""
    return 1 if _mx.metal.is_available() else 0


def synchronize() -> None:
    """Wait for MLX's queued work (a point where the user asked to wait: timing code)."""
    _require("deviceSynchronize")
    _mx.synchronize()


def manual_seed(seed: int) -> None:
    """Seed lucid's generator where Metal is (PyTorch's does nothing without it).

    :param seed: the seed, an integer in [-2**63, 2**64)."""
    if _mx.metal.is_available():
        _manual_seed(seed)


def seed() -> None:
    """Seed lucid's generator from the operating system's entropy."""
    _require("getDefaultGenerator")
    _seed()


def get_rng_state(device="mps"):
    """The state of lucid's generator (a Tensor), for ``set_rng_state``.

    :param device: accepted (lucid has one generator)."""
    _require("getDefaultGenerator")
    return _get_rng_state()


def set_rng_state(new_state, device="mps") -> None:
    """Restore the state ``get_rng_state`` returned.

    :param new_state: the state.
    :param device: accepted (lucid has one generator)."""
    _require("getDefaultGenerator")
    _set_rng_state(new_state)


def empty_cache() -> None:
    """Free MLX's cache of unused buffers."""
    _require("emptyCache")
    _mx.clear_cache()


def current_allocated_memory() -> int:
    """Bytes MLX holds in live arrays."""
    _require("getCurrentAllocatedMemory")
    return _mx.get_active_memory()


def driver_allocated_memory() -> int:
    """Bytes MLX holds, live and cached."""
    _require("getDriverAllocatedMemory")
    return _mx.get_active_memory() + _mx.get_cache_memory()


def recommended_max_memory() -> int:
    """The GPU's recommended working-set size in bytes, as Metal reports it."""
    _require("getRecommendedMaxMemory")
    return _mx.metal.device_info()["max_recommended_working_set_size"]
