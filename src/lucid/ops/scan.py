"""Scans and order statistics: cumsum, cumprod, cummax/cummin, sort, argsort, msort, topk, kthvalue, median,
nanmedian. ``dim`` is one int (a 0-d tensor takes 0 or -1).

Every op that selects elements (sort, topk, kthvalue, median(dim), cummax, ...) computes its indices first, with
MLX, and then declares its values as a gather along ``dim`` at those indices: the VJP scatters ``g`` back to them
(adding where an index repeats, as cummax's do). Gather and scatter are each other's VJP, so every order of
derivative is available. The full ``median()`` spreads its gradient evenly over the elements equal to the median, as
PyTorch does. Sorting is stable (MLX's CPU sort is), NaN sorts above everything, and ``descending`` keeps ties in
their original order.
"""
from __future__ import annotations

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "sort", "argsort", "msort", "topk", "kthvalue", "median",
           "nanmedian"]

from collections import namedtuple

import mlx.core as mx

from .. import _cpu_route, _meta
from .._tensor import Tensor, _wrap
from .. import _grad_mode as gm
from ._core import data, declare, defop
from .elementwise import eq, isnan, logical_and, where
from .reduce import _integral_to_int64
from .shape import wrap_dim

sort_return = namedtuple("sort", ["values", "indices"])
topk_return = namedtuple("topk", ["values", "indices"])
kthvalue_return = namedtuple("kthvalue", ["values", "indices"])
median_return = namedtuple("median", ["values", "indices"])
nanmedian_return = namedtuple("nanmedian", ["values", "indices"])
cummax_return = namedtuple("cummax", ["values", "indices"])
cummin_return = namedtuple("cummin", ["values", "indices"])


def _along(axis: int, ndim: int, n: int) -> tuple:
    """The shape of a length-``n`` vector that broadcasts along ``axis``."""
    return (1,) * axis + (n,) + (1,) * (ndim - axis - 1)


def _flip(a, axis):
    return a[(slice(None),) * axis + (slice(None, None, -1),)]


# ---------------------------------------------------------------------------------------------------- gather/scatter
def _gather_fwd(a, idx, axis, keepdim):
    """The elements of ``a`` at ``idx`` along ``axis`` (idx has a's rank); size-1 ``axis`` dropped unless
    ``keepdim``. A 0-d ``a`` is its own only element."""
    if a.ndim == 0:
        return a
    out = mx.take_along_axis(a, mx.stop_gradient(idx), axis)  # (idx: no derivative, also under MLX's transforms)
    return out if keepdim else mx.squeeze(out, axis)


def _gather_vjp(g, ans, x, idx, axis, keepdim):
    if not keepdim and x.ndim:
        g = g.reshape(idx.shape)
    return _scatter(g, idx, axis, x.shape[axis] if x.ndim else 1)


def _scatter_fwd(g, idx, axis, n):
    """Zeros with ``n`` elements along ``axis``, plus ``g`` at ``idx`` (repeated indices add up)."""
    if g.ndim == 0:
        return g
    shape = list(g.shape)
    shape[axis] = n
    if g.size == 0:
        return mx.zeros(shape, g.dtype)
    index = [mx.arange(s).reshape(_along(d, g.ndim, s)) for d, s in enumerate(idx.shape)]
    index[axis] = idx
    return mx.zeros(shape, g.dtype).at[tuple(index)].add(g)


def _gather_op(name: str, node: str | None = None):
    """A gather along a dim under ``name`` (its node class says which op selected the elements)."""
    return defop(name, _gather_fwd, vjp=(_gather_vjp,), save=None, node=node)


_gather = _gather_op("gather")
_scatter = defop("scatter_add", _scatter_fwd, save=None,
                 vjp=(lambda h, ans, g, idx, axis, n: _gather(h, idx, axis, True),))


