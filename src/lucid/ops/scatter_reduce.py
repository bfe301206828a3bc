"""Reducing writes and the ``*_scatter`` copies: ``scatter_reduce``, ``index_reduce`` (each with its in-place
``_`` form), ``masked_scatter``, ``put``, ``select_scatter``, ``slice_scatter`` and ``unravel_index``.

scatter_reduce and index_reduce are one op: ``base`` with ``src`` reduced (sum, prod, mean, amax, amin) into the
positions an advanced key names (along a dim for scatter_reduce, whole slices for index_reduce), starting from
base's values (``include_self=True``) or from the reduction's identity. Its gradients are PyTorch's, written with
lucid's ops (so they have gradients of their own): a sum passes and gathers the gradient, a mean divides it by the
count, amax/amin share it evenly among the values equal to the result, and prod divides the result by each factor
(computing the product of the others where a factor is 0). Every index is checked before MLX sees it
(``lucid._checks``: out-of-range values raise at the next evaluation and leave the input unchanged).
"""
from __future__ import annotations

__all__ = ["scatter_reduce", "index_reduce", "masked_scatter", "put", "select_scatter", "slice_scatter",
           "unravel_index"]

import warnings

import mlx.core as mx

from .._checks import check_later, checked_index
from .._dtype import dtype_name
from .._tensor import Tensor, _wrap
from . import elementwise as _ew
from ._core import data, declare, defop
from .elementwise import all_or_nothing
from .index import (_FULL, _along_index, _along_key, _check_along, _index, _index_add, _index_arg, _index_put,
                    _leading_part, _scalar_name, _slice_index, _take_flat)
