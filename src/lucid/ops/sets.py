"""Sets, searching and grids: unique, unique_consecutive, searchsorted, bucketize, meshgrid, repeat_interleave.

unique and unique_consecutive return as many elements as there are distinct values, so they read the values (a
sync, as in PyTorch); as in PyTorch their values require grad when the input does (a backward through them raises:
the derivative is not implemented), and the inverse and counts never do. searchsorted and bucketize stay lazy: a
vectorised binary search (log2(n) gathers, each index clipped into range by construction). meshgrid and
repeat_interleave are made of differentiable ops (expand, reshape, index_select); repeat_interleave with a tensor of
repeats reads the repeats to know the output's length, unless ``output_size`` is given.
"""
from __future__ import annotations

__all__ = ["unique", "unique_consecutive", "searchsorted", "bucketize", "meshgrid", "repeat_interleave"]

import warnings

import mlx.core as mx
import numpy as np

from .. import _cpu_route
from .._checks import checked_index, mark_known
from .._dtype import dtype_name
from .._tensor import Tensor, _wrap
from ._core import data, declare, defop
from .index import index_select
from .shape import wrap_dim


# ---------------------------------------------------------------------------------------------------- unique
def _host(input) -> np.ndarray:
    return input._to_numpy() if isinstance(input, Tensor) else np.asarray(input)


# the values' node: it only marks them as depending on the input (PyTorch has no derivative for these either)
_values_of = {name: defop(name, lambda a, values: values, vjp=None, save=None, node=node)
              for name, node in [("unique", "Unique2Backward0"), ("unique_dim", "UniqueDimBackward0"),
                                 ("unique_consecutive", "UniqueConsecutiveBackward0")]}


def _result(input, op: str, values: np.ndarray, inverse, counts, return_inverse: bool, return_counts: bool):
    values = mx.array(values, dtype=input.dtype)
    out = [_values_of[op](input, values) if isinstance(input, Tensor) else _wrap(values)]
    if return_inverse:
        out.append(_wrap(mark_known(mx.array(inverse, dtype=mx.int64))))
    if return_counts:
        out.append(_wrap(mark_known(mx.array(counts, dtype=mx.int64))))
    return out[0] if len(out) == 1 else tuple(out)


@declare(method=True)
def unique(input, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: int | None = None):
    """The distinct values of ``input`` (flattened) or the distinct slices along ``dim``, in ascending order
    (``sorted=False`` also returns them sorted, which PyTorch allows); optionally the index of each input element
    (slice) in the result (``return_inverse``, input's shape or (size of dim,)) and how often each occurs."""
    a = _host(input)
    if dim is None:
        values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        inverse = inverse.reshape(a.shape)
    else:
        d = wrap_dim(dim, a.ndim)
        values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=d)
        inverse = inverse.reshape(-1)
    return _result(input, "unique" if dim is None else "unique_dim", values, inverse, counts, return_inverse,
                   return_counts)


@declare(method=True)
def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None):
    """Collapse each run of equal consecutive values (or slices along ``dim``) to one."""
    a = _host(input)
    if dim is None:
        flat = a.reshape(-1)
        change = flat[1:] != flat[:-1]
        shape = a.shape
        take = flat
        d = 0
    else:
        d = wrap_dim(dim, a.ndim)
        moved = np.moveaxis(a, d, 0)
        change = (moved[1:] != moved[:-1]).reshape(max(moved.shape[0] - 1, 0), -1).any(axis=1)
        shape = (a.shape[d],)
        take = a
    n = take.shape[d]
    starts = np.flatnonzero(np.concatenate([[True], change])) if n else np.zeros(0, np.int64)
    values = np.take(take, starts, axis=d)
    inverse = (np.cumsum(np.concatenate([[0], change.astype(np.int64)])) if n else np.zeros(0, np.int64))
    counts = np.diff(np.concatenate([starts, [n]]))
    return _result(input, "unique_consecutive", values, inverse.reshape(shape), counts, return_inverse,
                   return_counts)


# ---------------------------------------------------------------------------------------------------- searching
def _lower_bound(seq: mx.array, v: mx.array, right: bool) -> mx.array:
    """For each v (..., M), the first position in the sorted rows seq (..., N) whose entry is >= v (> v with
    ``right``): a binary search run for every value at once, a fixed log2(N) + 1 rounds."""
    n = seq.shape[-1]
    lo = mx.zeros(v.shape, mx.int32)
    hi = mx.full(v.shape, n, mx.int32)
    for _ in range(max(n, 1).bit_length()):
        active = lo < hi
        mid = (lo + hi) // 2
        # the clip keeps inactive lanes (mid may be n there) in range, so no bounds check is needed
        entry = mx.take_along_axis(seq, mx.clip(mid, 0, max(n - 1, 0)), axis=-1)
        before = entry <= v if right else entry < v
        lo = mx.where(active & before, mid + 1, lo)
        hi = mx.where(active & ~before, mid, hi)
    return lo


