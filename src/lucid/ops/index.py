"""Indexing: ``x[key]`` and ``x[key] = value`` with PyTorch's rules, plus nonzero, index_select, index_put,
masked_fill, masked_select and the gather family (gather, scatter, scatter_add, index_add, index_copy, index_fill,
take, take_along_dim, with the in-place ``_`` forms).

PyTorch reads a key in two steps, and so does lucid:
1. the basic part — ints (and 0-d integer tensors), slices with positive steps, None, Ellipsis — taken as one view
   (``shape.view_slices``: SelectBackward0, SliceBackward0, ...);
2. the advanced part — integer tensors, lists, numpy arrays and boolean masks — gathered from that view
   (IndexBackward0). With the ints gone, NumPy's rule for where the indexed dims go (in place if the index arrays
   are adjacent, else first) is PyTorch's, and MLX implements it.
The gradient of a gather is a scatter-add (repeated indices accumulate), itself a lucid op whose gradient is a
gather, so higher derivatives work. Boolean masks are the one place that reads values: their indices (the output's
shape) depend on them, and MLX has no nonzero. Every index goes through ``lucid._checks.checked_index`` before MLX
sees it: checked at once when its values are on the host, else made safe and checked at the next evaluation.
"""
from __future__ import annotations

__all__ = ["nonzero", "argwhere", "index_select", "index_put", "masked_fill", "masked_select", "gather", "scatter",
           "scatter_add", "index_add", "index_copy", "index_fill", "take", "take_along_dim"]

import operator
import warnings

import mlx.core as mx
import numpy as np

from .. import _cpu_route
from .._checks import checked_index, is_known, mark_known
from .._dtype import broadcast_shapes, dtype_name, from_numpy_dtype
from .._tensor import Tensor, _wrap
from .._threads import to_numpy
from ._core import SAVES_INDEX, attach, data, declare, defop
from .elementwise import all_or_nothing, nonzero, where  # (nonzero: re-exported with the indexing functions)
from .shape import _ALL, _FULL, _put, _take, put_slices, take_slices, view_slices, wrap_dim, zeros_for


# ---------------------------------------------------------------------------------------------------- the ops
# the forwards of x[key] (_take) and of "x with x[key] = v" (_put) are shared with the basic indexing ops
def _add_at(base, v, key):
    if base.size == 0 or isinstance(v, mx.array) and v.size == 0:  # nothing to add; MLX's scatter would divide by
        return base                                                  # the zero size (SIGFPE)
    if isinstance(v, mx.array) and v.dtype != base.dtype:
        v = v.astype(base.dtype)
    return base.at[key].add(v)  # repeated indices add up


def _index_vjp(g, ans, x, key):
    return _index_add(zeros_for(x.shape, g), g, key)


def _gather_part(g, ans, base, v, key):
    return _index(g, key)


def _passed_part(g, ans, base, v, key):
    return g


def _cleared_part(g, ans, base, v, key):
    return _index_put(g, 0, key)


# the gradients of "add v at key" and of "write v at key": base's gradient passes (or is zero where written: with
# repeated indices every copy of v's element gets the gradient of that position, as in PyTorch), v's is gathered
_ADD_VJPS = (_passed_part, _gather_part)
_PUT_VJPS = (_cleared_part, _gather_part)

_index = defop("index", _take, vjp=_index_vjp, save=SAVES_INDEX)
_index_select = defop("index_select", _take, vjp=_index_vjp, save=SAVES_INDEX)
_index_add = defop("index_put", _add_at, vjp=_ADD_VJPS, save=SAVES_INDEX)
_index_put = defop("index_put", _put, vjp=_PUT_VJPS, save=SAVES_INDEX)


# ---------------------------------------------------------------------------------------------------- reading keys
def _as_tuple(key) -> tuple:
    if isinstance(key, tuple):
        return key
    # PyTorch (following old NumPy) reads a short list that holds sequences, slices, None or ... as a tuple
    if isinstance(key, list) and len(key) < 32 and any(
            k is None or k is Ellipsis or isinstance(k, (Tensor, mx.array, np.ndarray, list, tuple, slice))
            for k in key):
        return tuple(key)
    return (key,)


