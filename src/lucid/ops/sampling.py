"""Spatial sampling: ``grid_sample`` (bilinear/trilinear and nearest; bicubic for 4-D; padding modes zeros,
border, reflection; ``align_corners``) and ``affine_grid``, for 4-D (N, C, H, W) and 5-D (N, C, D, H, W) inputs, as
in PyTorch.

Both are compositions of differentiable lucid ops, so the gradients with respect to the input (a scatter-add of
the gathers) and to the grid (through the interpolation weights) and their higher derivatives come from those ops.
The corner indices are integers clamped into range, and the gathers (``gather``) pass them through
``lucid._checks.checked_index`` as every index is. Each step works on all the dims of a point and all its corners
(or bicubic taps) at once, so a call is a few dozen ops whatever the mode: the cost of a call is what PyTorch's
gradcheck of grid_sample pays once per input element.
"""
from __future__ import annotations

__all__ = ["grid_sample", "affine_grid", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
           "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES"]

import itertools
import math
import warnings

import mlx.core as mx
import numpy as np

from .. import _cpu_route
from .._tensor import Tensor, _wrap
from .elementwise import abs, clamp, floor, remainder, round, where
from .index import _scalar_name, gather
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


def _const(value, like: Tensor, dtype=None) -> Tensor:
    """A constant (a number or a numpy array: one entry per dim, along the last axis) in ``like``'s dtype."""
    return _wrap(mx.array(np.asarray(value), dtype=dtype or like.dtype))


# The coordinate maps take ``size`` as an int or as a numpy array with one entry per spatial dim, the last axis of
# the coordinates (all dims of a point at once: a handful of ops per grid_sample, not a handful per dim and corner)
def _unnormalize(coord: Tensor, size, align_corners: bool) -> Tensor:
    """[-1, 1] -> pixel coordinates: -1 and 1 are the centres of the corner pixels (align_corners) or their outer
    edges."""
    size = np.asarray(size)
    if align_corners:
        return (coord + 1) / 2 * _const(size - 1, coord)
    return ((coord + 1) * _const(size, coord) - 1) / 2


def _reflect(x: Tensor, twice_low, twice_high) -> Tensor:
    """Reflect x into [twice_low / 2, twice_high / 2] by mirroring at the bounds as often as needed (an empty span:
    0)."""
    low = np.asarray(twice_low, np.float64) / 2
    span = (np.asarray(twice_high, np.float64) - np.asarray(twice_low, np.float64)) / 2
    empty = span == 0
    low, span = _const(low, x), _const(np.where(empty, 1.0, span), x)
    x = abs(x - low)
    extra = remainder(x, span)
    flips = floor(x / span)
    out = where(remainder(flips, 2) == 0, extra + low, span - extra + low)
    return where(_const(empty, x, mx.bool_), x * 0, out) if empty.any() else out


def _clip(x: Tensor, size) -> Tensor:
    """x clamped into [0, size - 1] with PyTorch's grid-sampler gradient: 1 strictly inside, 0 at the bounds too
    (clamp's own gradient passes at the bounds)."""
    high = _const(np.asarray(size) - 1, x)
    return where((x > 0) & (x < high), x, clamp(x, _const(0, x), high).detach())


def _pad(x: Tensor, size, padding_mode: str, align_corners: bool) -> Tensor:
    """Pixel coordinate x mapped into [0, size - 1] by the border or reflection padding (zeros: unchanged)."""
    size = np.asarray(size)
    if padding_mode == "border":
        x = _clip(x, size)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        x = _clip(x, size)
    return x


