"""Indexing: ``x[key]`` and ``x[key] = value`` with PyTorch's rules, plus nonzero, index_select, index_put,
masked_fill and masked_select.

PyTorch reads a key in two steps, and so does lucid:
1. the basic part — ints (and 0-d integer tensors), slices with positive steps, None, Ellipsis — taken as one view
   (``shape.view_slices``: SelectBackward0, SliceBackward0, ...);
2. the advanced part — integer tensors, lists, numpy arrays and boolean masks — gathered from that view
   (IndexBackward0). With the ints gone, NumPy's rule for where the indexed dims go (in place if the index arrays
   are adjacent, else first) is PyTorch's, and MLX implements it.
The gradient of a gather is a scatter-add (repeated indices accumulate), itself a lucid op whose gradient is a
gather, so higher derivatives work. Boolean masks are the one place that reads values: their indices (the output's
shape) depend on them, and MLX has no nonzero.
"""
from __future__ import annotations

__all__ = ["nonzero", "argwhere", "index_select", "index_put", "masked_fill", "masked_select"]

import operator
import warnings

import mlx.core as mx
import numpy as np

from .._tensor import Tensor, _wrap
from ._core import data, defop, methods
from .elementwise import where
from .shape import _ALL, _FULL, _put, _take, put_slices, take_slices, view_slices, wrap_dim, zeros_for


# ---------------------------------------------------------------------------------------------------- the ops
# the forwards of x[key] (_take) and of "x with x[key] = v" (_put) are shared with the basic indexing ops
def _add_at(base, v, key):
    if isinstance(v, mx.array) and v.dtype != base.dtype:
        v = v.astype(base.dtype)
    return base.at[key].add(v)  # repeated indices add up


def _index_vjp(g, ans, x, key):
    return _index_add(zeros_for(x.shape, g), g, key)


def _gather_part(g, ans, base, v, key):
    return _index(g, key)


_index = defop("index", _take, vjp=_index_vjp, save=None)
_index_select = defop("index_select", _take, vjp=_index_vjp, save=None)
_index_add = defop("index_put", _add_at, save=None, vjp=(lambda g, ans, base, v, key: g, _gather_part))
# written positions of base get no gradient; with repeated indices every copy of v's element gets the gradient of
# that position (as in PyTorch)
_index_put = defop("index_put", _put, save=None,
                   vjp=(lambda g, ans, base, v, key: _index_put(g, 0, key), _gather_part))


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


def _host_index(a: np.ndarray, size: int, d: int) -> mx.array:
    """An index array given on the host (list, numpy): bounds are checked for free here."""
    if a.size:
        bad = a[(a >= size) | (a < -size)]
        if bad.size:
            raise IndexError(f"index {int(bad.flat[0])} is out of bounds for dimension {d} with size {size}")
    return mx.array(a.astype(np.int64))


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
            a = np.array(a)  # the mask's values decide the result's shape
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


def parse_key(shape: tuple, key) -> tuple:
    """PyTorch's two steps for ``x[key]`` on a tensor of ``shape``: ``(basic, advanced)``.

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
        elif kind == "int0d":  # a select whose index stays on the device (not bounds-checked: that would sync)
            basic.append(v)
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
        else:  # "array" (device, not bounds-checked) or "host"
            basic.append(_FULL)
            adv.append(_host_index(v, shape[d], d) if kind == "host" else v)
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


def _region_shape(x: Tensor, basic, adv) -> tuple:
    a = x._st.data  # MLX infers the shape without computing anything
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


def index_put_key(x: Tensor, key, value) -> Tensor:
    """x with ``x[key]`` replaced by ``value`` (a number or a tensor that broadcasts), out of place."""
    basic, adv = parse_key(x.shape, key)
    value = _fit_value(value, _region_shape(x, basic, adv) if isinstance(value, Tensor) else ())
    if adv is None:
        return put_slices(x, value, basic or _ALL)
    if basic is None:
        return _index_put(x, value, adv)
    return put_slices(x, _index_put(take_slices(x, basic), value, adv), basic)


def _setitem(self, key, value) -> None:
    self._inplace(lambda old: index_put_key(old, key, value), via_view=True)


Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem


# ---------------------------------------------------------------------------------------------------- functions
def nonzero(input, *, as_tuple: bool = False):
    """Indices of the nonzero elements: an int64 (N, ndim) tensor, or one 1-d tensor per dim with ``as_tuple``.
    The result's shape depends on the values, so they are read (an evaluation, as in PyTorch's sync)."""
    a = input._to_numpy() if isinstance(input, Tensor) else np.asarray(input)
    if as_tuple:
        return tuple(_wrap(mx.array(i, dtype=mx.int64)) for i in np.nonzero(np.atleast_1d(a)))
    return _wrap(mx.array(np.argwhere(a), dtype=mx.int64))


def argwhere(input) -> Tensor:
    return nonzero(input)


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
        return _index_select(input.reshape(1), (idx.reshape(-1),)).reshape(())
    return _index_select(input, (_FULL,) * d + (idx.reshape(-1),))


def _tensor_key(indices) -> tuple:
    """An advanced key from PyTorch's ``indices`` list: tensors (masks become their indices) or None (whole dim)."""
    key = []
    for i in indices:
        if i is None:
            key.append(_FULL)
            continue
        a = data(i) if isinstance(i, (Tensor, mx.array)) else mx.array(np.asarray(i))
        if a.dtype in (mx.bool_, mx.uint8):
            key += [mx.array(j, dtype=mx.int64) for j in np.nonzero(np.array(a.astype(mx.bool_)))]
        elif mx.issubdtype(a.dtype, mx.integer):
            key.append(a)
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return tuple(key)


def index_put(input, indices, values, accumulate: bool = False) -> Tensor:
    """``input`` with ``input[indices] = values`` (or ``+=`` with ``accumulate``, where repeated indices add up).
    ``indices`` is a tuple of index tensors, as in PyTorch (None keeps a dim whole)."""
    key = _tensor_key(indices)
    values = _fit_value(values, _region_shape(input, None, key) if isinstance(values, Tensor) else ())
    return (_index_add if accumulate else _index_put)(input, values, key)


def _masked_fill_fwd(a, mask, value):
    return mx.where(mask, value.astype(a.dtype) if isinstance(value, mx.array) else mx.array(value, a.dtype), a)


# the mask is passed as an MLX array, so the node keeps it after release (it keeps only shapes of tensors)
_masked_fill = defop("masked_fill", _masked_fill_fwd, save=None,
                     vjp=(lambda g, ans, x, mask, value: where(mask, 0.0, g), None,
                          lambda g, ans, x, mask, value: where(mask, g, 0.0).sum()))


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


def masked_select(input, mask) -> Tensor:
    """The elements of ``input`` where ``mask`` is True (both broadcast), as a 1-d tensor."""
    shape = mx.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    x = input if tuple(input.shape) == shape else input.expand(shape)
    return _getitem(x, np.broadcast_to(mask._to_numpy().astype(bool), shape))


methods(nonzero, argwhere, index_select, index_put, masked_fill, masked_select)
Tensor.index_put_ = lambda self, indices, values, accumulate=False: self._inplace(
    lambda old: index_put(old, indices, values, accumulate))
Tensor.masked_fill_ = lambda self, mask, value: self._inplace(lambda old: masked_fill(old, mask, value))
