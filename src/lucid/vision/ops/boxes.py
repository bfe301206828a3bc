"""torchvision.ops' box operations: areas, IoU, format conversion and non-maximum suppression. Boxes are (N, 4)
tensors, ``(x1, y1, x2, y2)`` with ``0 <= x1 < x2`` and ``0 <= y1 < y2`` unless a format says otherwise."""
from __future__ import annotations

import numpy as np

import lucid

from ..._tensor import Tensor


def _upcast(t: Tensor) -> Tensor:
    """Protect products of coordinates from overflow as torchvision does: float16/bfloat16 -> float32,
    narrow integers -> int64."""
    if t.is_floating_point():
        return t if t.dtype in (lucid.float32, lucid.float64) else t.float()
    return t if t.dtype in (lucid.int32, lucid.int64) else t.int()


def box_area(boxes: Tensor) -> Tensor:
    """The area of each box of ``boxes`` (N, 4) in ``(x1, y1, x2, y2)`` format: a (N,) tensor."""
    boxes = _upcast(boxes)
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _box_inter_union(boxes1: Tensor, boxes2: Tensor) -> tuple[Tensor, Tensor]:
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = lucid.maximum(boxes1[:, None, :2], boxes2[:, :2])  # (N, M, 2)
    rb = lucid.minimum(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter, area1[:, None] + area2 - inter


def box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    """The (N, M) matrix of intersection over union of every box of ``boxes1`` (N, 4) with every box of
    ``boxes2`` (M, 4), both ``(x1, y1, x2, y2)``."""
    inter, union = _box_inter_union(boxes1, boxes2)
    return inter / union


def _to_xyxy(boxes: Tensor, fmt: str) -> Tensor:
    a, b, c, d = boxes.unbind(-1)
    if fmt == "xywh":  # (x, y) the top-left corner
        return lucid.stack([a, b, a + c, b + d], dim=-1)
    return lucid.stack([a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d], dim=-1)  # cxcywh


def _from_xyxy(boxes: Tensor, fmt: str) -> Tensor:
    x1, y1, x2, y2 = boxes.unbind(-1)
    if fmt == "xywh":
        return lucid.stack([x1, y1, x2 - x1, y2 - y1], dim=-1)
    return lucid.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], dim=-1)  # cxcywh


def box_convert(boxes: Tensor, in_fmt: str, out_fmt: str) -> Tensor:
    """``boxes`` (N, 4) from ``in_fmt`` to ``out_fmt``, each one of ``'xyxy'`` (corners), ``'xywh'`` (top-left
    corner, width, height) and ``'cxcywh'`` (centre, width, height)."""
    allowed = ("xyxy", "xywh", "cxcywh")
    if in_fmt not in allowed or out_fmt not in allowed:
        raise ValueError("Unsupported Bounding Box Conversions for given in_fmt and out_fmt")
    if in_fmt == out_fmt:
        return boxes.clone()
    if in_fmt != "xyxy":
        boxes = _to_xyxy(boxes, in_fmt)
    return boxes if out_fmt == "xyxy" else _from_xyxy(boxes, out_fmt)


def clip_boxes_to_image(boxes: Tensor, size: tuple[int, int]) -> Tensor:
    """``boxes`` (..., 4) in ``(x1, y1, x2, y2)`` clipped to an image of ``size`` (height, width)."""
    height, width = size
    x = boxes[..., 0::2].clamp(min=0, max=width)
    y = boxes[..., 1::2].clamp(min=0, max=height)
    return lucid.stack((x, y), dim=boxes.dim()).reshape(boxes.shape)


def nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """Non-maximum suppression: the indices (int64, by decreasing score) of the boxes kept when every box whose IoU
    with a higher-scoring kept box exceeds ``iou_threshold`` is dropped. ``boxes`` (N, 4) ``(x1, y1, x2, y2)``,
    ``scores`` (N,).

    The number of boxes kept depends on the values, so this evaluates ``boxes`` and ``scores`` (one
    synchronisation, as torchvision's kernel makes); the greedy pass runs on the host over the IoU matrix."""
    if boxes.dim() != 2 or boxes.shape[-1] != 4:
        raise RuntimeError(f"boxes should have shape [N, 4], got {list(boxes.shape)}")
    if scores.dim() != 1 or scores.shape[0] != boxes.shape[0]:
        raise RuntimeError("boxes and scores should have same number of elements in dimension 0, got "
                           f"{boxes.shape[0]} and {scores.shape[0] if scores.dim() else 1}")
    b, s = boxes.detach().numpy(), scores.detach().numpy()
    order = np.argsort(-s, kind="stable")
    x1, y1, x2, y2 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    suppressed = np.zeros(len(order), dtype=bool)
    keep = []
    for i in order:  # torchvision's kernel, one kept box at a time; each step suppresses a whole row at once
        if suppressed[i]:
            continue
        keep.append(i)
        w = np.maximum(np.minimum(x2[i], x2) - np.maximum(x1[i], x1), 0)
        h = np.maximum(np.minimum(y2[i], y2) - np.maximum(y1[i], y1), 0)
        inter = w * h
        with np.errstate(divide="ignore", invalid="ignore"):
            suppressed |= inter / (areas[i] + areas - inter) > iou_threshold
    return lucid.tensor(np.asarray(keep, dtype=np.int64), dtype=lucid.int64)


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    """``nms`` within each category of ``idxs`` (N,) separately: boxes of different categories never suppress
    each other. Returns the kept indices by decreasing score."""
    if boxes.numel() == 0:
        return lucid.empty((0,), dtype=lucid.int64)
    # shift each category's boxes by its own offset so that boxes of two categories cannot overlap
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes.dtype) * (max_coordinate + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def remove_small_boxes(boxes: Tensor, min_size: float) -> Tensor:
    """The indices (int64) of the boxes of ``boxes`` (N, 4) ``(x1, y1, x2, y2)`` whose sides are both at least
    ``min_size`` (a value-dependent count: this evaluates ``boxes``)."""
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    return lucid.where((ws >= min_size) & (hs >= min_size))[0]