def _mask_indices(mask: np.ndarray, shape: tuple, d: int) -> list:
    """The integer index arrays of a boolean mask over dims d.. of shape (a mask's indices depend on its values)."""
    for j, m in enumerate(mask.shape):
        if m != shape[d + j]:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {j} does not match the shape of the "
                             f"indexed tensor {list(shape[d:d + mask.ndim])} at index {j}")
    return [mx.array(i, dtype=mx.int64) for i in np.nonzero(mask)]


def _out_of_bounds(d: int, size: int, exc=IndexError, prefix: str = ""):
    """PyTorch's "index 5 is out of bounds for dimension 0 with size 3", as a function of the bad value."""
    return lambda v: exc(f"{prefix}index {v} is out of bounds for dimension {d} with size {size}")


def _out_of_range(v) -> IndexError:
    return IndexError("index out of range in self")


def _key_index(a: mx.array, size: int, d: int, op: str) -> mx.array:
    """An index array of a key (negative entries count from the end), checked (lucid._checks)."""
    return checked_index(a, size, _out_of_bounds(d, size), op, negative=True)


def _norm_slice(s: slice, size: int) -> slice:
    step = 1 if s.step is None else operator.index(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start, stop, step = s.indices(size)
    if start == 0 and stop == size and step == 1:
        return _FULL
    return slice(start, max(start, stop), step)


def _classify(k):
    """(kind, value, number of input dims it indexes) for one entry of a key."""
    if type(k) is int:  # the common entries first
        return "int", k, 1
    if type(k) is slice:
        return "slice", k, 1
    if k is None:
        return "new", None, 0
    if k is Ellipsis:
        return "...", None, 0
    if isinstance(k, (bool, np.bool_)):
        return "bool", bool(k), 0
    if isinstance(k, slice):
        return "slice", k, 1
    if isinstance(k, (Tensor, mx.array)):
        a = data(k)
        if a.dtype == mx.uint8:
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                          UserWarning, stacklevel=4)
            a = a.astype(mx.bool_)
        if a.dtype == mx.bool_:
            a = to_numpy(a)  # the mask's values decide the result's shape
            return ("bool", bool(a), 0) if a.ndim == 0 else ("mask", a, a.ndim)
        if not mx.issubdtype(a.dtype, mx.integer):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return ("int0d", a, 1) if a.ndim == 0 else ("array", a, 1)
    if isinstance(k, (list, tuple, range, np.ndarray)):
        a = np.asarray(k)
        if a.dtype == np.bool_:
            return ("bool", bool(a), 0) if a.ndim == 0 else ("mask", a, a.ndim)
        if a.size == 0 and a.dtype != object:
            a = a.astype(np.int64)
        if a.dtype.kind not in "iu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return ("int", int(a), 1) if a.ndim == 0 else ("host", a, 1)
    try:
        return "int", operator.index(k), 1
    except TypeError:
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         f"indices (got {type(k).__name__})") from None


