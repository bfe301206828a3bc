"""torchvision.transforms.autoaugment: ``AutoAugment`` (the ImageNet, CIFAR10 and SVHN policies), ``RandAugment``
and ``TrivialAugmentWide``, on PIL images and uint8 tensor images. The ops, magnitudes (torchvision's float32
bins) and the order of the draws are torchvision's; the draws come from lucid's generator."""
from __future__ import annotations

import enum
import math

import numpy as np

import lucid

from . import functional as F
from ._augment import tensor_fill
from ._geometry import _linspace32
from ._pil import InterpolationMode, interpolation_mode
from .transforms import _ModuleTransform

__all__ = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide"]


def _apply_op(img, op_name: str, magnitude: float, interpolation, fill):
    """One named augmentation at ``magnitude``."""
    if op_name in ("ShearX", "ShearY"):
        shear = math.degrees(math.atan(magnitude))
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0,
                        shear=[shear, 0.0] if op_name == "ShearX" else [0.0, shear],
                        interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name in ("TranslateX", "TranslateY"):
        shift = [int(magnitude), 0] if op_name == "TranslateX" else [0, int(magnitude)]
        return F.affine(img, angle=0.0, translate=shift, scale=1.0, interpolation=interpolation, shear=[0.0, 0.0],
                        fill=fill)
    simple = {
        "Rotate": lambda: F.rotate(img, magnitude, interpolation=interpolation, fill=fill),
        "Brightness": lambda: F.adjust_brightness(img, 1.0 + magnitude),
        "Color": lambda: F.adjust_saturation(img, 1.0 + magnitude),
        "Contrast": lambda: F.adjust_contrast(img, 1.0 + magnitude),
        "Sharpness": lambda: F.adjust_sharpness(img, 1.0 + magnitude),
        "Posterize": lambda: F.posterize(img, int(magnitude)),
        "Solarize": lambda: F.solarize(img, magnitude),
        "AutoContrast": lambda: F.autocontrast(img),
        "Equalize": lambda: F.equalize(img),
        "Invert": lambda: F.invert(img),
        "Identity": lambda: img,
    }
    if op_name not in simple:
        raise ValueError(f"The provided operator {op_name} is not recognized.")
    return simple[op_name]()


class AutoAugmentPolicy(enum.Enum):
    """The policies learned on ImageNet, CIFAR10 and SVHN (Cubuk et al., 2019)."""
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


_POLICIES = {
    AutoAugmentPolicy.IMAGENET: [
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)), (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)), (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, None)), (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)), (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)), (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
        (("Equalize", 0.0, None), ("Equalize", 0.8, None)), (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)), (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)), (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, None)), (("Color", 0.4, 0), ("Equalize", 0.6, None)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)), (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
    ],
    AutoAugmentPolicy.CIFAR10: [
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)), (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)), (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)), (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)), (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)), (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)), (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)), (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)), (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)), (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)), (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)), (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)), (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
    ],
    AutoAugmentPolicy.SVHN: [
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)), (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)), (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)), (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)), (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)), (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)), (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)), (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)), (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)), (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)), (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)), (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)), (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None)),
    ],
}


def _posterize_bins(num_bins: int, levels: int) -> np.ndarray:
    """8 - round(i / ((num_bins - 1) / levels)) in float32, rounded half to even (as torch)."""
    return 8 - np.round(np.arange(num_bins, dtype=np.float32) / np.float32((num_bins - 1) / levels)).astype(np.int32)


def _space(num_bins: int, shear: float, translate: tuple[float, float], rotate: float, enhance: float,
           posterize_levels: int, identity: bool, invert: bool) -> dict:
    """op name -> (magnitude bins or None for no magnitude, signed)."""
    space = {"Identity": (None, False)} if identity else {}
    space.update({
        "ShearX": (_linspace32(0.0, shear, num_bins), True),
        "ShearY": (_linspace32(0.0, shear, num_bins), True),
        "TranslateX": (_linspace32(0.0, translate[0], num_bins), True),
        "TranslateY": (_linspace32(0.0, translate[1], num_bins), True),
        "Rotate": (_linspace32(0.0, rotate, num_bins), True),
        "Brightness": (_linspace32(0.0, enhance, num_bins), True),
        "Color": (_linspace32(0.0, enhance, num_bins), True),
        "Contrast": (_linspace32(0.0, enhance, num_bins), True),
        "Sharpness": (_linspace32(0.0, enhance, num_bins), True),
        "Posterize": (_posterize_bins(num_bins, posterize_levels), False),
        "Solarize": (_linspace32(255.0, 0.0, num_bins), False),
        "AutoContrast": (None, False),
        "Equalize": (None, False),
    })
    if invert:
        space["Invert"] = (None, False)
    return space


