"""Pooling layers: max and average pooling over sliding windows, and adaptive pooling to a fixed output size.
Their options are stored as given (as PyTorch does), so the reprs match PyTorch's (AvgPool1d stores tuples)."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module


def _single(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor):
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.dilation, ceil_mode=self.ceil_mode,
                        return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max over windows of (N, C, L); ``stride`` defaults to ``kernel_size``; ``return_indices`` also returns the
    position of each maximum in its input row.

    :param kernel_size: the window's size (an int or one per spatial dim).
    :param stride: the window's step (default: ``kernel_size``).
    :param padding: implicit padding on both sides (at most half the kernel).
    :param dilation: the spacing between window elements.
    :param return_indices: also return the flat index of each maximum (for ``MaxUnpool``).
    :param ceil_mode: round the output size up instead of down.

    >>> import lucid
    >>> lucid.nn.MaxPool1d(2)(lucid.zeros(1, 2, 8)).shape
    lucid.Size([1, 2, 4])
    """
    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max over windows of (N, C, H, W); indices (with ``return_indices``) are flat per plane: h * W + w.

    :param kernel_size: the window's size (an int or one per spatial dim).
    :param stride: the window's step (default: ``kernel_size``).
    :param padding: implicit padding on both sides (at most half the kernel).
    :param dilation: the spacing between window elements.
    :param return_indices: also return the flat index of each maximum (for ``MaxUnpool``).
    :param ceil_mode: round the output size up instead of down.

    >>> import lucid
    >>> lucid.nn.MaxPool2d(2)(lucid.zeros(1, 2, 8, 8)).shape
    lucid.Size([1, 2, 4, 4])
    """
    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Max over windows of (N, C, D, H, W).

    :param kernel_size: the window's size (an int or one per spatial dim).
    :param stride: the window's step (default: ``kernel_size``).
    :param padding: implicit padding on both sides (at most half the kernel).
    :param dilation: the spacing between window elements.
    :param return_indices: also return the flat index of each maximum (for ``MaxUnpool``).
    :param ceil_mode: round the output size up instead of down.

    >>> import lucid
    >>> lucid.nn.MaxPool3d(2)(lucid.zeros(1, 2, 4, 8, 8)).shape
    lucid.Size([1, 2, 2, 4, 4])
    """
    _fn = staticmethod(F.max_pool3d)


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mean over windows of (N, C, L); padding counts in the divisor if ``count_include_pad``.

    :param kernel_size: the window's size (an int or one per spatial dim).
    :param stride: the window's step (default: ``kernel_size``).
    :param padding: implicit padding on both sides (at most half the kernel).
    :param ceil_mode: round the output size up instead of down.
    :param count_include_pad: count the zero padding in the averages' denominators.

    >>> import lucid
    >>> lucid.nn.AvgPool1d(2)(lucid.zeros(1, 2, 8)).shape
    lucid.Size([1, 2, 4])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)


class _AvgPool(_AvgPoolNd):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                        self.divisor_override)


class AvgPool2d(_AvgPool):
    """Mean over windows of (N, C, H, W); ``divisor_override`` replaces the window size as the divisor.

    :param kernel_size: the window's size (an int or one per spatial dim).
    :param stride: the window's step (default: ``kernel_size``).
    :param padding: implicit padding on both sides (at most half the kernel).
    :param ceil_mode: round the output size up instead of down.
    :param count_include_pad: count the zero padding in the averages' denominators.
    :param divisor_override: divide each window's sum by this instead of its size.

    >>> import lucid
    >>> lucid.nn.AvgPool2d(2)(lucid.zeros(1, 2, 8, 8)).shape
    lucid.Size([1, 2, 4, 4])
    """
    _fn = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPool):
    """Mean over windows of (N, C, D, H, W).

    :param kernel_size: the window's size (an int or one per spatial dim).
    :param stride: the window's step (default: ``kernel_size``).
    :param padding: implicit padding on both sides (at most half the kernel).
    :param ceil_mode: round the output size up instead of down.
    :param count_include_pad: count the zero padding in the averages' denominators.
    :param divisor_override: divide each window's sum by this instead of its size.

    >>> import lucid
    >>> lucid.nn.AvgPool3d(2)(lucid.zeros(1, 2, 4, 8, 8)).shape
    lucid.Size([1, 2, 2, 4, 4])
    """
    _fn = staticmethod(F.avg_pool3d)


class _AdaptivePool(Module):
    _fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor):
        return self._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Mean over ``output_size`` windows that tile (N, C, L).

    :param output_size: the output's spatial size (an int, or one per dim; None keeps that dim).

    >>> import lucid
    >>> lucid.nn.AdaptiveAvgPool1d(1)(lucid.zeros(1, 2, 8)).shape
    lucid.Size([1, 2, 1])
    """
    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Mean over windows that tile (N, C, H, W) into ``output_size`` (an int, or (H_out, W_out) with None keeping
    a dim); 1 is global average pooling.

    :param output_size: the output's spatial size (an int, or one per dim; None keeps that dim).

    >>> import lucid
    >>> lucid.nn.AdaptiveAvgPool2d(1)(lucid.zeros(1, 2, 8, 8)).shape
    lucid.Size([1, 2, 1, 1])
    """
    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Mean over windows that tile the input's 3 spatial dims into ``output_size``.

    :param output_size: the output's spatial size (an int, or one per dim; None keeps that dim).

    >>> import lucid
    >>> lucid.nn.AdaptiveAvgPool3d(1)(lucid.zeros(1, 2, 4, 8, 8)).shape
    lucid.Size([1, 2, 1, 1, 1])
    """

    _fn = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPool(_AdaptivePool):
    def __init__(self, output_size, return_indices: bool = False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor):
        return self._fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max over ``output_size`` windows that tile (N, C, L).

    :param output_size: the output's spatial size (an int, or one per dim; None keeps that dim).
    :param return_indices: also return the flat index of each maximum (for ``MaxUnpool``).
    """
    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Max over windows that tile (N, C, H, W) into ``output_size``.

    :param output_size: the output's spatial size (an int, or one per dim; None keeps that dim).
    :param return_indices: also return the flat index of each maximum (for ``MaxUnpool``).
    """
    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max over windows that tile the input's 3 spatial dims into ``output_size``.

    :param output_size: the output's spatial size (an int, or one per dim; None keeps that dim).
    :param return_indices: also return the flat index of each maximum (for ``MaxUnpool``).
    """

    _fn = staticmethod(F.adaptive_max_pool3d)


__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"]
