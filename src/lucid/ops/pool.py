"""Pooling (max and average, fixed and adaptive windows), interpolation, padding and pixel (un)shuffle.

Each op is an index map or a linear map over windows, built from the primitives in ``conv.py``, so gradients of
every order come from theirs:
- max pooling finds, without gradient, the flat index of each window's first maximum (PyTorch's tie rule; NaN
  wins), then gathers the values there (pool_nodes.max_pool_values, whose node saves the indices it returns, as
  PyTorch's does): the VJP scatter-adds g to those positions, and the second derivative gathers again; a window
  of padding only is -inf, as in PyTorch; when the windows tile the input (kernel == stride, no padding or
  dilation: the usual 2x2 pool) and no indices are asked for, each tile offset is a strided view of x, the values are their elementwise maximum, and the first maxima are
  found only in backward, where a mask over x's shape sends g to them (no gather, scatter or arg-reduction);
- average pooling is a convolution with a ones kernel divided by the window counts: its VJP is the transposed
  convolution that spreads g over each window; adaptive average pooling multiplies by per-dim averaging matrices;
- interpolation gathers the source taps of each output index along each dim (last dim first, the order in which
  PyTorch sums them) and weights them by constants (with antialias, the taps of a filter widened by the
  downscale factor); reflect / replicate / circular padding gather the mirrored, clamped or wrapped index along
  each padded dim.
"""
from __future__ import annotations

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "interpolate", "upsample", "pad", "pixel_shuffle",
           "pixel_unshuffle", "channel_shuffle"]

import functools
import itertools
import math

import mlx.core as mx
import numpy as np

from .. import _cpu_route, _legacy
from .._dtype import check_new_shape
from .._tensor import Tensor, _wrap
from ._core import data, defop
from .elementwise import where
from .conv import _conv, batched, gather_axis, ntuple, pad_constant, window_table
from .pool_args import adaptive_size, require_nonempty, require_positive, refuse_huge
from .pool_nodes import empty_adaptive_output, max_pool_values, padding_windows
from ..autograd.grad_mode import state as _gm_state  # lucid.autocast's hook (ops/autocast_policy.py)


