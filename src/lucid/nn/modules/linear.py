"""Linear and Bilinear: affine maps with PyTorch's layouts (``weight`` is (out, in)) and initialisation."""
from __future__ import annotations

import math

from ... import _creation
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _uniform_bias(bias: Tensor | None, fan_in: int) -> None:
    """PyTorch's bias initialisation for weights drawn with kaiming_uniform_(a=sqrt(5)): U(-1/sqrt(fan_in), ...)."""
    if bias is not None:
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


class Linear(Module):
    """``y = x @ weight.T + bias``: (*, in_features) -> (*, out_features).

    ``weight`` (out_features, in_features) ~ U(-1/sqrt(in_features), 1/sqrt(in_features)) (kaiming_uniform_ with
    a=sqrt(5)), ``bias`` (out_features,) from the same range.

    :param in_features: the size of each input's last dimension.
    :param out_features: the size of each output's last dimension.
    :param bias: learn an additive bias.

    >>> import lucid
    >>> lucid.nn.Linear(4, 2)(lucid.zeros(3, 4)).shape
    lucid.Size([3, 2])
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty(out_features, in_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        _uniform_bias(self.bias, self.in_features)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``y[..., o] = x1 @ weight[o] @ x2 + bias[o]``: (*, in1), (*, in2) -> (*, out); ``weight``
    (out, in1, in2) and ``bias`` ~ U(-1/sqrt(in1), 1/sqrt(in1)).

    :param in1_features: the size of the first input's last dimension.
    :param in2_features: the size of the second input's last dimension.
    :param out_features: the size of the output's last dimension.
    :param bias: learn an additive bias.
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty(out_features, in1_features, in2_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


__all__ = ["Linear", "Bilinear"]  # LazyLinear: lazy.py
