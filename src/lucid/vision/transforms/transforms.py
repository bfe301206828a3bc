"""torchvision.transforms' classes (v1 API) on lucid. The random ones draw from lucid's generator, so
``lucid.manual_seed`` makes a pipeline repeat."""
from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np

import lucid

from . import functional as F
from ._pil import InterpolationMode, interpolation_mode

__all__ = ["Compose", "ToTensor", "PILToTensor", "ToPILImage", "Normalize", "Resize", "CenterCrop", "RandomCrop",
           "RandomHorizontalFlip", "RandomVerticalFlip", "Pad", "Lambda", "Grayscale", "RandomGrayscale",
           "RandomResizedCrop", "ColorJitter", "GaussianBlur", "RandomErasing", "InterpolationMode"]


def _uniform(low: float, high: float) -> float:
    """One draw from U[low, high), a float32 value as torch.empty(1).uniform_(low, high).item() gives."""
    return float(np.float32(low + (high - low) * lucid.rand(1).item()))


def _randint(low: int, high: int) -> int:
    """One draw from [low, high) (torch.randint(low, high, size=(1,)).item())."""
    return int(lucid.randint(low, high, size=(1,)).item())


def _size_pair(size, error_msg: str):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


class Compose:
    """Apply ``transforms`` in order."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({lines}\n)"


class _Transform:
    """A transform with torchvision's ``Name(arg=value, ...)`` repr."""
    _repr_args: tuple = ()

    def __repr__(self):
        args = ", ".join(f"{name}={getattr(self, name)}" for name in self._repr_args)
        return f"{type(self).__name__}({args})"

    def __call__(self, img):
        return self.forward(img)


class _ModuleTransform(lucid.nn.Module):
    """The transforms that are ``nn.Module``s in torchvision (so ``nn.Sequential`` chains them), with
    torchvision's repr."""
    _repr_args: tuple = ()

    def __repr__(self):
        return _Transform.__repr__(self)


class ToTensor(_Transform):
    """PIL image / (H, W, C) array -> (C, H, W) tensor, bytes scaled to float32 in [0, 1]."""

    def forward(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class PILToTensor(_Transform):
    """PIL image -> (C, H, W) tensor of the image's own type."""

    def forward(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class ToPILImage(_Transform):
    """(C, H, W) tensor / (H, W, C) array -> PIL image (``mode`` inferred from the channels and dtype)."""
    _repr_args = ("mode",)

    def __init__(self, mode=None):
        self.mode = mode

    def forward(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f"{type(self).__name__}()" if self.mode is None else f"{type(self).__name__}(mode={self.mode})"


class Normalize(_ModuleTransform):
    """``(x - mean) / std`` per channel of a float tensor image."""
    _repr_args = ("mean", "std")

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean, self.std, self.inplace = mean, std, inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)


class Resize(_ModuleTransform):
    """Resize to ``size`` ([h, w]), or the smaller edge to ``size`` (an int), keeping the aspect ratio; the
    longer edge is capped at ``max_size``. PIL images use Pillow's filters; tensors ``F.interpolate``."""
    _repr_args = ("size", "interpolation", "max_size", "antialias")

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        super().__init__()
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size, self.max_size, self.antialias = size, max_size, antialias
        self.interpolation = interpolation_mode(interpolation)

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{type(self).__name__}(size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias})")


class CenterCrop(_ModuleTransform):
    """The central ``size`` region; zero-padded where ``size`` exceeds the image."""
    _repr_args = ("size",)

    def __init__(self, size):
        super().__init__()
        self.size = tuple(_size_pair(size, "Please provide only two dimensions (h, w) for size."))

    def forward(self, img):
        return F.center_crop(img, self.size)


class Pad(_ModuleTransform):
    """Pad the borders by ``padding`` with ``fill`` (constant) or by edge / reflect / symmetric ``padding_mode``."""
    _repr_args = ("padding", "fill", "padding_mode")

    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        if isinstance(padding, Sequence) and len(padding) not in (1, 2, 4):
            raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                             f"{len(padding)} element tuple")
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


class Lambda(_Transform):
    """Apply a user function."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def forward(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{type(self).__name__}()"


class RandomCrop(_ModuleTransform):
    """A random ``size`` crop, after optional ``padding`` (and padding up to ``size`` when ``pad_if_needed``)."""
    _repr_args = ("size", "padding")

    @staticmethod
    def get_params(img, output_size):
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        return _randint(0, h - th + 1), _randint(0, w - tw + 1), th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.size = tuple(_size_pair(size, "Please provide only two dimensions (h, w) for size."))
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)


class _RandomApplied(_ModuleTransform):
    """Applies ``_transform`` with probability ``p`` (one draw from lucid's generator per call)."""
    _repr_args = ("p",)

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        if lucid.rand(1).item() < self.p:
            return self._transform(img)
        return img


class RandomHorizontalFlip(_RandomApplied):
    """Mirror left-right with probability ``p``."""

    def _transform(self, img):
        return F.hflip(img)


class RandomVerticalFlip(_RandomApplied):
    """Mirror top-bottom with probability ``p``."""

    def _transform(self, img):
        return F.vflip(img)


class Grayscale(_ModuleTransform):
    """Luma as 1 or 3 channels."""
    _repr_args = ("num_output_channels",)

    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, self.num_output_channels)