def parse_key(shape: tuple, key, op: str = "x[index]") -> tuple:
    """PyTorch's two steps for ``x[key]`` on a tensor of ``shape``: ``(basic, advanced)``; ``op`` names it in
    deferred bounds errors.

    ``basic`` is an MLX key of ints, 0-d index arrays, slices and None (None when there is nothing to do);
    ``advanced`` is an MLX key of full slices and index arrays over the result of ``basic`` (None when there are
    no index arrays)."""
    items = [_classify(k) for k in _as_tuple(key)]
    ndim = len(shape)
    used = 0
    ellipses = 0
    for kind, _, n in items:
        used += n
        ellipses += kind == "..."
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if used > ndim:
        if ndim == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                             "C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    basic: list = []
    adv: list = []  # one entry per dim of basic's result: None (kept whole) or an index array
    d = 0
    for kind, v, n in items:
        if kind == "...":
            fill = ndim - used
            basic += [_FULL] * fill
            adv += [None] * fill
            d += fill
        elif kind == "new":
            basic.append(None)
            adv.append(None)
        elif kind == "bool":  # PyTorch: a new dim of size 1, indexed by [0] (True) or by [] (False)
            basic.append(None)
            adv.append(mx.array([0] if v else [], dtype=mx.int64))
        elif kind == "int":
            size = shape[d]
            if not -size <= v < size:
                raise IndexError(f"index {v} is out of bounds for dimension {d} with size {size}")
            basic.append(v % size)
            d += 1
        elif kind == "int0d":  # a select whose index stays on the device
            basic.append(_key_index(v, shape[d], d, op))
            d += 1
        elif kind == "slice":
            basic.append(_norm_slice(v, shape[d]))
            adv.append(None)
            d += 1
        elif kind == "mask":
            for a in _mask_indices(v, shape, d):
                basic.append(_FULL)
                adv.append(a)
            d += n
        else:  # "array" (an index tensor) or "host" (a list or numpy array)
            basic.append(_FULL)
            a = mark_known(mx.array(v.astype(np.int64))) if kind == "host" else v
            adv.append(_key_index(a, shape[d], d, op))
            d += 1
    while basic and basic[-1] is _FULL:
        basic.pop()
    while adv and adv[-1] is None:
        adv.pop()
    return (tuple(basic) if basic else None,
            tuple(_FULL if a is None else a for a in adv) if adv else None)


# ---------------------------------------------------------------------------------------------------- get / set
def _getitem(self, key) -> Tensor:
    basic, adv = parse_key(self.shape, key)
    if adv is None:
        return view_slices(self, basic or _ALL)
    return _index(self if basic is None else take_slices(self, basic), adv)


@_cpu_route.float64_args
def _region_shape(x: Tensor, basic, adv) -> tuple:
    a = x._storage.data  # MLX infers the shape without computing anything
    if basic is not None:
        a = a[basic]
    if adv is not None:
        a = a[adv]
    return a.shape


def _fit_value(value, region: tuple):
    """A value for a write into ``region``: PyTorch drops leading size-1 dims and broadcasts the rest."""
    if not isinstance(value, Tensor):
        if isinstance(value, (int, float, complex, np.number)):
            return value
        raise TypeError(f"can't assign a {type(value).__name__} to a lucid Tensor")
    shape = tuple(value.shape)
    lead = 0
    while len(shape) - lead > len(region) and shape[lead] == 1:
        lead += 1
    rest = shape[lead:]
    if len(rest) > len(region) or any(s != 1 and s != r for s, r in zip(rest[::-1], region[::-1])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(shape)} cannot be broadcast to indexing "
                           f"result of shape {list(region)}")
    return value.reshape(rest) if lead else value


@all_or_nothing
def index_put_key(x: Tensor, key, value) -> Tensor:
    """x with ``x[key]`` replaced by ``value`` (a number or a tensor that broadcasts), out of place."""
    basic, adv = parse_key(x.shape, key, "x[index] = value")
    value = _fit_value(value, _region_shape(x, basic, adv) if isinstance(value, Tensor) else ())
    if adv is None:
        return put_slices(x, value, basic or _ALL)
    if basic is None:
        return _index_put(x, value, adv)
    return put_slices(x, _index_put(take_slices(x, basic), value, adv), basic)


def _setitem(self, key, value) -> None:
    self._inplace(lambda old: index_put_key(old, key, value), via_view=True)


attach("__getitem__", _getitem)
attach("__setitem__", _setitem)


# ---------------------------------------------------------------------------------------------------- functions
@declare(method=True)
def argwhere(input) -> Tensor:
    """The indices of the nonzero elements, one row per element: shape (count, input.ndim)."""
    return nonzero(input)


@declare(method=True)
def index_select(input, dim: int, index) -> Tensor:
    """The entries at ``index`` (a 0-d or 1-d integer tensor) along ``dim``."""
    idx = data(index)
    if not isinstance(idx, mx.array):
        raise TypeError(f"index_select(): argument 'index' must be Tensor, not {type(index).__name__}")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype not in (mx.int32, mx.int64):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        if idx.size != 1:
            raise IndexError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
        idx = checked_index(idx, 1, _out_of_range, "index_select")
        return _index_select(input.reshape(1), (idx.reshape(-1),)).reshape(())
    idx = checked_index(idx, input.shape[d], _out_of_range, "index_select")
    return _index_select(input, (_FULL,) * d + (idx.reshape(-1),))


