"""Normalization: layer_norm, batch_norm, instance_norm, group_norm, rms_norm, normalize, local_response_norm.

Each is composed of lucid ops (var_mean, rsqrt, ...), so gradients of every order and exact float64 come from those
ops; layer_norm and batch_norm are one op each (their forward in MLX, a closed-form VJP made of lucid ops). As in PyTorch, inputs are normalized with the biased variance (divide by n), while batch_norm and instance_norm
update their running statistics in place, under no_grad, with the unbiased one (divide by n - 1). Half types
(float16, bfloat16) compute their statistics in float32 and return their own dtype, also as in PyTorch.
"""
from __future__ import annotations

__all__ = ["layer_norm", "batch_norm", "instance_norm", "group_norm", "rms_norm", "normalize", "local_response_norm"]

import math

import mlx.core as mx

from .. import _cpu_route, _sums
from .._tensor import Tensor, _wrap
from ._core import defop, expect_tensor
from .._grad_mode import no_grad
from .elementwise import rsqrt, square
from .reduce import norm, var_mean
from .shape import cat
from ..autograd.grad_mode import state as _gm_state  # lucid.autocast's hook (ops/autocast_policy.py)


# ---------------------------------------------------------------------------------------------------- helpers
_UPCAST = (mx.float16, mx.bfloat16)


def _float32_if_half(x: Tensor) -> Tensor:
    """Half types compute statistics in float32, as PyTorch does."""
    return x.to(mx.float32) if x.dtype in _UPCAST else x


def _moments(x: Tensor, axes: tuple, eps: float) -> tuple:
    """``((x - mean) * r, r, var, mean)`` over ``axes`` with the biased variance and ``r = 1 / sqrt(var + eps)``,
    all in the dtype the statistics are computed in (float32 for half inputs)."""
    xc = _float32_if_half(x)
    var, mean = var_mean(xc, axes, keepdim=True, correction=0)
    r = rsqrt(var + eps)
    return (xc - mean) * r, r, var, mean


def _standardize(x: Tensor, axes: tuple, eps: float) -> tuple:
    """``((x - mean) / sqrt(var + eps), var, mean)`` over ``axes``; the first in x's dtype, the statistics (kept
    dims) in the dtype they were computed in."""
    y, _, var, mean = _moments(x, axes, eps)
    return (y.to(x.dtype) if y.dtype != x.dtype else y), var, mean


def _affine(y: Tensor, weight, bias, shape=None) -> Tensor:
    """``y * weight + bias``; ``shape`` reshapes per-channel vectors so they broadcast along dim 1."""
    if weight is not None:
        y = y * (weight if shape is None else weight.reshape(shape))
    if bias is not None:
        y = y + (bias if shape is None else bias.reshape(shape))
    return y


def _channel_shape(x: Tensor) -> tuple:
    """(C, 1, 1, ...): a per-channel vector that broadcasts against (N, C, *)."""
    return (x.shape[1],) + (1,) * (x.ndim - 2)