# ---------------------------------------------------------------------------------------------------- windows
def _out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape: with ceil_mode the last window must start inside the input or the left
    padding."""
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


@functools.lru_cache(maxsize=512)
def _pool_rows(size: int, out: int, k: int, s: int, p: int, d: int) -> tuple[tuple, tuple]:
    """Per window, the input positions of its k elements; those in the padding (or past it, in ceil mode) are
    replaced by the nearest valid position of the same window, which keeps each row non-decreasing: the first
    maximum in row-major window order is then PyTorch's first maximum, and padding never wins.

    A window of padding only (dilation can step over the whole input) gets position 0. The second tuple holds each
    window's first position at or past 0, where PyTorch's kernel starts (its last position is never negative, as
    padding <= kernel_size // 2): at or past ``size`` exactly when the window holds no element."""
    rows, firsts = [], []
    for o in range(out):
        pos = [o * s - p + j * d for j in range(k)]
        valid = [q for q in pos if 0 <= q < size]
        rows.append(tuple(min(max(q, valid[0]), valid[-1]) for q in pos) if valid else (0,) * k)
        firsts.append(next(q for q in pos if q >= 0))
    return tuple(rows), tuple(firsts)


@functools.lru_cache(maxsize=512)
def _adaptive_bounds(size: int, out: int) -> tuple:
    """PyTorch's adaptive windows: [floor(o*size/out), ceil((o+1)*size/out))."""
    return tuple(((o * size) // out, -(-(o + 1) * size // out)) for o in range(out))


@functools.lru_cache(maxsize=512)
def _adaptive_rows(size: int, out: int) -> tuple:
    """Adaptive windows padded to the longest one by repeating their last position."""
    bounds = _adaptive_bounds(size, out)
    k = max(e - s for s, e in bounds)
    return tuple(tuple(min(s + j, e - 1) for j in range(k)) for s, e in bounds)


def _max_windows(x: Tensor, rows: list) -> mx.array:
    """The flat per-plane indices (int64) of the first maximum of each window, the windows given per dim as rows of
    positions."""
    (n, c), spatial = x.shape[:2], x.shape[2:]
    out = [len(r) for r in rows]
    if n * c == 0:  # nothing to pool, and MLX's argmax refuses an empty reduction
        return mx.zeros((n, c, *out), mx.int64)
    table = window_table([mx.array(r, dtype=mx.int32) for r in rows], spatial)  # (K, L)
    k, length = table.shape
    windows = mx.take(data(x).reshape(n, c, math.prod(spatial)), table, axis=2)  # (N, C, K, L)
    # MLX's argmax: the first maximum, NaN counting as largest (stop_gradient: indices inside an mx.grad trace)
    first = mx.stop_gradient(mx.argmax(windows, axis=2).astype(mx.int32))
    idx = mx.take(table.reshape(-1), first * length + mx.arange(length))  # (N, C, L) positions in the plane
    return idx.reshape(n, c, *out).astype(mx.int64)


def _max_at(node: str, x: Tensor, idx: mx.array, unbatched: bool, return_indices: bool, empty=None):
    """The values of x at the maxima ``idx`` (recorded as ``node``, which saves the indices returned), and the
    indices when asked for; ``empty`` masks the windows of padding only (their value is the lowest, -inf)."""
    indices = _wrap(idx)
    values = max_pool_values[node](x, indices) if empty is None else max_pool_values[node](x, indices, empty)
    values = _unbatch(values, unbatched)
    return (values, _unbatch(indices, unbatched)) if return_indices else values


# Tiled windows (kernel == stride, no padding or dilation: the common 2x2 pool) need no index table: x reshaped to
# (N, C, o1, k1, o2, k2, ...) holds each tile's elements at fixed offsets, so each offset is a strided view of x and
# the max, the first maximum and the gradient's mask are elementwise over those views (fused by mx.compile: one
# pass over x each), with no transposed copy and no arg-reduction.
def _tile_views(a: mx.array, k: tuple) -> tuple[list, list]:
    """The K = prod(k) strided views (N, C, *out) of the tile elements, row-major over the offsets, and ``out``;
    the part of x past the last whole tile is dropped."""
    out = [size // kk for size, kk in zip(a.shape[2:], k)]
    a = a[(slice(None), slice(None)) + tuple(slice(0, o * kk) for o, kk in zip(out, k))]
    a = a.reshape(*a.shape[:2], *(v for o, kk in zip(out, k) for v in (o, kk)))
    views = [a[(slice(None), slice(None)) + tuple(v for j in offset for v in (slice(None), j))]
             for offset in itertools.product(*map(range, k))]
    return views, out


@mx.compile
def _max_of(*views):
    m = views[0]
    for v in views[1:]:
        m = mx.maximum(m, v)  # NaN propagates, as in PyTorch
    return m


@mx.compile
def _first_hit(m, *views):
    """The offset of each tile's first element equal to its max ``m`` (the first NaN where m is NaN)."""
    first = mx.full(m.shape, len(views) - 1, dtype=mx.int32)  # m's shape even for a 1-element tile (no loop)
    for j in range(len(views) - 2, -1, -1):
        v = views[j]
        first = mx.where((v == m) | (v != v), mx.array(j, dtype=mx.int32), first)
    return first


def _first_max(x: mx.array, k: tuple, m: mx.array) -> mx.array:
    """(N, C, *out) int32: the offset in its tile of each tile's first maximum ``m``."""
    return mx.stop_gradient(_first_hit(m, *_tile_views(x, k)[0]))


def _max_tiles_vjp(g, ans, x, k, indices=None):
    """g goes to each tile's first maximum: a mask (constant: its derivative is zero) over x's tiled shape selects
    it (zeros past the last whole tile). ``indices``, when returned, are only saved (PyTorch's node saves them)."""
    n = len(k)
    xa = data(x)
    m = data(ans)
    first = _first_max(xa, k, m)
    lead, out = g.shape[:2], g.shape[2:]
    offsets = 0
    for i, kk in enumerate(k):  # (1, 1, 1, k1, 1, k2, ...): each element's row-major offset in its tile
        shape = [1] * (2 + 2 * n)
        shape[3 + 2 * i] = kk
        offsets = offsets * kk + mx.arange(kk, dtype=mx.int32).reshape(shape)
    tiled = [v for o in out for v in (o, 1)]
    mask = first.reshape(*lead, *tiled) == offsets
    spread = where(_wrap(mask), g.reshape(*lead, *tiled), 0.0)
    spread = spread.reshape(*lead, *(o * kk for o, kk in zip(out, k)))
    rest = tuple((0, size - o * kk) for size, o, kk in zip(xa.shape[2:], out, k))
    return pad_constant(spread, ((0, 0), (0, 0)) + rest) if any(r for _, r in rest) else spread


def _max_tiles_fwd(a, k, indices=None):
    return _max_of(*_tile_views(a, k)[0])


_max_tiles = {n: defop(f"max_pool{n}d", _max_tiles_fwd, vjp=_max_tiles_vjp, save="both",
                       node=f"MaxPool{n}DWithIndicesBackward0")
              for n in (1, 2, 3)}


def _unbatch(t, unbatched: bool):
    return t.reshape(t.shape[1:]) if unbatched else t


def _pool_args(n, kernel_size, stride, padding, dilation):
    k = ntuple(kernel_size, n, "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else ntuple(stride, n, "stride")
    p, d = ntuple(padding, n, "padding"), ntuple(dilation, n, "dilation")
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_size={list(k)}")
    if min(s) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation={list(d)}")
    for kk, pp, dd in zip(k, p, d):
        if pp < 0 or pp > kk // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    return k, s, p, d


def _pool_out(x, k, s, p, d, ceil_mode) -> list:
    out = [_out_size(*a, ceil_mode) for a in zip(x.shape[2:], k, s, p, d)]
    if min(out) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x.shape[1:]))}). Calculated output size: "
                           f"({'x'.join(map(str, [x.shape[1]] + out))}). Output size is too small")
    return out


