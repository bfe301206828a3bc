"""``lucid.nn.grad`` (PyTorch's ``torch.nn.grad``): the gradients of a convolution with respect to its input and to
its weight, given the gradient of its output. Each is the VJP of the convolution op itself (one backward through
``conv{1,2,3}d``), built with ``create_graph`` when the weight (or input) or ``grad_output`` requires grad, so that
the result is differentiable again in them."""
from __future__ import annotations

import mlx.core as mx

from .._tensor import _wrap
from ..autograd import enable_grad, grad as _grad
from ..ops.conv import conv1d, conv2d, conv3d

_CONVS = {1: conv1d, 2: conv2d, 3: conv3d}


def _vjp(n, input, weight, grad_output, wrt_input: bool, stride, padding, dilation, groups):
    with enable_grad():
        x, w = (t if t.requires_grad else t.detach().requires_grad_() for t in (input, weight))
        out = _CONVS[n](x, w, None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"Expected grad_output of shape {list(out.shape)}, but got {list(grad_output.shape)}")
        # a graph for the result only when something it depends on requires grad (as PyTorch's result)
        other = weight if wrt_input else input
        graph = other.requires_grad or grad_output.requires_grad
        return _grad([out], [x if wrt_input else w], [grad_output], create_graph=graph)[0]


def _stand_in(size, like):
    """A tensor of ``size`` for the side whose values the gradient does not depend on (it is linear in the other)."""
    return _wrap(mx.zeros(tuple(size), like.dtype))


def _input(n, input_size, weight, grad_output, stride, padding, dilation, groups):
    return _vjp(n, _stand_in(input_size, grad_output), weight, grad_output, True, stride, padding, dilation, groups)


def _weight(n, input, weight_size, grad_output, stride, padding, dilation, groups):
    return _vjp(n, input, _stand_in(weight_size, grad_output), grad_output, False, stride, padding, dilation, groups)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to an input of shape ``input_size``."""
    return _input(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to a weight of shape ``weight_size``."""
    return _weight(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to an input of shape ``input_size``."""
    return _input(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to a weight of shape ``weight_size``."""
    return _weight(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to an input of shape ``input_size``."""
    return _input(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to a weight of shape ``weight_size``."""
    return _weight(3, input, weight_size, grad_output, stride, padding, dilation, groups)


__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]
