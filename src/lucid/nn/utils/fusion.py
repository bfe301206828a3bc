"""Folding an eval-mode BatchNorm into the convolution or linear layer before it (PyTorch's
``torch.nn.utils.fusion``), and ``skip_init`` (``torch.nn.utils.init``): a module built without initialising its
parameters."""
from __future__ import annotations

import copy
import inspect

from ... import _creation
from ..._tensor import Tensor
from .. import init
from ..modules.module import Module
from ..parameter import Parameter


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of ``conv`` whose weight and bias absorb ``bn``'s normalisation (both in eval mode):
    ``bn(conv(x)) == fused(x)``. ``transpose``: the weight is a transposed convolution's (in, out, ...)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps,
                                                    bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float, bn_w, bn_b,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The fused (weight, bias) Parameters: ``w * g / sqrt(v + eps)`` per output channel and
    ``(b - m) * g / sqrt(v + eps) + beta``, in the conv's dtypes."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = _creation.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _creation.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _creation.zeros_like(bn_rm)
    rsqrt = (bn_rv + bn_eps).rsqrt()
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(dtype=w_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` whose weight and bias absorb ``bn``'s normalisation (both in eval mode);
    ``bn.num_features`` must be ``linear.out_features`` or 1."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(f"To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float, bn_w: Tensor,
                           bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """The fused (weight, bias) Parameters of a Linear followed by an eval-mode BatchNorm."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = _creation.zeros_like(bn_rm)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=w_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left as allocated, not initialised (for
    code that overwrites them at once, e.g. from a checkpoint). The class must take ``device``, as PyTorch
    requires (it builds on the meta device); lucid builds with the initialisers of ``lucid.nn.init`` switched off."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    before = init.skipping.active
    init.skipping.active = True
    try:
        return module_cls(*args, **kwargs)
    finally:
        init.skipping.active = before


__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init"]