def _corners(flat: Tensor, corners: Tensor, sizes: tuple) -> Tensor:
    """Values of ``flat`` (N, C, prod(sizes)) at the integer-valued points ``corners`` (N, *points, d), zero for a
    point outside the input: (N, C, *points). The indices are constants (no gradient flows through them)."""
    n, c = flat.shape[:2]
    at = corners._storage.data
    top = mx.array([s - 1 for s in sizes], at.dtype)
    inside = mx.all((at >= 0) & (at <= top), axis=-1)
    # cast first: NaN coordinates land in range too
    index = mx.clip(at.astype(mx.int64), 0, top.astype(mx.int64))
    strides = [math.prod(sizes[k + 1:]) for k in range(len(sizes))]
    index = (index * mx.array(strides, mx.int64)).sum(-1)  # (N, *points)
    points = math.prod(index.shape[1:])
    values = gather(flat, 2, _wrap(mx.broadcast_to(index.reshape(n, 1, points), (n, c, points))))
    values = values.reshape(n, c, *index.shape[1:])
    return where(_wrap(mx.expand_dims(inside, 1)), values, 0.0)


def _bicubic(flat: Tensor, grid: Tensor, sizes: tuple, padding_mode: str, align_corners: bool) -> Tensor:
    """PyTorch's bicubic grid sampling of ``flat`` (N, C, H*W) at ``grid`` (N, Ho, Wo, 2): the 4x4 taps around the
    unnormalised point are weighted by Keys' cubic (A = -0.75) of its fraction, and the padding moves each tap's
    integer index on its own (the point itself is not padded, so its weights, and the grid's gradient, are those of
    the unpadded point)."""
    points = _unnormalize(grid.flip(-1), sizes, align_corners)  # (N, Ho, Wo, 2): along H, then W
    low = floor(points)
    weights = stack(_cubic_weights(points - low), -2)  # (N, Ho, Wo, 4, 2)
    # the tap indices are constants (no graph through the padding): low - 1 ... low + 2 along each dim
    taps = _pad(low.detach().unsqueeze(-2) + _const([[-1], [0], [1], [2]], low), sizes, padding_mode, align_corners)
    rows, cols = taps[..., 0].unsqueeze(-1), taps[..., 1].unsqueeze(-2)  # (N, Ho, Wo, 4, 1), (N, Ho, Wo, 1, 4)
    shape = (*rows.shape[:-1], 4)
    values = _corners(flat, stack([rows.expand(*shape), cols.expand(*shape)], -1), sizes)  # (N, C, Ho, Wo, 4, 4)
    # as PyTorch: interpolate each row of taps along W, then the four rows along H
    along_w = (values * weights[..., 1].unsqueeze(1).unsqueeze(-2)).sum(-1)  # (N, C, Ho, Wo, 4)
    return (along_w * weights[..., 0].unsqueeze(1)).sum(-1)


def _check_grid_sampler(input, grid, mode: str, d) -> None:
    """PyTorch's checks of grid_sampler's arguments, in its order: the shapes common to 2-d and 3-d, the number of
    dims (``d``: the sampler's, or None: the 2-d one for a 4-d input, else the 3-d one, as PyTorch dispatches),
    then the dtypes as its kernel dispatches on them."""
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for i in range(2, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {i} being empty")
    d = d or (2 if input.ndim == 4 else 3)
    if grid.ndim != input.ndim or input.ndim != d + 2:
        raise RuntimeError(f"grid_sampler(): expected {d + 2}D input and grid with same number of dimensions, but "
                           f"got {sizes}")
    if mode == "bicubic" and d == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not mx.issubdtype(input.dtype, mx.floating):
        kernel = "grid_sampler_2d_cpu_kernel_impl" if d == 2 else "grid_sampler3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_scalar_name(input.dtype)}\'')
    if grid.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input.dtype)} but found {_scalar_name(grid.dtype)}")


