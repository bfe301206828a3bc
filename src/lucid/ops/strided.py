"""Strided access on lucid's layout: ``as_strided`` (a view), ``as_strided_``, ``as_strided_scatter``,
``Tensor.unfold`` (sliding windows, a view), ``fill_diagonal_`` and the deprecated out-of-place ``Tensor.resize``/
``resize_as``.

A lucid tensor's elements are always laid out contiguously in row-major order, so its "storage" here is its own
elements, read flat: ``as_strided(x, size, stride, offset)`` picks ``x.reshape(-1)[offset + sum_i j_i stride_i]``.
For a contiguous PyTorch tensor (and a contiguous view of one, whose storage offset counts from its first element)
this is PyTorch's result; where PyTorch would read past the tensor into the rest of a base's storage, lucid raises
PyTorch's out-of-bounds error instead. Every position is checked against the tensor's size before MLX sees it.
The picks are a gather, so the gradient is a scatter-add (overlapping windows add up, as PyTorch's
AsStridedBackward); a write through the view is an as_strided_scatter into the base.
"""
from __future__ import annotations

__all__ = ["as_strided", "as_strided_", "as_strided_scatter"]

import math
import warnings

import mlx.core as mx

from .._tensor import Tensor, _wrap
from .._views import OVERLAP_MESSAGE
from ._core import declare
from .index import _index_put, _take_flat
from .shape import _size_arg, reshape, wrap_dim


def _positions(input, size, stride, storage_offset) -> mx.array:
    """The flat positions ``as_strided`` reads, after PyTorch's checks (in its words)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    offset = 0 if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    empty = any(s == 0 for s in size)
    needed = 0 if empty else offset + sum((n - 1) * st for n, st in zip(size, stride)) + 1
    item = input.element_size()
    if needed > input.numel():
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {item} requiring a storage size of {needed * item} are out of bounds for "
                           f"storage of size {input.numel() * item}")
    index = mx.int32 if needed < 2 ** 31 else mx.int64
    pos = mx.array(offset, index)
    for d, (n, st) in enumerate(zip(size, stride)):
        pos = pos + (mx.arange(n, dtype=index) * st).reshape((1,) * d + (n,) + (1,) * (len(size) - d - 1))
    return mx.broadcast_to(pos, size)


def _overlaps(size: tuple, stride) -> bool:
    """Whether the layout surely writes one position twice: PyTorch's test (a dimension of size > 1 with stride 0;
    other overlaps are allowed, and one of the values written to a position wins)."""
    return any(n > 1 and int(st) == 0 for n, st in zip(size, stride))


def _strided(input, pos: mx.array) -> Tensor:
    return _take_flat(input, (pos,))


def _strided_scatter(input, src, pos: mx.array) -> Tensor:
    return reshape(_index_put(reshape(input, (-1,)), src, (pos.reshape(-1),)), tuple(input.shape))


def as_strided(input, size, stride, storage_offset=None) -> Tensor:
    """The view of ``input``'s elements (read flat) with shape ``size`` whose element ``[j0, j1, ...]`` is element
    ``storage_offset + sum j_i * stride_i``; writing into it writes into ``input``."""
    pos = _positions(input, size, stride, storage_offset)
    view = _strided(input, pos)._set_view_of(
        input, lambda b: _strided(b, pos), lambda b, v: _strided_scatter(b, reshape(v, (-1,)), pos))
    if _overlaps(tuple(pos.shape), stride):
        view._ex().overlap = True  # in-place writes into it are refused
    return view


def as_strided_scatter(input, src, size, stride, storage_offset=None) -> Tensor:
    """``input`` with the elements ``as_strided(input, size, stride, storage_offset)`` names replaced by ``src``
    (a copy)."""
    pos = _positions(input, size, stride, storage_offset)
    if tuple(src.shape) != tuple(pos.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(pos.shape)}")
    if _overlaps(pos.shape, stride):
        raise RuntimeError(OVERLAP_MESSAGE)
    return _strided_scatter(input, reshape(src.to(input.dtype), (-1,)), pos)


def as_strided_(input, size, stride, storage_offset=None) -> Tensor:
    """In-place ``as_strided``: ``input`` takes the strided shape and values (its own elements, read flat, are the
    storage); views taken of it before write back through ``as_strided_scatter``."""
    pos = _positions(input, size, stride, storage_offset)
    before = _wrap(input._storage.data)
    return input._inplace(lambda x: _strided(x, pos),
                          inverse=lambda v: _strided_scatter(before, reshape(v, (-1,)), pos))


# ---------------------------------------------------------------------------------------------------- methods
def _unfold(self, dimension: int, size: int, step: int) -> Tensor:
    """Every window of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim (a view):
    ``dimension`` becomes the number of windows, ``(n - size) // step + 1``."""
    d = wrap_dim(dimension, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    shape = list(self.shape) or [1]
    strides = list(self.stride()) or [1]
    windows = (n - size) // step + 1
    new_shape = shape[:d] + [windows] + shape[d + 1:] + [size]
    new_strides = strides[:d] + [strides[d] * step] + strides[d + 1:] + [strides[d]]
    if not self.ndim:
        new_shape, new_strides = [size], [1]
    return as_strided(self, new_shape, new_strides, 0)


def _fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
    """Write ``fill_value`` on the main diagonal (all dims of a >2-D tensor must be equal); ``wrap``: for a tall
    matrix, start again below the first square, as numpy's ``fill_diagonal``."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    step = sum(self.stride())  # from one diagonal element to the next, read flat
    end = self.numel() if wrap or self.ndim > 2 else min(self.shape[1] ** 2, self.numel())
    count = len(range(0, end, step))
    if count == 0:
        return self
    pos = mx.arange(count, dtype=mx.int32) * step
    return self._inplace(lambda old: _strided_scatter(old, fill_value, pos), overlap_ok=True)


_RESIZE_MESSAGE = ("requested resize to {} ({} elements in total), but the given tensor has a size of {} ({} "
                   "elements). autograd's resize can only change the shape of a given tensor, while preserving the "
                   "number of elements. ")


def _shape_text(shape) -> str:
    return "x".join(str(s) for s in shape) if shape else "{}"


def _resize(self, *sizes) -> Tensor:
    """Deprecated out-of-place resize: ``self`` in shape ``sizes``, which must hold as many elements (a copy,
    differentiable)."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = _size_arg(sizes)
    if math.prod(shape) != self.numel():
        raise RuntimeError(_RESIZE_MESSAGE.format(_shape_text(shape), math.prod(shape), _shape_text(self.shape),
                                                  self.numel()))
    return reshape(self, shape).clone()


def _resize_as(self, other) -> Tensor:
    """Deprecated out-of-place resize to ``other``'s shape."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    shape = tuple(other.shape)
    if math.prod(shape) != self.numel():
        raise RuntimeError(_RESIZE_MESSAGE.format(_shape_text(shape), math.prod(shape), _shape_text(self.shape),
                                                  self.numel()))
    return reshape(self, shape).clone()


declare(as_strided, method=True)
declare(as_strided_scatter, method=True)
declare(as_strided_, method=True)
declare(_unfold, method="unfold")
declare(_fill_diagonal_, method="fill_diagonal_")
declare(_resize, method="resize")
declare(_resize_as, method="resize_as")
