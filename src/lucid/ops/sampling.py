"""Spatial sampling: ``grid_sample`` (bilinear/trilinear and nearest; bicubic for 4-D; padding modes zeros,
border, reflection; ``align_corners``) and ``affine_grid``, for 4-D (N, C, H, W) and 5-D (N, C, D, H, W) inputs, as
in PyTorch.

Both are compositions of differentiable lucid ops, so the gradients with respect to the input (a scatter-add of
the gathers) and to the grid (through the interpolation weights) and their higher derivatives come from those ops.
The corner indices are integers clamped into range, and the gathers (``gather``) pass them through
``lucid._checks.checked_index`` as every index is.
"""
from __future__ import annotations

__all__ = ["grid_sample", "affine_grid"]

import itertools
import math
import warnings

import mlx.core as mx
import numpy as np

from .. import _cpu_route
from .._tensor import Tensor, _wrap
from .elementwise import abs, clamp, floor, remainder, round, where
from .index import gather
from .linalg import matmul
from .pool import _cubic_weights
from .shape import stack
from ..autograd.grad_mode import state as _gm_state  # lucid.autocast's hook (ops/autocast_policy.py)

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _align(align_corners) -> bool:
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """[-1, 1] -> pixel coordinates: -1 and 1 are the centres of the corner pixels (align_corners) or their outer
    edges."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(x: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Reflect x into [twice_low / 2, twice_high / 2] by mirroring at the bounds as often as needed."""
    if twice_low == twice_high:
        return x * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    x = abs(x - low)
    extra = remainder(x, span)
    flips = floor(x / span)
    return where(remainder(flips, 2) == 0, extra + low, span - extra + low)


