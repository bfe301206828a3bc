"""lucid.vision: torchvision's everyday parts on lucid: ``transforms`` (torchvision's v1 transforms, on PIL
images and tensors), ``models`` (torchvision's classification models, keys and checkpoints) and ``ops`` (box
operations, ``roi_align``, ``sigmoid_focal_loss``).

Pillow is optional (``pip install lucid-mlx[vision]``): the transforms take tensors without it."""
from . import models, ops, transforms

__all__ = ["transforms", "models", "ops"]