def _tensor_key(indices, shape: tuple) -> tuple:
    """An advanced key from PyTorch's ``indices`` list: tensors (masks become their indices) or None (whole dim)."""
    if len(indices) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {len(indices)})")
    key = []
    for i in indices:
        d = len(key)
        if i is None:
            key.append(_FULL)
            continue
        if isinstance(i, (Tensor, mx.array)):
            a = data(i)
        else:
            a = mark_known(mx.array(np.asarray(i)))
        if a.dtype in (mx.bool_, mx.uint8):
            key += _mask_indices(to_numpy(a.astype(mx.bool_)), shape, d)
        elif mx.issubdtype(a.dtype, mx.integer):
            if d >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            key.append(_key_index(a, shape[d], d, "index_put_"))
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return tuple(key)


@declare(method=True, inplace=True)
@all_or_nothing
def index_put(input, indices, values, accumulate: bool = False) -> Tensor:
    """``input`` with ``input[indices] = values`` (or ``+=`` with ``accumulate``, where repeated indices add up).
    ``indices`` is a tuple of index tensors, as in PyTorch (None keeps a dim whole)."""
    key = _tensor_key(indices, tuple(input.shape))
    values = _fit_value(values, _region_shape(input, None, key) if isinstance(values, Tensor) else ())
    return (_index_add if accumulate else _index_put)(input, values, key)


def _masked_fill_fwd(a, mask, value):
    return mx.where(mask, value.astype(a.dtype) if isinstance(value, mx.array) else mx.array(value, a.dtype), a)


# the mask is passed as an MLX array; PyTorch's node saves it, so a second backward without retain_graph raises
_masked_fill = defop("masked_fill", _masked_fill_fwd, save=SAVES_INDEX,
                     vjp=(lambda g, ans, x, mask, value: where(mask, 0.0, g), None,
                          lambda g, ans, x, mask, value: where(mask, g, 0.0).sum()))


@declare(method=True, inplace=True)
def masked_fill(input, mask, value) -> Tensor:
    """``value`` where ``mask`` (bool, broadcast) is True, else ``input``."""
    m = data(mask)
    if m.dtype != mx.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{str(m.dtype).replace('mlx.core.', '')}")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    return _masked_fill(input, m, value)


@declare(method=True)
def masked_select(input, mask) -> Tensor:
    """The elements of ``input`` where ``mask`` is True (both broadcast), as a 1-d tensor."""
    shape = broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    x = input if tuple(input.shape) == shape else input.expand(shape)
    return _getitem(x, np.broadcast_to(mask._to_numpy().astype(bool), shape))


# ---------------------------------------------------------------------------------------------------- gather family
# gather, scatter and scatter_add read or write one element along a dim per entry of an index tensor: MLX's
# take_along_axis / put_along_axis and its scatter-add along an axis (the VJP of take_along_axis: MLX has no Python
# name for it), which are several times faster than a general scatter with an index array per dim. The ops pair up
# as x[key] does above: a read's gradient is a scatter-add into zeros, a write gives the written positions of the
# input no gradient and gathers the values', an add passes the input's gradient and gathers the values'.
# index_add, index_copy, index_fill and take are the _add_at / _put / _take ops under PyTorch's node names.
# Bounds: every index passes through lucid._checks.checked_index (MLX checks nothing: an out-of-range index gives
# unspecified values in a read and can corrupt memory in a write).
def _part_key(shape: tuple, ishape: tuple, d: int):
    """The basic key of the part of an input of ``shape`` that an index of ``ishape`` along ``d`` covers (PyTorch
    lets the index be smaller in the other dims), or None when that is all of it."""
    if all(i == s or e == d for e, (i, s) in enumerate(zip(ishape, shape))):
        return None
    return tuple(_FULL if e == d else slice(0, i) for e, i in enumerate(ishape))