def _randint(high: int, n: int = 1) -> list[int]:
    return lucid.randint(0, high, (n,)).tolist()


class AutoAugment(_ModuleTransform):
    """A sub-policy (two ops, each applied with its probability and magnitude) drawn from ``policy``."""

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.policy = policy
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill
        self.policies = self._get_policies(policy)

    @staticmethod
    def _get_policies(policy):
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        return _POLICIES[policy]

    def _augmentation_space(self, num_bins: int, image_size) -> dict:
        return _space(num_bins, 0.3, (150.0 / 331.0 * image_size[1], 150.0 / 331.0 * image_size[0]), 30.0, 0.9, 4,
                      identity=False, invert=True)

    @staticmethod
    def get_params(transform_num: int):
        """(sub-policy index, two uniform draws for the ops' probabilities, two signs in {0, 1})."""
        policy_id = _randint(transform_num)[0]
        probs = lucid.rand(2).tolist()
        signs = _randint(2, 2)
        return policy_id, probs, signs

    def forward(self, img):
        fill = tensor_fill(self.fill, img)
        _, height, width = F.get_dimensions(img)
        transform_id, probs, signs = self.get_params(len(self.policies))
        op_meta = self._augmentation_space(10, (height, width))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = op_meta[op_name]
                magnitude = float(magnitudes[magnitude_id]) if magnitude_id is not None else 0.0
                if signed and signs[i] == 0:
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(policy={self.policy}, fill={self.fill})"


class RandAugment(_ModuleTransform):
    """``num_ops`` ops drawn uniformly, each at bin ``magnitude`` of ``num_magnitude_bins`` (signs drawn)."""

    def __init__(self, num_ops: int = 2, magnitude: int = 9, num_magnitude_bins: int = 31,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill

    def _augmentation_space(self, num_bins: int, image_size) -> dict:
        return _space(num_bins, 0.3, (150.0 / 331.0 * image_size[1], 150.0 / 331.0 * image_size[0]), 30.0, 0.9, 4,
                      identity=True, invert=False)

    def forward(self, img):
        fill = tensor_fill(self.fill, img)
        _, height, width = F.get_dimensions(img)
        op_meta = self._augmentation_space(self.num_magnitude_bins, (height, width))
        for _ in range(self.num_ops):
            op_name = list(op_meta)[_randint(len(op_meta))[0]]
            magnitudes, signed = op_meta[op_name]
            magnitude = float(magnitudes[self.magnitude]) if magnitudes is not None else 0.0
            if signed and _randint(2)[0]:
                magnitude *= -1.0
            img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)
        return img

    def __repr__(self):
        return (f"{type(self).__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
                f"num_magnitude_bins={self.num_magnitude_bins}, interpolation={self.interpolation}, "
                f"fill={self.fill})")


class TrivialAugmentWide(_ModuleTransform):
    """One op drawn uniformly, at a magnitude bin drawn uniformly (the wide ranges of TrivialAugment)."""

    def __init__(self, num_magnitude_bins: int = 31, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation_mode(interpolation)
        self.fill = fill

    def _augmentation_space(self, num_bins: int) -> dict:
        return _space(num_bins, 0.99, (32.0, 32.0), 135.0, 0.99, 6, identity=True, invert=False)

    def forward(self, img):
        fill = tensor_fill(self.fill, img)
        op_meta = self._augmentation_space(self.num_magnitude_bins)
        op_name = list(op_meta)[_randint(len(op_meta))[0]]
        magnitudes, signed = op_meta[op_name]
        magnitude = float(magnitudes[_randint(len(magnitudes))[0]]) if magnitudes is not None else 0.0
        if signed and _randint(2)[0]:
            magnitude *= -1.0
        return _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)

    def __repr__(self):
        return (f"{type(self).__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
