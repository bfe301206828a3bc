"""The preprocessing that goes with published weights (``weights.transforms()``): torchvision's
``ImageClassification`` preset."""
from __future__ import annotations

import lucid

from ... import nn
from ..transforms import functional as F
from ..transforms.functional import InterpolationMode

_INT_MAX = {lucid.uint8: 255, lucid.int8: 127, lucid.int16: 32767, lucid.int32: 2**31 - 1}


class ImageClassification(nn.Module):
    """Resize the shorter side to ``resize_size``, centre-crop ``crop_size``, scale to [0, 1] floats (integer
    images by their dtype's largest value) and normalize by ImageNet's ``mean``/``std``. Takes PIL images and
    (..., C, H, W) tensors."""

    def __init__(self, *, crop_size: int, resize_size: int = 256, mean: tuple[float, ...] = (0.485, 0.456, 0.406),
                 std: tuple[float, ...] = (0.229, 0.224, 0.225),
                 interpolation: InterpolationMode = InterpolationMode.BILINEAR, antialias: bool | None = True) -> None:
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        img = F.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if not isinstance(img, lucid.Tensor):
            img = F.pil_to_tensor(img)
        if img.dtype in _INT_MAX:
            img = img.float() / _INT_MAX[img.dtype]
        elif img.dtype != lucid.float32:
            img = img.float()
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(\n    crop_size={self.crop_size}\n    resize_size={self.resize_size}\n"
                f"    mean={self.mean}\n    std={self.std}\n    interpolation={self.interpolation}\n)")
