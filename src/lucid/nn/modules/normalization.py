"""Normalization over features rather than the batch: LayerNorm, GroupNorm, RMSNorm and LocalResponseNorm."""
from __future__ import annotations

from ... import _creation
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _shape(normalized_shape) -> tuple:
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def register_affine(module: Module, shape, affine: bool, bias: bool, dtype, device) -> None:
    """The ``weight`` (ones) and ``bias`` (zeros) of a normalization layer, or None entries when not ``affine``
    (shared by LayerNorm, GroupNorm, BatchNorm and InstanceNorm)."""
    shape = _shape(shape)
    module.register_parameter("weight", Parameter(_creation.empty(*shape, dtype=dtype, device=device))
                              if affine else None)
    module.register_parameter("bias", Parameter(_creation.empty(*shape, dtype=dtype, device=device))
                              if affine and bias else None)


def reset_affine(module: Module) -> None:
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dims (biased variance), then ``* weight + bias``
    (elementwise, of ``normalized_shape``; initialised to ones and zeros).

    :param normalized_shape: the trailing shape normalized over (an int or a shape).
    :param eps: added to the variance.
    :param elementwise_affine: learn ``weight`` and ``bias`` of ``normalized_shape``.
    :param bias: learn ``bias`` too (with ``elementwise_affine``).

    >>> import lucid
    >>> lucid.nn.LayerNorm(2)(lucid.tensor([[1.0, 3.0]]))
    Tensor([[-0.999995,  0.999995]], grad_fn=<NativeLayerNormBackward0>)
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        register_affine(self, self.normalized_shape, elementwise_affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Split the C channels of (N, C, *) into ``num_groups`` groups and normalize each (sample, group); per-channel
    ``weight`` (ones) and ``bias`` (zeros) when ``affine``.

    :param num_groups: the number of groups (dividing ``num_channels``).
    :param num_channels: C.
    :param eps: added to the variance.
    :param affine: learn per-channel ``weight`` and ``bias``.
    :param bias: learn ``bias`` too (with ``affine``).
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        register_affine(self, num_channels, affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims; ``eps=None`` is the
    machine epsilon of the input's dtype.

    :param normalized_shape: the trailing shape normalized over.
    :param eps: added to the mean square (None: the dtype's machine epsilon).
    :param elementwise_affine: learn ``weight`` of ``normalized_shape``.
    """

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.empty(*self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """Divide each channel of (N, C, *) by ``(k + alpha * mean of squares over size neighbouring channels) **
    beta``.

    :param size: the number of neighbouring channels.
    :param alpha: the multiplicative factor.
    :param beta: the exponent.
    :param k: the additive factor.
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"]
