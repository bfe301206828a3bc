"""Convolutions (Conv1d/2d/3d) and transposed convolutions (ConvTranspose1d/2d/3d) with PyTorch's layouts: input
(N, C_in, *spatial), weight (C_out, C_in / groups, *kernel) or, transposed, (C_in, C_out / groups, *kernel)."""
from __future__ import annotations

import math

from ... import _creation
from ..._params import describe_layers
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n: int) -> tuple:
    """PyTorch's ``_ntuple``: a sequence stays as it is (as a tuple), anything else is repeated n times."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _ConvNd(Module):
    """What the convolution layers share: argument checks, parameters, initialisation and repr."""

    _n: int  # number of spatial dims

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        n = self._n
        kernel_size, stride, dilation = _ntuple(kernel_size, n), _ntuple(stride, n), _ntuple(dilation, n)
        if not isinstance(padding, str):
            padding = _ntuple(padding, n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {set(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts (last dim first) for the non-zero padding modes
        if padding == "same":
            total = [d * (k - 1) for d, k in zip(dilation, kernel_size)]
            pairs = [(t // 2, t - t // 2) for t in total]
        elif padding == "valid":
            pairs = [(0, 0)] * n
        else:
            pairs = [(p, p) for p in padding]
        self._reversed_padding_repeated_twice = [v for pair in reversed(pairs) for v in pair]
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(_creation.empty(*shape, *kernel_size, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """weight ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (kaiming_uniform_ with a=sqrt(5)), bias from the same range;
        fan_in = weight.shape[1] * prod(kernel_size)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _fn = None  # the functional convolution

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = self._fn
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution: (N, C_in, L) -> (N, C_out, L_out); ``padding`` may be an int, a tuple, 'valid' or 'same';
    ``padding_mode`` one of 'zeros', 'reflect', 'replicate', 'circular'.

    >>> import lucid
    >>> lucid.nn.Conv1d(2, 4, 3, padding=1)(lucid.zeros(1, 2, 8)).shape
    lucid.Size([1, 4, 8])
    """
    _n, _fn = 1, staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution: (N, C_in, H, W) -> (N, C_out, H_out, W_out), weight (C_out, C_in / groups, kH, kW).

    >>> import lucid
    >>> lucid.nn.Conv2d(3, 8, 3, stride=2)(lucid.zeros(1, 3, 9, 9)).shape
    lucid.Size([1, 8, 4, 4])
    """
    _n, _fn = 2, staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-D convolution: (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out).

    """
    _n, _fn = 3, staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _fn = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = self._n
        super().__init__(in_channels, out_channels, kernel_size, stride, _ntuple(padding, n), dilation, True,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        """The output_padding that makes the output ``output_size`` (spatial, or with the leading dims)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        lead = 2 if input.ndim == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or {lead + n} "
                             f"elements (got {len(output_size)})")
        min_sizes = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
                     + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride)]
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {min_sizes} "
                                 f"to {max_sizes} (for an input of {list(input.shape[lead:])})")
        return tuple(size - lo for size, lo in zip(output_size, min_sizes))

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return self._fn(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                              self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution: (N, C_in, L) -> (N, C_out, (L-1)*stride - 2*padding + dilation*(k-1) +
    output_padding + 1); ``forward(input, output_size)`` picks output_padding to reach ``output_size``.

    """
    _n, _fn = 1, staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution: (N, C_in, H, W) -> (N, C_out, H_out, W_out), weight (C_in, C_out / groups, kH,
    kW).

    >>> import lucid
    >>> lucid.nn.ConvTranspose2d(8, 3, 2, stride=2)(lucid.zeros(1, 8, 4, 4)).shape
    lucid.Size([1, 3, 8, 8])
    """
    _n, _fn = 2, staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution: (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out).

    """
    _n, _fn = 3, staticmethod(F.conv_transpose3d)


__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


# the convolutions' arguments, described once for the six classes (appended to their docstrings)
_ARGS = {
    "in_channels": "C_in, the input's channels.",
    "out_channels": "C_out, the output's channels.",
    "kernel_size": "the kernel's size (an int or one per spatial dim).",
    "stride": "the step of the kernel.",
    "padding": "zeros (or ``padding_mode``) added to both sides: an int, one per dim, 'valid' (none) or 'same' "
               "(output size = input size; stride 1).",
    "dilation": "the spacing between kernel elements.",
    "groups": "split the channels into this many independent groups (``in_channels`` and ``out_channels`` divisible "
              "by it).",
    "bias": "learn an additive bias.",
    "padding_mode": "'zeros', 'reflect', 'replicate' or 'circular'.",
}
describe_layers((Conv1d, Conv2d, Conv3d), _ARGS)
describe_layers((ConvTranspose1d, ConvTranspose2d, ConvTranspose3d), {
    **_ARGS,
    "padding": "``dilation * (kernel_size - 1) - padding`` zeros are added to both sides of the input.",
    "output_padding": "added to one side of the output (to pick among the sizes a stride maps to).",
    "groups": "split the channels into this many independent groups.",
    "padding_mode": "only 'zeros' (as PyTorch).",
})

