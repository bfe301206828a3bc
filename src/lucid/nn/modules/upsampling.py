"""Upsample (and its fixed-mode spellings UpsamplingNearest2d, UpsamplingBilinear2d): resize with
``F.interpolate``."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module


class Upsample(Module):
    """Resize (N, C, *spatial) to ``size`` or by ``scale_factor`` with ``mode`` 'nearest', 'nearest-exact',
    'linear', 'bilinear', 'bicubic' or 'trilinear'; ``align_corners`` for the linear modes.

    :param size: the output's spatial size (an int or one per dim).
    :param scale_factor: the multiplier of the spatial size (instead of ``size``).
    :param mode: 'nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic' or 'trilinear'.
    :param align_corners: for the linear modes, align the corner pixels' centres.
    :param recompute_scale_factor: compute the interpolation from the output size rather than ``scale_factor``.

    >>> import lucid
    >>> lucid.nn.Upsample(scale_factor=2)(lucid.zeros(1, 1, 2, 2)).shape
    lucid.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of (N, C, H, W).

    :param size: the output's spatial size.
    :param scale_factor: the multiplier of the spatial size.
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) with ``align_corners=True``.

    :param size: the output's spatial size.
    :param scale_factor: the multiplier of the spatial size.
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
