"""Convolutions (conv1d/2d/3d, conv_transpose1d/2d/3d), im2col (unfold/fold) and the two index primitives the
sliding-window ops are built from (a gather along an axis and its adjoint, constant padding and its adjoint).

One primitive, ``_conv``, computes a general N-d cross-correlation in PyTorch's channels-first layout:

    out[n, g*Og + o, p] = sum_{c < Cg, k} xp[n, g*Cg + c, p*stride + k*dilation] * w[g*Og + o, c, k]

where xp is x with ``input_dilation - 1`` zeros between its elements, padded by ``lo`` / ``hi`` (negative amounts
crop), and ``flip`` reverses the kernel. Its gradient w.r.t. x is again such a convolution (of g dilated by the
stride, with the flipped kernel, channels swapped within each group); its gradient w.r.t. w is ``_conv_wgrad``
(g^T times the im2col patches of x), whose own VJPs are ``_conv`` again. The pair is closed under VJPs, so every
derivative order comes for free. conv_transpose is the x-gradient convolution used as a forward op.

MLX convolves channels-last; the layout change happens inside the primitives. MLX's CPU convolution is fast only
without dilation: its float64 is only float32-accurate, kernel and input dilation take a slow generic path, and
groups work only in 1-D and 2-D, and it refuses integers. So float64, dilated kernels, 3-D groups and integer
dtypes (PyTorch convolves int64 on the CPU) go through an exact im2col + matmul.
An input dilated by a stride (the x-gradient of a strided convolution, conv_transpose) goes through col2im phase
by phase, and its weight gradient through one im2col per output phase, so that no product meets an inserted zero:
MLX's own formulation (a convolution over the dilated input, as ``mx.grad`` of a strided conv2d) multiplies
stride^n times as many elements and is 5-30x slower on the CPU (bench: DCGAN and ResNet layers).
"""
from __future__ import annotations

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold",
           "fold"]

import itertools
import math

import mlx.core as mx
import numpy as np

from .._dtype import promote
from .._tensor import Tensor
from ._core import defop, expect_tensor
from .index import _scalar_name
from ..autograd.function import vmapping
from ..autograd.grad_mode import state as _gm_state  # lucid.autocast's hook (ops/autocast_policy.py)


