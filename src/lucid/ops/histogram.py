"""``histogram`` and ``histogramdd`` (numpy's binning, PyTorch's names and errors) and ``gradient`` (numpy's
finite-difference gradient: second-order central differences inside, first- or second-order ones at the edges).

Histograms stay lazy: the range defaults to the data's min and max (computed by MLX, widened by 0.5 either side
when they are equal, as numpy and PyTorch do), each value's bin is found from its position and then corrected
against the actual bin edges (so a value on an edge lands where PyTorch puts it), the last bin includes its right
edge, and values outside the range are not counted. The counts have no gradient. ``gradient`` is built from
slices and arithmetic, so it is differentiable to any order.
"""
from __future__ import annotations

__all__ = ["histogram", "histogramdd", "gradient"]

import builtins
import math
from collections import namedtuple

import mlx.core as mx

from .._dtype import get_default_dtype
from .._tensor import Tensor, _wrap
from . import elementwise as _ew
from . import shape as _sh
from ._core import data, declare
from .index import _scalar_name

histogram_result = namedtuple("histogram", ["hist", "bin_edges"])
histogramdd_result = namedtuple("histogramdd", ["hist", "bin_edges"])


def _edges(points: mx.array, d: int, bins, lo_hi, dtype) -> tuple:
    """(edges of dimension ``d``, whether they are evenly spaced)."""
    if isinstance(bins, Tensor):
        return data(bins).astype(dtype), False
    if lo_hi is None:
        lo, hi = (mx.min(points[:, d]), mx.max(points[:, d])) if points.shape[0] else (mx.array(0.0, dtype),) * 2
    else:
        lo, hi = mx.array(lo_hi[0], dtype), mx.array(lo_hi[1], dtype)
    same = lo == hi
    lo, hi = mx.where(same, lo - 0.5, lo), mx.where(same, hi + 0.5, hi)
    i = mx.arange(bins + 1).astype(dtype)
    step = (hi - lo) / bins
    # PyTorch's linspace: from the start for the first half, from the end for the rest (the last edge is hi)
    return mx.where(i < (bins + 1) // 2, lo + step * i, hi - step * (bins - i)), True


def _bin_of(x: mx.array, edges: mx.array, even: bool) -> tuple:
    """(bin index of each value, clipped into range; whether it lies inside [first edge, last edge])."""
    nb = edges.shape[0] - 1
    lo, hi = edges[0], edges[-1]
    inside = (x >= lo) & (x <= hi)
    if even:
        pos = mx.floor((x - lo) * nb / (hi - lo))
        pos = mx.clip(mx.where(mx.isnan(pos), 0, pos), 0, nb - 1).astype(mx.int32)
        # correct a position that rounding put one bin off, against the edges themselves
        pos = mx.where(x < edges[pos], pos - 1, mx.where(x >= edges[mx.minimum(pos + 1, nb)], pos + 1, pos))
    else:
        pos = mx.sum(x[:, None] >= edges[None, :], axis=1) - 1  # the last edge <= x
    pos = mx.clip(mx.where(x == hi, nb - 1, pos), 0, nb - 1).astype(mx.int32)
    return pos, inside


def _check_input(name: str, input, bins) -> None:
    if not mx.issubdtype(input.dtype, mx.floating):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_scalar_name(input.dtype)}'")
    if isinstance(bins, Tensor) and bins.dtype != input.dtype:
        raise RuntimeError(f"{name}: input tensor and bins tensors should have the same dtype, but got input "
                           f"{_scalar_name(input.dtype)} and bins {_scalar_name(bins.dtype)}")