def _last_axes(input: Tensor, normalized_shape, weight=None, bias=None) -> tuple:
    """PyTorch's layer_norm/rms_norm checks; the axes that ``normalized_shape`` names (the trailing ones)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(int(s) for s in normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           f"element, but got normalized_shape = {list(shape)}")
    n = len(shape)
    if input.ndim < n or tuple(input.shape[input.ndim - n:]) != shape:
        expected = "".join(f", {s}" for s in shape)
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*{expected}], but got "
                           f"input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(shape)}")
    return tuple(range(input.ndim - n, input.ndim))


def _check_features(name: str, t, expected: int) -> None:
    if t is not None and t.numel() != expected:
        raise RuntimeError(f"{name} should contain {expected} elements not {t.numel()}")


def _update_running(running, momentum: float, batch_stat: Tensor) -> None:
    """``running = (1 - momentum) * running + momentum * batch_stat``, in place and unrecorded (a buffer)."""
    if running is not None:
        with no_grad():
            running.mul_(1 - momentum).add_(batch_stat.reshape(running.shape) * momentum)


# ---------------------------------------------------------------------------------------------------- layer, rms
# layer_norm is one op (PyTorch's NativeLayerNormBackward0): MLX's fused kernel forward, and a closed-form VJP made of
# lucid ops (so its own derivatives are exact), instead of the ~7 recorded ops of the composed form.
def _layer_norm_fwd(x, w, b, axes, eps):
    lead = x.shape[:x.ndim - len(axes)]
    d = math.prod(x.shape[len(lead):])
    # one fused MLX call over the flattened trailing dims; its statistics are sequential sums, so beyond
    # _sums.THRESHOLD elements per row the composed form (accurate sums) is used
    if x.dtype in (mx.float32, mx.float16, mx.bfloat16) and d <= _sums.THRESHOLD and all(
            t is None or t.dtype == x.dtype for t in (w, b)):
        flat = [None if t is None else t.reshape(d) for t in (w, b)]
        return mx.fast.layer_norm(x.reshape(*lead, d), *flat, eps).reshape(x.shape)
    xc = x.astype(mx.float32) if x.dtype in _UPCAST else x  # float64 (exact) and mixed dtypes: the composed form
    mean = _sums.mean(xc, axes, keepdims=True)
    y = (xc - mean) / mx.sqrt(_sums.var(xc, axes, d, keepdims=True) + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y.astype(x.dtype) if y.dtype != x.dtype and x.dtype in _UPCAST else y


def _layer_norm_vjp(g, ans, x, w, b, axes, eps):
    """dx = r * (gy - mean(gy) - xhat * mean(gy * xhat)) with gy = g * weight, xhat = (x - mean) * r and
    r = 1 / sqrt(var + eps) over ``axes``; dweight = sum(g * xhat), dbias = sum(g) over the leading dims."""
    xhat, r, _, _ = _moments(x, axes, eps)
    gc = _float32_if_half(g)
    gy = gc if w is None else gc * w
    gx = r * (gy - gy.mean(axes, keepdim=True) - xhat * (gy * xhat).mean(axes, keepdim=True))
    lead = tuple(range(x.ndim - len(axes)))
    gw = None if w is None else (gc * xhat).sum(lead) if lead else gc * xhat
    gb = None if b is None else gc.sum(lead) if lead else gc
    return gx, gw, gb, None, None


_layer_norm = defop("layer_norm", _layer_norm_fwd, vjp_all=_layer_norm_vjp, node="NativeLayerNormBackward0")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` dims (mean 0, biased variance 1), then ``* weight + bias``
    (both of ``normalized_shape``). One recorded op, ``NativeLayerNormBackward0``, as in PyTorch.

    :param normalized_shape: the trailing shape normalized over.
    :param weight: the per-element scale (or None).
    :param bias: the per-element shift (or None).
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("layer_norm", layer_norm, input, normalized_shape, weight, bias, eps)
    expect_tensor("layer_norm", "input", 1, input)
    axes = _last_axes(input, normalized_shape, weight, bias)
    return _layer_norm(input, weight, bias, axes, eps)


def rms_norm(input, normalized_shape, weight=None, eps: float | None = None) -> Tensor:
    """``input / sqrt(mean(input**2) + eps) * weight`` over the trailing ``normalized_shape`` dims. ``eps`` defaults
    to the machine epsilon of the computing dtype (half types compute in float32, as in PyTorch).

    :param normalized_shape: the trailing shape normalized over.
    :param weight: the per-element scale (or None).
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("rms_norm", rms_norm, input, normalized_shape, weight, eps)
    axes = _last_axes(input, normalized_shape, weight)
    x = _float32_if_half(input)
    if eps is None:
        eps = mx.finfo(x.dtype).eps
    y = _affine(x * rsqrt(square(x).mean(axes, keepdim=True) + eps), weight, None)
    return y.to(input.dtype) if y.dtype != input.dtype else y