def _selected(op, input, idx, axis, keepdim, return_type):
    """(values, int64 indices) of the elements of ``input`` at ``idx`` (kept dims) along ``axis``."""
    values = op(input, idx, axis, keepdim)
    if input.ndim == 0:
        return return_type(values, _indices_of(input, mx.zeros((), mx.int64)))
    idx = idx.astype(mx.int64)
    return return_type(values, _indices_of(input, idx if keepdim else mx.squeeze(idx, axis)))


def _indices_of(input, idx) -> Tensor:
    """The indices ``idx`` computed from ``input``'s values: meta for a meta input (lucid._meta)."""
    return _wrap(_meta.like(idx) if _meta.used[0] and _meta.is_meta(data(input)) else idx)


# ---------------------------------------------------------------------------------------------------- cumsum, cumprod
def _cumsum_fwd(a, axis, reverse):
    return a if a.ndim == 0 else mx.cumsum(a, axis=axis, reverse=reverse)


# the VJP of a cumulative sum is the cumulative sum taken from the other end
_cumsum = defop("cumsum", _cumsum_fwd, vjp=lambda g, ans, x, axis, reverse: _cumsum(g, axis, not reverse), save=None)


@declare(method=True, inplace=True)
def cumsum(input, dim: int, *, dtype=None) -> Tensor:
    """Running sums along ``dim``."""
    input = _integral_to_int64(input, dtype)  # as sum: integers and bools accumulate in int64
    return _cumsum(input, wrap_dim(dim, input.ndim), False)


def _cumprod_fwd(a, axis):
    return a if a.ndim == 0 else mx.cumprod(a, axis=axis)


def _cumprod_vjp(g, ans, x, axis):
    """d y_k / d x_i = prod_{j <= k, j != i} x_j for k >= i. Without zeros that is y_k / x_i, so the gradient is a
    reversed cumsum of g * y divided by x. Zeros need care: before the first zero of a slice the division still
    holds, at the first zero the product skipping it is a cumprod with that zero replaced by 1, after it every
    term holds the zero. That form is exact but its own derivative is not (the masks hide how later entries
    depend on the first zero), so when the gradient itself is recorded (create_graph), PyTorch's O(n^2) form
    with explicit omitted products is used instead."""
    if x.ndim == 0 or x.shape[axis] == 1:
        return g
    if gm.state.grad:
        return _cumprod_vjp_recorded(g, x, axis)
    zero = eq(x, 0)
    zeros_so_far = cumsum(zero, axis)
    before = eq(zeros_so_far, 0)
    first = logical_and(zero, eq(zeros_so_far, 1))
    before_first = _cumsum(g * ans, axis, True) / where(before, x, 1.0)
    at_first = _cumsum(g * cumprod(where(first, 1.0, x), axis), axis, True)
    return where(before, before_first, where(first, at_first, 0.0))


def _cumprod_vjp_recorded(g, x, axis):
    n = x.shape[axis]
    tail = (1,) * (x.ndim - axis - 1)
    # omitted[..., i, k, ...] = prod_{j <= k, j != i} x_j: row i is x with x_i replaced by 1, multiplied up along k
    diag = _wrap(mx.eye(n, dtype=mx.bool_).reshape((n, n) + tail))
    upper = _wrap(mx.triu(mx.ones((n, n), mx.bool_)).reshape((n, n) + tail))  # k >= i
    rows_shape = x.shape[:axis] + (n,) + x.shape[axis:]
    rows = where(diag, 1.0, x.unsqueeze(axis).expand(rows_shape))
    omitted = where(upper, cumprod(rows, axis + 1), 0.0)
    return (g.unsqueeze(axis) * omitted).sum(axis + 1)


_cumprod = defop("cumprod", _cumprod_fwd, vjp=_cumprod_vjp, save="both")


@declare(method=True, inplace=True)
def cumprod(input, dim: int, *, dtype=None) -> Tensor:
    """Running products along ``dim``; the gradient is exact with zeros in the input."""
    input = _integral_to_int64(input, dtype)  # as sum: integers and bools accumulate in int64
    return _cumprod(input, wrap_dim(dim, input.ndim))