def _along(write):
    """An along-axis write ``write(part, v, idx, d)`` applied to the covered part of ``base``."""
    def fwd(base, v, idx, d):
        v = v.astype(base.dtype) if isinstance(v, mx.array) else mx.array(v, base.dtype)
        key = _part_key(base.shape, idx.shape, d)
        if key is None:
            return write(base, v, idx, d)
        out = mx.array(base)
        out[key] = write(base[key], v, idx, d)
        return out
    return fwd


def _take_along(a, idx, d):
    key = _part_key(a.shape, idx.shape, d)
    return mx.take_along_axis(a if key is None else a[key], idx, d)


def _add_along(part, v, idx, d):
    v = mx.broadcast_to(v, idx.shape)
    _, (added,) = mx.vjp(lambda z: mx.take_along_axis(z, idx, d), [part], [v])  # only part's shape is used
    return part + added


def _put_along(part, v, idx, d):
    return mx.put_along_axis(part, idx, v, d)


def _cleared_along(g, ans, base, v, idx, d):
    return _scatter_value(g, 0, idx, d)


def _gathered_along(g, ans, base, v, idx, d):
    return _gather(g, idx, d)


_gather = defop("gather", _take_along, save=SAVES_INDEX,
                vjp=lambda g, ans, x, idx, d: _scatter_add(zeros_for(x.shape, g), g, idx, d))
_scatter = defop("scatter", _along(_put_along), vjp=(_cleared_along, _gathered_along), save=SAVES_INDEX)
_scatter_value = defop("scatter", _along(_put_along), vjp=(_cleared_along, _gathered_along), save=SAVES_INDEX,
                       node="ScatterBackward1")
_scatter_add = defop("scatter_add", _along(_add_along), vjp=(lambda g, *_: g, _gathered_along), save=SAVES_INDEX)
# PyTorch has no derivative for scatter(..., reduce="multiply") either; MLX has no multiply along an axis
_scatter_mul = defop("scatter", _along(lambda part, v, idx, d: part.at[_along_key(idx, d)].multiply(v)), save=None,
                     node="NotImplemented")
_index_add_op = defop("index_add", _add_at, vjp=_ADD_VJPS, save=SAVES_INDEX)
_index_copy = defop("index_copy", _put, vjp=_PUT_VJPS, save=SAVES_INDEX)
_index_fill = defop("index_fill", _put, vjp=_PUT_VJPS, save=SAVES_INDEX)


def _take_flat_vjp(g, ans, x, key):
    return _index_add(zeros_for((x.numel(),), g), g, key).reshape(x.shape)


_take_flat = defop("take", lambda a, key: a.reshape(-1)[key], vjp=_take_flat_vjp, save=SAVES_INDEX)

_SCALAR_NAMES = {mx.float64: "Double", mx.float32: "Float", mx.float16: "Half", mx.bfloat16: "BFloat16",
                 mx.int64: "Long", mx.int32: "Int", mx.int16: "Short", mx.int8: "Char", mx.uint8: "Byte",
                 mx.bool_: "Bool"}


def _scalar_name(dtype) -> str:
    return _SCALAR_NAMES.get(dtype, dtype_name(dtype))


def _index_arg(index, fn: str, dtype_error: str) -> mx.array:
    """An index argument as an MLX int array (values given on the host are remembered as known, so their bounds
    are checked at once). ``dtype_error`` is PyTorch's message ({} is the dtype's name)."""
    if isinstance(index, (Tensor, mx.array)):
        a = data(index)
        if a.dtype not in (mx.int64, mx.int32):
            raise RuntimeError(dtype_error.format(_scalar_name(a.dtype)))
        return a
    if isinstance(index, (list, tuple, range, np.ndarray)):
        h = np.asarray(index)
        if h.size == 0 and h.dtype == np.float64:  # [] reads as float64
            h = h.astype(np.int64)
        if h.dtype.kind not in "iu":
            raise RuntimeError(dtype_error.format(_scalar_name(from_numpy_dtype(h.dtype)) if h.dtype.kind in "fb"
                                                  else h.dtype))
        return mark_known(mx.array(h.astype(np.int64)))
    raise TypeError(f"{fn}(): argument 'index' must be Tensor, not {type(index).__name__}")


