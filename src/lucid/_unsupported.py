"""Names PyTorch has and MLX has no counterpart for: importing them works, using them raises at once, naming what
is missing and what to do instead."""
from __future__ import annotations


def unsupported(name: str, why: str):
    """A callable (also usable as a class to instantiate or subclass-free decorator) that raises when called."""
    def fail(*args, **kwargs):
        raise NotImplementedError(f"{name} is not supported by lucid: {why}")
    fail.__name__ = fail.__qualname__ = name.rpartition(".")[2]
    fail.__doc__ = f"Not supported by lucid: {why}"
    return fail