# ---------------------------------------------------------------------------------------------------- cummax, cummin
def _cum_extremum_indices(a, axis, running):
    """Where the running max (min) came from: the latest index that attains it, as in PyTorch (ties move the index
    forward); from the first NaN on, the value is NaN and the index that of the latest NaN."""
    ar = mx.arange(a.shape[axis]).reshape(_along(axis, a.ndim, a.shape[axis]))
    idx = mx.cummax(mx.where(a == running(a, axis=axis), ar, -1), axis=axis)
    nan = mx.isnan(a)
    nan_idx = mx.cummax(mx.where(nan, ar, -1), axis=axis)
    return mx.where(nan_idx >= 0, nan_idx, idx)


_cummax = _gather_op("cummax")
_cummin = _gather_op("cummin")


@_cpu_route.float64_args
def _cum_extremum(input, dim, op, running, return_type):
    axis = wrap_dim(dim, input.ndim)
    a = data(input)
    idx = None if a.ndim == 0 else _cum_extremum_indices(a, axis, running)
    return _selected(op, input, idx, axis, True, return_type)


@declare(method=True)
def cummax(input, dim: int):
    """``(values, indices)``: the running maximum along ``dim`` and where it was attained."""
    return _cum_extremum(input, dim, _cummax, mx.cummax, cummax_return)


@declare(method=True)
def cummin(input, dim: int):
    """``(values, indices)``: the running minimum along ``dim`` and where it was attained."""
    return _cum_extremum(input, dim, _cummin, mx.cummin, cummin_return)


# ---------------------------------------------------------------------------------------------------- sort
def _argsort(a, axis: int, descending: bool):
    """Stable order along ``axis`` (NaN last ascending, first descending); descending keeps ties in their original
    order: sort the reversed slice ascending, reverse the result and map the positions back."""
    if not descending:
        return mx.argsort(a, axis=axis)
    n = a.shape[axis]
    return (n - 1) - _flip(mx.argsort(_flip(a, axis), axis=axis), axis).astype(mx.int32)


_sort = _gather_op("sort")
_sort_stable = _gather_op("sort", node="SortBackward1")  # PyTorch's overload with the stable keyword


@declare(method=True)
@_cpu_route.float64_args
def sort(input, dim: int = -1, descending: bool = False, stable: bool | None = None):
    """``(values, indices)`` sorted along ``dim`` (always stable)."""
    axis = wrap_dim(dim, input.ndim)
    a = data(input)
    idx = None if a.ndim == 0 else _argsort(a, axis, descending)
    return _selected(_sort if stable is None else _sort_stable, input, idx, axis, True, sort_return)


@declare(method=True)
@_cpu_route.float64_args
def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The int64 indices that sort ``input`` along ``dim`` (always stable)."""
    axis = wrap_dim(dim, input.ndim)
    a = data(input)
    return _indices_of(input, mx.zeros((), mx.int64) if a.ndim == 0 else _argsort(a, axis, descending).astype(mx.int64))


@declare(method=True)
def msort(input) -> Tensor:
    """``input`` sorted along its first dim."""
    return sort(input, 0).values


_topk = _gather_op("topk")


@declare(method=True)
@_cpu_route.float64_args
def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements along ``dim``, in order."""
    axis = wrap_dim(dim, input.ndim)
    a = data(input)
    n = a.shape[axis] if a.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    idx = None
    if a.ndim:
        idx = _argsort(a, axis, largest)[(slice(None),) * axis + (slice(0, k),)]
    return _selected(_topk, input, idx, axis, True, topk_return)


# ---------------------------------------------------------------------------------------------------- order statistics
_kthvalue = _gather_op("kthvalue")
_median_dim = _gather_op("median", node="MedianBackward1")
_nanmedian_dim = _gather_op("nanmedian", node="NanmedianBackward1")


