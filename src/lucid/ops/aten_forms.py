"""PyTorch's top-level forms of nn.functional (``torch.conv2d``, ``torch.dropout``, ``torch.embedding``, ...) and the
numpy-style and composite elementwise names (``absolute``, ``addcmul``, ``deg2rad``, ``sgn``, ``signbit``, ...).

Most top-level forms are nn.functional's functions themselves, as in PyTorch. Six have ATen's own argument order,
which differs from nn.functional's: ``dropout(input, p, train)``, ``batch_norm`` and ``instance_norm`` (weight and
bias first, every argument required), ``embedding(weight, indices, ...)``, and the losses ``kl_div`` and
``binary_cross_entropy_with_logits``, whose ``reduction`` is ATen's integer (0 none, 1 mean, 2 sum).
"""
from __future__ import annotations

import math

from .._tensor import Tensor
from ._core import declare
from . import elementwise as _ew
from . import loss as _loss
from . import nn_basic as _nn
from . import norm as _norm
from . import pool as _pool
from .conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d  # noqa: F401
from .nn_basic import bilinear, cosine_similarity, pairwise_distance  # noqa: F401
from .norm import group_norm, layer_norm, rms_norm  # noqa: F401
from .sampling import grid_sampler, grid_sampler_2d, grid_sampler_3d  # noqa: F401
from .pool import (adaptive_avg_pool1d, avg_pool1d, channel_shuffle, max_pool1d, max_pool2d, max_pool3d,  # noqa: F401
                   pixel_shuffle, pixel_unshuffle)

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction) -> str:
    if reduction not in _REDUCTIONS:
        raise RuntimeError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def adaptive_max_pool1d(input, output_size) -> tuple:
    """ATen's adaptive_max_pool1d: (values, indices), always both."""
    return _pool.adaptive_max_pool1d(input, output_size, True)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> tuple:
    """ATen's max_pool1d_with_indices: (values, indices); an empty ``stride`` means ``kernel_size``."""
    return _pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def constant_pad_nd(input, pad, value=0) -> Tensor:
    """ATen's constant padding: ``pad`` as F.pad's (last dim first, (left, right) pairs; negative amounts crop)."""
    return _pool.pad(input, pad, "constant", value)


def conv_tbc(input, weight, bias, pad: int = 0) -> Tensor:
    """Time-batch-channel convolution: input (T, B, C_in), weight (K, C_in, C_out), bias (C_out,) ->
    (T + 2 * pad - K + 1, B, C_out); conv1d in another layout.

    :param weight: the filters, (kernel_width, C_in, C_out).
    :param bias: one value per output channel, (C_out,).
    :param pad: the zeros added on both sides of the time dim.
    """
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def dropout(input, p: float, train: bool) -> Tensor:
    """ATen's dropout: ``nn.functional.dropout(input, p, training=train)``."""
    return _nn.dropout(input, p, train)


def batch_norm(input, weight, bias, running_mean, running_var, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool) -> Tensor:
    """ATen's batch_norm (weight and bias before the running statistics; ``cudnn_enabled`` has no effect)."""
    return _norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """ATen's instance_norm (weight and bias before the running statistics; ``cudnn_enabled`` has no effect)."""
    return _norm.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(weight, indices, padding_idx: int = -1, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """ATen's embedding: the table first, and ``padding_idx=-1`` meaning none."""
    return _nn.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                         scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def kl_div(input, target, reduction: int = 1, *, log_target: bool = False) -> Tensor:
    """ATen's kl_div: ``reduction`` is 0 (none), 1 (mean) or 2 (sum); its mean does not warn (nn.functional's does)."""
    red = _reduction(reduction)
    loss = _loss.kl_div(input, target, reduction="none" if red == "mean" else red, log_target=log_target)
    return loss.mean() if red == "mean" else loss


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction: int = 1) -> Tensor:
    """ATen's binary_cross_entropy_with_logits: ``reduction`` is 0 (none), 1 (mean) or 2 (sum)."""
    return _loss.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                                  pos_weight=pos_weight)


