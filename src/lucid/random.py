"""``lucid.random`` (PyTorch's ``torch.random``): the default generator's seed and state, and ``fork_rng``, which
runs a block on a copy of the generator's state so that the draws after it are those that would have come without
the block. lucid has one generator for every device (each random op splits its MLX key), so forking it forks all."""
from __future__ import annotations

import contextlib

from ._random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .utils.data._generator import Generator, default_generator

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
           "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type=None):
    """Save the generator's state, run the block, restore the state (also when the block raises).

    :param devices: accepted for PyTorch's signature: lucid's one generator serves every device.
    :param enabled: False runs the block without forking (draws inside it advance the generator).
    :param device_type: accepted for PyTorch's signature."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
