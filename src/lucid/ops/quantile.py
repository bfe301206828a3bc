"""Order statistics: ``quantile``, ``nanquantile`` (the five interpolation modes) and ``mode``.

All three sort along the reduced dimension (stable; NaN last) and pick from the sorted values with indices
computed lazily from them, so nothing is read on the host. The picks are differentiable gathers of the sorted
values (whose gradient goes back through the sort's permutation), as PyTorch's: a quantile's gradient is split
between the two order statistics it interpolates, mode's goes to the element its index names.
"""
from __future__ import annotations

__all__ = ["quantile", "nanquantile", "mode"]

import math
from collections import namedtuple

import mlx.core as mx

from .._checks import check_later
from .._tensor import Tensor, _wrap
from . import elementwise as _ew
from . import shape as _sh
from ._core import data, declare
from .index import _gather
from .scan import sort

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")
mode_result = namedtuple("mode", ["values", "indices"])


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan: bool, name: str) -> Tensor:
    if input.dtype not in (mx.float32, mx.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _MODES:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        qa = mx.array([q], input.dtype)
    else:
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        scalar_q = q.ndim == 0
        qa = data(q).reshape(-1)
        check_later(mx.any((qa < 0) | (qa > 1)), lambda _: RuntimeError(
            f"{name}() q values must be in the range [0, 1]"), name)
    # the reduced dim last (all of input flattened when dim is None)
    if dim is None:
        x = input.reshape(-1)
        axis = 0
    else:
        axis = _sh.wrap_dim(dim, input.ndim)
        x = _sh.movedim(input, axis, -1) if input.ndim else input.reshape(1)
    values = sort(x, -1).values  # NaN last
    a = data(x)
    n = a.shape[-1]
    nan = mx.isnan(a)
    lead = a.shape[:-1]
    if ignore_nan:
        last = mx.sum(~nan, axis=-1, keepdims=True).astype(input.dtype) - 1  # an all-NaN slice: -1 (gives NaN)
    else:  # a slice with a NaN: rank n - 1, the NaN itself (PyTorch's rule)
        last = mx.where(mx.any(nan, axis=-1, keepdims=True), mx.array(math.nan, input.dtype),
                        mx.array(n - 1, input.dtype))
    rank = qa * last  # (..., k)
    rank = mx.where(mx.isnan(rank), n - 1, rank)
    if interpolation == "nearest":
        rank = mx.round(rank)  # half to even, as PyTorch's
    below = mx.clip(mx.floor(rank), 0, n - 1).astype(mx.int64)
    above = mx.clip(mx.ceil(rank), 0, n - 1).astype(mx.int64)
    k = qa.shape[0]
    shape = (*lead, k)
    lo = _gather(values, mx.broadcast_to(below, shape), len(shape) - 1)
    if interpolation in ("lower", "nearest"):
        out = lo
    else:
        hi = _gather(values, mx.broadcast_to(above, shape), len(shape) - 1)
        if interpolation == "higher":
            out = hi
        else:
            w = mx.broadcast_to(rank - mx.floor(rank) if interpolation == "linear" else
                                mx.where(below == above, 0.0, 0.5).astype(input.dtype), shape)
            out = _lerp(lo, hi, _wrap(w))
    out = _sh.movedim(out, -1, 0)  # (k, ...)
    if keepdim:
        kept = (1,) * input.ndim if dim is None else tuple(1 if i == axis else s for i, s in enumerate(input.shape))
        out = out.reshape((k, *kept))
    if scalar_q:
        out = out.reshape(out.shape[1:])
    return out


def _lerp(lo, hi, w):
    """PyTorch's lerp: ``lo + w (hi - lo)`` below w = 0.5, ``hi - (hi - lo)(1 - w)`` from there (exact at w = 1)."""
    diff = _ew.sub(hi, lo)
    return _ew.where(_ew.lt(w, 0.5), _ew.add(lo, _ew.mul(w, diff)), _ew.sub(hi, _ew.mul(diff, _ew.rsub(w, 1.0))))


def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
    """The ``q``-quantiles (a number in [0, 1], or a 1-D tensor of them: its dim comes first in the result) of
    ``input`` along ``dim`` (all of it when None). Between two order statistics ``interpolation`` picks linear
    interpolation, the lower, the higher, their midpoint or the nearest. A slice holding a NaN gives NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
    """``quantile`` ignoring NaNs (a slice of NaNs only gives NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


def mode(input, dim: int = -1, keepdim: bool = False) -> mode_result:
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest of those tied) and the index of
    its last occurrence, as PyTorch's. The gradient of ``values`` goes to that element."""
    if input.ndim == 0:
        return mode_result(input.clone(), _wrap(mx.zeros((), mx.int64)))
    axis = _sh.wrap_dim(dim, input.ndim)
    if input.shape[axis] == 0:
        raise IndexError(f"mode(): Expected reduction dim {axis} to have non-zero size.")
    a = mx.moveaxis(data(input), axis, -1)
    order = mx.argsort(a, axis=-1)  # stable: equal values keep their original order
    s = mx.take_along_axis(a, order, axis=-1)
    n = a.shape[-1]
    pos = mx.arange(n)
    starts = mx.concatenate([mx.ones((*s.shape[:-1], 1), mx.bool_), s[..., 1:] != s[..., :-1]], axis=-1)
    run_start = mx.cummax(mx.where(starts, pos, 0), axis=-1)
    length = pos - run_start + 1  # the count of the value so far within its run
    best = mx.max(length, axis=-1, keepdims=True)
    # the run end of the first (smallest) value reaching the largest count; its last original index
    run_end = mx.argmax(length == best, axis=-1, keepdims=True)
    idx = mx.take_along_axis(order, run_end, axis=-1).astype(mx.int64)
    idx = mx.moveaxis(idx, -1, axis)
    values = _gather(input, idx, axis)
    if not keepdim:
        values, idx = values.squeeze(axis), mx.squeeze(idx, axis)
    return mode_result(values, _wrap(idx))


declare(quantile, method=True)
declare(nanquantile, method=True)
declare(mode, method=True)