def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros", align_corners=None) -> Tensor:
    """Sample ``input`` (N, C, H, W) at the points ``grid`` (N, Ho, Wo, 2) gives, in normalised [-1, 1]
    coordinates (x then y); 5-D inputs take (N, Do, Ho, Wo, 3) grids (x, y, z). ``mode``: "bilinear" (trilinear
    for 5-D) or "nearest" (the grid's gradient is then zero);
    "bicubic" (4-D only; PyTorch pads each of its 16 taps, not the point); ``padding_mode`` for points outside:
    "zeros", "border" or "reflection".

    :param grid: the sampling locations in [-1, 1], (N, H_out, W_out, 2) (or 3-D).
    :param mode: 'bilinear', 'nearest' or 'bicubic'.
    :param padding_mode: 'zeros', 'border' or 'reflection'.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("grid_sample", grid_sample, input, grid, mode, padding_mode, align_corners)
    if mode not in GRID_SAMPLE_INTERPOLATION_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    return _sample(input, grid, mode, padding_mode, _align(align_corners), None)


# ATen's forms (torch.grid_sampler & co.): the modes as the integers grid_sample maps them to
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def _by_number(modes: dict, number: int, what: str) -> str:
    for name, n in modes.items():
        if n == number:
            return name
    raise RuntimeError(f"grid_sampler(): expected {what} to be one of {sorted(modes.values())}, but got: {number}")


def _aten(input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool, d) -> Tensor:
    return _sample(input, grid, _by_number(GRID_SAMPLE_INTERPOLATION_MODES, interpolation_mode, "interpolation_mode"),
                   _by_number(GRID_SAMPLE_PADDING_MODES, padding_mode, "padding_mode"), bool(align_corners), d)


def grid_sampler(input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool) -> Tensor:
    """ATen's grid_sample: the modes are the integers of ``GRID_SAMPLE_INTERPOLATION_MODES`` and
    ``GRID_SAMPLE_PADDING_MODES``, ``align_corners`` a bool (no warning); a 4-d input is sampled in 2-d, any other
    in 3-d."""
    return _aten(input, grid, interpolation_mode, padding_mode, align_corners, None)


def grid_sampler_2d(input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool) -> Tensor:
    """``grid_sampler`` of a 4-d input (N, C, H, W)."""
    return _aten(input, grid, interpolation_mode, padding_mode, align_corners, 2)


def grid_sampler_3d(input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool) -> Tensor:
    """``grid_sampler`` of a 5-d input (N, C, D, H, W)."""
    return _aten(input, grid, interpolation_mode, padding_mode, align_corners, 3)


@_cpu_route.float64_args
def _sample(input, grid, mode: str, padding_mode: str, align: bool, d) -> Tensor:
    """grid_sample once its modes are known: the sampler of ``d`` dims (None: chosen by the input's)."""
    _check_grid_sampler(input, grid, mode, d)
    d = input.ndim - 2
    sizes = tuple(input.shape[2:])  # (H, W) or (D, H, W)
    n, c = input.shape[:2]
    flat = input.reshape(n, c, math.prod(sizes))  # no -1: an empty batch leaves it ambiguous
    if mode == "bicubic":
        return _bicubic(flat, grid, sizes, padding_mode, align)
    # grid's last dim lists x (the last input dim) first: coords[..., k] is the source coordinate along sizes[k]
    coords = _pad(_unnormalize(grid.flip(-1), sizes, align), sizes, padding_mode, align)  # (N, *out, d)
    if mode == "nearest":
        values = _corners(flat, round(coords).unsqueeze(-2), sizes).squeeze(-1)
        # the output depends on the grid, with a zero gradient (PyTorch's): a where that never picks the grid
        return where(_const(False, values, mx.bool_), coords[..., 0].unsqueeze(1), values)
    # the 2**d corners around each point, and their weights: the product over dims of frac or 1 - frac
    low = floor(coords)
    frac = (coords - low).unsqueeze(-2)  # (N, *out, 1, d)
    offsets = np.array(list(itertools.product((0, 1), repeat=d)))  # (K, d), row-major as PyTorch sums them
    weights = where(_const(offsets, frac, mx.bool_), frac, 1 - frac).prod(-1)  # (N, *out, K)
    values = _corners(flat, low.unsqueeze(-2) + _const(offsets, low), sizes)  # (N, C, *out, K)
    return (values * weights.unsqueeze(1)).sum(-1)


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