# ---------------------------------------------------------------------------------------------------- max pooling
@_cpu_route.float64_args
def _max_pool(n, fn, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    x, unbatched = batched(input, n, fn)
    require_positive(n, fn, input)
    k, s, p, d = _pool_args(n, kernel_size, stride, padding, dilation)
    out = _pool_out(x, k, s, p, d, ceil_mode)
    tiles = k == s and max(p) == 0 and max(d) == 1 and not ceil_mode
    if tiles and not return_indices:  # strided views, elementwise max, a mask in backward
        return _unbatch(_max_tiles[n](x, k), unbatched)
    if tiles:  # the flat position in the plane of each tile's first maximum
        first = _first_max(data(x), k, _max_of(*_tile_views(data(x), k)[0]))
        idx = 0
        for i, (kk, size) in enumerate(zip(k, x.shape[2:])):
            inner = math.prod(k[i + 1:])
            o = mx.arange(out[i], dtype=mx.int32).reshape((-1,) + (1,) * (n - 1 - i))
            idx = idx * size + o * kk + (first // inner) % kk
        indices = _wrap(idx.astype(mx.int64))  # saved by the values' node (its backward, the mask, needs not read it)
        return _unbatch(_max_tiles[n](x, k, indices), unbatched), _unbatch(indices, unbatched)
    rows, firsts = zip(*[_pool_rows(*a) for a in zip(x.shape[2:], out, k, s, p, d)])
    idx = _max_windows(x, rows)
    empty = padding_windows(firsts, x.shape[2:])
    if empty is not None:  # windows of padding only: PyTorch's index for them, and -inf as their value
        idx = mx.where(empty[0], empty[1], idx)
        return _max_at(f"MaxPool{n}DWithIndicesBackward0", x, idx, unbatched, return_indices, empty[0])
    return _max_at(f"MaxPool{n}DWithIndicesBackward0", x, idx, unbatched, return_indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over sliding windows of (N, C, L); ``stride`` defaults to ``kernel_size``, padding counts as -inf.
    With ``return_indices`` also returns each maximum's index in its (unpadded) input plane."""
    return _max_pool(1, "max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over sliding windows of (N, C, H, W); indices are flat per plane: ``h * W + w``."""
    return _max_pool(2, "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over sliding windows of (N, C, D, H, W)."""
    return _max_pool(3, "max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@_cpu_route.float64_args
def _adaptive_max_pool(n, fn, input, output_size, return_indices):
    if isinstance(input, Tensor):  # the max pools refuse empty channels too
        require_nonempty(fn, input, 1)
    x, unbatched = batched(input, n, fn)
    out = adaptive_size(fn, output_size, input.shape, n)
    refuse_huge(list(x.shape[:2]) + ([1] if n == 1 else []) + list(out), x.dtype.size, True)
    if min(out) == 0:
        shape = (*input.shape[:-n], *out)
        values = empty_adaptive_output[fn](input, shape, fn)
        return (values, _wrap(mx.zeros(shape, mx.int64))) if return_indices else values
    idx = _max_windows(x, [_adaptive_rows(L, o) for L, o in zip(x.shape[2:], out)])
    return _max_at(f"AdaptiveMaxPool{n}DBackward0", x, idx, unbatched, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max over ``output_size`` windows that tile (N, C, L): window o spans [floor(oL/out), ceil((o+1)L/out))."""
    return _adaptive_max_pool(1, "adaptive_max_pool1d", input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max over adaptive windows of (N, C, H, W); ``output_size`` is an int or (H_out, W_out), None keeps a dim."""
    return _adaptive_max_pool(2, "adaptive_max_pool2d", input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size``; ``return_indices`` also gives the argmax."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("adaptive_max_pool3d", adaptive_max_pool3d, input, output_size, return_indices)
    return _adaptive_max_pool(3, "adaptive_max_pool3d", input, output_size, return_indices)


# ---------------------------------------------------------------------------------------------------- average pooling
def _counts(size, out, k, s, p, include_pad) -> list:
    """PyTorch's divisor per window: the window clipped to the padded input (count_include_pad) or to the input."""
    counts = []
    for o in range(out):
        start = o * s - p
        end = min(start + k, size + p)
        counts.append(end - start if include_pad else min(end, size) - max(start, 0))
    return counts


@_cpu_route.float64_args
def _avg_pool(n, fn, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    x, unbatched = batched(input, n, fn)
    require_positive(n, fn, input)
    k, s, p, _ = _pool_args(n, kernel_size, stride, padding, 1)
    out = _pool_out(x, k, s, p, (1,) * n, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    (b, c), spatial = x.shape[:2], x.shape[2:]
    if k == s and max(p) == 0 and not any(ceil_mode and size % kk for size, kk in zip(spatial, k)):
        # non-overlapping windows that tile the (cropped) input: a reshape and a mean
        if any(o * kk != size for o, kk, size in zip(out, k, spatial)):
            x = x[(slice(None), slice(None)) + tuple(slice(0, o * kk) for o, kk in zip(out, k))]
        tiles = x.reshape(b, c, *[v for o, kk in zip(out, k) for v in (o, kk)])
        axes = tuple(range(3, 3 + 2 * n, 2))
        if divisor_override is not None:
            return _unbatch(tiles.sum(axes) / divisor_override, unbatched)
        return _unbatch(tiles.mean(axes), unbatched)
    # the right padding that makes the convolution produce exactly `out` windows (more than p in ceil mode)
    hi = tuple(max(pp, (o - 1) * ss + kk - size - pp) for size, o, kk, ss, pp in zip(spatial, out, k, s, p))
    ones = _wrap(mx.ones((1, 1, *k), x.dtype))
    sums = _conv(x.reshape(b * c, 1, *spatial), ones, s, p, hi, (1,) * n, (1,) * n, 1, False)
    sums = sums.reshape(b, c, *out)
    if divisor_override is not None:
        return _unbatch(sums / divisor_override, unbatched)
    counts = [_counts(*a, count_include_pad) for a in zip(spatial, out, k, s, p)]
    if all(min(cs) == max(cs) for cs in counts):
        return _unbatch(sums / math.prod(cs[0] for cs in counts), unbatched)
    divisor = mx.array(1.0)
    for d, cs in enumerate(counts):
        divisor = divisor * mx.array(cs).reshape([-1] + [1] * (n - 1 - d))
    return _unbatch(sums / _wrap(divisor.astype(x.dtype)), unbatched)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over sliding windows of (N, C, L); zero padding is counted in the divisor if ``count_include_pad``."""
    return _avg_pool(1, "avg_pool1d", input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over sliding windows of (N, C, H, W); ``divisor_override`` replaces the window size as divisor.

    :param divisor_override: divide each window's sum by this instead of its size.
    """
    return _avg_pool(2, "avg_pool2d", input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-d average pooling over (N, C, D, H, W) or (C, D, H, W) with the given window, stride and padding.

    :param divisor_override: divide each window's sum by this instead of its size.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("avg_pool3d", avg_pool3d, input, kernel_size, stride, padding, ceil_mode,
                                       count_include_pad, divisor_override)
    return _avg_pool(3, "avg_pool3d", input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _along(x: Tensor, axis: int, matrix: Tensor) -> Tensor:
    """``x`` with the (out, size) ``matrix`` applied along ``axis`` (a product over that dim)."""
    if axis == x.ndim - 1:
        return x @ matrix.transpose(0, 1)
    return (x.transpose(axis, -1) @ matrix.transpose(0, 1)).transpose(axis, -1)


@_cpu_route.float64_args
def _adaptive_avg_pool(n, fn, input, output_size):
    x, unbatched = batched(input, n, fn)
    out = adaptive_size(fn, output_size, input.shape, n)
    if all(o == 1 for o in out):  # global average pooling (PyTorch's mean: NaN over an empty dim)
        return _unbatch(x.mean(tuple(range(2, 2 + n)), keepdim=True), unbatched)
    # (PyTorch's 3-d pool refuses empty channels too, its 2-d one only empty spatial dims)
    require_nonempty(fn, input, 1 if n == 3 else input.ndim - n + (fn == "adaptive_avg_pool1d"))
    spatial = x.shape[2:]
    refuse_huge(list(x.shape[:2]) + list(out), x.dtype.size, False)
    shape = (*input.shape[:-n], *out)
    if 0 in (shape[:-1] + (1,) + shape[-1:] if n == 1 else shape)[1:]:  # an empty non-batch dim, as PyTorch sees it
        return empty_adaptive_output[fn](input, shape, fn)
    y = x
    for d in reversed(range(n)):
        if out[d] == spatial[d]:
            continue
        rows = []
        for s, e in _adaptive_bounds(spatial[d], out[d]):
            rows.append([1.0 / (e - s) if s <= i < e else 0.0 for i in range(spatial[d])])
        y = _along(y, 2 + d, _wrap(mx.array(rows, dtype=x.dtype)))
    if y is x:
        y = x * 1
    return _unbatch(y, unbatched)


def adaptive_avg_pool1d(input, output_size):
    """Mean over ``output_size`` windows that tile (N, C, L) (as in adaptive_max_pool1d)."""
    return _adaptive_avg_pool(1, "adaptive_avg_pool1d", input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Mean over adaptive windows of (N, C, H, W); ``output_size`` 1 is global average pooling."""
    return _adaptive_avg_pool(2, "adaptive_avg_pool2d", input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size``, with windows chosen to fit."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("adaptive_avg_pool3d", adaptive_avg_pool3d, input, output_size)
    return _adaptive_avg_pool(3, "adaptive_avg_pool3d", input, output_size)


# ---------------------------------------------------------------------------------------------------- interpolate
_INTERPOLATING = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}  # their number of spatial dims
_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def _mode_error(ndim: int, mode: str):
    return NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the modes: "
                               f"nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})")


def _cubic_near(v, a: float):
    """Keys' cubic convolution kernel at distance |v| <= 1."""
    return ((a + 2) * v - (a + 3)) * v * v + 1


def _cubic_far(v, a: float):
    """Keys' cubic convolution kernel at distance 1 < |v| < 2."""
    return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a


def _cubic_weights(t):
    """Keys' cubic convolution weights (A = -0.75) of the 4 taps around a source point at fraction t."""
    a = -0.75
    return [_cubic_far(t + 1, a), _cubic_near(t, a), _cubic_near(1 - t, a), _cubic_far(2 - t, a)]


def _aa_filter(mode: str, x: np.ndarray) -> np.ndarray:
    """The antialiasing filters: the triangle (bilinear) and Keys' cubic with A = -0.5 (PIL's; not the -0.75 of
    plain bicubic)."""
    x = np.abs(x)
    if mode == "bilinear":
        return np.where(x < 1, 1 - x, 0).astype(x.dtype)
    return np.where(x < 1, _cubic_near(x, -0.5), np.where(x < 2, _cubic_far(x, -0.5), 0)).astype(x.dtype)


def _aa_taps(mode, size, out, scale, align_corners, dtype) -> list:
    """[(source indices (out,), weights (out,))] of antialiased resampling along one dim, as PyTorch's separable
    CPU kernel computes them: the filter is stretched by the downscale factor, its taps lie in [center - support,
    center + support) with center = scale * (i + 0.5) (align_corners changes only the scale), and the weights of
    each output are normalised to sum 1. The weights depend on the sizes alone, so they are host constants,
    computed in the input's float type where PyTorch stores them in it (and in float64 where its C++ promotes)."""
    if out == size:  # PyTorch skips a dim whose size does not change
        return [(mx.arange(out), None)]
    ft = np.float64 if dtype == mx.float64 else np.float32
    if align_corners:
        sc = ft(size - 1) / ft(out - 1) if out > 1 else ft(0)
    else:
        sc = ft(1.0 / scale) if scale else ft(size) / ft(out)
    half = 1.0 if mode == "bilinear" else 2.0  # half the kernel's width
    support = ft(half * float(sc)) if sc >= 1 else ft(half)
    width = math.ceil(support) * 2 + 1
    invscale = ft(1.0 / float(sc)) if sc >= 1 else ft(1.0)
    center = (float(sc) * (np.arange(out) + 0.5)).astype(ft)
    xmin = np.maximum(np.trunc((center - support).astype(np.float64) + 0.5), 0).astype(np.int64)
    xmax = np.minimum(np.trunc((center + support).astype(np.float64) + 0.5).astype(np.int64), size)
    count = np.clip(xmax - xmin, 0, width)
    j = np.arange(width)
    offset = ((xmin[:, None] + j).astype(ft) - center[:, None]).astype(np.float64)
    w = np.where(j < count[:, None], _aa_filter(mode, ((offset + 0.5) * float(invscale)).astype(ft)), ft(0))
    total = np.zeros(out, ft)
    for k in range(width):  # PyTorch's running sum, in its order
        total = total + w[:, k]
    w = np.where(total[:, None] != 0, w / np.where(total != 0, total, 1)[:, None], w).astype(ft)
    idx = np.clip(xmin[:, None] + j, 0, size - 1).astype(np.int32)
    return [(mx.array(idx[:, k]), mx.array(w[:, k], dtype=dtype)) for k in range(width)]


def _taps(mode, size, out, scale, align_corners, dtype, shortcut) -> list:
    """[(source indices (out,), weights (out,) or None)] whose weighted sum is the interpolation along one dim,
    computed as PyTorch does (its compute dtype: float32 unless float64)."""
    ct = mx.float64 if dtype == mx.float64 else mx.float32
    if mode in ("nearest", "nearest-exact"):
        # PyTorch's 2-D nearest kernel (only it) short-cuts the same and the doubled size
        if mode == "nearest" and shortcut and out == size:
            return [(mx.arange(out), None)]
        if mode == "nearest" and shortcut and out == 2 * size:
            return [(mx.arange(out) // 2, None)]
        # PyTorch computes nearest indices in float32 whatever the input dtype
        sc = mx.array(1.0 / scale, mx.float32) if scale else mx.array(size, mx.float32) / mx.array(out, mx.float32)
        dst = mx.arange(out, dtype=mx.float32) + (0.5 if mode == "nearest-exact" else 0.0)
        return [(mx.minimum(mx.floor(dst * sc).astype(mx.int32), size - 1), None)]
    cubic = mode == "bicubic"
    if out == size and not cubic:  # PyTorch's linear kernels copy a dim whose size does not change
        return [(mx.arange(out), None)]
    dst = mx.arange(out, dtype=ct)
    if align_corners:
        sc = mx.array(size - 1, ct) / mx.array(out - 1, ct) if out > 1 else mx.array(0, ct)
        src = sc * dst
    else:
        sc = mx.array(1.0 / scale, ct) if scale else mx.array(size, ct) / mx.array(out, ct)
        src = sc * (dst + 0.5) - 0.5
        if not cubic:
            src = mx.maximum(src, 0)
    i0 = mx.floor(src).astype(mx.int32)
    if cubic:
        t = src - i0.astype(ct)
        return [(mx.clip(i0 - 1 + j, 0, size - 1), w.astype(dtype)) for j, w in enumerate(_cubic_weights(t))]
    i0 = mx.minimum(i0, size - 1)
    lam = mx.clip(src - i0.astype(ct), 0, 1)
    i1 = i0 + (i0 < size - 1).astype(mx.int32)
    return [(i0, (1 - lam).astype(dtype)), (i1, lam.astype(dtype))]


def _interp_sizes(input, size, scale_factor, recompute_scale_factor) -> tuple[list, list]:
    n, spatial = input.ndim - 2, input.shape[2:]
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != n:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(spatial)} and output size of {size}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, "
                                 "...,oK) format.")
        else:
            size = [size] * n
        integral = (int, np.integer)  # a Python/NumPy int or an integer tensor, as PyTorch's _is_integer
        if not all(isinstance(s, integral) or isinstance(s, Tensor) and not mx.issubdtype(s.dtype, mx.inexact)
                   for s in size):
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], "
                            f"but got size with types {[type(s) for s in size]}")
        return [int(s) for s in size], [None] * n
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != n:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(spatial)} and scale_factor of shape {scale_factor}. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, "
                             "s2, ...,sK) format.")
        factors = [float(f) for f in scale_factor]
    else:
        factors = [float(scale_factor)] * n
    sizes = [math.floor(float(s) * f) for s, f in zip(spatial, factors)]
    return sizes, [None] * n if recompute_scale_factor else factors


@_cpu_route.float64_args
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False) -> Tensor:
    """Resize (N, C, *spatial) to ``size`` or ``scale_factor`` times its size. Modes: 'nearest', 'nearest-exact',
    'linear' (3-D), 'bilinear' (4-D), 'bicubic' (4-D), 'trilinear' (5-D), 'area' (adaptive average pooling).
    ``align_corners`` maps the corner pixels' centers onto each other (linear modes only; default False).
    ``antialias`` (bilinear and bicubic, 4-D): when downsampling, each output averages all the input pixels under
    the filter stretched by the scale (PIL's resampling), as PyTorch does.

    :param size: the output's spatial size.
    :param scale_factor: the multiplier of the spatial size (instead of ``size``).
    :param mode: 'nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear' or 'area'.
    :param recompute_scale_factor: compute the interpolation from the output size rather than ``scale_factor``.
    :param antialias: low-pass filter when downsampling ('bilinear', 'bicubic').
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("interpolate", interpolate, input, size, scale_factor, mode, align_corners,
                                       recompute_scale_factor, antialias)
    n = input.ndim - 2
    if mode not in _MODES:
        raise _mode_error(input.ndim, mode)
    if mode in _INTERPOLATING:
        if align_corners is None:
            align_corners = False
    elif align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):  # PyTorch's words (it has lanczos)
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if not 1 <= n <= 3:
        raise _mode_error(input.ndim, mode)
    if mode in _INTERPOLATING and _INTERPOLATING[mode] != n:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_INTERPOLATING[mode] + 2}D input")
    sizes, scales = _interp_sizes(input, size, scale_factor, recompute_scale_factor)
    if not mx.issubdtype(input.dtype, mx.inexact) and not (input.dtype == mx.uint8 and (
            "nearest" in mode or mode in ("bilinear", "bicubic") and n == 2)):  # PyTorch's CPU kernels' dtypes
        kernel = ("compute_index_ranges_weights" if antialias else f"adaptive_avg_pool{n}d" if mode == "area" else
                  "compute_indices_weights_" + ("nearest" if "nearest" in mode else
                                                "cubic" if mode == "bicubic" else "linear"))
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_legacy.type_name(input.dtype)[6:-6]}\'')
    refuse_huge(list(input.shape[:2]) + list(sizes), input.dtype.size, True)
    if mode == "area":
        return _adaptive_avg_pool(n, f"adaptive_avg_pool{n}d", input, sizes)
    if min(sizes) <= 0 or min(input.shape[2:]) <= 0:
        def named(dims):
            return ", ".join(f"{a}: {v}" for a, v in zip("DHW"[3 - n:], dims))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({named(input.shape[2:])})"
                           f"{' and' if n == 1 else ''} output ({named(sizes)})")
    if input.shape[1] == 0:  # (an empty batch alone is fine)
        raise RuntimeError(f"Non-empty {input.ndim}D data tensor expected but got a tensor with sizes "
                           f"{list(input.shape)}")
    x = input
    for d in reversed(range(n)):  # last dim first: PyTorch's order of summation
        axis, shape = 2 + d, [-1] + [1] * (n - 1 - d)
        y = None
        taps = _aa_taps if antialias else functools.partial(_taps, shortcut=n == 2)
        for idx, w in taps(mode, x.shape[axis], sizes[d], scales[d], align_corners, x.dtype):
            term = gather_axis(x, idx, axis)
            if w is not None:
                term = term * _wrap(w.reshape(shape))
            y = term if y is None else y + term
        x = y
    return x


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None) -> Tensor:
    """Deprecated spelling of ``interpolate``.

    :param size: the output's spatial size.
    :param scale_factor: the multiplier of the spatial size.
    :param mode: as ``interpolate``'s.
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


# ---------------------------------------------------------------------------------------------------- pad
def _source_index(mode: str, size: int, lo: int, hi: int) -> list:
    """For each position of the padded dim, the input position it copies."""
    if mode == "circular":  # PyTorch crops first, then wraps around what is left
        kept = list(range(max(-lo, 0), size - max(-hi, 0)))
        return [kept[i % len(kept)] for i in range(-max(lo, 0), len(kept) + max(hi, 0))]
    out = []
    for i in range(-lo, size + hi):
        if mode == "reflect":
            i = -i if i < 0 else 2 * (size - 1) - i if i >= size else i
        else:  # replicate
            i = min(max(i, 0), size - 1)
        out.append(i)
    return out


def pad(input, pad, mode="constant", value=None) -> Tensor:
    """Pad the last len(pad)//2 dims: ``pad = (left, right, top, bottom, ...)``, last dim first (negative amounts
    crop). Modes: 'constant' (with ``value``, default 0), 'reflect' (mirror without repeating the edge),
    'replicate' (repeat the edge), 'circular' (wrap around).

    :param pad: the padding, (left, right[, top, bottom[, front, back]]) from the last dim backwards.
    :param mode: 'constant', 'reflect', 'replicate' or 'circular'.
    :param value: the fill value of 'constant'.
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    m = len(pad) // 2
    if m > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    pairs = [(0, 0)] * (input.ndim - m) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(m))]
    # negative padding that crops more than the dim, or a pad too large to allocate, raises before MLX sees it
    check_new_shape(tuple(n + lo + hi for n, (lo, hi) in zip(input.shape, pairs)), input.dtype)
    if mode == "constant":
        return pad_constant(input, tuple(pairs), 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if m not in (1, 2, 3) or input.ndim not in (m + 1, m + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode in ("reflect", "replicate") and min(input.shape[input.ndim - m - 1:]) == 0:  # only the batch may be empty
        raise RuntimeError(f"Expected {m + 1}D or {m + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    x = input
    for axis in range(input.ndim - m, input.ndim):
        lo, hi = pairs[axis]
        size = input.shape[axis]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {axis} of input {list(input.shape)}")
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if lo or hi:
            x = gather_axis(x, mx.array(_source_index(mode, size, lo, hi), dtype=mx.int32), axis)
    return x if x is not input else input * 1


# ---------------------------------------------------------------------------------------------------- pixel shuffle
def pixel_shuffle(input, upscale_factor: int) -> Tensor:
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r): channel c*r*r + i*r + j becomes the pixel offset (i, j).

    :param upscale_factor: r: (N, C * r**2, H, W) becomes (N, C, H * r, W * r).
    """
    r = int(upscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    b = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w).permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor: int) -> Tensor:
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W), the inverse of ``pixel_shuffle``.

    :param downscale_factor: r: (N, C, H * r, W * r) becomes (N, C * r**2, H, W).
    """
    r = int(downscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    *batch, c, h, w = input.shape
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    b = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r).permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input, groups: int) -> Tensor:
    """(N, g * k, *) -> (N, k * g, *): channel ``i * k + j`` moves to ``j * g + i`` (ShuffleNet's shuffle)."""
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)