# ---------------------------------------------------------------------------------------------------- helpers
def ntuple(value, n: int, name: str) -> tuple:
    """An int or a sequence of n ints (PyTorch's ``_ntuple``), as a tuple of n ints."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"convolution dimensions, but got {name}={list(value)}")
    return value


def batched(input: Tensor, n: int, fn: str) -> tuple[Tensor, bool]:
    """``input`` with a batch dim (PyTorch accepts unbatched (C, *spatial) inputs), and whether one was added."""
    expect_tensor(fn, "input", 1, input)
    if input.ndim == n + 1:
        return input.reshape(1, *input.shape), True
    if input.ndim != n + 2:
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {fn}, but got input of "
                           f"size: {list(input.shape)}")
    return input, False


def _pad_crop(a: mx.array, pads: tuple, value=0) -> mx.array:
    """Pad axis i of ``a`` by pads[i] = (lo, hi) with ``value``; a negative amount crops instead."""
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        a = a[tuple(slice(max(-lo, 0), a.shape[i] - max(-hi, 0)) for i, (lo, hi) in enumerate(pads))]
    if any(lo > 0 or hi > 0 for lo, hi in pads):
        a = mx.pad(a, [(max(lo, 0), max(hi, 0)) for lo, hi in pads], constant_values=value)
    return a


# ---------------------------------------------------------------------------------------------------- index primitives
def _scatter_add_fwd(g, idx, axis, size):
    """zeros with ``size`` along ``axis`` where ``out[..., idx[j], ...] += g[..., j, ...]`` (repeats accumulate)."""
    k = idx.ndim
    shape = g.shape[:axis] + (size,) + g.shape[axis + k:]
    if g.size == 0:  # nothing to add (an empty batch): MLX's scatter refuses empty updates with a nonempty index
        return mx.zeros(shape, g.dtype)
    if 0 < axis and axis + k == g.ndim:
        # index dims last: MLX scatters element by element there; with them first it adds whole rows (~5x faster)
        rows = mx.transpose(g, list(range(axis, axis + k)) + list(range(axis)))
        return mx.moveaxis(mx.zeros((size,) + g.shape[:axis], g.dtype).at[idx].add(rows), 0, axis)
    return mx.zeros(shape, g.dtype).at[(slice(None),) * axis + (idx,)].add(g)


# gather_axis: a[..., idx, ...] along one axis (idx of any shape replaces that axis); scatter_add_axis is its
# adjoint, and each is the other's VJP. Pooling, interpolation, non-constant padding and im2col are made of these.
gather_axis = defop("gather_axis", lambda a, idx, axis: mx.take(a, idx, axis=axis), save=None,
                    vjp=lambda g, ans, x, idx, axis: scatter_add_axis(g, idx, axis, x.shape[axis]))
scatter_add_axis = defop("scatter_add_axis", _scatter_add_fwd, save=None,
                         vjp=lambda g, ans, v, idx, axis, size: gather_axis(g, idx, axis))

# constant padding (negative amounts crop); its adjoint crops what was padded and zero-pads what was cropped
pad_constant = defop("constant_pad_nd", _pad_crop, save=None, node="ConstantPadNdBackward0",
                     vjp=lambda g, ans, x, pads, value=0: pad_constant(g, tuple((-lo, -hi) for lo, hi in pads)))


def window_table(positions: list, sizes: tuple) -> mx.array:
    """Flat positions (K, L) of the elements of L windows of K elements in a row-major plane of ``sizes``.

    positions[d] is an int array (L_d, k_d): the index along dim d of element j of window o. Windows and their
    elements are both ordered row-major over the dims (L = prod L_d, K = prod k_d)."""
    n = len(positions)
    flat, stride = 0, 1
    for d in reversed(range(n)):
        shape = [1] * (2 * n)
        shape[d], shape[n + d] = positions[d].shape
        flat = flat + positions[d].reshape(shape) * stride
        stride *= sizes[d]
    k = math.prod(p.shape[1] for p in positions)
    return mx.transpose(flat, list(range(n, 2 * n)) + list(range(n))).reshape(k, -1)


def sliding_positions(out: int, k: int, stride: int, dilation: int) -> mx.array:
    """(out, k): element j of window o starts at o*stride and steps by dilation."""
    return mx.arange(out)[:, None] * stride + mx.arange(k)[None, :] * dilation


# ---------------------------------------------------------------------------------------------------- the primitive
def _dilate(a: mx.array, axis: int, d: int) -> mx.array:
    """``d - 1`` zeros between the elements of ``a`` along ``axis``."""
    if d == 1:
        return a
    n = a.shape[axis]
    a = mx.expand_dims(a, axis + 1)
    a = mx.pad(a, [(0, 0)] * (axis + 1) + [(0, d - 1)] + [(0, 0)] * (a.ndim - axis - 2))
    a = a.reshape(*a.shape[:axis], n * d, *a.shape[axis + 2:])
    return a[(slice(None),) * axis + (slice(0, (n - 1) * d + 1),)]


def _patches(x, stride, lo, hi, dilation, input_dilation, ksize) -> tuple[mx.array, list]:
    """im2col of a channels-last x: its sliding windows (N, *out, K, C) after dilation and padding, and out.
    One strided view of the padded input (window o, tap k reads position o*stride + k*dilation), copied once."""
    n = x.ndim - 2
    for d in range(n):
        x = _dilate(x, d + 1, input_dilation[d])
    x = _pad_crop(x, ((0, 0),) + tuple(zip(lo, hi)) + ((0, 0),))
    out = [(x.shape[d + 1] - (ksize[d] - 1) * dilation[d] - 1) // stride[d] + 1 for d in range(n)]
    elem = [x.shape[-1]] * (n + 2)  # row-major element strides of x: (N, *spatial, C)
    elem[-1] = 1
    for d in range(n, -1, -1):
        elem[d] = elem[d + 1] * x.shape[d + 1]
    strides = ([elem[0]] + [elem[d + 1] * stride[d] for d in range(n)] + [elem[d + 1] * dilation[d] for d in range(n)]
               + [1])
    if vmapping():  # MLX has no batching rule for as_strided: the same windows by gathers
        cols = _gathered_windows(x, out, ksize, stride, dilation)
    else:
        cols = mx.as_strided(mx.contiguous(x), (x.shape[0], *out, *ksize, x.shape[-1]), strides)
    return cols.reshape(x.shape[0], *out, math.prod(ksize), x.shape[-1]), out


def _gathered_windows(x, out, ksize, stride, dilation) -> mx.array:
    """The strided view of ``_patches`` (N, *out, *ksize, C) made by one gather per spatial dim."""
    n = len(out)
    for d in range(n):
        axis = 1 + 2 * d  # the dims already split into (out, k) pairs come before
        x = mx.take(x, sliding_positions(out[d], ksize[d], stride[d], dilation[d]).reshape(-1), axis=axis)
        x = x.reshape(*x.shape[:axis], out[d], ksize[d], *x.shape[axis + 1:])
    return mx.transpose(x, [0] + [1 + 2 * d for d in range(n)] + [2 + 2 * d for d in range(n)] + [2 * n + 1])


_INT_PRODUCT_CHUNK = 1 << 22  # elements of one block of broadcast products (32 MiB of int64)


def _matmul(a: mx.array, b: mx.array) -> mx.array:
    """``a @ b``; MLX multiplies only floating point, so integer operands (PyTorch convolves int64 on the CPU) are
    multiplied exactly as sums of broadcast products, wrapping on overflow as PyTorch's integer arithmetic does. The
    rows go in blocks, each reduced at once, so the products never all exist together."""
    if mx.issubdtype(a.dtype, mx.inexact):
        return mx.matmul(a, b)
    rows, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if rows == 0:
        return mx.zeros((*np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), 0, n), a.dtype)
    step = max(1, _INT_PRODUCT_CHUNK // max(1, k * n * math.prod(a.shape[:-2])))
    blocks = [mx.sum(mx.expand_dims(a[..., i:i + step, :], -1) * mx.expand_dims(b, -3), axis=-2)
              for i in range(0, rows, step)]
    return blocks[0] if len(blocks) == 1 else mx.concatenate(blocks, axis=-2)


def _grouped(cols: mx.array, groups: int) -> mx.array:
    """Patches (N, *out, K, C) as one (M, K*Cg) matrix per group: (G, M, K*Cg)."""
    k, c = cols.shape[-2:]
    cols = mx.transpose(cols.reshape(-1, k, groups, c // groups), (2, 0, 1, 3))
    return cols.reshape(groups, -1, k * (c // groups))


def _conv_im2col(x, w, stride, lo, hi, dilation, input_dilation, groups, flip_):
    """Channels-last convolution as im2col + one matmul per group: exact (float64) and fast with dilation."""
    n = x.ndim - 2
    if flip_:
        w = w[(slice(None),) + (slice(None, None, -1),) * n]
    cols, out = _patches(x, stride, lo, hi, dilation, input_dilation, w.shape[1:-1])
    o = w.shape[0]
    wm = mx.transpose(w.reshape(groups, o // groups, -1), (0, 2, 1))  # (G, K*Cg, Og)
    y = _matmul(_grouped(cols, groups), wm)  # (G, M, Og)
    return mx.transpose(y, (1, 0, 2)).reshape(x.shape[0], *out, o)


def _phase_taps(size, k, lo, dilation, input_dilation) -> list:
    """For one dim of a stride-1 convolution of an input dilated by ``input_dilation`` (di): the taps of each output
    phase r = p mod di, as (shift, tap) pairs. Output p = t*di + r reads dilated position p + tap*dilation - lo, a
    real element u = t + shift exactly when that is a multiple of di; the other taps meet inserted zeros."""
    return [[((r + j * dilation - lo) // input_dilation, j) for j in range(k)
             if (r + j * dilation - lo) % input_dilation == 0] for r in range(input_dilation)]


def _conv_col2im(x, w, lo, hi, dilation, input_dilation, groups, flip_):
    """A stride-1 convolution of an input dilated by the stride (the x-gradient of a strided convolution, and
    conv_transpose), channels-last, without multiplying inserted zeros: z = x @ w gives every (input position, tap)
    product in one matmul (col2im's columns); output phase r (p = t*di + r) sums, for its own taps, z shifted by
    the tap's offset; the phases interleave into the output. MLX's own formulation (a convolution over the
    explicitly dilated input) does di^n times the work and is 10-30x slower on the CPU; this one is also exact
    in float64."""
    n = x.ndim - 2
    if flip_:
        w = w[(slice(None),) + (slice(None, None, -1),) * n]
    batch, sizes, ksize, o = x.shape[0], x.shape[1:-1], w.shape[1:-1], w.shape[0]
    taps, cg = math.prod(ksize), x.shape[-1] // groups
    # z[m, tap, g*Og + o] = sum_c x[m, g*Cg + c] w[g*Og + o, tap, c]
    wm = mx.transpose(w.reshape(groups, o // groups, taps, cg), (0, 3, 2, 1)).reshape(groups, cg, -1)
    if groups == 1:
        z = _matmul(x.reshape(-1, cg), wm[0])
    else:
        z = _matmul(mx.transpose(x.reshape(-1, groups, cg), (1, 0, 2)), wm)  # (G, M, K*Og)
        z = mx.transpose(z.reshape(groups, -1, taps, o // groups), (1, 2, 0, 3))
    z = z.reshape(batch, *sizes, *ksize, o)
    out = [(m - 1) * di + a + b + 1 - (k - 1) * d
           for m, di, a, b, k, d in zip(sizes, input_dilation, lo, hi, ksize, dilation)]
    length = [-(-p // di) for p, di in zip(out, input_dilation)]  # every phase computed at the longest's length
    phases = [_phase_taps(*a) for a in zip(sizes, ksize, lo, dilation, input_dilation)]
    shifts = [[s for ph in pd for s, _ in ph] or [0] for pd in phases]
    pads = [(max(0, -min(s)), max(0, max(s) + t - m)) for s, t, m in zip(shifts, length, sizes)]
    z = mx.pad(z, [(0, 0), *pads] + [(0, 0)] * (n + 1))  # every shifted window in range
    parts = []
    for phase in itertools.product(*(range(di) for di in input_dilation)):
        acc = None
        for tap in itertools.product(*(pd[r] for pd, r in zip(phases, phase))):
            key = tuple(slice(a + s, a + s + t) for (a, _), (s, _), t in zip(pads, tap, length))
            v = z[(slice(None), *key, *(j for _, j in tap))]
            acc = v if acc is None else acc + v
        parts.append(mx.zeros((batch, *length, o), z.dtype) if acc is None else acc)
    # (N, *di, *length, O) -> (N, length_0, di_0, length_1, di_1, ..., O): output t*di + r
    y = mx.stack(parts, 1).reshape(batch, *input_dilation, *length, o)
    y = mx.transpose(y, [0] + [a for d in range(n) for a in (1 + n + d, 1 + d)] + [2 * n + 1])
    y = y.reshape(batch, *(t * di for t, di in zip(length, input_dilation)), o)
    return y[(slice(None),) + tuple(slice(0, p) for p in out)]


def _wgrad_phases(x, g, lo, dilation, input_dilation, groups, ksize):
    """The weight gradient of ``_conv_col2im`` (conv_transpose's), channels-last, (O, K, Cg), phase by phase: the
    taps of output phase r meet x shifted by consecutive multiples of one step, so g's phase r (every di-th output)
    times the im2col of x for a stride-1 convolution is their gradient. im2col over the dilated input would read
    di^n times as many columns, most of them inserted zeros. The columns are taken of whichever of x and g has
    fewer channels (shifting g's phase the other way instead of x: sum_t g[t] x[t + s] = sum_u x[u] g[u - s])."""
    n, o, c = len(ksize), g.shape[-1], x.shape[-1]
    phases = [_phase_taps(*a) for a in zip(x.shape[1:-1], ksize, lo, dilation, input_dilation)]
    length = [-(-p // di) for p, di in zip(g.shape[1:-1], input_dilation)]
    # g's phases: (N, T_0, di_0, T_1, di_1, ..., O), phase r at [:, :, r_0, :, r_1, ...]
    g = mx.pad(g, [(0, 0)] + [(0, t * di - p) for t, di, p in zip(length, input_dilation, g.shape[1:-1])] + [(0, 0)])
    g = g.reshape(g.shape[0], *(a for t, di in zip(length, input_dilation) for a in (t, di)), o)
    shift_g = o < c
    xm = mx.transpose(x.reshape(-1, groups, c // groups), (1, 2, 0)) if shift_g else None  # (G, Cg, M)
    parts, order = [], []
    for phase in itertools.product(*(range(di) for di in input_dilation)):
        taps = [pd[r] for pd, r in zip(phases, phase)]
        if not all(taps):
            continue
        step = [t[1][0] - t[0][0] if len(t) > 1 else 1 for t in taps]
        span = [(len(t) - 1) * st for t, st in zip(taps, step)]
        gr = g[(slice(None),) + tuple(a for r in phase for a in (slice(None), r))]
        if shift_g:  # window u, tap M-1-m reads g[u - shift_m]: the taps come out reversed
            lo_r = [t[0][0] + sp for t, sp in zip(taps, span)]
            hi_r = [m - ln - a + sp for m, ln, a, sp in zip(x.shape[1:-1], length, lo_r, span)]
            cols, _ = _patches(gr, (1,) * n, lo_r, hi_r, step, (1,) * n, [len(t) for t in taps])
            gw = mx.matmul(xm, _grouped(cols, groups))  # (G, Cg, Mr*Og)
            gw = mx.transpose(gw.reshape(groups, c // groups, -1, o // groups), (0, 3, 2, 1))
            taps = [t[::-1] for t in taps]
        else:  # window t, tap m reads x[t + shift_m]
            lo_r = [-t[0][0] for t in taps]
            hi_r = [ln - m - a + sp for ln, m, a, sp in zip(length, x.shape[1:-1], lo_r, span)]
            cols, _ = _patches(x, (1,) * n, lo_r, hi_r, step, (1,) * n, [len(t) for t in taps])
            gm = mx.transpose(gr.reshape(-1, groups, o // groups), (1, 2, 0))  # (G, Og, M)
            gw = mx.matmul(gm, _grouped(cols, groups))  # (G, Og, Mr*Cg)
        parts.append(gw.reshape(o, -1, c // groups))
        order += [sum(j * math.prod(ksize[d + 1:]) for d, (_, j) in enumerate(tap)) for tap in itertools.product(*taps)]
    inverse = sorted(range(len(order)), key=order.__getitem__)  # the phases' taps back in row-major kernel order
    return mx.take(mx.concatenate(parts, 1), mx.array(inverse), axis=1)


def _crop_dilated(x, lo, hi, input_dilation):
    """Negative padding as cropping of x itself (MLX mishandles it together with input dilation): the elements of
    x that fall in a cropped margin of the dilated input are dropped and the margin's rest becomes padding."""
    key, lo2, hi2 = [slice(None), slice(None)], [], []
    for d, (n, a, b, di) in enumerate(zip(x.shape[2:], lo, hi, input_dilation)):
        first = -(a // di) if a < 0 else 0  # ceil(-a / di) elements lost on the left
        last = n - 1 + (b // di if b < 0 else 0)  # and floor(b / di) = -ceil(-b / di) on the right
        key.append(slice(first, last + 1))
        lo2.append(a + first * di)
        hi2.append(b + (n - 1 - last) * di)
    return x[tuple(key)], tuple(lo2), tuple(hi2)


def _conv_fwd(x, w, stride, lo, hi, dilation, input_dilation, groups, flip_, bias=None):
    if x.dtype != w.dtype:
        x, w = promote(x, w)
    if min(lo) < 0 or min(hi) < 0:
        out = [((n - 1) * di + a + b - (k - 1) * d) // s + 1
               for n, di, a, b, k, d, s in zip(x.shape[2:], input_dilation, lo, hi, w.shape[2:], dilation, stride)]
        x, lo, hi = _crop_dilated(x, lo, hi, input_dilation)
        if 0 in x.shape[2:]:  # the output only sees padding: zeros (plus the bias)
            y = mx.zeros((x.shape[0], *out, w.shape[0]), x.dtype)
            return mx.moveaxis(y if bias is None else y + bias, -1, 1)
    x, w = mx.moveaxis(x, 1, -1), mx.moveaxis(w, 1, -1)
    # MLX's CPU kernels: float64 only float32-accurate, kernel dilation and input dilation on a slow generic path,
    # groups only in 1-D and 2-D, no integers. An input dilated by a stride (x-gradients, conv_transpose) goes
    # through col2im, the rest of those through im2col; an explicitly dilated input is faster than MLX's own
    if max(input_dilation) > 1 and max(stride) == 1:
        y = _conv_col2im(x, w, lo, hi, dilation, input_dilation, groups, flip_)
    elif (x.dtype == mx.float64 or max(dilation) > 1 or (groups > 1 and x.ndim > 4) or vmapping()
          or not mx.issubdtype(x.dtype, mx.inexact)):
        # (under lucid.func.vmap too: MLX's own weight gradient of conv_general reads an as_strided view)
        y = _conv_im2col(x, w, stride, lo, hi, dilation, input_dilation, groups, flip_)
    else:
        for d, di in enumerate(input_dilation):
            x = _dilate(x, d + 1, di)
        y = mx.conv_general(x, w, stride, (list(lo), list(hi)), 1, 1, groups, flip_)
    if bias is not None:  # added channels-last: a contiguous broadcast, before the layout change
        y = y + bias
    return mx.moveaxis(y, -1, 1)


def _conv_wgrad_fwd(x, g, stride, lo, hi, dilation, input_dilation, groups, flip_, ksize):
    """The weight gradient of ``_conv``: g^T @ im2col(x) per group, (O, Cg, *ksize)."""
    if x.dtype != g.dtype:
        x, g = promote(x, g)
    n, o = len(ksize), g.shape[1]
    if min(lo) < 0 or min(hi) < 0:
        x, lo, hi = _crop_dilated(x, lo, hi, input_dilation)
        if 0 in x.shape[2:]:  # the convolution only saw padding
            return mx.zeros((o, x.shape[1] // groups, *ksize), x.dtype)
    if max(input_dilation) > 1 and max(stride) == 1:
        gw = _wgrad_phases(mx.moveaxis(x, 1, -1), mx.moveaxis(g, 1, -1), lo, dilation, input_dilation, groups, ksize)
    else:
        cols, _ = _patches(mx.moveaxis(x, 1, -1), stride, lo, hi, dilation, input_dilation, ksize)
        gm = mx.transpose(mx.moveaxis(g, 1, -1).reshape(-1, groups, o // groups), (1, 2, 0))  # (G, Og, M)
        gw = mx.matmul(gm, _grouped(cols, groups))  # (G, Og, K*Cg)
    gw = mx.moveaxis(gw.reshape(o, *ksize, -1), -1, 1)
    return gw[(slice(None), slice(None)) + (slice(None, None, -1),) * n] if flip_ else gw


def _swap_groups(w: Tensor, groups: int) -> Tensor:
    """(G*A, B, *k) -> (G*B, A, *k): the weight of the adjoint convolution (in/out channels swapped per group)."""
    a, b, k = w.shape[0] // groups, w.shape[1], w.shape[2:]
    if groups == 1:
        return w.transpose(0, 1)
    return w.reshape(groups, a, b, *k).transpose(1, 2).reshape(groups * b, a, *k)


def _conv_vjp_x(g, ans, x, w, stride, lo, hi, dilation, input_dilation, groups, flip_):
    # g dilated by the stride, correlated with the flipped kernel; stride input_dilation picks x's positions
    lo2 = tuple((k - 1) * d - p for k, d, p in zip(w.shape[2:], dilation, lo))
    hi2 = tuple((n - 1) * di + p - (m - 1) * s
                for n, di, p, m, s in zip(x.shape[2:], input_dilation, lo, g.shape[2:], stride))
    return _conv(g, _swap_groups(w, groups), input_dilation, lo2, hi2, dilation, stride, groups, not flip_)


def _conv_vjp_w(g, ans, x, w, *options):
    return _conv_wgrad(x, g, *options, w.shape[2:])


# _conv(x, w, stride, lo, hi, dilation, input_dilation, groups, flip): all options as tuples of ints per dim
_conv = defop("convolution", _conv_fwd, vjp=(_conv_vjp_x, _conv_vjp_w), node="ConvolutionBackward0")

# _conv_bias(x, w, bias, *options): the convolution plus a per-channel bias, one node as PyTorch's (the bias
# gradient is g summed over every dim but the channels). As PyTorch's, it keeps the input and the weight whatever
# requires grad, but not the bias, whose value no gradient reads
_CONV_ARGS = (0, 1, 2)
_conv_bias = defop("convolution", lambda x, w, b, *options: _conv_fwd(x, w, *options, bias=b),
                   node="ConvolutionBackward0", save={0: _CONV_ARGS, 1: _CONV_ARGS}, vjp=(
                       lambda g, ans, x, w, b, *options: _conv_vjp_x(g, ans, x, w, *options),
                       lambda g, ans, x, w, b, *options: _conv_vjp_w(g, ans, x, w, *options),
                       lambda g, ans, x, w, b, *options: g.sum((0,) + tuple(range(2, g.ndim)))))

# _conv_wgrad(x, g, *options, ksize): bilinear in (x, g), its own VJPs are the other two convolutions: for a
# cotangent v of the weight gradient, <wgrad(x, g), v> = <g, conv(x, v)>
_conv_wgrad = defop("convolution_backward_weight", _conv_wgrad_fwd, node="ConvolutionBackwardBackward0", vjp=(
    lambda v, ans, x, g, *options: _conv_vjp_x(g, None, x, v, *options[:-1]),
    lambda v, ans, x, g, *options: _conv(x, v, *options[:-1])))


def _check_weight(fn, x, weight, bias, groups, n, transposed):
    if weight.ndim != n + 2:
        raise RuntimeError(f"{fn}: expected weight to be {n + 2}-dimensional, but got weight of size "
                           f"{list(weight.shape)}")
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(weight.shape)} instead")
    for what, t in (("weight", weight), ("bias", bias)):  # PyTorch's error: a mismatch is a mistake, not promoted
        if t is not None and t.dtype != x.dtype:
            raise RuntimeError(f"Input type ({_scalar_name(x.dtype).lower()}) and {what} type "
                               f"({_scalar_name(t.dtype).lower()}) should be the same")
    c = x.shape[1]
    if transposed:
        if c != weight.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input "
                               f"{list(x.shape)} to have {weight.shape[0]} channels, but got {c} channels instead")
        out_c = weight.shape[1] * groups
    else:
        if c != weight.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                               f"{list(x.shape)} to have {weight.shape[1] * groups} channels, but got {c} channels "
                               "instead")
        out_c = weight.shape[0]
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size {list(weight.shape)} instead")
    if bias is not None and tuple(bias.shape) != (out_c,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{out_c} elements, but got bias of size {list(bias.shape)} instead")


# ---------------------------------------------------------------------------------------------------- convolution
def _convnd(n, fn, input, weight, bias, stride, padding, dilation, groups) -> Tensor:
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call(fn, _convnd, n, fn, input, weight, bias, stride, padding, dilation, groups)
    x, unbatched = batched(input, n, fn)
    _check_weight(fn, x, weight, bias, groups, n, transposed=False)
    stride, dilation = ntuple(stride, n, "stride"), ntuple(dilation, n, "dilation")
    ksize = weight.shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            lo = hi = (0,) * n
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, ksize)]
            lo, hi = tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    else:
        lo = hi = ntuple(padding, n, "padding")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if any(p < 0 for p in lo):
        raise RuntimeError("negative padding is not supported")
    padded = tuple(s + a + b for s, a, b in zip(x.shape[2:], lo, hi))
    if any(p < d * (k - 1) + 1 for p, d, k in zip(padded, dilation, ksize)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(str(d * (k - 1) + 1) for d, k in zip(dilation, ksize))}). Kernel "
                           "size can't be greater than actual input size")
    if weight.shape[1] == 0:  # no input channels: PyTorch's empty convolution has no channels either (and MLX's
        # convolution dies of a floating-point exception on it)
        out_size = [(p - d * (k - 1) - 1) // s + 1 for p, d, k, s in zip(padded, dilation, ksize, stride)]
        out = x.reshape(x.shape[0], 0, *[1] * n).expand(x.shape[0], 0, *out_size)
        return out.reshape(out.shape[1:]) if unbatched else out
    options = (stride, lo, hi, dilation, (1,) * n, groups, False)
    out = _conv(x, weight, *options) if bias is None else _conv_bias(x, weight, bias, *options)
    return out.reshape(out.shape[1:]) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-D convolution (cross-correlation): input (N, C_in, L), weight (C_out, C_in/groups, kL), bias (C_out,).
    ``padding`` is an int, a tuple, ``"valid"`` or ``"same"``.

    :param weight: the filters, (C_out, C_in / groups, *kernel).
    :param bias: one value per output channel, (C_out,), or None.
    """
    return _convnd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-D convolution: input (N, C_in, H, W), weight (C_out, C_in/groups, kH, kW) -> (N, C_out, H_out, W_out).

    :param weight: the filters, (C_out, C_in / groups, *kernel).
    :param bias: one value per output channel, (C_out,), or None.
    """
    return _convnd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-D convolution: input (N, C_in, D, H, W), weight (C_out, C_in/groups, kD, kH, kW).

    :param weight: the filters, (C_out, C_in / groups, *kernel).
    :param bias: one value per output channel, (C_out,), or None.
    """
    return _convnd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def _conv_transposend(n, fn, input, weight, bias, stride, padding, output_padding, groups, dilation) -> Tensor:
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call(fn, _conv_transposend, n, fn, input, weight, bias, stride, padding,
                                       output_padding, groups, dilation)
    x, unbatched = batched(input, n, fn)
    _check_weight(fn, x, weight, bias, groups, n, transposed=True)
    stride, padding = ntuple(stride, n, "stride"), ntuple(padding, n, "padding")
    output_padding, dilation = ntuple(output_padding, n, "output_padding"), ntuple(dilation, n, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding) or any(p < 0 for p in output_padding):
        raise RuntimeError("negative padding is not supported")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={list(output_padding)}, stride={list(stride)}, "
                               f"dilation={list(dilation)}")
    ksize = weight.shape[2:]
    lo = tuple(d * (k - 1) - p for d, k, p in zip(dilation, ksize, padding))
    hi = tuple(a + op for a, op in zip(lo, output_padding))
    size = [(m - 1) * s + a + b + 1 - d * (k - 1)
            for m, s, a, b, d, k in zip(x.shape[2:], stride, lo, hi, dilation, ksize)]
    if any(s <= 0 for s in size):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, size))}). Output size is too small")
    # the x-gradient of the convolution that ``weight`` (C_in, C_out/G, *k) defines from C_out to C_in channels
    options = ((1,) * n, lo, hi, dilation, stride, groups, True)
    w = _swap_groups(weight, groups)
    out = _conv(x, w, *options) if bias is None else _conv_bias(x, w, bias, *options)
    return out.reshape(out.shape[1:]) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """1-D transposed convolution: input (N, C_in, L), weight (C_in, C_out/groups, kL); output length
    (L-1)*stride - 2*padding + dilation*(kL-1) + output_padding + 1.

    :param weight: the filters, (C_in, C_out / groups, *kernel).
    :param bias: one value per output channel, (C_out,), or None.
    """
    return _conv_transposend(1, "conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """2-D transposed convolution: input (N, C_in, H, W), weight (C_in, C_out/groups, kH, kW).

    :param weight: the filters, (C_in, C_out / groups, *kernel).
    :param bias: one value per output channel, (C_out,), or None.
    """
    return _conv_transposend(2, "conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """3-D transposed convolution: input (N, C_in, D, H, W), weight (C_in, C_out/groups, kD, kH, kW).

    :param weight: the filters, (C_in, C_out / groups, *kernel).
    :param bias: one value per output channel, (C_out,), or None.
    """
    return _conv_transposend(3, "conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


# ---------------------------------------------------------------------------------------------------- unfold / fold
def _im2col_table(fn, spatial, kernel_size, dilation, padding, stride):
    """The padded plane's size and the (K, L) table of its sliding-window positions (F.unfold's order)."""
    k, d = ntuple(kernel_size, 2, "kernel_size"), ntuple(dilation, 2, "dilation")
    p, s = ntuple(padding, 2, "padding"), ntuple(stride, 2, "stride")
    if min(k) <= 0 or min(d) <= 0 or min(s) <= 0 or min(p) < 0:
        raise RuntimeError(f"{fn}: kernel size, dilation and stride should be greater than zero and padding "
                           f"non-negative, but got kernel_size={list(k)} dilation={list(d)} padding={list(p)} "
                           f"stride={list(s)}")
    padded = tuple(n + 2 * q for n, q in zip(spatial, p))
    out = tuple((n - e * (kk - 1) - 1) // st + 1 for n, e, kk, st in zip(padded, d, k, s))
    if min(out) < 1:
        raise RuntimeError(f"Given input with spatial size {list(spatial)}, kernel_size={list(k)}, dilation="
                           f"{list(d)}, padding={list(p)}, calculated shape of the array of sliding blocks as "
                           f"{list(out)}, but its components must be at least one.")
    pads = tuple((q, q) for q in p)
    return pads, padded, out, window_table([sliding_positions(*a) for a in zip(out, k, s, d)], padded)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """im2col: the sliding blocks of a (N, C, H, W) input as columns (N, C*kH*kW, L), L the number of blocks;
    row c*kH*kW + i*kW + j holds kernel element (i, j) of channel c."""
    x, unbatched = batched(input, 2, "unfold")
    if min(input.shape[input.ndim - 3:]) == 0:  # only the batch may be empty
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    n, c = x.shape[:2]
    pads, padded, out, table = _im2col_table("unfold", x.shape[2:], kernel_size, dilation, padding, stride)
    if any(p for p, _ in pads):
        x = pad_constant(x, ((0, 0), (0, 0)) + pads)
    cols = gather_axis(x.reshape(n, c, math.prod(x.shape[2:])), table, 2)  # (N, C, K, L); no -1: N may be 0
    cols = cols.reshape(n, c * table.shape[0], table.shape[1])
    return cols.reshape(cols.shape[1:]) if unbatched else cols


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """col2im, the adjoint of ``unfold``: sums columns (N, C*kH*kW, L) back into (N, C, *output_size); values of
    overlapping blocks add up."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to col2im, but got input of size: "
                           f"{list(input.shape)}")
    if min(input.shape[input.ndim - 2:]) == 0:  # only the batch may be empty
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    unbatched = input.ndim == 2
    cols = input.reshape(1, *input.shape) if unbatched else input
    size = ntuple(output_size, 2, "output_size")
    pads, padded, out, table = _im2col_table("fold", size, kernel_size, dilation, padding, stride)
    (n, ck, nblocks), k = cols.shape, table.shape[0]
    if ck % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={ck} and kernel_size={list(ntuple(kernel_size, 2, ''))}")
    if nblocks != table.shape[1]:
        raise RuntimeError(f"Given output_size={list(size)}, kernel_size={list(ntuple(kernel_size, 2, ''))}, "
                           f"dilation={list(ntuple(dilation, 2, ''))}, padding={list(ntuple(padding, 2, ''))}, "
                           f"stride={list(ntuple(stride, 2, ''))}, expected size of input's dimension 2 to match "
                           f"the calculated number of sliding blocks {out[0]} * {out[1]} = {table.shape[1]}, but got "
                           f"input.size(2)={nblocks}.")
    planes = scatter_add_axis(cols.reshape(n, ck // k, k, nblocks), table, 2, padded[0] * padded[1])
    img = planes.reshape(n, ck // k, *padded)
    if any(p for p, _ in pads):
        img = pad_constant(img, ((0, 0), (0, 0)) + tuple((-a, -b) for a, b in pads))
    return img.reshape(img.shape[1:]) if unbatched else img
