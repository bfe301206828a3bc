"""rotate, affine and perspective, torchvision's way: PIL images through Pillow's ``rotate``/``transform`` with
the inverse map; tensor images by sampling the inverse-mapped grid (``grid_sample``, nearest or bilinear), with
``fill`` where the grid leaves the image."""
from __future__ import annotations

import math
import numbers

import numpy as np

import lucid

from ._image import _batched, _check_image, _check_tensor_image, get_dimensions
from ._pil import InterpolationMode, interpolation_mode, is_pil, pil, pil_filter

__all__ = ["rotate", "affine", "perspective"]


def _get_inverse_affine_matrix(center, angle: float, translate, scale: float, shear, inverted: bool = True):
    """The 2x3 matrix (flattened) of ``T * C * R(angle) * S(scale) * SHy * SHx * C^-1``, or its inverse (what
    Pillow and the sampling grid take: output pixel -> input pixel)."""
    rot, sx, sy = math.radians(angle), math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    if inverted:  # the rotation-shear part has determinant 1: its inverse is the adjugate
        m = [x / scale for x in (d, -b, 0.0, -c, a, 0.0)]
        m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty)
        m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty)
        m[2] += cx
        m[5] += cy
    else:
        m = [x * scale for x in (a, b, 0.0, c, d, 0.0)]
        m[2] += m[0] * (-cx) + m[1] * (-cy)
        m[5] += m[3] * (-cx) + m[4] * (-cy)
        m[2] += cx + tx
        m[5] += cy + ty
    return m


def _expanded_size(matrix, w: int, h: int) -> tuple[int, int]:
    """(width, height) that holds the whole rotated image (Pillow's rule for ``expand=True``)."""
    corners = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0], [0.5 * w, 0.5 * h, 1.0],
                        [0.5 * w, -0.5 * h, 1.0]], dtype=np.float32)
    moved = corners @ np.asarray(matrix, dtype=np.float32).reshape(2, 3).T
    shift = np.array([w * 0.5, h * 0.5], dtype=np.float32)
    tol = np.float32(1e-4)  # so that 1e-15 above an integer does not round up
    high = np.ceil(np.trunc((moved.max(0) + shift) / tol) * tol)
    low = np.floor(np.trunc((moved.min(0) + shift) / tol) * tol)
    size = high - low
    return int(size[0]), int(size[1])


