"""torchvision.transforms (v1 API) on lucid: PIL images and tensor images ``(..., C, H, W)``."""
from . import autoaugment, functional
from ._augment import *  # noqa: F403
from ._augment import __all__ as _augment_names
from ._pil import InterpolationMode
from .autoaugment import AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from .transforms import *  # noqa: F403
from .transforms import __all__ as _names

__all__ = ["functional", "autoaugment", *_names, *_augment_names, "AutoAugment", "AutoAugmentPolicy", "RandAugment",
           "TrivialAugmentWide"]