# ---------------------------------------------------------------------------------------------------- batch, instance
# batch_norm is one op in training and in evaluation (PyTorch's NativeBatchNormBackward0), instead of the ~8 recorded
# ops of the composed form: the statistics come in as arguments that do not require grad (the batch's, computed once
# for the output and the running-statistics update, or the running ones), and the closed-form VJP is made of lucid
# ops, so its own derivatives are exact (under create_graph it recomputes the batch's statistics from x).
def _batch_norm_fwd(x, w, b, mean, var, training, eps):
    xc = x.astype(mx.float32) if x.dtype in _UPCAST else x
    shape = (x.shape[1],) + (1,) * (x.ndim - 2)
    scale = mx.rsqrt(var.reshape(shape) + eps)
    if w is not None:
        scale = scale * w.reshape(shape)
    y = (xc - mean.reshape(shape)) * scale
    if b is not None:
        y = y + b.reshape(shape)
    return y.astype(x.dtype) if x.dtype in _UPCAST and y.dtype != x.dtype else y  # a half input keeps its dtype


def _batch_norm_vjp(g, ans, x, w, b, mean, var, training, eps):
    """Training: dx = r * w * (g - mean(g) - xhat * mean(g * xhat)) with xhat = (x - mean) * r and
    r = 1 / sqrt(var + eps) over every dim but 1; evaluation: dx = r * w * g (the running statistics are constants).
    dweight = sum(g * xhat), dbias = sum(g) per channel."""
    shape = _channel_shape(x)
    axes = (0,) + tuple(range(2, x.ndim))
    if training and _gm_state.grad:  # create_graph: the statistics as functions of x
        xhat, r, _, _ = _moments(x, axes, eps)
    else:
        r = rsqrt(var.reshape(shape) + eps)
        xhat = (_float32_if_half(x) - mean.reshape(shape)) * r
    gc = _float32_if_half(g)
    sg = gc.sum(axes, keepdim=True) if training or b is not None else None
    sgx = (gc * xhat).sum(axes, keepdim=True) if training or w is not None else None
    scale = r if w is None else r * w.reshape(shape)
    if training:
        n = x.numel() // x.shape[1]
        gx = scale * (gc - sg * (1 / n) - xhat * (sgx * (1 / n)))
    else:
        gx = gc * scale
    gw = None if w is None else sgx.reshape(w.shape)
    gb = None if b is None else sg.reshape(b.shape)
    return gx, gw, gb, None, None, None, None


