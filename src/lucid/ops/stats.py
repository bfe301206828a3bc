"""Logical reductions, counting and statistics: all, any, count_nonzero, bincount, histc, diff, cov, corrcoef,
cdist.

diff, cov, corrcoef and cdist are compositions of differentiable lucid ops (their gradients, and higher ones, come
from those ops: cdist's is 0 where two points coincide, as PyTorch's). all, any, count_nonzero, bincount and histc
have integer or counting results and no gradient (PyTorch has none either). bincount's output length depends on
the largest value, so it reads the values (a sync, as in PyTorch); the others stay lazy.
"""
from __future__ import annotations

__all__ = ["all", "any", "count_nonzero", "bincount", "histc", "diff", "cov", "corrcoef", "cdist"]

import builtins
import math
import warnings

import mlx.core as mx

from .._checks import checked_index
from .._dtype import dtype_name
from .._tensor import Tensor, _wrap
from ._core import data, declare, defop
from .elementwise import clamp, sqrt
from .linalg import diagonal, matmul
from .reduce import _axes, norm
from .shape import cat, narrow, wrap_dim

_all = defop("all", lambda a, axes, keepdim: mx.all(a, axis=axes, keepdims=keepdim), differentiable=False)
_any = defop("any", lambda a, axes, keepdim: mx.any(a, axis=axes, keepdims=keepdim), differentiable=False)


