"""torchvision.transforms.functional (v1) on lucid: each function takes a PIL image or a tensor image
(``(..., C, H, W)``) and returns the same kind, with torchvision's shapes, dtypes and value ranges."""
from __future__ import annotations

import numbers

import numpy as np

import lucid

from ._color import adjust_gamma, adjust_sharpness, autocontrast, convert_image_dtype, equalize, invert, posterize, \
    solarize
from ._geometry import affine, perspective, rotate
from ._image import _batched, _blend, _check_colour_channels, _check_image, _check_tensor_image, _unbatched, \
    get_dimensions
from ._pil import InterpolationMode, interpolation_mode, is_pil, pil, pil_filter

__all__ = ["InterpolationMode", "get_dimensions", "get_image_size", "get_image_num_channels", "to_tensor",
           "pil_to_tensor", "to_pil_image", "normalize", "resize", "crop", "center_crop", "resized_crop", "pad",
           "hflip", "vflip", "rgb_to_grayscale", "to_grayscale", "adjust_brightness", "adjust_contrast",
           "adjust_saturation", "adjust_hue", "gaussian_blur", "erase", "rotate", "affine", "invert", "posterize",
           "solarize", "adjust_sharpness", "autocontrast", "equalize", "adjust_gamma", "convert_image_dtype",
           "perspective"]


def get_image_size(img) -> list[int]:
    """[width, height]."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img) -> int:
    """The number of channels."""
    return get_dimensions(img)[0]


# ---- conversions -------------------------------------------------------------------------------------------------

def _pil_array(pic) -> np.ndarray:
    """The image's pixels as an (H, W, C) array of its own type ('1' images as 0/255 bytes, as torchvision)."""
    arr = np.array(pic, copy=True)
    if pic.mode == "1":
        arr = arr.astype(np.uint8) * 255
    return arr.reshape(pic.height, pic.width, len(pic.getbands()))


def to_tensor(pic):
    """A PIL image or an (H, W, C) numpy array as a (C, H, W) tensor; bytes become float32 in [0, 1]."""
    if not (is_pil(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
    else:
        arr = _pil_array(pic)
    arr = np.ascontiguousarray(arr.transpose(2, 0, 1))
    if arr.dtype == np.uint8:
        return lucid.from_numpy(arr.astype(np.float32) / np.float32(255))
    return lucid.from_numpy(arr)


def pil_to_tensor(pic):
    """A PIL image as a (C, H, W) tensor of its own type, values unchanged."""
    if not is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    arr = np.array(pic, copy=True)
    return lucid.from_numpy(np.ascontiguousarray(arr.reshape(pic.height, pic.width, -1).transpose(2, 0, 1)))


_MODES_BY_CHANNELS = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}
_SINGLE_CHANNEL_MODES = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16", np.dtype(np.int32): "I",
                         np.dtype(np.float32): "F"}


def to_pil_image(pic, mode=None):
    """A (C, H, W) tensor or an (H, W, C) array as a PIL image; float tensors are scaled by 255 into bytes."""
    Image = pil()
    if isinstance(pic, lucid.Tensor):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-3]} channels.")
        if pic.is_floating_point() and mode != "F":
            pic = (pic * 255).to(lucid.uint8)  # truncation, as PyTorch's .byte()
        arr = np.transpose(pic.numpy(), (1, 2, 0))
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        if arr.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {arr.shape[-1]} channels.")
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    channels = arr.shape[-1]
    if channels == 1:
        arr = arr[:, :, 0]
        expected = _SINGLE_CHANNEL_MODES.get(arr.dtype)
        if mode is not None and expected is not None and mode != expected and not (mode == "I" and
                                                                                 arr.dtype == np.int32):
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {arr.dtype}. Should be {expected}")
        mode = mode or expected
    else:
        expected = _MODES_BY_CHANNELS[channels]
        permitted = {2: ["LA"], 3: ["RGB", "YCbCr", "HSV"], 4: ["RGBA", "CMYK", "RGBX"]}[channels]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for {channels}D inputs")
        if arr.dtype != np.uint8 and mode is None:
            raise TypeError(f"Input type {arr.dtype} is not supported")
        mode = mode or expected
    if mode is None:
        raise TypeError(f"Input type {arr.dtype} is not supported")
    return Image.fromarray(np.ascontiguousarray(arr), mode=mode)


