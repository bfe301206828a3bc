"""lucid.vision: torchvision's everyday parts on lucid: ``transforms`` (v1, on PIL images and tensors),
``datasets`` (MNIST, CIFAR, SVHN, ImageFolder... from their standard files), ``models`` (torchvision's
classification models, keys and checkpoints), ``ops`` (box operations, ``roi_align``, ``sigmoid_focal_loss``),
``utils`` (``make_grid``, ``save_image``, ``draw_bounding_boxes``) and ``io`` (reading and writing images).

Pillow is optional (``pip install lucid-mlx[vision]``): the transforms, models and ops take tensors without it;
datasets, utils and io, which give or write PIL images, need it."""
from . import datasets, io, models, ops, transforms, utils

__all__ = ["datasets", "io", "models", "ops", "transforms", "utils"]