def _at_rank(a, axis, rank):
    """The index of the element of sorted rank ``rank`` (an int, or an int array with a kept ``axis``)."""
    order = mx.argsort(a, axis=axis)
    if isinstance(rank, int):
        return order[(slice(None),) * axis + (slice(rank, rank + 1),)]
    return mx.take_along_axis(order, rank, axis)


def _nonempty_dim(a, axis, fn):
    if a.ndim and a.shape[axis] == 0:
        raise IndexError(f"{fn}(): Expected reduction dim {axis} to have non-zero size.")


@declare(method=True)
@_cpu_route.float64_args
def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False):
    """``(values, indices)`` of the ``k``-th smallest element (1-based) along ``dim``."""
    axis = wrap_dim(dim, input.ndim)
    a = data(input)
    _nonempty_dim(a, axis, "kthvalue")
    n = a.shape[axis] if a.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    idx = None if a.ndim == 0 else _at_rank(a, axis, k - 1)
    return _selected(_kthvalue, input, idx, axis, keepdim, kthvalue_return)


def _median_rank(a, axis, ignore_nan: bool):
    """The rank of the lower median along ``axis`` (kept dims): (n - 1) // 2, or (count - 1) // 2 of the non-NaN
    elements (NaN sorts last), at least 0 (an all-NaN slice gives NaN)."""
    if not ignore_nan:
        return (a.shape[axis] - 1) // 2
    count = mx.sum(~mx.isnan(a), axis=axis, keepdims=True).astype(mx.int32)
    return mx.maximum((count - 1) // 2, 0)


def _median_index(a, axis, ignore_nan: bool):
    idx = _at_rank(a, axis, _median_rank(a, axis, ignore_nan))
    if ignore_nan or a.size == 0:
        return idx
    # median propagates NaN: a slice with one gives its first NaN
    nan = mx.isnan(a)
    first_nan = mx.argmax(nan, axis=axis, keepdims=True).astype(idx.dtype)
    return mx.where(mx.any(nan, axis=axis, keepdims=True), first_nan, idx)


def _full_median_fwd(a, ignore_nan):
    flat = a.reshape(-1)
    if flat.size == 0:
        return mx.array(float("nan"), a.dtype)
    return mx.take(flat, _median_index(flat, 0, ignore_nan)).reshape(())


def _evenly_vjp(g, ans, x, ignore_nan):
    """The gradient of the full median, spread evenly over the elements equal to it (over the NaNs when it is
    NaN), as PyTorch's evenly_distribute_backward."""
    mask = where(isnan(ans), isnan(x), eq(x, ans))
    return where(mask, g / mask.sum(), 0.0)


_median_all = defop("median", _full_median_fwd, vjp=_evenly_vjp, save="both", node="MedianBackward0")
_nanmedian_all = defop("nanmedian", _full_median_fwd, vjp=_evenly_vjp, save="both", node="NanmedianBackward0")


@_cpu_route.float64_args
def _median(input, dim, keepdim, ignore_nan, full_op, dim_op, return_type):
    if dim is None:
        return full_op(input, ignore_nan)
    axis = wrap_dim(dim, input.ndim)
    a = data(input)
    _nonempty_dim(a, axis, "median")
    idx = None if a.ndim == 0 else _median_index(a, axis, ignore_nan)
    return _selected(dim_op, input, idx, axis, keepdim, return_type)


@declare(method=True)
def median(input, dim: int | None = None, keepdim: bool = False):
    """``median(x)``: the lower median of all elements (NaN if there is one). ``median(x, dim, keepdim)``:
    ``(values, indices)`` along ``dim``; the gradient goes to the returned index."""
    return _median(input, dim, keepdim, False, _median_all, _median_dim, median_return)


@declare(method=True)
def nanmedian(input, dim: int | None = None, keepdim: bool = False):
    """``median`` ignoring NaN (NaN only where a slice is all NaN)."""
    return _median(input, dim, keepdim, True, _nanmedian_all, _nanmedian_dim, nanmedian_return)
