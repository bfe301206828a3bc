"""Pooling beyond ops/pool.py: max unpooling, power-average (LP) pooling, fractional max pooling, and the
``*_with_indices`` spellings of max pooling that PyTorch's functional namespace exports.

- ``max_unpool{1,2,3}d`` write each value at its index in a zero plane (one op: its VJP reads the gradient back at
  the same indices). Indices go through ``lucid._checks`` first, so an out-of-range one raises PyTorch's "Found an
  invalid max index" and MLX never writes outside the plane.
- ``lp_pool{1,2,3}d`` are PyTorch's composite: ``(sum over the window of x**p) ** (1/p)`` from an average pool.
- ``fractional_max_pool{2,3}d`` take the max over windows whose starts follow PyTorch's pseudo-random sequence
  ``int((i + u) * alpha) - int(u * alpha)`` (alpha = (in - k) / (out - 1), the last window flush with the end),
  one ``u`` per (sample, channel, dim) from ``_random_samples`` (drawn from lucid's generator when not given).
  The values are max pooling's gather at the chosen positions (pool_nodes.max_pool_values), so gradients of every
  order come from gather's.
"""
from __future__ import annotations

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
           "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices"]

import math

import mlx.core as mx

from .. import _cpu_route
from .._checks import checked_index
from .._creation import rand
from .._dtype import int64
from .._tensor import Tensor, _wrap
from ._core import data, defop
from .activation import relu
from .conv import batched, gather_axis, ntuple
from .pool_nodes import max_pool_values
from .elementwise import abs, sign
from .index import _scalar_name
from .pool import (adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d,
                   max_pool1d, max_pool2d, max_pool3d)

_DIM_WORDS = ("time", "height", "width")


# ---------------------------------------------------------------------------------------------------- with indices
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool1d(..., return_indices=True)``: (values, indices) whatever ``return_indices`` says."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool2d(..., return_indices=True)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool3d(..., return_indices=True)``."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool1d(..., return_indices=True)``."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool2d(..., return_indices=True)``."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool3d(..., return_indices=True)``."""
    return adaptive_max_pool3d(input, output_size, True)


# ---------------------------------------------------------------------------------------------------- max unpooling
def _write(v, flat, size):
    # assignment, not a sum: overlapping max pools repeat an index with the same value (PyTorch assigns too)
    out = mx.zeros((size,), v.dtype)
    if v.size:  # (MLX's scatter refuses an empty update)
        out[flat] = v
    return out


_unpool = defop("max_unpool", _write, save=None, node="MaxUnpoolBackward0",
                vjp=lambda g, ans, v, flat, size: gather_axis(g, flat, 0))


def _unpool_size(input, k, s, p, output_size) -> list:
    """PyTorch's _unpool_output_size: the inverse of the pool's output size, or ``output_size`` when it is one the
    pool could have come from (its last n entries; N and C may lead)."""
    n = len(k)
    default = [(input.shape[input.ndim - n + d] - 1) * s[d] + k[d] - 2 * p[d] for d in range(n)]
    if output_size is None:
        ret = default
    else:
        output_size = list(output_size)
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                             f"length of '{len(output_size)}'")
        for d in range(n):
            lo, hi = default[d] - s[d], default[d] + s[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
        ret = output_size
    for d in range(n):
        if ret[d] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={ret[d]}")
    return [int(r) for r in ret]


def _max_unpool(n, input, indices, kernel_size, stride, padding, output_size) -> Tensor:
    k = ntuple(kernel_size, n, "kernel_size")
    s = k if stride is None else ntuple(stride, n, "stride")
    p = ntuple(padding, n, "padding")
    out = _unpool_size(input, k, s, p, output_size)
    kernel_n = 2 if n == 1 else n  # PyTorch unpools 1-d as 2-d over a trailing unit dim, and words it so
    words = out + [1] if n == 1 else out
    if indices.dtype != int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_scalar_name(indices.dtype)}")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to max_unpooling{kernel_n}d should be a {kernel_n + 1}d or {kernel_n + 2}d "
                           f"Tensor, but got a tensor with {input.ndim + (n == 1)} dimensions.")
    if tuple(indices.shape) != tuple(input.shape):
        shape = list(input.shape) + [1] if n == 1 else list(input.shape)
        ishape = list(indices.shape) + [1] if n == 1 else list(indices.shape)
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({shape}) but got "
                           f"indices tensor with shape: {ishape}")
    x, unbatched = batched(input, n, f"max_unpool{kernel_n}d")
    nb, c = x.shape[:2]
    plane = math.prod(out)

    def invalid(v):
        return RuntimeError(f"Found an invalid max index: {v} (output volumes are of size {'x'.join(map(str, words))}")

    idx = checked_index(data(indices), plane, invalid, f"max_unpool{n}d").reshape(nb * c, math.prod(x.shape[2:]))
    flat = idx + (mx.arange(nb * c, dtype=idx.dtype) * plane).reshape(-1, 1)
    y = _unpool(x.reshape(-1), flat.reshape(-1), nb * c * plane).reshape(nb, c, *out)
    return y.reshape(y.shape[1:]) if unbatched else y


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The partial inverse of max_pool1d: each value of ``input`` at its ``indices`` in a zero row, the rest 0.

    :param indices: the maxima's indices, as ``max_pool(return_indices=True)`` gives them.
    """
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The partial inverse of max_pool2d (indices flat per plane, h * W + w); ``output_size`` settles the size
    when several input sizes pool to the same output.

    :param indices: the maxima's indices, as ``max_pool(return_indices=True)`` gives them.
    """
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The partial inverse of max_pool3d.

    :param indices: the maxima's indices, as ``max_pool(return_indices=True)`` gives them.
    """
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