def _flat_index(idx: mx.array) -> mx.array:
    """``idx`` as 1-d, still known on the host if it was (reading a reshape of computed values costs nothing)."""
    flat = idx.reshape(-1)
    return mark_known(flat) if is_known(idx) else flat


def _along_index(idx: mx.array, size: int, d: int, op: str) -> mx.array:
    """gather's and scatter's indices: in [0, size), PyTorch's RuntimeError otherwise."""
    return checked_index(idx, size, _out_of_bounds(d, size, RuntimeError), op)


def _along_key(idx: mx.array, d: int) -> tuple:
    """The advanced key that picks, for each entry of ``idx``, the element at that entry's own position in every
    dim but ``d``, and at the entry's value along ``d`` (for the writes MLX has no along-axis form of)."""
    n = idx.ndim
    return tuple(idx if e == d else mx.arange(s).reshape((1,) * e + (s,) + (1,) * (n - e - 1))
                 for e, s in enumerate(idx.shape))


def _check_along(shape: tuple, ishape: tuple, d: int, src_shape: tuple | None = None, what: str = "input") -> None:
    """PyTorch's shape rules for gather and scatter: index has input's number of dims and is no larger in all but
    ``d`` (nor larger than src anywhere)."""
    if len(ishape) != len(shape):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} tensor")
    if src_shape is not None and len(ishape) != len(src_shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for e, (i, s) in enumerate(zip(ishape, shape)):
        if src_shape is not None and (i > src_shape[e] or (e != d and i > s)):
            raise RuntimeError(f"Expected index {list(ishape)} to be no larger than self {list(shape)} apart from "
                               f"dimension {d} and to be no larger size than src {list(src_shape)}")
        if e != d and i > s:
            raise RuntimeError(f"Size does not match at dimension {e} expected index {list(ishape)} to be no larger "
                               f"than self {list(shape)} apart from dimension {d}")


def _same_dtype(input, src, message: str) -> None:
    a, b = data(input).dtype, data(src).dtype
    if a != b:
        raise RuntimeError(message.format(_scalar_name(a), _scalar_name(b)))


@declare(method=True)
def gather(input, dim: int, index, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` for dim 0 (``input[i][index[i][j]]`` for dim 1): the element along
    ``dim`` named by each entry of ``index``, which has input's number of dims and is no larger in the others.
    The result has index's shape; the gradient scatter-adds into zeros (repeated indices accumulate)."""
    idx = _index_arg(index, "gather", "gather(): Expected dtype int32/int64 for index")
    if input.ndim == 0:
        return gather(input.reshape(1), 0, _flat_index(idx)).reshape(idx.shape)
    d = wrap_dim(dim, input.ndim)
    _check_along(input.shape, idx.shape, d)
    return _gather(input, _along_index(idx, input.shape[d], d, "gather"), d)


@declare(method=True, inplace=True)
@all_or_nothing
def scatter(input, dim: int, index, src=None, value=None, *, reduce: str | None = None) -> Tensor:
    """``input`` with ``out[index[i][j]][j] = src[i][j]`` for dim 0 (a copy; ``scatter_`` writes in place). ``src``
    is a tensor at least as large as index (its leading part is used) or a number (``value``). With repeated
    indices one of the written values wins (which is unspecified, as in PyTorch). ``reduce="add"`` adds instead
    (as ``scatter_add``), ``reduce="multiply"`` multiplies (no gradient, as in PyTorch)."""
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' or 'value'")
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    idx = _index_arg(index, "scatter", "scatter(): Expected dtype int32/int64 for index")
    tensor_src = isinstance(src, Tensor)
    if input.ndim == 0:
        return scatter(input.reshape(1), 0, _flat_index(idx), src.reshape(-1) if tensor_src else src, value,
                       reduce=reduce).reshape(())
    d = wrap_dim(dim, input.ndim)
    if tensor_src:
        if reduce is not None:
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in "
                          "a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=2)
        _check_along(input.shape, idx.shape, d, src.shape, what="self")
        _same_dtype(input, src, "scatter(): Expected self.dtype to be equal to src.dtype")
        v = _leading_part(src, idx.shape)
    else:
        _check_along(input.shape, idx.shape, d, what="self")
        v = data(value if src is None else src)
    idx = _along_index(idx, input.shape[d], d, "scatter")
    if reduce == "add":
        return _scatter_add(input, v, idx, d)
    if reduce == "multiply":
        return _scatter_mul(input, v, idx, d)
    return (_scatter if tensor_src else _scatter_value)(input, v, idx, d)


def _leading_part(src, shape: tuple):
    """``src[:shape[0], :shape[1], ...]``: the part of a src tensor that an index of ``shape`` uses."""
    if tuple(src.shape) == tuple(shape):
        return src
    return take_slices(src, tuple(slice(0, s) for s in shape))


@declare(method=True, inplace=True)
@all_or_nothing
def scatter_add(input, dim: int, index, src) -> Tensor:
    """``input`` with ``out[index[i][j]][j] += src[i][j]`` for dim 0; repeated indices add up. The gradient passes
    to input and is gathered for src."""
    idx = _index_arg(index, "scatter", "scatter(): Expected dtype int32/int64 for index")
    if input.ndim == 0:
        return scatter_add(input.reshape(1), 0, _flat_index(idx), src.reshape(-1)).reshape(())
    d = wrap_dim(dim, input.ndim)
    _check_along(input.shape, idx.shape, d, src.shape, what="self")
    _same_dtype(input, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    return _scatter_add(input, _leading_part(src, idx.shape), _along_index(idx, input.shape[d], d, "scatter_add"),
                        d)


def _slice_index(input, dim: int, index, source, fn: str, dtype_error: str):
    """index_add's and index_copy's arguments checked (with the messages of each): ``(input, key, source,
    scalar)``, where 0-d tensors are read as 1-d and ``scalar`` says to make the result 0-d again."""
    idx = _index_arg(index, fn, dtype_error)
    if idx.ndim > 1:
        if fn == "index_copy_":
            raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
        raise IndexError(f"{fn}(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"{_scalar_name(idx.dtype)} and size: {list(idx.shape)}")
    idx = _flat_index(idx)
    d = wrap_dim(dim, input.ndim)
    scalar = input.ndim == 0
    if scalar:
        input = input.reshape(1)
    if source.ndim == 0:
        source = source.reshape(1)
    n, shape, sshape = idx.size, tuple(input.shape), tuple(source.shape)
    if fn == "index_copy_":
        if len(sshape) != len(shape):
            raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality "
                             f"must match. Source dimensionality ({len(sshape)}), destination dimensionality "
                             f"({len(shape)})")
        if sshape[d] != n:
            raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) "
                             f"({sshape[d]})")
        rest, srest = shape[:d] + shape[d + 1:], sshape[:d] + sshape[d + 1:]
        for k, (a, b) in enumerate(zip(rest, srest)):
            if a != b:
                raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. "
                                   f"Destination slice shape: {a} at dimension {k} and source slice shape: {b} at "
                                   f"dimension {k}.")
        _same_dtype(input, source, "index_copy_(): self and source expected to have the same dtype, but got (self) "
                                   "{} and (source) {}")
        idx = checked_index(idx, shape[d], _out_of_bounds(d, shape[d], prefix="index_copy_(): "), fn)
    else:
        if d < len(sshape) and sshape[d] != n:
            raise RuntimeError(f"{fn}(): Number of indices ({n}) should be equal to source.size(dim): "
                               f"({sshape[d]}), for dim: {d}")
        if len(sshape) != len(shape) or any(a != b for k, (a, b) in enumerate(zip(shape, sshape)) if k != d):
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified "
                               f"dimension. Got self.shape = {list(shape)} source.shape = {list(sshape)}")
        _same_dtype(input, source, f"{fn}(): self ({{}}) and source ({{}}) must have the same scalar type")
        idx = checked_index(idx, shape[d], _out_of_range, fn)
    return input, (_FULL,) * d + (idx,), source, scalar


@declare(method=True, inplace=True)
@all_or_nothing
def index_add(input, dim: int, index, source, *, alpha=1) -> Tensor:
    """``input`` with ``alpha * source`` added at the positions ``index`` (1-d) along ``dim``; repeated indices add
    up. ``source`` has input's shape with ``len(index)`` along ``dim``."""
    x, key, source, scalar = _slice_index(input, dim, index, source, "index_add_",
                                          "index_add_(): Expected dtype int32/int64 for index but got: {}")
    out = _index_add_op(x, source if alpha == 1 else source * alpha, key)
    return out.reshape(()) if scalar else out


@declare(method=True, inplace=True)
@all_or_nothing
def index_copy(input, dim: int, index, source) -> Tensor:
    """``input`` with the slices ``index`` (1-d) along ``dim`` replaced by those of ``source`` (with repeated
    indices one of them wins, unspecified which, as in PyTorch)."""
    x, key, source, scalar = _slice_index(input, dim, index, source, "index_copy_",
                                          "index_copy_(): Expected a long tensor for index, but got {}")
    out = _index_copy(x, source, key)
    return out.reshape(()) if scalar else out


@declare(method=True, inplace=True)
@all_or_nothing
def index_fill(input, dim: int, index, value) -> Tensor:
    """``input`` with the slices ``index`` (0-d or 1-d) along ``dim`` set to ``value`` (a number or a 0-d
    tensor, which gets the summed gradient of those positions)."""
    idx = _index_arg(index, "index_fill_", "index_fill_(): Expected dtype int64 for index.")
    if idx.ndim > 1:
        raise IndexError(f"index_fill_(): Expected a 0-d or 1-d index, but got a {idx.ndim}-d index")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    if input.ndim == 0:
        return index_fill(input.reshape(1), 0, _flat_index(idx), value).reshape(())
    d = wrap_dim(dim, input.ndim)
    idx = _key_index(idx, input.shape[d], d, "index_fill_")
    return _index_fill(input, value, (_FULL,) * d + (idx.reshape(-1),))


@declare(method=True)
def take(input, index) -> Tensor:
    """The elements of ``input`` read as 1-d at ``index`` (any shape; negative indices count from the end); the
    result has index's shape."""
    idx = _index_arg(index, "take", "take(): Expected a long tensor for index, but got {}")
    n = input.numel()
    idx = checked_index(idx, n, lambda v: IndexError(f"out of range: tried to access index {v} on a tensor of {n} "
                                                     "elements."), "take", negative=True)
    return _take_flat(input, (idx,))


@declare(method=True)
def take_along_dim(input, indices, dim: int | None = None) -> Tensor:
    """``gather`` with broadcasting: ``input`` and ``indices`` broadcast in all dims but ``dim``. Without ``dim``
    both are read as 1-d (numpy's ``take_along_axis``)."""
    idx = _index_arg(indices, "take_along_dim", "torch.take_along_dim(): dtype of indices should be Long but got {}")
    if dim is None:
        x, idx = input.reshape(-1), _flat_index(idx)
        return _gather(x, _wrapped_along(idx, x.shape[0], 0), 0)
    if input.ndim != idx.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {idx.ndim} dimensions for indices")
    d = wrap_dim(dim, input.ndim)
    shape = list(input.shape)
    shape[d] = idx.shape[d]
    shape = _broadcast_shape(shape, idx.shape)
    idx = _wrapped_along(idx, input.shape[d], d)  # checked before broadcasting: the message names a real entry
    if tuple(shape) != idx.shape:
        idx = mx.broadcast_to(idx, shape)
    shape[d] = input.shape[d]
    x = input if tuple(input.shape) == tuple(shape) else input.expand(shape)
    return _gather(x, idx, d)


def _wrapped_along(idx: mx.array, size: int, d: int) -> mx.array:
    """take_along_dim's indices: negative ones count from the end (MLX's take_along_axis does the same)."""
    return checked_index(idx, size, _out_of_bounds(d, size, RuntimeError), "take_along_dim", negative=True)


def _broadcast_shape(a, b) -> list:
    """The broadcast of two shapes of the same length, with PyTorch's error."""
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")
        out.append(y if x == 1 else x)
    return out