from .shape import _size_arg, put_slices, wrap_dim

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce: str, dtype):
    """The value a reduction starts from when ``include_self=False``."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    info = mx.finfo(dtype) if mx.issubdtype(dtype, mx.floating) else mx.iinfo(dtype)
    if mx.issubdtype(dtype, mx.floating):
        return -float("inf") if reduce == "amax" else float("inf")
    return info.min if reduce == "amax" else info.max


def _hits(shape, key) -> mx.array:
    """How many values are written to each position."""
    return mx.zeros(shape, mx.int32).at[key].add(1)


def _reduce_fwd(base, src, key, reduce, include_self):
    src = src.astype(base.dtype)
    hits = _hits(base.shape, key)
    start = base if include_self else mx.where(hits > 0, mx.array(_identity(reduce, base.dtype), base.dtype), base)
    at = start.at[key]
    if reduce in ("sum", "mean"):
        out = at.add(src)
    elif reduce == "prod":
        out = at.multiply(src)
    else:
        out = at.maximum(src) if reduce == "amax" else at.minimum(src)
    if reduce != "mean":
        return out
    n = hits + 1 if include_self else mx.maximum(hits, 1)
    return out // n.astype(out.dtype) if mx.issubdtype(out.dtype, mx.integer) else out / n.astype(out.dtype)


def _count(base, key, include_self):
    """The number of values reduced into each position (a Tensor of base's dtype)."""
    hits = _hits(base.shape, key)
    return _wrap((hits + 1 if include_self else mx.maximum(hits, 1)).astype(data(base).dtype))


def _self_kept(g, base, key, include_self):
    """``g`` where base's own value took part in the result, else 0."""
    return g if include_self else _ew.where(_wrap(_hits(base.shape, key) > 0), 0.0, g)


def _base_vjp(g, ans, base, src, key, reduce, include_self):
    if reduce == "sum":
        return _self_kept(g, base, key, include_self)
    if reduce == "mean":
        return _self_kept(_ew.div(g, _count(base, key, include_self)), base, key, include_self)
    if reduce == "prod":
        nonzero_base = _ew.where(_ew.eq(base, 0), 1.0, base)
        others = _reduce(nonzero_base, src, key, reduce, include_self)
        return _self_kept(_ew.div(_ew.mul(g, others), nonzero_base), base, key, include_self)
    tie = _self_kept(_ew.eq(base, ans), base, key, include_self)
    return _ew.where(tie, _ew.div(g, _ties(ans, base, src, key, include_self)), 0.0)


def _src_vjp(g, ans, base, src, key, reduce, include_self):
    if reduce == "sum":
        return _index(g, key)
    if reduce == "mean":
        return _index(_ew.div(g, _count(base, key, include_self)), key)
    if reduce == "prod":
        zero = _ew.eq(src, 0)
        zeros_there = _index(_index_add(_ew.mul(g, 0.0), zero.to(g.dtype), key), key)
        single = _ew.logical_and(zero, _ew.eq(zeros_there, 1))
        others = _reduce(base, _ew.where(single, 1.0, src), key, reduce, include_self)
        return _ew.where(single, _index(_ew.mul(g, others), key),
                         _ew.div(_index(_ew.mul(g, ans), key), _ew.where(zero, 1.0, src)))
    tie = _ew.eq(src, _index(ans, key))
    return _ew.where(tie, _index(_ew.div(g, _ties(ans, base, src, key, include_self)), key), 0.0)


def _ties(ans, base, src, key, include_self) -> Tensor:
    """How many of the values reduced into each position equal the result there (amax/amin share the gradient
    evenly among them, as PyTorch's)."""
    own = _self_kept(_ew.eq(base, ans), base, key, include_self).to(ans.dtype)
    return _index_add(own, _ew.eq(src, _index(ans, key)).to(ans.dtype), key)


_reduce = defop("scatter_reduce", _reduce_fwd, vjp=(_base_vjp, _src_vjp), save="both")
_index_reduce_op = defop("index_reduce", _reduce_fwd, vjp=(_base_vjp, _src_vjp), save="both")


@all_or_nothing
def scatter_reduce(input, dim: int, index, src, reduce: str, *, include_self: bool = True) -> Tensor:
    """``input`` with each ``src[i][j]`` reduced into ``out[index[i][j]][j]`` (for dim 0) by ``reduce`` ("sum",
    "prod", "mean", "amax" or "amin"), starting from input's value (``include_self``) or without it. An integer
    mean rounds down, as PyTorch's."""
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if input.dtype != src.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    idx = _index_arg(index, "scatter_reduce", "scatter(): Expected dtype int32/int64 for index")
    if input.ndim == 0:
        return scatter_reduce(input.reshape(1), 0, idx.reshape(-1), src.reshape(-1), reduce,
                              include_self=include_self).reshape(())
    d = wrap_dim(dim, input.ndim)
    _check_along(input.shape, idx.shape, d, src.shape, what="self")
    key = _along_key(_along_index(idx, input.shape[d], d, "scatter_reduce"), d)
    return _reduce(input, _leading_part(src, idx.shape), key, reduce, include_self)


@all_or_nothing
def index_reduce(input, dim: int, index, source, reduce: str, *, include_self: bool = True) -> Tensor:
    """``input`` with the slices of ``source`` along ``dim`` reduced into the slices ``index`` (1-d) by ``reduce``
    ("prod", "mean", "amax" or "amin"), starting from input's values (``include_self``) or without them."""
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=2)
    if reduce not in _REDUCES[1:]:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    x, key, source, scalar = _slice_index(input, dim, index, source, "index_reduce_",
                                          "index_reduce_(): Expected dtype int32/int64 for index but got: {}")
    out = _index_reduce_op(x, source, key, reduce, include_self)
    return out.reshape(()) if scalar else out