# ---------------------------------------------------------------------------------------------------- LP pooling
def _lp_pool(n, pool, max_pool, input, norm_type, kernel_size, stride, ceil_mode) -> Tensor:
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):  # the max (or min) of |x| over each window
        if norm_type > 0:
            return max_pool(abs(input), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool(-abs(input), kernel_size, stride, 0, 1, ceil_mode)
    k = kernel_size if n == 1 and isinstance(kernel_size, int) else math.prod(ntuple(kernel_size, n, "kernel_size"))
    if stride is not None:
        out = pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (sign(out) * relu(abs(out))).mul(k).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """``(sum over each window of x ** p) ** (1 / p)`` over (N, C, L); p = inf is the max of |x|."""
    return _lp_pool(1, avg_pool1d, max_pool1d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """The power-average pool over (N, C, H, W)."""
    return _lp_pool(2, avg_pool2d, max_pool2d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """The power-average pool over (N, C, D, H, W)."""
    return _lp_pool(3, avg_pool3d, max_pool3d, input, norm_type, kernel_size, stride, ceil_mode)


# ---------------------------------------------------------------------------------------------------- fractional
def _starts(u: mx.array, size: int, out: int, k: int) -> mx.array:
    """PyTorch's generate_intervals for samples ``u`` (P,): the window starts (P, out), in u's dtype's arithmetic."""
    starts = mx.zeros((u.shape[0], out), mx.int32)
    if out > 1:
        alpha = mx.array((size - k) / (out - 1), u.dtype) if u.dtype == mx.float64 else \
            mx.array(size - k, u.dtype) / mx.array(out - 1, u.dtype)
        i = mx.arange(out, dtype=u.dtype)
        starts = ((i + u[:, None]) * alpha).astype(mx.int32) - (u * alpha).astype(mx.int32)[:, None]
    if out > 0:
        starts = mx.concatenate([starts[:, :-1], mx.full((u.shape[0], 1), size - k, mx.int32)], axis=1)
    return starts


def _fractional_size(fn: str, name: str, value, n: int) -> tuple:
    """An int, or exactly n of them (PyTorch's fractional pools take no 1-element sequence)."""
    if isinstance(value, int):
        return (value,) * n
    if len(value) != n:
        raise RuntimeError(f"{fn}: {name} must either be a single Int or tuple of {'Ints' if n == 2 else 'three Ints'}")
    return tuple(int(v) for v in value)


@_cpu_route.float64_args
def _fractional(n, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    fn = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if len(output_ratio) > n:
            raise ValueError(f"{fn} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) * n if len(output_ratio) == 1 else tuple(output_ratio)
        output_size = [int(input.shape[input.ndim - n + d] * ratio[d]) for d in range(n)]
    if _random_samples is None:
        n_batch = 1 if input.ndim == n + 1 else input.shape[0]
        _random_samples = rand(n_batch, input.shape[-n - 1], n, dtype=input.dtype)
    k, out = _fractional_size(fn, "kernel_size", kernel_size, n), _fractional_size(fn, "output_size", output_size, n)
    x, unbatched = batched(input, n, fn)
    nb, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    samples = _random_samples
    if samples.shape[0] < nb:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[-1] != n:
        raise RuntimeError(f"Expect _random_samples.size({samples.ndim - 1}) equals to {n}; got {samples.shape[-1]}.")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    name = "fractional_max_pool3d_out()" if n == 3 else f"{fn}()"
    shape = list(input.shape)
    for d in range(0 if unbatched else 1, len(shape)):
        if shape[d] == 0:
            raise RuntimeError(f"{name}: Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{shape} with dimension {d} being empty.")
    for d in range(n):
        if out[d] + k[d] - 1 >= spatial[d]:
            word = _DIM_WORDS[3 - n + d]
            raise RuntimeError(f"{name}: pool {word} {k[d]} too large relative to input {word} {spatial[d]}")
    planes, plane = nb * c, math.prod(spatial)
    if planes == 0 or min(out) == 0:  # an empty output (still on the graph: its gradient is zeros)
        idx = mx.zeros((nb, c, *out), mx.int64)
    else:
        # PyTorch's samples are (u_w, u_h) in 2-d and (u_t, u_h, u_w) in 3-d
        u = data(samples)[:nb, :c].reshape(planes, n)
        order = (1, 0) if n == 2 else (0, 1, 2)
        flat, stride = 0, 1
        for d in reversed(range(n)):
            pos = _starts(u[:, order[d]], spatial[d], out[d], k[d])[:, :, None] + mx.arange(k[d], dtype=mx.int32)
            shape = [planes] + [1] * (2 * n)
            shape[1 + d], shape[1 + n + d] = out[d], k[d]
            flat = flat + pos.reshape(shape) * stride
            stride *= spatial[d]
        flat = flat.reshape(planes, math.prod(out), math.prod(k))  # windows, then their elements (row-major)
        windows = mx.take_along_axis(data(x).reshape(planes, plane), flat.reshape(planes, -1), axis=1)
        windows = windows.reshape(flat.shape)
        # PyTorch keeps the first maximum, except that a NaN wins and a later NaN replaces an earlier one
        nan = mx.isnan(windows)
        last_nan = flat.shape[2] - 1 - mx.argmax(nan[..., ::-1], axis=2)
        pick = mx.where(mx.any(nan, axis=2), last_nan, mx.argmax(windows, axis=2))
        pick = mx.stop_gradient(mx.take_along_axis(flat, pick[..., None].astype(mx.int32), axis=2)[..., 0])
        idx = pick.reshape(nb, c, *out).astype(mx.int64)
    indices = _wrap(idx)  # saved by the values' node, so an in-place change to it before backward raises
    values = max_pool_values[f"FractionalMaxPool{n}DBackward0"](x, indices)
    if unbatched:
        values, indices = values.reshape(values.shape[1:]), indices.reshape(indices.shape[1:])
    return values, indices


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Fractional max pooling (Graham, 2014) over (N, C, H, W): max over ``kernel_size`` windows placed at
    pseudo-random, increasing starts so that the output is ``output_size`` (or ``output_ratio`` of the input).
    Returns (values, indices), the indices flat per plane as max_pool2d's.

    :param output_ratio: the output's size as a fraction of the input's (instead of ``output_size``).
    :param _random_samples: the pseudo-random window offsets, (N, C, dims), in [0, 1) (default: drawn from lucid's generator).
    """
    return _fractional(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Fractional max pooling over (N, C, T, H, W); returns (values, indices).

    :param output_ratio: the output's size as a fraction of the input's (instead of ``output_size``).
    :param _random_samples: the pseudo-random window offsets, (N, C, dims), in [0, 1) (default: drawn from lucid's generator).
    """
    return _fractional(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling over (N, C, H, W); the indices too with ``return_indices``.

    :param output_ratio: the output's size as a fraction of the input's (instead of ``output_size``).
    :param _random_samples: the pseudo-random window offsets, (N, C, dims), in [0, 1) (default: drawn from lucid's generator).
    """
    values, idx = _fractional(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)
    return (values, idx) if return_indices else values


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling over (N, C, T, H, W); the indices too with ``return_indices``.

    :param output_ratio: the output's size as a fraction of the input's (instead of ``output_size``).
    :param _random_samples: the pseudo-random window offsets, (N, C, dims), in [0, 1) (default: drawn from lucid's generator).
    """
    values, idx = _fractional(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)
    return (values, idx) if return_indices else values
