"""lucid.vision: torchvision's everyday parts on lucid. So far ``transforms`` (torchvision's v1 transforms, on PIL
images and tensors); datasets, models and image utilities are not provided yet.

Pillow is optional (``pip install lucid-mlx[vision]``): the transforms take tensors without it."""
from . import transforms

__all__ = ["transforms"]
