"""Image-classification data read from torchvision-layout files under a root folder (``lucid train MODEL --data
ROOT``): MNIST, Fashion-MNIST, KMNIST (``ROOT/<Name>/raw/`` IDX files, raw or gzipped) and CIFAR-10/100
(``ROOT/cifar-10-batches-py/``, ``ROOT/cifar-100-python/``), their official train and test splits."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import lucid
from lucid.vision import datasets

from .base import UsageError

# --dataset name -> (the dataset class, the folder under ROOT that holds it)
DATASETS = {"mnist": (datasets.MNIST, "MNIST"), "fashionmnist": (datasets.FashionMNIST, "FashionMNIST"),
            "kmnist": (datasets.KMNIST, "KMNIST"), "cifar10": (datasets.CIFAR10, "cifar-10-batches-py"),
            "cifar100": (datasets.CIFAR100, "cifar-100-python")}


def find(root: str, name: str | None) -> str:
    """The dataset to read from ``root``: ``name`` if given, else the only one whose folder ``root`` has."""
    if name is not None:
        return name
    present = [n for n, (_, folder) in DATASETS.items() if (Path(root) / folder).is_dir()]
    if len(present) == 1:
        return present[0]
    folders = ", ".join(f"{folder}/ ({n})" for n, (_, folder) in DATASETS.items())
    if not present:
        raise UsageError(f"--data {root}: no dataset folder there; expected one of {folders} (torchvision's layout: "
                         "MNIST/raw/train-images-idx3-ubyte[.gz] and the other three files, or CIFAR's extracted "
                         "python-version archive)")
    raise UsageError(f"--data {root} holds {', '.join(present)}: choose one with --dataset")


def _images(ds) -> lucid.Tensor:
    """The dataset's images as uint8 (N, C, H, W)."""
    data = ds.data
    if isinstance(data, lucid.Tensor):  # the MNIST family: (N, H, W)
        return data.unsqueeze(1)
    return lucid.from_numpy(np.ascontiguousarray(data.transpose(0, 3, 1, 2)))  # CIFAR: (N, H, W, C)


def load(root: str, name: str):
    """``(x_train uint8, y_train, x_test uint8, y_test, class names)`` of dataset ``name`` under ``root``."""
    cls, _ = DATASETS[name]
    try:
        train, test = cls(root, train=True), cls(root, train=False)
    except RuntimeError as e:  # not found: torchvision's message, with the files to place
        raise UsageError(f"--data {root}: {e}") from e
    labels = (lambda ds: lucid.tensor(np.asarray(ds.targets.numpy() if isinstance(ds.targets, lucid.Tensor)
                                                 else ds.targets, dtype=np.int64)))
    return _images(train), labels(train), _images(test), labels(test), list(train.classes)


def fit_config(config: dict, shape, num_classes: int) -> dict:
    """The model's constructor arguments for images of ``shape`` (C, H, W) and ``num_classes``: each size argument
    the recipe's model has is set from the data."""
    channels, height, width = shape
    sizes = {"num_classes": num_classes, "in_channels": channels, "channels": channels, "input_size": height,
             "image_size": height, "in_features": channels * height * width}
    out = {k: sizes.get(k, v) for k, v in config.items()}
    if "patch_size" in out and height % out["patch_size"]:  # a ViT's patches must tile the image (28: 7x7)
        out["patch_size"] = next(p for p in (8, 7, 4, 2, 1) if height % p == 0)
    return out
