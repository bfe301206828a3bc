"""The colour operations of the augmentation policies, torchvision's way: PIL images through Pillow's ``ImageOps``
and ``ImageEnhance``; tensor images (uint8 in [0, 255] or float in [0, 1]) by the same arithmetic as torchvision's
tensor path."""
from __future__ import annotations

import lucid

from ._image import _blend, _check_colour_channels, _check_image, _check_tensor_image
from ._pil import is_pil

__all__ = ["invert", "posterize", "solarize", "adjust_sharpness", "autocontrast", "equalize", "adjust_gamma",
           "convert_image_dtype"]

_MAX_VALUE = {lucid.uint8: 255, lucid.int8: 127, lucid.int16: 32767, lucid.uint16: 65535, lucid.int32: 2147483647,
              lucid.int64: 9223372036854775807}


def _max_value(dtype) -> int:
    """The brightest value of an image of ``dtype`` (1 for floats)."""
    return _MAX_VALUE.get(dtype, 1)


def _tensor_colour_image(img, min_ndim: int = 3):
    _check_tensor_image(img)
    if img.ndim < min_ndim:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    _check_colour_channels(img)


def _check_uint8(img):
    if img.dtype != lucid.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")


def invert(img):
    """The negative: ``max - x`` (255 for bytes, 1 for floats)."""
    _check_image(img)
    if is_pil(img):
        from PIL import ImageOps
        return ImageOps.invert(img)
    _tensor_colour_image(img)
    return _max_value(img.dtype) - img


def posterize(img, bits: int):
    """Keep the ``bits`` most significant bits of each channel (uint8 images)."""
    if not 0 <= bits <= 8:
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    _check_image(img)
    if is_pil(img):
        from PIL import ImageOps
        return ImageOps.posterize(img, bits)
    _tensor_colour_image(img)
    _check_uint8(img)
    return img & (256 - 2 ** (8 - int(bits)))  # ~(2 ** (8 - bits) - 1) as a byte


def solarize(img, threshold: float):
    """Invert the pixels at or above ``threshold``."""
    _check_image(img)
    if is_pil(img):
        from PIL import ImageOps
        return ImageOps.solarize(img, threshold)
    _tensor_colour_image(img)
    if threshold > _max_value(img.dtype):
        raise TypeError("Threshold should be less than bound of img.")
    return lucid.where(img >= threshold, invert(img), img)


def _blurred_degenerate_image(img):
    """The image smoothed by PIL's SMOOTH kernel ([[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13), borders kept."""
    x = img if img.is_floating_point() else img.to(lucid.float32)
    kernel = lucid.ones(3, 3, dtype=x.dtype)
    kernel[1, 1] = 5.0
    kernel = (kernel / kernel.sum()).expand(int(img.shape[-3]), 1, 3, 3)
    batched = x.reshape(-1, *x.shape[-3:])
    smooth = lucid.nn.functional.conv2d(batched, kernel, groups=int(img.shape[-3]))
    smooth = smooth.reshape(*x.shape[:-2], *smooth.shape[-2:])
    if not img.is_floating_point():
        smooth = smooth.round().to(img.dtype)
    out = img.clone()
    out[..., 1:-1, 1:-1] = smooth
    return out


def adjust_sharpness(img, sharpness_factor: float):
    """Blend with a smoothed copy: 0 gives the smoothed image, 1 the image, 2 twice as sharp."""
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    _check_image(img)
    if is_pil(img):
        from PIL import ImageEnhance
        return ImageEnhance.Sharpness(img).enhance(sharpness_factor)
    _check_tensor_image(img)
    _check_colour_channels(img)
    if img.shape[-1] <= 2 or img.shape[-2] <= 2:
        return img
    return _blend(img, _blurred_degenerate_image(img), sharpness_factor)