def _histogramdd(points, bins: list, ranges: list | None, weight, density: bool, name: str):
    """Counts over the N x D ``points`` (an MLX array) and the D edge arrays."""
    n, dims = points.shape
    dtype = points.dtype
    edges, flat, keep = [], mx.zeros((n,), mx.int32), mx.ones((n,), mx.bool_)
    for d in range(dims):
        b = bins[d]
        if isinstance(b, Tensor):
            if b.ndim != 1 or b.numel() < 1:
                raise RuntimeError(f"{name}(): bins tensor should have one dimension and at least 1 element, but got "
                                   f"{b.ndim} dimensions and {b.numel()} elements")
        elif b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for dimension {d}")
        lo_hi = None if ranges is None else ranges[d]
        if lo_hi is not None and lo_hi[0] > lo_hi[1]:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo_hi[0]:g} max {lo_hi[1]:g} "
                               f"for dimension {d}")
        e, even = _edges(points, d, b, lo_hi, dtype)
        nb = e.shape[0] - 1
        if nb == 0:
            keep = mx.zeros((n,), mx.bool_)
            pos = mx.zeros((n,), mx.int32)
        else:
            pos, inside = _bin_of(points[:, d], e, even)
            keep = keep & inside
        flat = flat * builtins.max(nb, 1) + pos
        edges.append(e)
    sizes = [e.shape[0] - 1 for e in edges]
    w = mx.ones((n,), dtype) if weight is None else data(weight).reshape(-1).astype(dtype)
    total = math.prod(sizes)
    hist = mx.zeros((total,), dtype)
    if n and total:
        hist = hist.at[mx.where(keep, flat, 0)].add(mx.where(keep, w, 0))
    hist = hist.reshape(sizes)
    if density:
        volume = mx.array(1.0, dtype)
        for d, e in enumerate(edges):
            width = (e[1:] - e[:-1]).reshape([-1 if i == d else 1 for i in range(dims)])
            volume = volume * width
        hist = hist / (mx.sum(hist) * volume)
    return _wrap(hist), [_wrap(e) for e in edges]


def histogram(input, bins=100, *, range=None, weight=None, density: bool = False) -> histogram_result:  # noqa: A002
    """``(hist, bin_edges)`` of the values of ``input`` (a float tensor, read flat): ``bins`` equal bins over
    ``range`` (default: the data's min and max) or the bins between the edges of a 1-D tensor ``bins``. ``weight``
    (input's shape) weighs each value; ``density`` normalizes the counts into a density."""
    _check_input("torch.histogram", input, bins)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError("torch.histogram: if weight tensor is provided it should have the same shape as the input "
                           f"tensor excluding its innermost dimension, but got input with shape "
                           f"{list(input.shape)} and weight with shape {list(weight.shape)}")
    points = data(input).reshape(-1, 1)
    hist, edges = _histogramdd(points, [bins], None if range is None else [tuple(range)], weight, density,
                               "torch.histogram")
    return histogram_result(hist, edges[0])


def histogramdd(input, bins=10, *, range=None, weight=None, density: bool = False) -> histogramdd_result:  # noqa: A002
    """The D-dimensional histogram of the points in the rows of ``input`` (..., D): ``bins`` an int (for every
    dimension), D ints, or D 1-D tensors of edges; ``range`` a flat sequence of 2 D numbers (min, max per dim).
    Returns ``(hist, bin_edges)``, bin_edges a tuple of D tensors."""
    if input.ndim < 1:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 1 dimension")
    dims = input.shape[-1]
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * dims
    for b in per_dim:
        _check_input("torch.histogramdd", input, b)
    if len(per_dim) != dims:
        raise RuntimeError(f"torch.histogramdd: expected {dims} sequences of bin edges for each dimension of input "
                           f"but got {len(per_dim)}")
    ranges = None
    if range is not None:
        r = list(range)
        if len(r) != 2 * dims:
            raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range should have {2 * dims} "
                               f"elements, but got {len(r)}")
        ranges = [(r[2 * d], r[2 * d + 1]) for d in builtins.range(dims)]
    points = data(input).reshape(-1, dims)
    hist, edges = _histogramdd(points, per_dim, ranges, weight, density, "torch.histogramdd")
    return histogramdd_result(hist, tuple(edges))


# ---------------------------------------------------------------------------------------------------- gradient
def _along(x, d: int, start, stop) -> Tensor:
    return _sh.narrow(x, d, start, stop - start)