def alpha_dropout(input, p: float, train: bool) -> Tensor:
    """ATen's alpha_dropout: ``nn.functional.alpha_dropout(input, p, training=train)``."""
    return _nn.alpha_dropout(input, p, train)


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1) -> Tensor:
    """ATen's cosine_embedding_loss (``reduction`` 0 none, 1 mean, 2 sum)."""
    return _loss.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin: float = 1.0, reduction: int = 1) -> Tensor:
    """ATen's hinge_embedding_loss (``reduction`` 0 none, 1 mean, 2 sum)."""
    return _loss.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1) -> Tensor:
    """ATen's margin_ranking_loss (``reduction`` 0 none, 1 mean, 2 sum)."""
    return _loss.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input: bool, full: bool, eps: float, reduction: int) -> Tensor:
    """ATen's poisson_nll_loss: every argument required, ``reduction`` 0 none, 1 mean, 2 sum."""
    return _loss.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, reduction: int = 1) -> Tensor:
    """ATen's triplet_margin_loss (``reduction`` 0 none, 1 mean, 2 sum)."""
    return _loss.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                     reduction=_reduction(reduction))


# ---------------------------------------------------------------------------------------------- elementwise
def absolute(input) -> Tensor:
    """Alias for ``abs``."""
    return _ew.abs(input)


def _as_float(input: Tensor) -> Tensor:
    """Integer and bool inputs compute in the default float dtype, as PyTorch's float-only ops do."""
    return input if input.is_floating_point() or input.is_complex() else input.float()


@declare(method=True, inplace=True)
def deg2rad(input) -> Tensor:
    """Degrees to radians."""
    return _ew.mul(_as_float(input), math.pi / 180.0)


@declare(method=True, inplace=True)
def rad2deg(input) -> Tensor:
    """Radians to degrees."""
    return _ew.mul(_as_float(input), 180.0 / math.pi)


@declare(method=True, inplace=True)
def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2``."""
    return _ew.add(input, _ew.mul(tensor1, tensor2), alpha=value)


def _integer_addcdiv(tensor1, tensor2) -> bool:
    return not (tensor1.is_floating_point() or tensor1.is_complex()) and \
        not (tensor2.is_floating_point() or tensor2.is_complex())


@declare(method=True, inplace=True)
def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2``."""
    if _integer_addcdiv(tensor1, tensor2):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
                           "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                           "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                           "for all dtypes.")
    return _ew.add(input, _ew.div(tensor1, tensor2), alpha=value)


@declare(method=True, inplace=True)
def heaviside(input, values) -> Tensor:
    """The Heaviside step: 0 where ``input < 0``, ``values`` where ``input == 0``, 1 where ``input > 0``."""
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    step = _ew.gt(input, 0).to(input.dtype)
    return _ew.where(_ew.eq(input, 0), values, step)


@declare(method=True, inplace=True)
def sgn(input) -> Tensor:
    """``sign`` for real inputs; ``input / |input|`` (0 at 0) for complex ones."""
    if not input.is_complex():
        return _ew.sign(input)
    mag = _ew.abs(input)
    unit = _ew.where(_ew.eq(mag, 0), 0.0, _ew.div(input, _ew.where(_ew.eq(mag, 0), 1.0, mag)))
    return unit


@declare(method=True)
def signbit(input) -> Tensor:
    """True where the sign bit is set: negative values, and -0.0."""
    if input.is_complex():
        raise RuntimeError("signbit is not implemented for complex tensors.")
    neg = _ew.lt(input, 0)
    if input.is_floating_point():  # -0.0 == 0 but 1 / -0.0 is -inf
        neg = _ew.logical_or(neg, _ew.logical_and(_ew.eq(input, 0), _ew.lt(_ew.reciprocal(input), 0)))
    return neg


__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "layer_norm",
           "group_norm", "batch_norm", "instance_norm", "dropout", "embedding", "max_pool1d", "max_pool2d",
           "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d", "pixel_shuffle", "pixel_unshuffle", "cosine_similarity",
           "pairwise_distance", "kl_div", "binary_cross_entropy_with_logits", "bilinear", "rms_norm", "alpha_dropout",
           "channel_shuffle",
           "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss",
           "triplet_margin_loss", "absolute", "deg2rad", "rad2deg",
           "addcmul", "addcdiv", "heaviside", "sgn", "signbit", "adaptive_max_pool1d", "max_pool1d_with_indices",
           "constant_pad_nd", "conv_tbc", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d"]