def autocontrast(img):
    """Stretch each channel so that its darkest pixel is black and its brightest white."""
    _check_image(img)
    if is_pil(img):
        from PIL import ImageOps
        return ImageOps.autocontrast(img)
    _tensor_colour_image(img)
    bound = _max_value(img.dtype)
    dtype = img.dtype if img.is_floating_point() else lucid.float32
    low = img.amin(dim=(-2, -1), keepdim=True).to(dtype)
    high = img.amax(dim=(-2, -1), keepdim=True).to(dtype)
    flat = high == low  # a constant channel is left as it is
    # bound * (1 / span), not bound / span: PyTorch's `number / tensor` is a reciprocal and a product, and the
    # last bit decides whether the brightest pixel becomes 255 or 254
    span = lucid.where(flat, lucid.ones_like(high), high - low)
    scale = lucid.where(flat, lucid.ones_like(high), lucid.reciprocal(span) * bound)
    low = lucid.where(flat, lucid.zeros_like(low), low)
    return ((img - low) * scale).clamp(0, bound).to(img.dtype)


def _equalize_channel(chan):
    """One uint8 channel through PIL's equalisation table (the cumulative histogram, spread over 255 steps)."""
    hist = lucid.bincount(chan.reshape(-1).to(lucid.int64), minlength=256)
    nonzero = hist[hist != 0]
    step = int(nonzero[:-1].sum().item()) // 255  # data-pipeline code: one number decides the path
    if step == 0:
        return chan
    lut = lucid.div(lucid.cumsum(hist, 0) + step // 2, step, rounding_mode="floor")
    lut = lucid.nn.functional.pad(lut, [1, 0])[:-1].clamp(0, 255)
    return lut[chan.to(lucid.int64)].to(lucid.uint8)


def equalize(img):
    """Equalise each channel's histogram (uint8 images)."""
    _check_image(img)
    if is_pil(img):
        from PIL import ImageOps
        return ImageOps.equalize(img)
    _check_tensor_image(img)
    if not 3 <= img.ndim <= 4:
        raise TypeError(f"Input image tensor should have 3 or 4 dimensions, but found {img.ndim}")
    _check_uint8(img)
    _check_colour_channels(img)
    if img.ndim == 4:
        return lucid.stack([equalize(x) for x in img.unbind(0)])
    return lucid.stack([_equalize_channel(c) for c in img.unbind(0)])


def adjust_gamma(img, gamma: float, gain: float = 1):
    """``gain * x ** gamma`` on the [0, 1] scale (PIL images by a lookup table, as torchvision)."""
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    _check_image(img)
    if is_pil(img):
        mode = img.mode
        img = img.convert("RGB")
        table = [int((255 + 1 - 1e-3) * gain * pow(ele / 255.0, gamma)) for ele in range(256)] * 3
        return img.point(table).convert(mode)
    _check_tensor_image(img)
    _check_colour_channels(img)
    x = img if img.is_floating_point() else img.to(lucid.float32) / _max_value(img.dtype)
    out = (gain * x.pow(gamma)).clamp(0, 1)
    if img.is_floating_point():
        return out.to(img.dtype)
    return (out * (_max_value(img.dtype) + 1.0 - 1e-3)).to(img.dtype)  # torchvision's float -> int conversion


def convert_image_dtype(image, dtype=lucid.float32):
    """A tensor image in another dtype, its values scaled to that dtype's range ([0, 1] for floats, [0, max] for
    integers), as torchvision's."""
    if not isinstance(image, lucid.Tensor):
        raise TypeError("Input img should be Tensor Image")
    if image.dtype == dtype:
        return image
    to_float = lucid.tensor(0, dtype=dtype).is_floating_point()
    if image.is_floating_point():
        if to_float:
            return image.to(dtype)
        if (image.dtype == lucid.float32 and dtype in (lucid.int32, lucid.int64)) or \
                (image.dtype == lucid.float64 and dtype == lucid.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed safely.")
        # max + 1 - eps: each integer gets an equal share of [0, 1] (only 1.0 itself would reach max otherwise)
        return (image * (float(_max_value(dtype)) + 1.0 - 1e-3)).to(dtype)
    input_max = float(_max_value(image.dtype))
    if to_float:
        return image.to(dtype) / input_max
    output_max = float(_max_value(dtype))
    if input_max > output_max:
        factor = int((input_max + 1) // (output_max + 1))
        return lucid.div(image, factor, rounding_mode="floor").to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor
