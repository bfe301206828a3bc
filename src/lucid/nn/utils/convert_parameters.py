"""Flatten parameters into one vector and back (for second-order methods, line searches, model averaging)."""
from __future__ import annotations

from typing import Iterable

from ..._tensor import Tensor, _wrap


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor holding every parameter, flattened, in order (differentiable, like PyTorch's)."""
    from ...ops.shape import cat
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into ``parameters`` (their data is replaced; the objects stay)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected lucid.Tensor, but got: {type(vec).__name__}")
    flat = vec.mlx
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = _wrap(flat[pointer:pointer + n].reshape(tuple(param.shape)))
        pointer += n


__all__ = ["parameters_to_vector", "vector_to_parameters"]
