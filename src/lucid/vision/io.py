"""torchvision.io's image reading on lucid, decoded by Pillow: ``read_file``, ``decode_image`` (and
``decode_png``/``decode_jpeg``), ``read_image``, ``write_png``/``write_jpeg``/``encode_png``/``encode_jpeg``, and
``ImageReadMode``. Images are uint8 (C, H, W) tensors, as torchvision's."""
from __future__ import annotations

import enum
import io as _io

import numpy as np

import lucid

from .transforms._pil import pil

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_image", "decode_png", "decode_jpeg", "read_image",
           "encode_png", "encode_jpeg", "write_png", "write_jpeg"]


class ImageReadMode(enum.Enum):
    """How ``decode_image`` converts: UNCHANGED keeps the file's channels; GRAY, GRAY_ALPHA, RGB, RGB_ALPHA
    convert to 1, 2, 3, 4 channels."""
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA


_PIL_MODES = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA", ImageReadMode.RGB: "RGB",
              ImageReadMode.RGB_ALPHA: "RGBA"}


def read_file(path):
    """The bytes of the file at ``path`` as a uint8 (N,) tensor."""
    with open(path, "rb") as f:
        return lucid.from_numpy(np.frombuffer(f.read(), dtype=np.uint8).copy())


def write_file(filename, data) -> None:
    """Write a uint8 (N,) tensor's bytes to ``filename``."""
    with open(filename, "wb") as f:
        f.write(data.numpy().tobytes())


def _mode(mode) -> ImageReadMode:
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    if not isinstance(mode, ImageReadMode):
        raise TypeError(f"mode should be an ImageReadMode or a str, got {type(mode)}")
    return mode


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation: bool = False):
    """An encoded image (a uint8 (N,) tensor, or a path as in ``read_image``) as a uint8 (C, H, W) tensor."""
    if not isinstance(input, lucid.Tensor):
        input = read_file(str(input))
    if input.dtype != lucid.uint8 or input.ndim != 1:
        raise RuntimeError(f"Expected a 1 dimensional uint8 tensor of encoded bytes, got {input.dtype} of shape "
                           f"{list(input.shape)}")
    mode = _mode(mode)
    Image = pil()
    try:
        img = Image.open(_io.BytesIO(input.numpy().tobytes()))
        img.load()
    except Exception as e:  # Pillow's many decoder errors, as torchvision's one RuntimeError
        raise RuntimeError(f"Could not decode the image: {e}") from e
    if apply_exif_orientation:
        from PIL import ImageOps
        img = ImageOps.exif_transpose(img)
    if mode is ImageReadMode.UNCHANGED:
        if img.mode in ("P", "1", "CMYK", "YCbCr", "HSV"):
            img = img.convert("RGBA" if img.mode == "P" and "transparency" in img.info else
                              "L" if img.mode == "1" else "RGB")
    else:
        img = img.convert(_PIL_MODES[mode])
    arr = np.asarray(img)  # uint8; uint16 for 16-bit PNGs, as torchvision
    return lucid.from_numpy(np.ascontiguousarray(arr.reshape(img.height, img.width, -1).transpose(2, 0, 1)))


decode_png = decode_image
decode_jpeg = decode_image


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation: bool = False):
    """The image file at ``path`` (JPEG, PNG, GIF, WebP, BMP... whatever Pillow reads) as a uint8 (C, H, W)
    tensor."""
    return decode_image(read_file(path), mode, apply_exif_orientation)


def _encode(input, format: str, **options):
    if not isinstance(input, lucid.Tensor) or input.dtype != lucid.uint8 or input.ndim != 3 or \
            input.shape[0] not in (1, 3):
        raise RuntimeError("Input tensor must be a uint8 (C, H, W) image with 1 or 3 channels")
    arr = input.numpy().transpose(1, 2, 0)
    buf = _io.BytesIO()
    pil().fromarray(np.ascontiguousarray(arr[:, :, 0] if arr.shape[2] == 1 else arr)).save(buf, format=format,
                                                                                         **options)
    return lucid.from_numpy(np.frombuffer(buf.getvalue(), dtype=np.uint8).copy())


def encode_png(input, compression_level: int = 6):
    """A uint8 (C, H, W) image as PNG bytes (a uint8 (N,) tensor)."""
    if not 0 <= compression_level <= 9:
        raise ValueError(f"Compression level should be between 0 and 9, got {compression_level}")
    return _encode(input, "PNG", compress_level=compression_level)


def encode_jpeg(input, quality: int = 75):
    """A uint8 (C, H, W) image as JPEG bytes (a uint8 (N,) tensor)."""
    if not 1 <= quality <= 100:
        raise ValueError(f"Image quality should be a positive number between 1 and 100, got {quality}")
    return _encode(input, "JPEG", quality=quality)


def write_png(input, filename, compression_level: int = 6) -> None:
    write_file(filename, encode_png(input, compression_level))


def write_jpeg(input, filename, quality: int = 75) -> None:
    write_file(filename, encode_jpeg(input, quality))
