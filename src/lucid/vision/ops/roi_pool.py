"""torchvision.ops.roi_pool (Fast R-CNN, Girshick, 2015): the maximum over each bin of each region, by gathering
the bins' pixels with lucid's differentiable indexing (gradients reach ``input`` through lucid's autograd)."""
from __future__ import annotations

import numpy as np

import lucid

from ... import nn
from ..._tensor import Tensor
from .roi_align import _check_rois, _pair, convert_boxes_to_roi_format


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)  # C's round(), not numpy's round-half-to-even


def _bins(start: np.ndarray, length: np.ndarray, bins: int, size: int):
    """Along one axis, each region's (K,) bin bounds [lo, hi) (K, bins), clipped to [0, size]."""
    dtype = start.dtype
    bin_size = length.astype(dtype) / dtype.type(bins)
    b = np.arange(bins, dtype=dtype)
    lo = np.floor(b * bin_size[:, None]).astype(np.int64) + start[:, None].astype(np.int64)
    hi = np.ceil((b + 1) * bin_size[:, None]).astype(np.int64) + start[:, None].astype(np.int64)
    return np.clip(lo, 0, size), np.clip(hi, 0, size)


def roi_pool(input: Tensor, boxes, output_size, spatial_scale: float = 1.0) -> Tensor:
    """Region-of-interest max pooling: for each region of ``boxes`` - a (K, 5) tensor ``(batch index, x1, y1, x2,
    y2)`` or a list of per-image (L, 4) tensors - the (C, *output_size) maxima of ``input`` (N, C, H, W) over each
    output bin of the region (coordinates scaled by ``spatial_scale`` and rounded to pixels; an empty bin is 0).
    Differentiable in ``input``.

    The bins' sizes depend on the boxes, so the boxes are evaluated once (they come from the data); the pooling
    itself stays lazy."""
    _check_rois(boxes)
    rois = convert_boxes_to_roi_format(boxes) if isinstance(boxes, (list, tuple)) else boxes
    ph, pw = _pair(output_size)
    n, c, h, w = input.shape
    r = rois.detach().to(input.dtype).numpy()
    k = r.shape[0]
    if k == 0:
        return input.new_zeros((0, c, ph, pw))
    batch = r[:, 0].astype(np.int64)
    if ((batch < 0) | (batch >= n)).any():
        raise IndexError(f"roi_pool: a box's batch index is outside [0, {n}) (got {batch.min()}..{batch.max()})")
    scale = r.dtype.type(spatial_scale)
    x1, y1, x2, y2 = (_round_half_away(r[:, i] * scale) for i in range(1, 5))
    roi_w, roi_h = np.maximum(x2 - x1 + 1, 1), np.maximum(y2 - y1 + 1, 1)
    hlo, hhi = _bins(y1, roi_h, ph, h)  # (K, ph)
    wlo, whi = _bins(x1, roi_w, pw, w)
    bh, bw = max(int((hhi - hlo).max()), 1), max(int((whi - wlo).max()), 1)  # the largest bin
    rows = hlo[:, :, None] + np.arange(bh)  # (K, ph, bh)
    cols = wlo[:, :, None] + np.arange(bw)
    row_ok, col_ok = rows < hhi[:, :, None], cols < whi[:, :, None]
    rows, cols = np.minimum(rows, h - 1).reshape(k, -1), np.minimum(cols, w - 1).reshape(k, -1)
    # every (row, col) of every bin as a row of the (N*H*W, C) pixel table: (K, ph*bh, pw*bw, C)
    idx = batch[:, None, None] * (h * w) + rows[:, :, None] * w + cols[:, None, :]
    table = input.permute(0, 2, 3, 1).reshape(n * h * w, c)
    vals = table[lucid.tensor(idx)].reshape(k, ph, bh, pw, bw, c)
    ok = (row_ok[:, :, :, None, None] & col_ok[:, None, None, :, :])[..., None]  # (K, ph, bh, pw, bw, 1)
    out = lucid.where(lucid.tensor(ok), vals, float("-inf")).amax(dim=(2, 4))  # (K, ph, pw, C)
    empty = ((hhi <= hlo)[:, :, None] | (whi <= wlo)[:, None, :])[..., None]
    out = lucid.where(lucid.tensor(empty), 0.0, out)
    return out.permute(0, 3, 1, 2)


class RoIPool(nn.Module):
    """``roi_pool`` as a module."""

    def __init__(self, output_size, spatial_scale: float) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input: Tensor, rois) -> Tensor:
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale})"
