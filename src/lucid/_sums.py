"""Float sums that stay accurate at any size.

MLX's CPU backend adds a reduction's elements one after the other into a single accumulator: in float32 the relative
error grows with the count (about 5e-6 at 2**16 uniform values, 6e-5 at 2**24), and once the running sum reaches
2**24 adding 1.0 no longer changes it, so ``mx.ones(2**25).sum()`` is 16777216 and a mean over 10**8 ones is 0.168.
PyTorch and NumPy sum pairwise (in blocks whose sums are then summed), so their error stays near float32's rounding
at every size. ``sum`` here does the same on top of MLX: when a reduction covers more than ``THRESHOLD`` elements it
sums blocks of at most ``BLOCK`` elements, then the blocks' sums in blocks, and so on (log_BLOCK(n) levels). Each
level is one MLX reduction over runs of the input (a reshape, no copy, when the axis divides into blocks; else a
slice for the last, partial block) and the later levels read 1/BLOCK of the data: for large inputs the accurate sum
takes less time than MLX's own (bench/reductions.py), and just past the threshold it adds a few small MLX calls. A
reduction at or below ``THRESHOLD`` elements is MLX's single call, unchanged: the only cost there is one comparison
of Python ints on the static shape.

Every float reduction of lucid goes through this module: the sum, mean, var/std, norm, logsumexp and (long-row)
softmax ops, the losses built on them, the gradient of a broadcast (engine), clip_grad_norm_, batch/layer norm
statistics.
"""
from __future__ import annotations

import math

import mlx.core as mx

THRESHOLD = 1 << 10  # reductions over more elements are summed in blocks (MLX's error at 2**10: about 1e-6; at 2**12
# up to 2e-6, twenty times PyTorch's, which its own test of smooth_l1 against huber over 64x64 values caught)
BLOCK = 1 << 8  # elements per block (MLX's sequential error over 256 values: about 2e-7)
enabled = [True]  # bench/ measures the cost by turning the blocking off; nothing else should

_HALF = (mx.float16, mx.bfloat16)


def _axes(axis, ndim: int) -> tuple:
    """MLX's ``axis`` (None, an int or a sequence; negative allowed) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        return (axis % ndim,) if ndim else ()
    return tuple(sorted(a % ndim for a in axis))


def count(shape: tuple, axes: tuple) -> int:
    return math.prod(shape[a] for a in axes)


def blocked(a: mx.array, axes: tuple) -> bool:
    """Whether a float reduction of ``a`` over ``axes`` (sorted, non-negative) takes the blocked path."""
    return count(a.shape, axes) > THRESHOLD and enabled[0] and mx.issubdtype(a.dtype, mx.inexact)


def sum(a: mx.array, axis=None, keepdims: bool = False) -> mx.array:  # noqa: A001
    """``mx.sum(a, axis, keepdims)``, accurate at any size for float and complex dtypes (see the module's
    docstring). float16/bfloat16 are summed in float32 there, as PyTorch accumulates them."""
    axes = _axes(axis, a.ndim)
    if not blocked(a, axes):
        return mx.sum(a, axis=axes, keepdims=keepdims)
    out = _levels(a.astype(mx.float32) if a.dtype in _HALF else a, axes).astype(a.dtype)
    return out if keepdims else mx.squeeze(out, axes)


def mean(a: mx.array, axis=None, keepdims: bool = False) -> mx.array:
    """``mx.mean``, accurate at any size; float16/bfloat16 accumulate in float32 at every size (MLX's own mean of
    2**17 float16 values of 300 overflows to inf; PyTorch's is 300)."""
    axes = _axes(axis, a.ndim)
    if a.dtype in _HALF:
        return mean(a.astype(mx.float32), axes, keepdims).astype(a.dtype)
    if not blocked(a, axes):
        return mx.mean(a, axis=axes, keepdims=keepdims)
    return sum(a, axes, keepdims) / count(a.shape, axes)


def var(a: mx.array, axis, dof, keepdims: bool = False) -> mx.array:
    """Two-pass variance: the squared deviations from the (accurate) mean, summed accurately, over ``dof``."""
    axes = _axes(axis, a.ndim)
    centered = a - mean(a, axes, keepdims=True)
    return sum(centered * centered, axes, keepdims) / dof


def logsumexp(a: mx.array, axis=None, keepdims: bool = False) -> mx.array:
    """``mx.logsumexp``, with the sum of the exponentials accurate at any size."""
    axes = _axes(axis, a.ndim)
    if not blocked(a, axes):
        return mx.logsumexp(a, axis=axes, keepdims=keepdims)
    m = mx.stop_gradient(mx.max(a, axis=axes, keepdims=True))
    m = mx.where(mx.isinf(m), 0, m)  # all -inf (or an inf): exp(a - 0) gives the right 0 or inf
    out = mx.log(sum(mx.exp(a - m), axes, keepdims=True)) + m
    return out if keepdims else mx.squeeze(out, axes)


# ---------------------------------------------------------------------------------------------------- the levels
def _levels(a: mx.array, axes: tuple) -> mx.array:
    """The sum over ``axes`` (kept as size 1), each partial sum covering at most BLOCK elements or partial sums."""
    while count(a.shape, axes) > BLOCK:
        # the innermost reduced axes whose product fits in a block are summed first (for a reduction over trailing
        # axes, contiguous runs: MLX's fastest reduction)
        inner, c = 0, 1
        for ax in reversed(axes):
            if c * a.shape[ax] > BLOCK:
                break
            inner, c = inner + 1, c * a.shape[ax]
        outer = axes[:len(axes) - inner]
        if c > 1:
            a = mx.sum(a, axis=axes[len(axes) - inner:], keepdims=True)
        else:  # the innermost axis alone exceeds a block: sum its blocks, so its size shrinks BLOCK-fold
            a = _block_sums(a, outer[-1])
        axes = outer
    return mx.sum(a, axis=axes, keepdims=True)


def _block_sums(a: mx.array, ax: int) -> mx.array:
    """``a`` with axis ``ax`` (size s) replaced by the sums of its consecutive blocks: ceil(s / b) of them."""
    s = a.shape[ax]
    b = math.gcd(s, BLOCK)  # blocks that divide s need no slicing (sizes are mostly multiples of a power of two)
    if b < max(2, BLOCK // 16):  # too small a divisor: full blocks and a partial last one
        b = BLOCK
    q, r = divmod(s, b)
    head = a if r == 0 else a[(slice(None),) * ax + (slice(0, q * b),)]
    sums = mx.sum(head.reshape(a.shape[:ax] + (q, b) + a.shape[ax + 1:]), axis=ax + 1)
    if r:  # the last, partial block
        tail = mx.sum(a[(slice(None),) * ax + (slice(q * b, s),)], axis=ax, keepdims=True)
        sums = mx.concatenate([sums, tail], axis=ax)
    return sums