def _pad(x: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """Pixel coordinate x mapped into [0, size - 1] by the border or reflection padding (zeros: unchanged)."""
    if padding_mode == "border":
        x = clamp(x, 0, size - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        x = clamp(x, 0, size - 1)
    return x


def _source(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    return _pad(_unnormalize(coord, size, align_corners), size, padding_mode, align_corners)


def _gather_corner(flat: Tensor, corner: list, sizes: tuple) -> tuple[Tensor, Tensor]:
    """Values of ``flat`` (N, C, prod(sizes)) at integer-valued coordinates ``corner`` (each (N, *out)), and the
    mask of the corners that lie inside the input."""
    n, c = flat.shape[:2]
    inside = None
    index = None
    for coord, size in zip(corner, sizes):
        ok = (coord >= 0) & (coord <= size - 1)
        inside = ok if inside is None else inside & ok
        i = clamp(coord.detach().to(mx.int64), 0, size - 1)  # cast first: NaN coordinates land in range too
        index = i if index is None else index * size + i
    out_shape = tuple(index.shape[1:])
    points = math.prod(out_shape)
    index = index.reshape(n, 1, points).expand(n, c, points)
    values = gather(flat, 2, index).reshape(n, c, *out_shape)
    return values, inside.unsqueeze(1)


def _bicubic(flat: Tensor, grid: Tensor, sizes: tuple, padding_mode: str, align_corners: bool) -> Tensor:
    """PyTorch's bicubic grid sampling of ``flat`` (N, C, H*W) at ``grid`` (N, Ho, Wo, 2): the 4x4 taps around the
    unnormalised point are weighted by Keys' cubic (A = -0.75) of its fraction, and the padding moves each tap's
    integer index on its own (the point itself is not padded, so its weights, and the grid's gradient, are those of
    the unpadded point)."""
    points = [_unnormalize(grid[..., 1 - k], sizes[k], align_corners) for k in range(2)]  # along H, then W
    taps, weights = [], []
    for x, size in zip(points, sizes):
        low = floor(x)
        weights.append(stack(_cubic_weights(x - low), 1))  # (N, 4, Ho, Wo)
        low = low.detach()  # the tap indices are constants: no graph through the padding
        taps.append(stack([_pad(low + (k - 1), size, padding_mode, align_corners) for k in range(4)], 1))
    rows, cols = taps[0].unsqueeze(2), taps[1].unsqueeze(1)  # (N, 4, 1, Ho, Wo), (N, 1, 4, Ho, Wo)
    values, inside = _gather_corner(flat, [rows, cols], sizes)  # (N, C, 4, 4, Ho, Wo)
    values = where(inside, values, 0.0)
    # as PyTorch: interpolate each row of taps along W, then the four rows along H
    along_w = (values * weights[1].unsqueeze(1).unsqueeze(2)).sum(3)  # (N, C, 4, Ho, Wo)
    return (along_w * weights[0].unsqueeze(1)).sum(2)


@_cpu_route.float64_args
def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros", align_corners=None) -> Tensor:
    """Sample ``input`` (N, C, H, W) at the points ``grid`` (N, Ho, Wo, 2) gives, in normalised [-1, 1]
    coordinates (x then y); 5-D inputs take (N, Do, Ho, Wo, 3) grids (x, y, z). ``mode``: "bilinear" (trilinear
    for 5-D) or "nearest" (the grid then gets no gradient: ``grid.grad`` stays None where PyTorch gives zeros);
    "bicubic" (4-D only; PyTorch pads each of its 16 taps, not the point); ``padding_mode`` for points outside:
    "zeros", "border" or "reflection".

    :param grid: the sampling locations in [-1, 1], (N, H_out, W_out, 2) (or 3-D).
    :param mode: 'bilinear', 'nearest' or 'bicubic'.
    :param padding_mode: 'zeros', 'border' or 'reflection'.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("grid_sample", grid_sample, input, grid, mode, padding_mode, align_corners)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    d = input.ndim - 2
    if grid.ndim != input.ndim or grid.shape[-1] != d or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {d} in last dimension and the same batch "
                           f"size and number of dimensions as input, but got input with sizes "
                           f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    if mode == "bicubic" and d != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    align = _align(align_corners)
    sizes = tuple(input.shape[2:])  # (H, W) or (D, H, W)
    n, c = input.shape[:2]
    flat = input.reshape(n, c, math.prod(sizes))  # no -1: an empty batch leaves it ambiguous
    if mode == "bicubic":
        return _bicubic(flat, grid, sizes, padding_mode, align)
    # grid's last dim lists x (the last input dim) first: coords[k] is the source coordinate along sizes[k]
    coords = [_source(grid[..., d - 1 - k], sizes[k], padding_mode, align) for k in range(d)]
    if mode == "nearest":
        values, inside = _gather_corner(flat, [round(x) for x in coords], sizes)
        return where(inside, values, 0.0)
    lows = [floor(x) for x in coords]
    out = None
    for offsets in itertools.product((0, 1), repeat=d):
        corner = [lo + o for lo, o in zip(lows, offsets)]
        weight = None
        for x, lo, o in zip(coords, lows, offsets):
            w = x - lo if o else 1 - (x - lo)
            weight = w if weight is None else weight * w
        values, inside = _gather_corner(flat, corner, sizes)
        term = where(inside, values * weight.unsqueeze(1), 0.0)
        out = term if out is None else out + term
    return out


def _base_coords(size: int, align_corners: bool, dtype) -> mx.array:
    """PyTorch's base grid along one dim: linspace(-1, 1, size), scaled by (size - 1) / size unless align_corners
    (computed in float64 on the host: it is made of constants)."""
    if size == 1:
        return mx.zeros((1,), dtype)
    steps = np.linspace(-1, 1, size)
    return mx.array(steps if align_corners else steps * ((size - 1) / size), dtype=dtype)


@_cpu_route.float64_args
def affine_grid(theta, size, align_corners=None) -> Tensor:
    """The sampling grid of the affine maps ``theta`` (N, 2, 3) for an output of ``size`` (N, C, H, W), or (N, 3,
    4) for (N, C, D, H, W): grid[n, i, j] = theta[n] @ (x_j, y_i, 1), in normalised coordinates.

    :param theta: the affine matrices, (N, 2, 3) (or (N, 3, 4)).
    :param size: the output's size, (N, C, H, W) (or 5-D).
    """
    align = _align(align_corners)
    size = tuple(size)
    if not isinstance(theta, Tensor) or not mx.issubdtype(theta.dtype, mx.floating):
        raise ValueError(f"Expected theta to have floating point type, but got {getattr(theta, 'dtype', theta)}")
    if len(size) not in (4, 5):
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {list(size)}.")
    d = len(size) - 2
    if tuple(theta.shape) != (size[0], d, d + 1):
        raise ValueError(f"Expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} for size {list(size)}. "
                         f"Got {list(theta.shape)}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {list(size)}")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    axes = [_base_coords(s, align, theta.dtype) for s in spatial]  # along D, H, W (or H, W)
    mesh = mx.meshgrid(*axes, indexing="ij")
    base = mx.stack([*reversed(mesh), mx.ones(spatial, theta.dtype)], axis=-1)  # (x, y[, z], 1)
    base = _wrap(base.reshape(1, -1, d + 1))
    grid = matmul(base, theta.transpose(1, 2))  # (N, prod(spatial), d)
    return grid.reshape(size[0], *spatial, d)