def _sorter_error(v) -> RuntimeError:
    return RuntimeError("torch.searchsorted(): sorter index out of range")


@_cpu_route.float64_args
def searchsorted(sorted_sequence, input, *, out_int32: bool = False, right: bool = False, side: str | None = None,
                 sorter=None) -> Tensor:
    """Indices where the values of ``input`` would be inserted into ``sorted_sequence`` (sorted along its last
    dim; 1-d, or with the same leading dims as ``input``) to keep it sorted: the first such place, or the last with
    ``right=True`` / ``side="right"``. ``sorter`` sorts an unsorted sequence (argsort's indices)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    seq = data(sorted_sequence)
    scalar = not isinstance(input, Tensor)
    v = mx.array(input) if scalar else data(input)
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got boundaries "
                           "tensor [] and input value tensor " + str(list(v.shape)))
    if sorter is not None:
        s = data(sorter)
        if tuple(s.shape) != tuple(seq.shape):
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(seq.shape)}and got sorter tensor {list(s.shape)}")
        if not mx.issubdtype(s.dtype, mx.integer):
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got "
                               f"{dtype_name(s.dtype)}")
        seq = mx.take_along_axis(seq, checked_index(s, seq.shape[-1], _sorter_error, "searchsorted"), axis=-1)
    if seq.ndim == 1:
        out = _lower_bound(seq, v.reshape(-1), right).reshape(v.shape)
    else:
        if seq.shape[:-1] != v.shape[:-1]:
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                               "dimensions of boundaries tensor and input value tensor must match, but we got "
                               f"boundaries tensor {list(seq.shape)} and input value tensor {list(v.shape)}")
        out = _lower_bound(seq, v, right)
    return _wrap(out.astype(mx.int32 if out_int32 else mx.int64))


@_cpu_route.float64_args
def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each value among the sorted 1-d ``boundaries``: i with boundaries[i-1] < x <= boundaries[i]
    (``right=True``: boundaries[i-1] <= x < boundaries[i])."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ---------------------------------------------------------------------------------------------------- grids
def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-d (or 0-d) tensors: with ``indexing="ij"`` (the default, with PyTorch's warning
    when not given) output i varies along dim i; with ``"xy"`` the first two dims are swapped (Cartesian)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.ndim}D")
    if len({t.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    n = len(flat)
    grids = [t.reshape(*[-1 if j == i else 1 for j in range(n)]).expand(*shape) for i, t in enumerate(flat)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _repeats_error(v) -> RuntimeError:
    return RuntimeError("repeats can not be negative")


@declare(method=True)
def repeat_interleave(input, repeats=None, dim: int | None = None, *, output_size: int | None = None) -> Tensor:
    """Repeat each element (each slice along ``dim``; the flattened input when None) ``repeats`` times: an int, or
    a tensor with one count per element. ``repeat_interleave(counts)`` gives ``arange(len(counts))`` repeated."""
    if repeats is None:  # the one-argument form: input holds the repeats
        return repeat_interleave(_wrap(mx.arange(input.shape[0] if input.ndim else 1, dtype=mx.int64)), input, 0,
                                 output_size=output_size)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        x = x.reshape(1)
    size = x.shape[d]
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.ndim <= 1:
        repeats = int(repeats.item()) if repeats.ndim == 0 else repeats.expand(size)
    if isinstance(repeats, int):
        if repeats < 0:
            raise _repeats_error(repeats)
        shape = list(x.shape)
        expanded = x.unsqueeze(d + 1).expand(*shape[:d + 1], repeats, *shape[d + 1:])
        return expanded.reshape(*shape[:d], size * repeats, *shape[d + 1:])
    r = data(repeats)
    if r.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if not mx.issubdtype(r.dtype, mx.integer):
        raise RuntimeError(f"repeats has to be Long or Int tensor, but got {dtype_name(r.dtype)}")
    if r.shape[0] != size:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{r.shape[0]} and input.size({d}) = {size}")
    if output_size is None:
        host = repeats._to_numpy()  # the output's length depends on the repeats: read them (PyTorch syncs too)
        if host.size and host.min() < 0:
            raise _repeats_error(host.min())
        output_size = int(host.sum())
    # element j of the output comes from the input slice whose cumulative count first exceeds j
    ends = mx.cumsum(r.astype(mx.int64))
    src = _lower_bound(ends, mx.arange(output_size, dtype=mx.int64), right=True)
    src = checked_index(src.astype(mx.int64), size, lambda v: RuntimeError(
        f"repeat_interleave: output_size={output_size} is larger than the sum of repeats"), "repeat_interleave")
    return index_select(x, d, _wrap(src))
