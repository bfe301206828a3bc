"""The PIL side of the transforms: recognising an image without importing Pillow, and Pillow's constants."""
from __future__ import annotations

import enum
import sys


class InterpolationMode(enum.Enum):
    """torchvision's interpolation modes (the tensor transforms take NEAREST, NEAREST_EXACT, BILINEAR, BICUBIC)."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


# Pillow's integer filter codes, which torchvision also accepts for `interpolation`
_FROM_INT = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC,
             4: InterpolationMode.BOX, 5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}
_TO_PIL = {InterpolationMode.NEAREST: 0, InterpolationMode.NEAREST_EXACT: 0, InterpolationMode.BILINEAR: 2,
           InterpolationMode.BICUBIC: 3, InterpolationMode.BOX: 4, InterpolationMode.HAMMING: 5,
           InterpolationMode.LANCZOS: 1}


def interpolation_mode(interpolation) -> InterpolationMode:
    if isinstance(interpolation, InterpolationMode):
        return interpolation
    if isinstance(interpolation, int) and not isinstance(interpolation, bool) and interpolation in _FROM_INT:
        return _FROM_INT[interpolation]
    raise TypeError("Argument interpolation should be of type InterpolationMode instead of "
                    f"{type(interpolation).__name__}")


def pil_filter(mode: InterpolationMode) -> int:
    return _TO_PIL[mode]


def is_pil(img) -> bool:
    """Whether ``img`` is a PIL image; a program that never imported Pillow has none (Pillow is not imported)."""
    image = sys.modules.get("PIL.Image")
    return image is not None and isinstance(img, image.Image)


def pil():
    """PIL.Image, or an ImportError saying how to get it."""
    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover (Pillow is installed where the tests run)
        raise ImportError("lucid.vision needs Pillow for PIL images: pip install 'lucid-mlx[vision]'") from e
    return Image
