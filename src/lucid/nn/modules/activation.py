"""Activation modules: each wraps its ``lucid.nn.functional`` op, stores PyTorch's options under PyTorch's names
and prints them as PyTorch does. PReLU is the only one with a parameter."""
from __future__ import annotations

import warnings

from ... import _creation
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _inplace_repr(inplace: bool, sep: str = ", ") -> str:
    return sep + "inplace=True" if inplace else ""


class _Inplace(Module):
    """An activation whose only option is ``inplace``."""
    _fn = None

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, "")


class _Plain(Module):
    """An activation without options."""
    _fn = None

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input)


# ---------------------------------------------------------------------------------------------------- relu family
class ReLU(_Inplace):
    """``max(0, x)``.

    :param inplace: write the result into the input, as PyTorch's in-place ops do.

    >>> import lucid
    >>> lucid.nn.ReLU()(lucid.tensor([-1.0, 2.0]))
    Tensor([0., 2.])
    """

    def forward(self, input: Tensor) -> Tensor:
        # F.relu is lucid.relu (no inplace keyword); relu_ is the in-place form
        return F.relu_(input) if self.inplace else F.relu(input)


class SELU(_Inplace):
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` with the self-normalizing constants.

    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.selu)


class SiLU(_Inplace):
    """``x * sigmoid(x)``.

    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.silu)


class Mish(_Inplace):
    """``x * tanh(softplus(x))``.

    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.mish)


class Hardswish(_Inplace):
    """``x * relu6(x + 3) / 6``.

    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.hardswish)

    def extra_repr(self) -> str:  # PyTorch prints no options for it
        return ""


class Hardsigmoid(_Inplace):
    """``relu6(x + 3) / 6``.

    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.hardsigmoid)

    def extra_repr(self) -> str:
        return ""


class LeakyReLU(Module):
    """``x`` for x > 0, ``negative_slope * x`` otherwise.

    :param negative_slope: the slope for x < 0.
    :param inplace: write the result into the input, as PyTorch's in-place ops do.

    >>> import lucid
    >>> lucid.nn.LeakyReLU(0.1)(lucid.tensor([-1.0, 2.0]))
    Tensor([-0.1,  2. ])
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_repr(self.inplace)}"


class PReLU(Module):
    """``x`` for x > 0, ``weight * x`` otherwise, with a learnt slope: one (``num_parameters=1``) or one per
    channel (dim 1), initialised to ``init``.

    :param num_parameters: 1 (one slope) or the number of channels (one slope per channel, dim 1).
    :param init: the slopes' initial value.
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Leaky relu with a random slope from U(lower, upper) per element in training, the mean slope in eval.

    :param lower: the lower bound of the random slope.
    :param upper: the upper bound of the random slope.
    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_repr(self.inplace)}"


class Threshold(Module):
    """``x`` where x > threshold, else ``value``.

    :param threshold: the threshold.
    :param value: the value below it.
    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_repr(self.inplace)}"


class Hardtanh(Module):
    """``x`` clipped to [min_val, max_val].

    :param min_val: the lower clip.
    :param max_val: the upper clip.
    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    :param min_value: deprecated name of ``min_val``.
    :param max_value: deprecated name of ``max_val``.
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        assert self.max_val > self.min_val

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_repr(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``: Hardtanh(0, 6), as in PyTorch.

    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, "")


# ---------------------------------------------------------------------------------------------------- exponential
class ELU(Module):
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise.

    :param alpha: the scale of the negative part.
    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.elu)

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_repr(self.inplace)}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    :param alpha: the scale (and the smoothness) of the negative part.
    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.celu)


class GELU(Module):
    """``x * Phi(x)`` (exact erf form), or its tanh approximation with ``approximate='tanh'``.

    :param approximate: 'none' (the exact erf form) or 'tanh'.

    >>> import lucid
    >>> lucid.nn.GELU()(lucid.tensor([0.0]))
    Tensor([0.])
    """

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``; linear where ``beta * x > threshold``.

    :param beta: the sharpness.
    :param threshold: above ``beta * x > threshold`` the result is ``x``.
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


# ---------------------------------------------------------------------------------------------------- sigmoid family
class Sigmoid(_Plain):
    """``1 / (1 + exp(-x))``."""
    _fn = staticmethod(F.sigmoid)


class Tanh(_Plain):
    _fn = staticmethod(F.tanh)


class LogSigmoid(_Plain):
    """``log(sigmoid(x))``, stable for large |x|."""
    _fn = staticmethod(F.logsigmoid)


class Softsign(_Plain):
    """``x / (1 + |x|)``."""
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Plain):
    """``x - tanh(x)``."""
    _fn = staticmethod(F.tanhshrink)


class Hardshrink(Module):
    """``x`` where |x| > lambd, else 0.

    :param lambd: the threshold (>= 0).
    """

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """``x - lambd`` above lambd, ``x + lambd`` below -lambd, 0 between.

    :param lambd: the threshold (>= 0).
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class GLU(Module):
    """``a * sigmoid(b)`` where ``a`` and ``b`` are the halves of the input along ``dim``.

    :param dim: the dimension split in half (its size must be even).
    """

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


# ---------------------------------------------------------------------------------------------------- softmax family
class _SoftmaxNd(Module):
    # without dim, nn.functional's implicit one (and its warning, pointed at the Module's call)
    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxNd):
    """``exp(x) / sum(exp(x))`` along ``dim``.

    :param dim: the dimension along which the entries sum to 1 (None: PyTorch's implicit choice, with its warning).

    >>> import lucid
    >>> lucid.nn.Softmax(dim=0)(lucid.tensor([0.0, 0.0]))
    Tensor([0.5, 0.5])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=4)


class LogSoftmax(_SoftmaxNd):
    """``x - logsumexp(x)`` along ``dim``.

    :param dim: the dimension along which the entries sum to 1 (None: PyTorch's implicit choice, with its warning).
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=4)


class Softmin(_SoftmaxNd):
    """``softmax(-x)`` along ``dim``.

    :param dim: the dimension along which the entries sum to 1 (None: PyTorch's implicit choice, with its warning).
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=4)


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) at each location."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


__all__ = ["ReLU", "ReLU6", "SELU", "SiLU", "Mish", "Hardswish", "Hardsigmoid", "LeakyReLU", "PReLU", "RReLU",
           "Threshold", "Hardtanh", "ELU", "CELU", "GELU", "Softplus", "Sigmoid", "Tanh", "LogSigmoid", "Softsign",
           "Tanhshrink", "Hardshrink", "Softshrink", "GLU", "Softmax", "LogSoftmax", "Softmin", "Softmax2d"]