# ---------------------------------------------------------------------------------------------------- masked, put
def masked_scatter(input, mask, source) -> Tensor:
    """``input`` with the positions where ``mask`` (bool, broadcast to input's shape) is True filled, in row-major
    order, with the first elements of ``source`` (which must have at least as many: checked at the next
    evaluation). The gradient of ``source`` is the gradient at those positions, of ``input`` the rest."""
    if mask.dtype != mx.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_scalar_name(mask.dtype)}")
    if input.dtype != source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_scalar_name(input.dtype)} and {_scalar_name(source.dtype)}")
    m = mx.broadcast_to(data(mask), mx.broadcast_shapes(tuple(mask.shape), tuple(input.shape)))
    if m.shape != tuple(input.shape):
        input = input.expand(m.shape)
    flat = m.reshape(-1)
    n = source.numel()
    check_later(mx.sum(flat) > n, lambda _: RuntimeError("Number of elements of source < number of ones in mask"),
                "masked_scatter")
    if n == 0:
        return input
    position = mx.clip(mx.cumsum(flat.astype(mx.int64)) - 1, 0, n - 1).reshape(m.shape)  # (safe: within source)
    return _ew.where(_wrap(m), _take_flat(source, (position,)), input)


@all_or_nothing
def put(input, index, source, accumulate: bool = False) -> Tensor:
    """``input`` read as 1-d with ``source``'s elements written at ``index`` (negative indices count from the
    end); ``accumulate=True`` adds them instead (repeated indices add up)."""
    idx = _index_arg(index, "put_", "put_(): Expected a long tensor for index, but got {}")
    if idx.size != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {idx.size}")
    if input.dtype != source.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_scalar_name(input.dtype)} and source.dtype = {_scalar_name(source.dtype)}")
    n = input.numel()
    idx = checked_index(idx.reshape(-1), n, lambda v: IndexError(
        f"out of range: tried to access index {v} on a tensor of {n} elements."), "put_", negative=True)
    idx = mx.where(idx < 0, idx + n, idx)
    flat = input.reshape(-1)
    values = source.reshape(-1)
    out = (_index_add if accumulate else _index_put)(flat, values, (idx,))
    return out.reshape(input.shape)


# ---------------------------------------------------------------------------------------------------- *_scatter
def _scatter_into(input, src, key: tuple) -> Tensor:
    expected = mx.zeros(tuple(input.shape), mx.bool_)[key].shape  # (an MLX shape computation: nothing is evaluated)
    if tuple(src.shape) != tuple(expected):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(expected)}")
    return put_slices(input, src.to(input.dtype) if src.dtype != input.dtype else src, key)


def select_scatter(input, src, dim: int, index: int) -> Tensor:
    """``input`` with ``input.select(dim, index)`` replaced by ``src`` (a copy)."""
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return _scatter_into(input, src, (_FULL,) * d + (index % size,))


def slice_scatter(input, src, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1) -> Tensor:
    """``input`` with ``input[..., start:end:step, ...]`` (along ``dim``) replaced by ``src`` (a copy)."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = wrap_dim(dim, input.ndim)
    return _scatter_into(input, src, (_FULL,) * d + (slice(start, end, step),))


def unravel_index(indices, shape) -> tuple:
    """The coordinates, in an array of ``shape``, of each flat index (a tuple of int64 tensors of indices' shape;
    as PyTorch's, indices are taken modulo the size along each dimension)."""
    shape = _size_arg(tuple(shape) if not isinstance(shape, int) else (shape,))
    if isinstance(indices, Tensor):
        if not mx.issubdtype(indices.dtype, mx.integer) or indices.dtype == mx.bool_:
            raise TypeError(f"expected 'indices' to be integer dtype, but got lucid.{dtype_name(indices.dtype)}")
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    flat = data(indices).astype(mx.int64) if isinstance(indices, Tensor) else mx.array(indices, mx.int64)
    coords = []
    for s in reversed(shape):
        coords.append(_wrap(mx.remainder(flat, s) if s else mx.zeros_like(flat)))
        flat = mx.floor_divide(flat, s) if s else flat
    return tuple(reversed(coords))


declare(scatter_reduce, method=True, inplace=True)
declare(index_reduce, method=True, inplace=True)
declare(masked_scatter, method=True, inplace=True)
declare(put, method=True, inplace=True)
declare(select_scatter, method=True)
declare(slice_scatter, method=True)
