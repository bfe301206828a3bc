"""Fold and Unfold: sliding blocks to columns (im2col, ``F.unfold``) and columns summed back into an image
(col2im, ``F.fold``)."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module


class _Blocks(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Unfold(_Blocks):
    """(N, C, H, W) -> (N, C * kH * kW, L): each sliding block of ``kernel_size`` as a column.

    :param kernel_size: the block's size (an int or a pair).
    :param dilation: the spacing between block elements.
    :param padding: zeros added to both sides of each spatial dim.
    :param stride: the step between blocks.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(_Blocks):
    """(N, C * kH * kW, L) -> (N, C, *output_size): the columns summed back into place (overlaps add up).

    :param output_size: the spatial size (H, W) of the output.
    :param kernel_size: the block's size (an int or a pair).
    :param dilation: the spacing between block elements.
    :param padding: zeros added to both sides of each spatial dim.
    :param stride: the step between blocks.
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, " + super().extra_repr()


__all__ = ["Fold", "Unfold"]
