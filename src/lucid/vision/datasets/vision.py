"""torchvision.datasets' base classes: ``VisionDataset`` (root, transforms, torchvision's repr) and
``StandardTransform`` (a transform for the input and one for the target)."""
from __future__ import annotations

import os

import numpy as np

import lucid
from lucid.utils.data import Dataset


class StandardTransform:
    """Apply ``transform`` to the input and ``target_transform`` to the target."""

    def __init__(self, transform=None, target_transform=None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    @staticmethod
    def _format_transform_repr(transform, head: str) -> list[str]:
        lines = repr(transform).splitlines()
        return [f"{head}{lines[0]}"] + [" " * len(head) + line for line in lines[1:]]

    def __repr__(self):
        body = [type(self).__name__]
        if self.transform is not None:
            body += self._format_transform_repr(self.transform, "Transform: ")
        if self.target_transform is not None:
            body += self._format_transform_repr(self.target_transform, "Target transform: ")
        return "\n".join(body)


class VisionDataset(Dataset):
    """The base of the image datasets: ``root``, and either ``transforms`` (a function of the input and the target)
    or ``transform`` / ``target_transform``."""
    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root
        has_transforms = transforms is not None
        has_separate_transform = transform is not None or target_transform is not None
        if has_transforms and has_separate_transform:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform = transform
        self.target_transform = target_transform
        if has_separate_transform:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def _apply(self, img, target):
        """``(img, target)`` through ``transform`` and ``target_transform``."""
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __repr__(self):
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if self.transforms is not None:
            body += [repr(self.transforms)]
        return "\n".join(["Dataset " + type(self).__name__] + [" " * self._repr_indent + line for line in body])

    def extra_repr(self) -> str:
        return ""


class _ImageArrays(VisionDataset):
    """A dataset of ``data`` (N, H, W[, C]) uint8 images and ``targets``, giving ``(PIL image, int)``. ``data``
    and ``targets`` stay assignable (``ds.data = ds.data[:100]``, as people subset torchvision's datasets)."""
    _numpy_of: dict = {}

    def _numpy(self, name: str):
        """``self.<name>`` as numpy when it is a tensor (converted once per assignment: reading one item from a
        tensor would wait for the device), else as it is."""
        value = getattr(self, name)
        if not isinstance(value, lucid.Tensor):
            return value
        if self._numpy_of.get(name, (None,))[0] is not value:
            self._numpy_of = {**self._numpy_of, name: (value, value.numpy())}
        return self._numpy_of[name][1]

    def __getitem__(self, index):
        from lucid.vision.transforms._pil import pil
        return self._apply(pil().fromarray(self._numpy("data")[index]), int(self._numpy("targets")[index]))

    def __len__(self):
        return len(self.data)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"