_NUMPY_FLOATS = {lucid.float16: np.float16, lucid.float32: np.float32, lucid.float64: np.float64}


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean) / std per channel of a float (..., C, H, W) tensor."""
    if not isinstance(tensor, lucid.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tuple(tensor.shape)}")
    as_numpy = _NUMPY_FLOATS.get(tensor.dtype)
    if as_numpy is not None and not isinstance(std, lucid.Tensor):
        # the user's constants, checked in numpy: a tensor check would wait for the device once per image
        zero = bool(np.any(np.asarray(std, dtype=np.float64).astype(as_numpy) == 0))
    else:
        zero = None
    mean = lucid.as_tensor(mean, dtype=tensor.dtype)
    std = lucid.as_tensor(std, dtype=tensor.dtype)
    if zero is None:
        zero = bool((std == 0).any())
    if zero:
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    out = (tensor - mean) / std
    if inplace:
        return tensor.copy_(out)
    return out


# ---- geometry ----------------------------------------------------------------------------------------------------

def _resized_size(h: int, w: int, size, max_size):
    if isinstance(size, numbers.Integral):
        size = [int(size)]
    size = list(size)
    if len(size) != 1:
        if max_size is not None:
            raise ValueError("max_size should only be passed if size specifies the length of the smaller edge, "
                             "i.e. size should be an int or a sequence of length 1 in torchscript mode.")
        return int(size[0]), int(size[1])
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = size[0], int(size[0] * long / short)
    if max_size is not None:
        if max_size <= size[0]:
            raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                             f"smaller edge size = {size}")
        if new_long > max_size:
            new_short, new_long = int(max_size * new_short / new_long), max_size
    return (new_long, new_short) if w <= h else (new_short, new_long)


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize to ``size`` ([h, w]), or the smaller edge to ``size`` (an int) keeping the aspect ratio."""
    _check_image(img)
    interpolation = interpolation_mode(interpolation)
    if not isinstance(size, (numbers.Integral, list, tuple)):
        raise TypeError(f"Size should be int or sequence. Got {type(size)}")
    if isinstance(size, (list, tuple)) and len(size) not in (1, 2):
        raise ValueError(f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element tuple/list")
    _, h, w = get_dimensions(img)
    out_h, out_w = _resized_size(h, w, size, max_size)
    if (out_h, out_w) == (h, w):
        return img
    if is_pil(img):
        return img.resize((out_w, out_h), pil_filter(interpolation))
    modes = (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT, InterpolationMode.BILINEAR,
             InterpolationMode.BICUBIC)
    if interpolation not in modes:
        raise ValueError("Tensor images support only nearest, nearest-exact, bilinear and bicubic interpolation")
    x, _ = _batched(img)
    dtype = x.dtype
    if not x.is_floating_point():
        x = x.to(lucid.float32)
    linear = interpolation in (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC)
    out = lucid.nn.functional.interpolate(x, size=[out_h, out_w], mode=interpolation.value,
                                          align_corners=False if linear else None,
                                          antialias=bool(antialias) and linear)
    if dtype != out.dtype:  # back to an integer type: rounded (and clamped: bicubic overshoots)
        if dtype == lucid.uint8:
            out = out.clamp(0, 255)
        out = out.round().to(dtype)
    return _unbatched(out, img)


def _pad_index(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """Source index of each padded position along one axis (from the sizes alone)."""
    i = np.arange(-before, n + after)
    if mode == "edge":
        return np.clip(i, 0, n - 1)
    if mode == "reflect":
        period = 2 * (n - 1) if n > 1 else 1
        i = np.mod(i, period)
        return np.where(i >= n, period - i, i)
    period = 2 * n  # symmetric: the edge repeated
    i = np.mod(i, period)
    return np.where(i >= n, period - 1 - i, i)


def _parse_padding(padding):
    if not isinstance(padding, (numbers.Integral, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if isinstance(padding, numbers.Integral):
        return [int(padding)] * 4
    if len(padding) not in (1, 2, 4):
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
    if len(padding) == 1:
        return [int(padding[0])] * 4
    if len(padding) == 2:
        return [int(padding[0]), int(padding[1])] * 2
    return [int(p) for p in padding]


def _pil_fill(fill, img):
    """``fill`` as Pillow takes it for ``img``: one value per band."""
    bands = len(img.getbands())
    if isinstance(fill, (tuple, list)):
        if len(fill) == 1:
            fill = fill[0]
        elif len(fill) != bands:
            raise ValueError("The number of elements in 'fill' does not match the number of channels of the image "
                             f"({len(fill)} != {bands})")
        else:
            return tuple(fill) if img.mode == "F" else tuple(int(v) for v in fill)
    fill = fill if img.mode == "F" else int(fill)
    return fill if bands == 1 else (fill,) * bands


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad the borders: ``padding`` is all sides, (left/right, top/bottom) or (left, top, right, bottom)."""
    _check_image(img)
    if not isinstance(fill, (numbers.Number, str, tuple, list)):
        raise TypeError("Got inappropriate fill arg")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, top, right, bottom = _parse_padding(padding)
    if is_pil(img):
        Image = pil()
        if padding_mode == "constant":
            from PIL import ImageOps
            return ImageOps.expand(img, border=(left, top, right, bottom), fill=_pil_fill(fill, img))
        if min(left, top, right, bottom) < 0:  # negative padding crops, as torchvision's
            img = img.crop((max(-left, 0), max(-top, 0), img.width - max(-right, 0), img.height - max(-bottom, 0)))
            left, top, right, bottom = (max(v, 0) for v in (left, top, right, bottom))
        arr = np.asarray(img)
        padded = np.pad(arr, [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2), mode=padding_mode)
        out = Image.fromarray(padded, mode=img.mode)
        if img.mode == "P":
            out.putpalette(img.getpalette())
        return out
    _check_tensor_image(img)
    if padding_mode == "constant":
        if not isinstance(fill, (int, float)):
            raise TypeError("Got inappropriate fill arg")
        return lucid.nn.functional.pad(img, (left, right, top, bottom), mode="constant", value=float(fill))
    h, w = int(img.shape[-2]), int(img.shape[-1])
    if padding_mode == "reflect" and (max(left, right) >= w or max(top, bottom) >= h):
        raise RuntimeError("Padding size should be less than the corresponding input dimension")
    rows = lucid.from_numpy(_pad_index(h, top, bottom, padding_mode).astype(np.int64))
    cols = lucid.from_numpy(_pad_index(w, left, right, padding_mode).astype(np.int64))
    return img.index_select(-2, rows).index_select(-1, cols)


def crop(img, top: int, left: int, height: int, width: int):
    """The ``height`` x ``width`` region at (top, left); outside the image is zeros."""
    _check_image(img)
    if is_pil(img):
        return img.crop((left, top, left + width, top + height))
    _check_tensor_image(img)
    h, w = int(img.shape[-2]), int(img.shape[-1])
    bottom, right = top + height, left + width
    if left < 0 or top < 0 or right > w or bottom > h:
        inner = img[..., max(top, 0):min(bottom, h), max(left, 0):min(right, w)]
        border = [max(-left, 0), max(-top, 0), max(right - w, 0), max(bottom - h, 0)]
        return pad(inner, border, fill=0)
    return img[..., top:bottom, left:right]


def _pair(size, name="size"):
    if isinstance(size, numbers.Integral):
        return int(size), int(size)
    if isinstance(size, (tuple, list)) and len(size) == 1:
        return int(size[0]), int(size[0])
    if isinstance(size, (tuple, list)) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise ValueError("Please provide only two dimensions (h, w) for size.")


def center_crop(img, output_size):
    """The central ``output_size`` region (zero-padded where it is larger than the image)."""
    crop_h, crop_w = _pair(output_size)
    _, h, w = get_dimensions(img)
    if crop_w > w or crop_h > h:
        border = [(crop_w - w) // 2 if crop_w > w else 0, (crop_h - h) // 2 if crop_h > h else 0,
                  (crop_w - w + 1) // 2 if crop_w > w else 0, (crop_h - h + 1) // 2 if crop_h > h else 0]
        img = pad(img, border, fill=0)
        _, h, w = get_dimensions(img)
        if crop_w == w and crop_h == h:
            return img
    return crop(img, int(round((h - crop_h) / 2.0)), int(round((w - crop_w) / 2.0)), crop_h, crop_w)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR, antialias=True):
    """``crop`` then ``resize``."""
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


def hflip(img):
    """Mirror left-right."""
    _check_image(img)
    if is_pil(img):
        return img.transpose(pil().Transpose.FLIP_LEFT_RIGHT)
    _check_tensor_image(img)
    return img.flip(-1)


def vflip(img):
    """Mirror top-bottom."""
    _check_image(img)
    if is_pil(img):
        return img.transpose(pil().Transpose.FLIP_TOP_BOTTOM)
    _check_tensor_image(img)
    return img.flip(-2)


# ---- colour ------------------------------------------------------------------------------------------------------

def rgb_to_grayscale(img, num_output_channels: int = 1):
    """Luma (ITU-R 601-2: 0.299 R + 0.587 G + 0.114 B) as 1 or 3 channels."""
    _check_image(img)
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if is_pil(img):
        gray = img.convert("L")
        if num_output_channels == 3:
            arr = np.asarray(gray)
            return pil().fromarray(np.dstack([arr, arr, arr]), "RGB")
        return gray
    channels = get_dimensions(img)[0]
    if channels not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found {channels}")
    if channels == 3:
        r, g, b = img[..., 0, :, :], img[..., 1, :, :], img[..., 2, :, :]
        gray = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(-3)
    else:
        gray = img.clone()
    if num_output_channels == 3:
        return gray.expand(*img.shape[:-3], 3, *img.shape[-2:]).contiguous()
    return gray


def to_grayscale(img, num_output_channels: int = 1):
    """PIL images only (as torchvision's): see ``rgb_to_grayscale``."""
    if not is_pil(img):
        raise TypeError("Input should be PIL Image")
    return rgb_to_grayscale(img, num_output_channels)


def _check_factor(value, name: str):
    if value < 0:
        raise ValueError(f"{name} ({value}) is not non-negative.")


def adjust_brightness(img, brightness_factor: float):
    """Scale the brightness: 0 gives black, 1 the image, 2 twice as bright."""
    _check_factor(brightness_factor, "brightness_factor")
    _check_image(img)
    if is_pil(img):
        from PIL import ImageEnhance
        return ImageEnhance.Brightness(img).enhance(brightness_factor)
    _check_colour_channels(img)
    return _blend(img, lucid.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor: float):
    """Blend with the image's mean gray: 0 gives a uniform gray, 1 the image."""
    _check_factor(contrast_factor, "contrast_factor")
    _check_image(img)
    if is_pil(img):
        from PIL import ImageEnhance
        return ImageEnhance.Contrast(img).enhance(contrast_factor)
    channels = _check_colour_channels(img)
    dtype = img.dtype if img.is_floating_point() else lucid.float32
    gray = rgb_to_grayscale(img) if channels == 3 else img
    mean = gray.to(dtype).mean(dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor: float):
    """Blend with the grayscale image: 0 gives gray, 1 the image, 2 twice as saturated."""
    _check_factor(saturation_factor, "saturation_factor")
    _check_image(img)
    if is_pil(img):
        from PIL import ImageEnhance
        return ImageEnhance.Color(img).enhance(saturation_factor)
    if _check_colour_channels(img) == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def _rgb_to_hsv(img):
    r, g, b = img.unbind(-3)
    maxc = lucid.maximum(lucid.maximum(r, g), b)
    minc = lucid.minimum(lucid.minimum(r, g), b)
    flat = maxc == minc  # gray pixels: hue and saturation 0 (the divisors below are made 1 there)
    ones = lucid.ones_like(maxc)
    span = maxc - minc
    s = span / lucid.where(flat, ones, maxc)
    span = lucid.where(flat, ones, span)
    rc, gc, bc = (maxc - r) / span, (maxc - g) / span, (maxc - b) / span
    hr = (maxc == r).to(img.dtype) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)).to(img.dtype) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)).to(img.dtype) * (4.0 + gc - rc)
    h = lucid.remainder((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return h, s, maxc


def _hsv_to_rgb(h, s, v):
    sector = lucid.floor(h * 6.0)
    f = h * 6.0 - sector
    sector = lucid.remainder(sector, 6.0)
    p = (v * (1.0 - s)).clamp(0.0, 1.0)
    q = (v * (1.0 - s * f)).clamp(0.0, 1.0)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0.0, 1.0)

    def pick(*by_sector):
        out = lucid.zeros_like(v)
        for k, value in enumerate(by_sector):
            out = lucid.where(sector == k, value, out)
        return out
    return lucid.stack([pick(v, q, p, p, t, v), pick(t, v, v, q, p, p), pick(p, p, t, v, v, q)], dim=-3)


def adjust_hue(img, hue_factor: float):
    """Rotate the hue by ``hue_factor`` turns (in [-0.5, 0.5]) in HSV space."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    _check_image(img)
    if is_pil(img):
        Image = pil()
        if img.mode in ("L", "1", "I", "F"):
            return img
        h, s, v = img.convert("HSV").split()
        shift = np.uint8(int(hue_factor * 255) % 256)  # hue bytes wrap around
        h = Image.fromarray(np.asarray(h, dtype=np.uint8) + shift, "L")
        return Image.merge("HSV", (h, s, v)).convert(img.mode)
    if _check_colour_channels(img) == 1:
        return img
    x = img if img.is_floating_point() else img.to(lucid.float32) / 255.0
    h, s, v = _rgb_to_hsv(x)
    out = _hsv_to_rgb(lucid.remainder(h + hue_factor, 1.0), s, v)
    if img.is_floating_point():
        return out.to(img.dtype)
    return (out * (255 + 1.0 - 1e-3)).to(img.dtype)  # torchvision's float -> byte conversion


def _gaussian_kernel(size: int, sigma: float) -> np.ndarray:
    x = np.linspace(-(size - 1) * 0.5, (size - 1) * 0.5, size, dtype=np.float32)
    pdf = np.exp(-0.5 * (x / np.float32(sigma)) ** 2)
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma=None):
    """Blur with a Gaussian of ``kernel_size`` [kx, ky] (odd, positive) and ``sigma`` [sx, sy] (default
    0.15 k + 0.35); the borders are reflected."""
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got {type(kernel_size)}")
    kernel_size = [kernel_size] * 2 if isinstance(kernel_size, int) else list(kernel_size)
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got {len(kernel_size)}")
    if any(k % 2 == 0 or k < 0 for k in kernel_size):
        raise ValueError(f"kernel_size should have odd and positive integers. Got {kernel_size}")
    if sigma is None:
        sigma = [k * 0.15 + 0.35 for k in kernel_size]
    if not isinstance(sigma, (int, float, list, tuple)):
        raise TypeError(f"sigma should be either float or sequence of floats. Got {type(sigma)}")
    sigma = [float(sigma)] * 2 if isinstance(sigma, (int, float)) else [float(s) for s in sigma]
    if len(sigma) == 1:
        sigma = sigma * 2
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    if any(s <= 0 for s in sigma):
        raise ValueError(f"sigma should have positive values. Got {sigma}")
    _check_image(img)
    if is_pil(img):  # as torchvision: blurred as a byte tensor
        return to_pil_image(gaussian_blur(pil_to_tensor(img), kernel_size, sigma), mode=img.mode)
    _check_tensor_image(img)
    kx, ky = kernel_size
    kernel = np.outer(_gaussian_kernel(ky, sigma[1]), _gaussian_kernel(kx, sigma[0]))
    x, _ = _batched(img)
    dtype = x.dtype
    if not x.is_floating_point():
        x = x.to(lucid.float32)
    channels = int(x.shape[1])
    weight = lucid.from_numpy(np.broadcast_to(kernel, (channels, 1, ky, kx)).copy()).to(x.dtype)
    x = pad(x, [kx // 2, ky // 2], padding_mode="reflect")
    out = lucid.nn.functional.conv2d(x, weight, groups=channels)
    if dtype != out.dtype:
        out = out.round().to(dtype)
    return _unbatched(out, img)


def erase(img, i: int, j: int, h: int, w: int, v, inplace: bool = False):
    """Set the ``h`` x ``w`` region at (i, j) of a tensor image to ``v``."""
    if not isinstance(img, lucid.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img
