"""torchvision.ops.roi_align (Mask R-CNN, He et al., 2017): average of bilinear samples over each bin of each
region, written with lucid's differentiable ops (indexing and arithmetic), so gradients reach ``input`` through
lucid's autograd."""
from __future__ import annotations

import lucid

from ... import nn
from ..._tensor import Tensor


def _pair(size) -> tuple[int, int]:
    return (size, size) if isinstance(size, int) else tuple(size)


def convert_boxes_to_roi_format(boxes) -> Tensor:
    """A list of per-image (L_i, 4) box tensors as one (K, 5) tensor ``(batch index, x1, y1, x2, y2)``."""
    concat = lucid.cat(list(boxes), dim=0)
    ids = lucid.cat([lucid.full((len(b), 1), i, dtype=concat.dtype) for i, b in enumerate(boxes)], dim=0)
    return lucid.cat([ids, concat], dim=1)


def _check_rois(boxes) -> None:
    if isinstance(boxes, (list, tuple)):
        for b in boxes:
            if b.dim() != 2 or b.shape[1] != 4:
                raise AssertionError("The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]")
    elif isinstance(boxes, Tensor):
        if boxes.dim() != 2 or boxes.shape[1] != 5:
            raise AssertionError("The boxes tensor shape is not correct as Tensor[K, 5]")
    else:
        raise AssertionError("boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")


def _axis_samples(start: Tensor, length: Tensor, bins: int, grid: int, count: Tensor, size: int):
    """Along one axis: for each region (K,), bin and sample, the two neighbouring pixel indices and their bilinear
    weights (K, bins * grid), zero where the sample falls outside [-1, size] or past the region's own sample count
    ``count`` (adaptive sampling gives regions different counts; ``grid`` is the largest)."""
    dtype = start.dtype
    bin_size = length / bins
    b = lucid.arange(bins, dtype=dtype)[:, None]
    g = lucid.arange(grid, dtype=dtype)[None, :]
    # sample g of bin b: start + b * bin + (g + 0.5) * bin / count
    # (a region without samples, count 0, divides by 1 instead: its samples are all masked out below)
    step = bin_size / count.clamp(min=1.0)
    pos = start[:, None, None] + b * bin_size[:, None, None] + (g + 0.5) * step[:, None, None]
    valid = (pos >= -1.0) & (pos <= size) & (g < count[:, None, None])  # False for NaN (a NaN box) too
    pos = lucid.where(valid, pos, 0.0).clamp(min=0)  # every index in range, whatever the box
    low = pos.floor().clamp(max=size - 1)
    at_edge = low >= size - 1  # torchvision: the sample snaps onto the last pixel
    pos = lucid.where(at_edge, low, pos)
    high = lucid.where(at_edge, low, low + 1)
    frac = pos - low
    valid = valid.to(dtype)
    k = start.shape[0]
    return (low.long().reshape(k, -1), high.long().reshape(k, -1), ((1 - frac) * valid).reshape(k, -1),
            (frac * valid).reshape(k, -1))


def roi_align(input: Tensor, boxes, output_size, spatial_scale: float = 1.0, sampling_ratio: int = -1,
              aligned: bool = False) -> Tensor:
    """Region-of-interest align: for each region of ``boxes`` - a (K, 5) tensor ``(batch index, x1, y1, x2, y2)``
    or a list of per-image (L, 4) tensors - the (C, *output_size) average of bilinear samples of ``input``
    (N, C, H, W) over each output bin. Box coordinates are scaled by ``spatial_scale``; ``sampling_ratio`` samples
    per bin along each axis (<= 0: ``ceil(region size / bins)``, region by region); ``aligned=True`` shifts the
    boxes by -0.5 pixel (the pixel-exact variant). Differentiable in ``input``.

    With ``sampling_ratio <= 0`` the per-region counts set the shape of the sample grid, so the boxes are evaluated
    once (boxes come from the data; a fixed ``sampling_ratio`` keeps everything lazy)."""
    _check_rois(boxes)
    rois = convert_boxes_to_roi_format(boxes) if isinstance(boxes, (list, tuple)) else boxes
    rois = rois.to(input.dtype).detach()
    ph, pw = _pair(output_size)
    n, c, h, w = input.shape
    k = rois.shape[0]
    if k == 0:
        return input.new_zeros((0, c, ph, pw))
    offset = 0.5 if aligned else 0.0
    x1, y1, x2, y2 = (rois[:, i] * spatial_scale - offset for i in range(1, 5))
    roi_w, roi_h = x2 - x1, y2 - y1
    if not aligned:  # the legacy behaviour: regions at least one pixel wide
        roi_w, roi_h = roi_w.clamp(min=1.0), roi_h.clamp(min=1.0)
    if sampling_ratio > 0:
        count_h = count_w = lucid.full((k,), float(sampling_ratio), dtype=input.dtype)
        grid_h = grid_w = sampling_ratio
    else:
        count_h, count_w = (roi_h / ph).ceil(), (roi_w / pw).ceil()
        grid_h, grid_w = max(int(count_h.max().item()), 1), max(int(count_w.max().item()), 1)
    yl, yh, wyl, wyh = _axis_samples(y1, roi_h, ph, grid_h, count_h, h)  # (K, ph * grid_h)
    xl, xh, wxl, wxh = _axis_samples(x1, roi_w, pw, grid_w, count_w, w)  # (K, pw * grid_w)
    # the image of each region, and the four neighbours of each sample as rows of the (N*H*W, C) pixel table
    base = (rois[:, 0].long() * (h * w))[:, None, None]
    table = input.permute(0, 2, 3, 1).reshape(n * h * w, c)
    out = 0
    for yi, wy in ((yl, wyl), (yh, wyh)):
        for xi, wx in ((xl, wxl), (xh, wxh)):
            idx = base + yi[:, :, None] * w + xi[:, None, :]  # (K, Sy, Sx)
            out = out + table[idx] * (wy[:, :, None] * wx[:, None, :])[..., None]
    # (K, ph, grid_h, pw, grid_w, C): the sum over each bin's samples over the region's own sample count
    out = out.reshape(k, ph, grid_h, pw, grid_w, c).sum(dim=(2, 4))
    count = (count_h * count_w).clamp(min=1.0)
    return (out / count[:, None, None, None]).permute(0, 3, 1, 2)


class RoIAlign(nn.Module):
    """``roi_align`` as a module."""

    def __init__(self, output_size, spatial_scale: float, sampling_ratio: int, aligned: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input: Tensor, rois) -> Tensor:
        return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
                f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned})")