def _diff_uniform(f, d: int, h, edge_order: int) -> Tensor:
    n = f.shape[d]
    inner = _ew.div(_ew.sub(_along(f, d, 2, n), _along(f, d, 0, n - 2)), 2.0 * h)
    if edge_order == 1:
        first = _ew.div(_ew.sub(_along(f, d, 1, 2), _along(f, d, 0, 1)), h)
        last = _ew.div(_ew.sub(_along(f, d, n - 1, n), _along(f, d, n - 2, n - 1)), h)
    else:
        first = _ew.div(_ew.add(_ew.add(_ew.mul(_along(f, d, 0, 1), -3.0), _ew.mul(_along(f, d, 1, 2), 4.0)),
                                _ew.neg(_along(f, d, 2, 3))), 2.0 * h)
        last = _ew.div(_ew.add(_ew.sub(_ew.mul(_along(f, d, n - 1, n), 3.0), _ew.mul(_along(f, d, n - 2, n - 1), 4.0)),
                               _along(f, d, n - 3, n - 2)), 2.0 * h)
    return _sh.cat([first, inner, last], d)


def _diff_coordinates(f, d: int, x, edge_order: int) -> Tensor:
    """numpy's second-order differences on the coordinates ``x`` (a 1-D tensor along dim ``d``)."""
    n = f.shape[d]
    shape = [1] * f.ndim
    shape[d] = -1

    def c(t):  # a 1-D coefficient, broadcast along d
        return t.reshape(shape)

    dx = _ew.sub(x[1:], x[:-1])
    hs, hd = dx[:-1], dx[1:]
    a = _ew.neg(_ew.div(hd, _ew.mul(hs, _ew.add(hs, hd))))
    b = _ew.div(_ew.sub(hd, hs), _ew.mul(hs, hd))
    cc = _ew.div(hs, _ew.mul(hd, _ew.add(hs, hd)))
    inner = _ew.add(_ew.add(_ew.mul(c(a), _along(f, d, 0, n - 2)), _ew.mul(c(b), _along(f, d, 1, n - 1))),
                    _ew.mul(c(cc), _along(f, d, 2, n)))
    if edge_order == 1:
        first = _ew.div(_ew.sub(_along(f, d, 1, 2), _along(f, d, 0, 1)), dx[0:1].reshape(shape))
        last = _ew.div(_ew.sub(_along(f, d, n - 1, n), _along(f, d, n - 2, n - 1)), dx[-1:].reshape(shape))
    else:
        first = _three_point(f, d, dx[0], dx[1], (0, 1, 2), shape, first_edge=True)
        last = _three_point(f, d, dx[-1], dx[-2], (n - 1, n - 2, n - 3), shape, first_edge=False)
    return _sh.cat([first, inner, last], d)


def _three_point(f, d, h1, h2, at, shape, first_edge: bool) -> Tensor:
    """numpy's second-order one-sided difference at an edge (h1 the step next to it, h2 the one after)."""
    s = -1.0 if not first_edge else 1.0
    a = _ew.mul(_ew.div(_ew.add(_ew.mul(h1, 2.0), h2), _ew.mul(h1, _ew.add(h1, h2))), -s)
    b = _ew.mul(_ew.div(_ew.add(h1, h2), _ew.mul(h1, h2)), s)
    c = _ew.mul(_ew.div(h1, _ew.mul(h2, _ew.add(h1, h2))), -s)
    i, j, k = at
    terms = [_ew.mul(coef.reshape([1] * len(shape)), _along(f, d, p, p + 1)) for coef, p in ((a, i), (b, j), (c, k))]
    return _ew.add(_ew.add(terms[0], terms[1]), terms[2])


def gradient(input, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """The gradient of the samples ``input`` along each of ``dim`` (an int, a sequence, or all dims): central
    differences inside, one-sided ones of order ``edge_order`` (1 or 2) at the edges. ``spacing`` is one number
    (the step of every dim), one number per dim, or one 1-D tensor of coordinates per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [_sh.wrap_dim(d, input.ndim) for d in dims]
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    f = input if input.is_floating_point() or input.is_complex() else input.to(get_default_dtype())
    out = []
    for d, h in zip(dims, steps):
        if isinstance(h, Tensor) and h.ndim == 1:
            if h.shape[0] != f.shape[d]:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device and to have as many "
                                   f"elements as the dimension {d} of the input")
            out.append(_diff_coordinates(f, d, h.to(f.dtype), edge_order))
        else:
            out.append(_diff_uniform(f, d, h, edge_order))  # (a 0-d tensor step stays a tensor: no host read)
    return tuple(out)


declare(histogram, method=True)