class RandomGrayscale(_RandomApplied):
    """Grayscale with probability ``p``, keeping the number of channels."""

    def __init__(self, p=0.1):
        super().__init__(p)

    def _transform(self, img):
        return F.rgb_to_grayscale(img, F.get_dimensions(img)[0])


class RandomResizedCrop(_ModuleTransform):
    """A random crop of random area (``scale``) and aspect ratio (``ratio``), resized to ``size``."""

    @staticmethod
    def get_params(img, scale, ratio):
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * _uniform(scale[0], scale[1])
            aspect_ratio = math.exp(_uniform(log_ratio[0], log_ratio[1]))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                return _randint(0, height - h + 1), _randint(0, width - w + 1), h, w
        # after 10 misses: the central crop of the ratio nearest the image's
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = tuple(_size_pair(size, "Please provide only two dimensions (h, w) for size."))
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        self.interpolation = interpolation_mode(interpolation)
        self.scale, self.ratio, self.antialias = scale, ratio, antialias

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)

    def __repr__(self):
        return (f"{type(self).__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={self.interpolation.value}, "
                f"antialias={self.antialias})")


def _jitter_range(value, name, center=1.0, bound=(0.0, float("inf")), clip_first_on_zero=True):
    """ColorJitter's ``[min, max]`` for a factor given as a number (center +- value) or a pair; None when it is
    the identity."""
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"If {name} is a single number, it must be non negative.")
        value = [center - float(value), center + float(value)]
        if clip_first_on_zero:
            value[0] = max(value[0], 0.0)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        value = [float(value[0]), float(value[1])]
    else:
        raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
    if not bound[0] <= value[0] <= value[1] <= bound[1]:
        raise ValueError(f"{name} values should be between {bound}, but got {value}.")
    return None if value[0] == value[1] == center else value


class ColorJitter(_ModuleTransform):
    """Random brightness, contrast, saturation and hue changes, applied in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = _jitter_range(brightness, "brightness")
        self.contrast = _jitter_range(contrast, "contrast")
        self.saturation = _jitter_range(saturation, "saturation")
        self.hue = _jitter_range(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        """The order of the four adjustments and each factor (None: not applied)."""
        order = lucid.randperm(4).tolist()
        factors = [None if r is None else _uniform(r[0], r[1]) for r in (brightness, contrast, saturation, hue)]
        return (order, *factors)

    def forward(self, img):
        order, *factors = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        adjust = (F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue)
        for k in order:
            if factors[k] is not None:
                img = adjust[k](img, factors[k])
        return img

    def __repr__(self):
        return (f"{type(self).__name__}(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")


class GaussianBlur(_ModuleTransform):
    """Gaussian blur with a ``sigma`` drawn uniformly from ``(min, max)`` for each image."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        self.kernel_size = tuple(_size_pair(kernel_size, "Kernel size should be a tuple/list of two integers"))
        for k in self.kernel_size:
            if k <= 0 or k % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise TypeError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min: float, sigma_max: float) -> float:
        return _uniform(sigma_min, sigma_max)

    def forward(self, img):
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self):
        return f"{type(self).__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"


class RandomErasing(_ModuleTransform):
    """With probability ``p``, erase a random rectangle of a tensor image (area ``scale``, aspect ``ratio``) to
    ``value``: a number, one value per channel, or ``"random"`` (standard normal noise)."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p, self.scale, self.ratio, self.value, self.inplace = p, scale, ratio, value, inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        """(i, j, h, w, v): the region and its values; the whole image itself after 10 misses."""
        channels, height, width = (int(s) for s in img.shape[-3:])
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            erase_area = area * _uniform(scale[0], scale[1])
            aspect_ratio = math.exp(_uniform(log_ratio[0], log_ratio[1]))
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < height and w < width):
                continue
            if value is None:
                v = lucid.randn(channels, h, w, dtype=lucid.float32)
            else:
                v = lucid.tensor(value, dtype=lucid.float32)[:, None, None]
            return _randint(0, height - h + 1), _randint(0, width - w + 1), h, w, v
        return 0, 0, height, width, img

    def forward(self, img):
        if not isinstance(img, lucid.Tensor):
            raise TypeError(f"img should be Tensor Image. Got {type(img)}")
        if lucid.rand(1).item() >= self.p:
            return img
        if isinstance(self.value, numbers.Number):
            value = [float(self.value)]
        elif isinstance(self.value, str):
            value = None
        else:
            value = list(self.value)
        channels = int(img.shape[-3])
        if value is not None and len(value) not in (1, channels):
            raise ValueError("If value is a sequence, it should have either a single value or "
                             f"{channels} (number of input channels)")
        i, j, h, w, v = self.get_params(img, self.scale, self.ratio, value)
        return F.erase(img, i, j, h, w, v, self.inplace)

    def __repr__(self):
        return (f"{type(self).__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, value={self.value}, "
                f"inplace={self.inplace})")