@declare(method=True)
def all(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element (over ``dim``: an int, a tuple, or None for all) is nonzero."""
    return _all(input, _axes(dim, input.ndim), keepdim)


@declare(method=True)
def any(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where some element (over ``dim``) is nonzero."""
    return _any(input, _axes(dim, input.ndim), keepdim)


_count_nonzero = defop("count_nonzero", lambda a, axes: mx.sum(a != 0, axis=axes).astype(mx.int64),
                       differentiable=False)


@declare(method=True)
def count_nonzero(input, dim=None) -> Tensor:
    """The number of nonzero elements (over ``dim``), as int64."""
    return _count_nonzero(input, _axes(dim, input.ndim))


# ---------------------------------------------------------------------------------------------------- counting
def _bin_error(v=None) -> RuntimeError:
    """PyTorch's one message for any input bincount cannot count (the offending value ``v`` is not part of it)."""
    return RuntimeError("bincount only supports 1-d non-negative integral inputs.")


@declare(method=True)
def bincount(input, weights=None, minlength: int = 0) -> Tensor:
    """How many times each value 0, 1, ..., max(input) occurs in the 1-d non-negative integer ``input`` (summing
    ``weights`` instead of ones when given); at least ``minlength`` bins. The number of bins depends on the values:
    they are read (a sync, as in PyTorch)."""
    a = data(input)
    if a.ndim != 1 or not mx.issubdtype(a.dtype, mx.integer):
        raise _bin_error()
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and tuple(weights.shape) != tuple(a.shape):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    host = input._to_numpy()  # evaluates once, and marks the values known: the check below happens at once
    if host.size and host.min() < 0:
        raise _bin_error(host.min())
    n = builtins.max(minlength, int(host.max()) + 1 if host.size else 0)
    w = mx.ones(a.shape, mx.int64) if weights is None else data(weights)
    out_dtype = w.dtype if weights is None or mx.issubdtype(w.dtype, mx.floating) else mx.float64
    if a.size == 0:
        return _wrap(mx.zeros((n,), out_dtype))
    idx = checked_index(a, n, _bin_error, "bincount")
    return _wrap(mx.zeros((n,), out_dtype).at[idx].add(w.astype(out_dtype)))


def _histc_fwd(a, bins, lo, hi):
    if lo == hi:  # the range of the data (lazy), widened by 1 on each side if it is one value
        lo, hi = mx.min(a), mx.max(a)
        same = lo == hi
        lo, hi = mx.where(same, lo - 1, lo), mx.where(same, hi + 1, hi)
    inside = (a >= lo) & (a <= hi)
    # bin of each value; the maximum falls into the last bin. The clip makes every index valid by construction
    # (out-of-range values add 0), so no bounds check is needed
    idx = mx.clip(mx.floor((a - lo) * bins / (hi - lo)), 0, bins - 1).astype(mx.int32)
    return mx.zeros((bins,), a.dtype).at[idx.reshape(-1)].add(inside.reshape(-1).astype(a.dtype))


_histc = defop("histc", _histc_fwd, differentiable=False)


@declare(method=True)
def histc(input, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """Histogram of ``bins`` equal bins over [min, max] (the data's range when min == max); values outside are
    ignored."""
    if not mx.issubdtype(input.dtype, mx.floating):
        raise RuntimeError(f"\"histogram_cpu\" not implemented for '{dtype_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError("torch.histc: bins must be > 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    if math.isinf(min) or math.isinf(max) or math.isnan(min) or math.isnan(max):
        raise RuntimeError(f"torch.histc: range of [{min}, {max}] is not finite")
    return _histc(input, int(bins), float(min), float(max))


# ---------------------------------------------------------------------------------------------------- differences
@declare(method=True)
def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` are concatenated first)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    parts = [t if t.ndim else t.expand(*input.shape[:d], 1, *input.shape[d + 1:]) for t in (prepend, input, append)
             if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        x = narrow(x, d, 1, size - 1) - narrow(x, d, 0, size - 1)
        if x.dtype == mx.bool_:
            x = x != 0
    return x


# ---------------------------------------------------------------------------------------------------- cov, corrcoef
def _weight(w, name: str, num_obs: int):
    if w is None:
        return None
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {w.ndim} dimensions")
    if w.numel() != num_obs:
        raise RuntimeError(f"cov(): expected {name} to have the same number of observations as input but got "
                           f"{w.numel()} and {num_obs}")
    if name == "fweights" and mx.issubdtype(w.dtype, mx.floating):
        raise RuntimeError("cov(): expected fweights to have integral dtype")
    return w


@declare(method=True)
def cov(input, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in the columns), with
    frequency weights ``fweights`` and observation weights ``aweights`` (PyTorch's formula)."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {input.ndim} "
                           "dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not mx.issubdtype(x.dtype, mx.inexact):
        x = x.float()
    num_obs = x.shape[1]
    fw, aw = _weight(fweights, "fweights", num_obs), _weight(aweights, "aweights", num_obs)
    w = fw if aw is None else (aw if fw is None else fw * aw)
    if w is None:
        w_sum = num_obs
        avg = x.mean(1)
    else:
        w = w.to(x.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is None or aw is None:
        norm_factor = w_sum - correction
    elif correction == 0:
        norm_factor = w_sum
    else:
        norm_factor = w_sum - correction * (w * aw).sum() / w_sum
    if isinstance(norm_factor, Tensor):
        norm_factor = clamp(norm_factor, 0)  # PyTorch warns and uses 0 (its check is a sync; this stays lazy)
    elif norm_factor <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = 0
    xc = x - avg.unsqueeze(1)
    xw = (xc if w is None else xc * w).t()
    c = matmul(xc, xw.conj() if xw.is_complex() else xw)
    return (c / norm_factor).squeeze()


@declare(method=True)
def corrcoef(input) -> Tensor:
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = sqrt(diagonal(c))
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return clamp(c, -1, 1)


# ---------------------------------------------------------------------------------------------------- distances
def cdist(x1, x2, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distances between the rows of ``x1`` (B, P, M) and of ``x2`` (B, R, M): (B, P, R) (leading batch
    dims broadcast). Computed from the differences (exact, also for p = 2), with PyTorch's gradient (0 where two
    points coincide)."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if not (mx.issubdtype(x1.dtype, mx.floating) and mx.issubdtype(x2.dtype, mx.floating)):
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {dtype_name(x1.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, dim=-1)