# the input's and the weight's values are read only for the gradients of the input and the weight
_batch_norm = defop("batch_norm", _batch_norm_fwd, vjp_all=_batch_norm_vjp,
                    save={0: (0, 1), 1: (0,), 3: (0, 1), 4: (0, 1)}, node="NativeBatchNormBackward0")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel (dim 1) of (N, C, *) ``input``. Training: with the batch's statistics, and the
    running statistics (if given) move toward the batch's mean and unbiased variance by ``momentum``, in place.
    Evaluation: with ``running_mean`` and ``running_var``. One recorded op, ``NativeBatchNormBackward0``, as in
    PyTorch.

    :param running_mean: the running mean, updated in place in training (or None).
    :param running_var: the running variance, updated in place in training (or None).
    :param weight: the per-channel scale (or None).
    :param bias: the per-channel shift (or None).
    :param momentum: the running statistics' update weight.
    """
    expect_tensor("batch_norm", "input", 1, input)
    if input.ndim < 2:
        raise ValueError(f"expected 2D or higher input (got {input.ndim}D input)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_features(name, t, c)
    if _gm_state.grad:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is not None and t.requires_grad:
                raise RuntimeError(f"The function 'native_batch_norm' is not differentiable with respect to argument "
                                   f"'{name}'. This input cannot have requires_grad True.")
    if input.numel() == 0:  # an empty batch (or no channels): nothing to normalize, the running statistics stay
        # as they are, and weight and bias get zero gradients, as in PyTorch (the statistics of nothing are NaN)
        return _affine(input * 1, weight, bias, _channel_shape(input))
    if training:
        size = input.shape
        n = input.numel() // c
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
        with no_grad():  # the batch's statistics: constants to the op, whose VJP accounts for them
            var, mean = var_mean(_float32_if_half(input), (0,) + tuple(range(2, input.ndim)), correction=0)
        _update_running(running_mean, momentum, mean)
        _update_running(running_var, momentum, var * (n / (n - 1)))
        return _batch_norm(input, weight, bias, mean, var, True, eps)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is None:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    return _batch_norm(input, weight, bias, running_mean, running_var, False, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each (sample, channel) of (N, C, *) ``input`` over its spatial dims. Running statistics (per
    channel) move toward the batch average of the instance means and unbiased variances; with
    ``use_input_stats=False`` they are used instead of the input's.

    :param running_mean: the running mean, updated in place in training (or None).
    :param running_var: the running variance, updated in place in training (or None).
    :param weight: the per-channel scale (or None).
    :param bias: the per-channel shift (or None).
    :param use_input_stats: normalize with the instance's statistics (else the running ones).
    :param momentum: the running statistics' update weight.
    """
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_features(name, t, c)
    shape = _channel_shape(input)
    if use_input_stats:
        n = input.numel() // (input.shape[0] * c) if input.numel() else 0
        if n == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
        y, var, mean = _standardize(input, tuple(range(2, input.ndim)), eps)
        _update_running(running_mean, momentum, mean.mean(0))
        _update_running(running_var, momentum, (var * (n / (n - 1))).mean(0))
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
        y = (input - running_mean.reshape(shape)) * rsqrt(running_var.reshape(shape) + eps)
    return _affine(y, weight, bias, shape)


# ---------------------------------------------------------------------------------------------------- group
def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Split the C channels of (N, C, *) ``input`` into ``num_groups`` groups and normalize each (sample, group);
    ``weight`` and ``bias`` are per channel.

    :param num_groups: the number of groups (dividing the channels).
    :param weight: the per-channel scale (or None).
    :param bias: the per-channel shift (or None).
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("group_norm", group_norm, input, num_groups, weight, bias, eps)
    expect_tensor("group_norm", "input", 1, input)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[:2]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    size = [n * c // num_groups, num_groups, *input.shape[2:]]  # PyTorch's check: one value per group fails
    if size[0] * math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    grouped = input.reshape(n, num_groups, (c // num_groups) * math.prod(input.shape[2:]))  # no -1: N may be 0
    y = _standardize(grouped, (2,), eps)[0].reshape(input.shape)
    return _affine(y, weight, bias, _channel_shape(input))


# ---------------------------------------------------------------------------------------------------- normalize, lrn
def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``.

    :param p: the norm's order.
    """
    return input / norm(input, p, dim, keepdim=True).clamp_min(eps)


@_cpu_route.float64_args
def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """``input / (k + alpha * mean of input**2 over a window of size channels) ** beta``; the window is centred on
    each channel and zero-padded at the edges (PyTorch's average always divides by ``size``).

    :param size: the number of neighbouring channels.
    :param beta: the exponent.
    :param k: the additive factor.
    """
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = square(input)

    def zeros(width):
        return _wrap(mx.zeros((input.shape[0], width) + tuple(input.shape[2:]), sq.dtype))

    padded = cat([t for t in (zeros(size // 2), sq, zeros((size - 1) // 2)) if t.shape[1]], 1)
    window = padded.narrow(1, 0, c)
    for start in range(1, size):  # a loop over the window's offsets, not over elements
        window = window + padded.narrow(1, start, c)
    return input / (window * (alpha / size) + k) ** beta
