"""torchvision.transforms (v1 API) on lucid: PIL images and tensor images ``(..., C, H, W)``."""
from . import functional
from ._pil import InterpolationMode
from .transforms import *  # noqa: F403
from .transforms import __all__ as _names

__all__ = ["functional", *_names]
