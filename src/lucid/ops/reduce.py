"""Reductions: sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std, logsumexp, norm, softmax,
log_softmax. ``dim`` is an int or a tuple of ints (None means all), ``keepdim`` keeps reduced dims as size 1."""
from __future__ import annotations

__all__ = ["sum"]

import mlx.core as mx

from .._tensor import Tensor
from ._core import defop, methods


def _axes(dim, ndim: int):
    """PyTorch's ``dim`` (None, int, or tuple; negative allowed) as a tuple of MLX axes."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(d % ndim if ndim else 0 for d in dim)


def _unreduce(g, x, dim, keepdim):
    """Broadcast a reduced gradient back over the reduced axes of x."""
    if not keepdim and dim is not None and x.ndim:
        g = g.reshape(_kept_shape(x.shape, dim))
    return g.expand(x.shape)


def _kept_shape(shape, dim):
    axes = _axes(dim, len(shape))
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _sum_fwd(a, dim=None, keepdim=False):
    return mx.sum(a, axis=None if dim is None else _axes(dim, a.ndim), keepdims=keepdim)


_sum_all = defop("sum", _sum_fwd, vjp=lambda g, ans, x: g.expand(x.shape), save=None, node="SumBackward0")
_sum_dim = defop("sum", _sum_fwd, vjp=lambda g, ans, x, dim, keepdim: _unreduce(g, x, dim, keepdim), save=None,
                 node="SumBackward1")


def sum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001
    """Sum over ``dim`` (all elements when None)."""
    if dtype is not None:
        input = input.to(dtype)
    elif input.dtype == mx.bool_ or (mx.issubdtype(input.dtype, mx.integer) and input.dtype != mx.uint64):
        input = input.to(mx.int64)  # PyTorch sums integers and bools in int64
    if dim is None and not keepdim:
        return _sum_all(input)
    return _sum_dim(input, dim=dim, keepdim=keepdim)


methods(sum)
