"""torchvision's random geometry and colour transforms: ``RandomRotation``, ``RandomAffine`` and the
``Random{Invert,Posterize,Solarize,AdjustSharpness,Autocontrast,Equalize}`` family, ``RandomApply``,
``RandomOrder``, ``RandomChoice`` and ``ConvertImageDtype``. Their draws come from lucid's generator (``get_params``
draws in torchvision's order), except RandomOrder's and RandomChoice's, which torchvision draws from Python's
``random`` module."""
from __future__ import annotations

import numbers
import random
from collections.abc import Sequence

import lucid

from . import functional as F
from ._pil import InterpolationMode, interpolation_mode
from .transforms import _ModuleTransform, _RandomApplied, _uniform

__all__ = ["RandomRotation", "RandomAffine", "RandomInvert", "RandomPosterize", "RandomSolarize",
           "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize", "RandomApply", "RandomTransforms",
           "RandomOrder", "RandomChoice", "ConvertImageDtype", "RandomPerspective"]


def _check_sequence_input(x, name: str, req_sizes) -> None:
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join(str(s) for s in req_sizes)
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}.")


def _setup_angle(x, name: str, req_sizes=(2,)) -> list[float]:
    """A number d as [-d, d]; a sequence of the allowed lengths as floats."""
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


def _setup_fill(fill):
    if fill is None:
        return 0
    if not isinstance(fill, (Sequence, numbers.Number)):
        raise TypeError("Fill should be either a sequence or a number.")
    return fill


def tensor_fill(fill, img):
    """``fill`` per channel as floats for a tensor image (torchvision's transforms do this; PIL takes it as is)."""
    if not isinstance(img, lucid.Tensor) or fill is None:
        return fill
    if isinstance(fill, (int, float)):
        return [float(fill)] * F.get_dimensions(img)[0]
    return [float(f) for f in fill]


class RandomRotation(_ModuleTransform):
    """Rotate by an angle drawn uniformly from ``degrees`` ((min, max), or d for (-d, d))."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=0):
        super().__init__()
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center
        self.interpolation = interpolation_mode(interpolation)
        self.expand = expand
        self.fill = _setup_fill(fill)

    @staticmethod
    def get_params(degrees) -> float:
        """The angle: one uniform draw in [degrees[0], degrees[1])."""
        return float(_uniform(float(degrees[0]), float(degrees[1])))

    def forward(self, img):
        fill = tensor_fill(self.fill, img)
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, fill)

    def __repr__(self):
        s = f"{type(self).__name__}(degrees={self.degrees}, interpolation={self.interpolation.value}, " \
            f"expand={self.expand}"
        s += f", center={self.center}" if self.center is not None else ""
        s += f", fill={self.fill}" if self.fill is not None else ""
        return s + ")"


class RandomAffine(_ModuleTransform):
    """A random affine map keeping the centre: an angle from ``degrees``, a translation of up to ``translate``
    (fractions of the width and height), a scale from ``scale`` and shears from ``shear`` (x range, or x then y)."""

    def __init__(self, degrees, translate=None, scale=None, shear=None, interpolation=InterpolationMode.NEAREST,
                 fill=0, center=None):
        super().__init__()
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            _check_sequence_input(translate, "translate", req_sizes=(2,))
            if not all(0.0 <= t <= 1.0 for t in translate):
                raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            _check_sequence_input(scale, "scale", req_sizes=(2,))
            if any(s <= 0 for s in scale):
                raise ValueError("scale values should be positive")
        self.scale = scale
        self.shear = _setup_angle(shear, name="shear", req_sizes=(2, 4)) if shear is not None else None
        self.interpolation = interpolation_mode(interpolation)
        self.fill = _setup_fill(fill)
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        """(angle, (tx, ty), scale, (shear_x, shear_y)), drawn in torchvision's order; ``img_size`` is
        [width, height]."""
        angle = float(_uniform(float(degrees[0]), float(degrees[1])))
        if translate is not None:
            max_dx, max_dy = float(translate[0] * img_size[0]), float(translate[1] * img_size[1])
            translations = (int(round(_uniform(-max_dx, max_dx))), int(round(_uniform(-max_dy, max_dy))))
        else:
            translations = (0, 0)
        scale = float(_uniform(scale_ranges[0], scale_ranges[1])) if scale_ranges is not None else 1.0
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = float(_uniform(shears[0], shears[1]))
            if len(shears) == 4:
                shear_y = float(_uniform(shears[2], shears[3]))
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img):
        fill = tensor_fill(self.fill, img)
        _, height, width = F.get_dimensions(img)
        params = self.get_params(self.degrees, self.translate, self.scale, self.shear, [width, height])
        return F.affine(img, *params, interpolation=self.interpolation, fill=fill, center=self.center)

    def __repr__(self):
        s = f"{type(self).__name__}(degrees={self.degrees}"
        s += f", translate={self.translate}" if self.translate is not None else ""
        s += f", scale={self.scale}" if self.scale is not None else ""
        s += f", shear={self.shear}" if self.shear is not None else ""
        s += f", interpolation={self.interpolation.value}" if self.interpolation != InterpolationMode.NEAREST else ""
        s += f", fill={self.fill}" if self.fill != 0 else ""
        s += f", center={self.center}" if self.center is not None else ""
        return s + ")"


class RandomInvert(_RandomApplied):
    """``invert`` with probability ``p``."""

    def _transform(self, img):
        return F.invert(img)


class RandomAutocontrast(_RandomApplied):
    """``autocontrast`` with probability ``p``."""

    def _transform(self, img):
        return F.autocontrast(img)


class RandomEqualize(_RandomApplied):
    """``equalize`` with probability ``p``."""

    def _transform(self, img):
        return F.equalize(img)


class RandomPosterize(_RandomApplied):
    """``posterize(img, bits)`` with probability ``p``."""

    def __init__(self, bits, p=0.5):
        super().__init__(p)
        self.bits = bits

    def _transform(self, img):
        return F.posterize(img, self.bits)

    def __repr__(self):
        return f"{type(self).__name__}(bits={self.bits},p={self.p})"


class RandomSolarize(_RandomApplied):
    """``solarize(img, threshold)`` with probability ``p``."""

    def __init__(self, threshold, p=0.5):
        super().__init__(p)
        self.threshold = threshold

    def _transform(self, img):
        return F.solarize(img, self.threshold)

    def __repr__(self):
        return f"{type(self).__name__}(threshold={self.threshold},p={self.p})"


class RandomAdjustSharpness(_RandomApplied):
    """``adjust_sharpness(img, sharpness_factor)`` with probability ``p``."""

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p)
        self.sharpness_factor = sharpness_factor

    def _transform(self, img):
        return F.adjust_sharpness(img, self.sharpness_factor)

    def __repr__(self):
        return f"{type(self).__name__}(sharpness_factor={self.sharpness_factor},p={self.p})"


class RandomApply(_ModuleTransform):
    """Apply all of ``transforms`` in order with probability ``p`` (one draw from lucid's generator)."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, img):
        if self.p < lucid.rand(1).item():
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}(\n    p={self.p}{lines}\n)"