def _linspace32(start: float, end: float, steps: int) -> np.ndarray:
    """torch.linspace in float32, to the last bit: the step in float32, then ``start + step * i`` for the first
    half and ``end - step * (steps - 1 - i)`` for the second, each one fused multiply-add (as PyTorch's CPU kernel
    is compiled); float64 holds ``step * i`` exactly, so one rounding to float32 is the FMA's."""
    start32, end32 = np.float32(start), np.float32(end)
    step = np.float64((end32 - start32) / np.float32(steps - 1)) if steps > 1 else 0.0
    i = np.arange(steps)
    first = np.float64(start32) + step * i
    second = np.float64(end32) - step * (steps - 1 - i)
    return np.where(i < steps // 2, first, second).astype(np.float32)


def _affine_grid(matrix, w: int, h: int, ow: int, oh: int) -> np.ndarray:
    """The (1, oh, ow, 2) sampling grid, in grid_sample's [-1, 1] coordinates of the (w, h) input, of the output
    pixels' centres mapped by ``matrix`` (centred coordinates)."""
    theta = np.asarray(matrix, dtype=np.float32).reshape(2, 3)
    base = _pixel_centres(ow, oh, -ow * 0.5 + 0.5, -oh * 0.5 + 0.5)
    scaled = theta.T / np.array([0.5 * w, 0.5 * h], dtype=np.float32)
    return _bmm32(base, scaled).reshape(1, oh, ow, 2)


def _bmm32(base: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(n, 3) @ (3, k) in float32 as PyTorch's bmm computes it, x * a + y * b + c as a chain of fused
    multiply-adds (written out rather than left to a BLAS, whose rounding differs from build to build; float64
    holds each product exactly, so one rounding per step is the FMA's)."""
    b, wt = base.astype(np.float64), np.asarray(weights, dtype=np.float32).astype(np.float64)
    out = np.float32(b[:, :1] * wt[0])
    out = np.float32(b[:, 1:2] * wt[1] + out)
    return np.float32(b[:, 2:] * wt[2] + out)


def _pixel_centres(ow: int, oh: int, x0: float, y0: float) -> np.ndarray:
    """(oh * ow, 3) rows [x, y, 1] of the output pixels' centres, x from ``x0`` and y from ``y0`` in steps of 1."""
    x = _linspace32(x0, x0 + ow - 1, ow)
    y = _linspace32(y0, y0 + oh - 1, oh)
    return np.stack(np.broadcast_arrays(x[None, :], y[:, None], np.float32(1)), axis=-1).reshape(-1, 3)


def _check_fill(fill, channels: int):
    if fill is not None and isinstance(fill, (tuple, list)) and len(fill) > 1 and len(fill) != channels:
        raise ValueError("The number of elements in 'fill' cannot broadcast to match the number of channels of the "
                         f"image ({len(fill)} != {channels})")


def _check_grid_inputs(img, interpolation: InterpolationMode, fill) -> None:
    if interpolation not in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR):
        raise ValueError(f"Interpolation mode '{interpolation.value}' is unsupported with Tensor input")
    _check_fill(fill, get_dimensions(img)[0])


def _grid_transform(img, grid: np.ndarray, interpolation: InterpolationMode, fill):
    """Sample the tensor image at ``grid`` (1, oh, ow, 2); outside the image is ``fill`` (or 0)."""
    h, w = int(img.shape[-2]), int(img.shape[-1])
    oh, ow = grid.shape[1:3]
    x, _ = _batched(img)
    dtype = x.dtype
    if not x.is_floating_point():
        x = x.to(lucid.float32)
    grid = lucid.from_numpy(grid).to(x.dtype).expand(x.shape[0], oh, ow, 2)
    if fill is not None:  # a channel of ones marks the pixels that came from inside the image
        x = lucid.cat((x, lucid.ones(x.shape[0], 1, h, w, dtype=x.dtype)), dim=1)
    out = lucid.nn.functional.grid_sample(x, grid, mode=interpolation.value, padding_mode="zeros",
                                          align_corners=False)
    if fill is not None:
        mask, out = out[:, -1:], out[:, :-1]
        values = list(fill) if isinstance(fill, (tuple, list)) else [float(fill)]
        fill_img = lucid.tensor(values, dtype=out.dtype).view(1, len(values), 1, 1)
        if interpolation is InterpolationMode.NEAREST:
            out = lucid.where(mask < 0.5, fill_img, out)
        else:
            out = out * mask + (1.0 - mask) * fill_img
    if out.dtype != dtype:
        out = out.round().to(dtype)
    return out.reshape(*img.shape[:-2], oh, ow) if img.ndim != 2 else out.reshape(oh, ow)


def _pil_fill(fill, img) -> dict:
    """``fill`` as Pillow's ``fillcolor``: one value per band, integers unless the image is float ('F')."""
    channels = len(img.getbands())
    fill = 0 if fill is None else fill
    if isinstance(fill, (int, float)) and channels > 1:
        fill = (fill,) * channels
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = tuple(fill) * channels
        elif len(fill) != channels:
            raise ValueError("The number of elements in 'fill' does not match the number of channels of the image "
                             f"({len(fill)} != {channels})")
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(v) for v in fill) if isinstance(fill, tuple) else int(fill)
    return {"fillcolor": fill}


def _check_interpolation(interpolation) -> InterpolationMode:
    if isinstance(interpolation, int) and not isinstance(interpolation, bool):
        return interpolation_mode(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding Pillow integer "
                        "constant")
    return interpolation


def _centred(center, img) -> list[float]:
    """``center`` (pixels) relative to the image's centre, as the tensor path's matrix takes it."""
    if center is None:
        return [0.0, 0.0]
    _, height, width = get_dimensions(img)
    return [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]


def rotate(img, angle: float, interpolation=InterpolationMode.NEAREST, expand: bool = False, center=None,
           fill=None):
    """Rotate by ``angle`` degrees counter-clockwise about ``center`` (default the centre); ``expand`` grows the
    output to hold the whole rotated image; ``fill`` for the area outside it."""
    interpolation = _check_interpolation(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    _check_image(img)
    if is_pil(img):
        return img.rotate(angle, pil_filter(interpolation), expand, center, **_pil_fill(fill, img))
    _check_tensor_image(img)
    # the tensor path's y axis points down: the same turn is -angle in its matrix
    _check_grid_inputs(img, interpolation, fill)
    matrix = _get_inverse_affine_matrix(_centred(center, img), -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    w, h = int(img.shape[-1]), int(img.shape[-2])
    ow, oh = _expanded_size(matrix, w, h) if expand else (w, h)
    return _grid_transform(img, _affine_grid(matrix, w, h, ow, oh), interpolation, fill)


def affine(img, angle: float, translate, scale: float, shear, interpolation=InterpolationMode.NEAREST, fill=None,
           center=None):
    """Rotate by ``angle`` degrees, ``translate`` by [dx, dy] pixels, ``scale`` and ``shear`` ([sx, sy] degrees,
    or one value for x), about ``center`` (default the centre), keeping the image's size."""
    interpolation = _check_interpolation(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if not isinstance(shear, (numbers.Number, list, tuple)):
        raise TypeError("Shear should be either a single value or a sequence of two values")
    shear = [shear, 0.0] if isinstance(shear, numbers.Number) else list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    _check_image(img)
    angle, translate = float(angle), list(translate)
    if is_pil(img):
        # Pillow's pixel grid: the centre without the half-pixel offset (so 90 degrees matches torch.rot90)
        _, height, width = get_dimensions(img)
        center = [width * 0.5, height * 0.5] if center is None else center
        matrix = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
        return img.transform(img.size, pil().Transform.AFFINE, matrix, pil_filter(interpolation),
                             **_pil_fill(fill, img))
    _check_tensor_image(img)
    _check_grid_inputs(img, interpolation, fill)
    matrix = _get_inverse_affine_matrix(_centred(center, img), angle, [1.0 * t for t in translate], scale, shear)
    w, h = int(img.shape[-1]), int(img.shape[-2])
    return _grid_transform(img, _affine_grid(matrix, w, h, w, h), interpolation, fill)


def _get_perspective_coeffs(startpoints, endpoints) -> list[float]:
    """(a, b, c, d, e, f, g, h) of the map from ``endpoints`` to ``startpoints`` (x, y) -> ((ax + by + c) /
    (gx + hy + 1), (dx + ey + f) / (gx + hy + 1)): least squares in float64, rounded to float32."""
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError(f"Please provide exactly four corners, got {len(startpoints)} startpoints and "
                         f"{len(endpoints)} endpoints.")
    a = np.zeros((8, 8), dtype=np.float64)
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints)):
        a[2 * i] = [p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]]
        a[2 * i + 1] = [0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]]
    b = np.asarray(startpoints, dtype=np.float64).reshape(8)
    return np.linalg.lstsq(a, b, rcond=None)[0].astype(np.float32).tolist()


