"""What the functional transforms share: recognising an image (PIL or tensor), its dimensions, batching a tensor
image to (N, C, H, W) and back, and blending two images within the dtype's range."""
from __future__ import annotations

import lucid

from ._pil import is_pil

def _check_image(img):
    if not (is_pil(img) or isinstance(img, lucid.Tensor)):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")

def _check_tensor_image(img):
    if img.ndim < 2:
        raise TypeError("Tensor is not a torch image.")

def get_dimensions(img) -> list[int]:
    """[channels, height, width]."""
    _check_image(img)
    if is_pil(img):
        return [len(img.getbands()), img.height, img.width]
    _check_tensor_image(img)
    return [1 if img.ndim == 2 else int(img.shape[-3]), int(img.shape[-2]), int(img.shape[-1])]

def _batched(img):
    """(..., C, H, W) -> (N, C, H, W) and the leading shape to restore."""
    lead = tuple(img.shape[:-3]) if img.ndim > 3 else None
    if img.ndim == 2:
        return img.reshape(1, 1, *img.shape), tuple()
    return img.reshape(-1, *img.shape[-3:]), lead

def _unbatched(out, img):
    return out.reshape(*img.shape[:-2], *out.shape[-2:])

def _check_colour_channels(img):
    channels = get_dimensions(img)[0]
    if channels not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found {channels}")
    return channels

def _blend(img1, img2, ratio: float):
    """ratio * img1 + (1 - ratio) * img2, clamped to the dtype's range (1 for floats, 255 for bytes)."""
    bound = 1.0 if img1.is_floating_point() else 255.0
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)