class RandomTransforms:
    """A list of transforms used in a random way (the base of RandomOrder and RandomChoice)."""

    def __init__(self, transforms):
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __repr__(self):
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({lines}\n)"


class RandomOrder(RandomTransforms):
    """Apply ``transforms`` in a random order (drawn, as torchvision, from Python's ``random``)."""

    def __call__(self, img):
        order = list(range(len(self.transforms)))
        random.shuffle(order)
        for i in order:
            img = self.transforms[i](img)
        return img


class RandomChoice(RandomTransforms):
    """Apply one of ``transforms``, picked with weights ``p`` (drawn, as torchvision, from Python's ``random``)."""

    def __init__(self, transforms, p=None):
        super().__init__(transforms)
        if p is not None and not isinstance(p, Sequence):
            raise TypeError("Argument p should be a sequence")
        self.p = p

    def __call__(self, *args):
        return random.choices(self.transforms, weights=self.p)[0](*args)

    def __repr__(self):
        return f"{super().__repr__()}(p={self.p})"


class ConvertImageDtype(_ModuleTransform):
    """``convert_image_dtype(image, dtype)``: scale the values to the new dtype's range."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class RandomPerspective(_ModuleTransform):
    """With probability ``p``, a perspective map moving each corner inwards by up to ``distortion_scale`` of half
    the image."""

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__()
        self.p = p
        self.interpolation = interpolation_mode(interpolation)
        self.distortion_scale = distortion_scale
        self.fill = _setup_fill(fill)

    @staticmethod
    def get_params(width: int, height: int, distortion_scale: float):
        """(startpoints, endpoints): the image's corners and the moved corners, drawn in torchvision's order."""
        dx, dy = int(distortion_scale * (width // 2)), int(distortion_scale * (height // 2))

        def draw(low, high):
            return int(lucid.randint(low, high, size=(1,)).item())
        topleft = [draw(0, dx + 1), draw(0, dy + 1)]
        topright = [draw(width - dx - 1, width), draw(0, dy + 1)]
        botright = [draw(width - dx - 1, width), draw(height - dy - 1, height)]
        botleft = [draw(0, dx + 1), draw(height - dy - 1, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, [topleft, topright, botright, botleft]

    def forward(self, img):
        fill = tensor_fill(self.fill, img)
        _, height, width = F.get_dimensions(img)
        if lucid.rand(1).item() < self.p:
            startpoints, endpoints = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, startpoints, endpoints, self.interpolation, fill)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"