def _perspective_grid(coeffs, ow: int, oh: int) -> np.ndarray:
    base = _pixel_centres(ow, oh, 0.5, 0.5)
    theta1 = np.asarray(coeffs[:6], dtype=np.float32).reshape(2, 3).T / np.array([0.5 * ow, 0.5 * oh],
                                                                                 dtype=np.float32)
    theta2 = np.array([[coeffs[6], coeffs[7], 1.0]] * 2, dtype=np.float32).T
    return (_bmm32(base, theta1) / _bmm32(base, theta2) - np.float32(1.0)).reshape(1, oh, ow, 2)


def perspective(img, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR, fill=None):
    """The perspective map that takes the four ``startpoints`` corners ([top-left, top-right, bottom-right,
    bottom-left], [x, y] each) to ``endpoints``; ``fill`` for the area outside the image."""
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    interpolation = _check_interpolation(interpolation)
    _check_image(img)
    if is_pil(img):
        return img.transform(img.size, pil().Transform.PERSPECTIVE, coeffs, pil_filter(interpolation),
                             **_pil_fill(fill, img))
    _check_tensor_image(img)
    _check_grid_inputs(img, interpolation, fill)
    return _grid_transform(img, _perspective_grid(coeffs, int(img.shape[-1]), int(img.shape[-2])), interpolation,
                           fill)
