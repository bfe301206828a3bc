"""torchvision.utils on lucid: ``make_grid``, ``save_image`` and ``draw_bounding_boxes``, with torchvision's
arguments and results (the same grid, the same PNG bytes for the same tensor)."""
from __future__ import annotations

import math
import warnings

import numpy as np

import lucid
import lucid.nn.functional as NF

from .transforms._pil import pil

__all__ = ["make_grid", "save_image", "draw_bounding_boxes"]


def _normalize_range(t, value_range):
    """``t`` clamped to ``value_range`` (default: its own min and max) and mapped to [0, 1]."""
    low, high = value_range if value_range is not None else (float(t.min()), float(t.max()))
    return (t.clamp(min=low, max=high) - low) / max(high - low, 1e-5)


def make_grid(tensor, nrow: int = 8, padding: int = 2, normalize: bool = False, value_range=None,
              scale_each: bool = False, pad_value: float = 0.0):
    """A (B, C, H, W) batch (or a list of (C, H, W) images) laid out as one (C, H', W') image, ``nrow`` images a
    row, ``padding`` pixels of ``pad_value`` around each; one-channel images become three. ``normalize`` maps
    ``value_range`` (default: the min and max, of each image with ``scale_each``) to [0, 1]."""
    if not isinstance(tensor, lucid.Tensor):
        if isinstance(tensor, list):
            for t in tensor:
                if not isinstance(t, lucid.Tensor):
                    raise TypeError(f"tensor or list of tensors expected, got a list containing {type(t)}")
        else:
            raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if isinstance(tensor, list):
        tensor = lucid.stack(tensor, dim=0)
    if tensor.ndim == 2:  # one image H x W
        tensor = tensor.unsqueeze(0)
    if tensor.ndim == 3:  # one image
        if tensor.shape[0] == 1:
            tensor = lucid.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.ndim == 4 and tensor.shape[1] == 1:  # one-channel images
        tensor = lucid.cat((tensor, tensor, tensor), 1)
    if normalize is True:
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")
        if scale_each is True:
            tensor = lucid.stack([_normalize_range(t, value_range) for t in tensor.unbind(0)], dim=0)
        else:
            tensor = _normalize_range(tensor, value_range)
    if tensor.shape[0] == 1:
        return tensor.squeeze(0)
    nmaps, channels, h, w = (int(s) for s in tensor.shape)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    # each image padded on its right and bottom, the missing cells of the last row blank, then one more
    # padding on the top and left: torchvision's grid, made in a few whole-tensor ops instead of a copy per image
    if ymaps * xmaps > nmaps:
        blank = lucid.full((ymaps * xmaps - nmaps, channels, h, w), pad_value, dtype=tensor.dtype)
        tensor = lucid.cat((tensor, blank), 0)
    cells = NF.pad(tensor, (0, padding, 0, padding), value=pad_value)
    grid = cells.reshape(ymaps, xmaps, channels, h + padding, w + padding).permute(2, 0, 3, 1, 4)
    grid = grid.reshape(channels, ymaps * (h + padding), xmaps * (w + padding))
    return NF.pad(grid, (padding, 0, padding, 0), value=pad_value)


def save_image(tensor, fp, format=None, **kwargs) -> None:
    """``make_grid(tensor, **kwargs)`` written as an image file (the format from ``fp``'s suffix or ``format``),
    values in [0, 1] rounded to bytes."""
    with lucid.no_grad():
        grid = make_grid(tensor, **kwargs)
        ndarr = (grid * 255 + 0.5).clamp(0, 255).permute(1, 2, 0).to(lucid.uint8).numpy()
    pil().fromarray(ndarr).save(fp, format=format)


def _palette(n: int) -> list[tuple[int, int, int]]:
    return [tuple(int(i * p % 255) for p in (2**25 - 1, 2**15 - 1, 2**21 - 1)) for i in range(n)]


def _parse_colors(colors, num_objects: int) -> list[tuple[int, ...]]:
    from PIL import ImageColor
    if colors is None:
        colors = _palette(num_objects)
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError("Number of colors must be equal or larger than the number of objects, but got "
                             f"{len(colors)} < {num_objects}.")
    elif not isinstance(colors, (tuple, str)):
        raise ValueError(f"colors must be a tuple or a string, or a list thereof, but got {colors}.")
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, but got {colors}.")
    else:
        colors = [colors] * num_objects
    return [ImageColor.getrgb(c) if isinstance(c, str) else tuple(c) for c in colors]


def _dashed_line(draw, start, end, fill, width, dash: float = 5.0, space: float = 5.0) -> None:
    """torchvision's dashed first edge of an oriented box: dashes and spaces of 5 pixels from ``start``."""
    (x1, y1), (x2, y2) = start, end
    left, on = math.hypot(x2 - x1, y2 - y1), True
    angle = math.atan2(y2 - y1, x2 - x1)
    while left > 0:
        step = min(left, dash if on else space)
        ex, ey = x1 + math.cos(angle) * step, y1 + math.sin(angle) * step
        if on:
            draw.line([(x1, y1), (ex, ey)], fill, width)
        left -= step
        x1, y1, on = ex, ey, not on


def _oriented_rectangle(draw, xy, fill, outline, width) -> None:
    _dashed_line(draw, (xy[0], xy[1]), (xy[2], xy[3]), outline, width)
    for i in range(2, len(xy), 2):
        draw.line(((xy[i], xy[i + 1]), (xy[(i + 2) % len(xy)], xy[(i + 3) % len(xy)])), width=width, fill=outline)
    draw.polygon(xy, fill=fill, outline=None, width=0)


def draw_bounding_boxes(image, boxes, labels=None, colors=None, fill=False, width: int = 1, font=None,
                        font_size=None, label_colors=None, label_background_colors=None, fill_labels: bool = False):
    """``image`` (C, H, W), uint8 or float, with ``boxes`` (N, 4) ``(xmin, ymin, xmax, ymax)`` (or (N, 8) corners
    of oriented boxes) drawn on it, optionally labelled; returns a new tensor of the image's dtype."""
    from PIL import ImageDraw, ImageFont
    if not isinstance(image, lucid.Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    if not (image.dtype == lucid.uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.ndim != 3:
        raise ValueError("Pass individual images, not batches")
    if image.shape[0] not in (1, 3):
        raise ValueError("Only grayscale and RGB images are supported")
    box_list = np.asarray(boxes.detach().numpy() if isinstance(boxes, lucid.Tensor) else boxes)
    if box_list.shape[-1] == 4 and ((box_list[:, 0] > box_list[:, 2]).any() or
                                    (box_list[:, 1] > box_list[:, 3]).any()):
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use torchvision.ops.box_convert to "
                         "convert them")
    num_boxes = box_list.shape[0]
    if num_boxes == 0:
        warnings.warn("boxes doesn't contain any box. No box was drawn")
        return image
    if labels is None:
        labels = [None] * num_boxes
    elif len(labels) != num_boxes:
        raise ValueError(f"Number of boxes ({num_boxes}) and labels ({len(labels)}) mismatch. Please specify labels "
                         "for each box.")
    colors = _parse_colors(colors, num_boxes)
    label_colors = (_parse_colors(label_colors or "black", num_boxes) if label_colors or fill_labels
                    else list(colors))
    backgrounds = (_parse_colors(label_background_colors, num_boxes) if fill_labels and label_background_colors
                   else list(colors))
    if font is None:
        if font_size is not None:
            warnings.warn("Argument 'font_size' will be ignored since 'font' is not set.")
        txt_font = ImageFont.load_default()
    else:
        txt_font = ImageFont.truetype(font=font, size=font_size or 10)
    pixels = image.detach()
    if pixels.shape[0] == 1:
        pixels = pixels.tile((3, 1, 1))
    if pixels.is_floating_point():  # torchvision's float -> uint8 scaling
        pixels = (pixels * (255 + 1.0 - 1e-3)).to(lucid.uint8)
    canvas = pil().fromarray(np.ascontiguousarray(pixels.numpy().transpose(1, 2, 0)))
    draw = ImageDraw.Draw(canvas, "RGBA" if fill else None)
    for bbox, color, label, label_color, background in zip(box_list.astype(np.int64).tolist(), colors, labels,
                                                           label_colors, backgrounds):
        fill_color = color + (100,) if fill else None
        if len(bbox) > 4:
            _oriented_rectangle(draw, bbox, fill_color, color, width)
        else:
            draw.rectangle(bbox, width=width, outline=color, fill=fill_color)
        if label is not None:
            margin = width + 1
            if fill_labels:
                left, top, right, bottom = draw.textbbox((bbox[0] + margin, bbox[1] + margin), label, font=txt_font)
                draw.rectangle((left - 1, top - 1, right + 1, bottom + 1), fill=background)
            draw.text((bbox[0] + margin, bbox[1] + margin), label, fill=label_color, font=txt_font)
    out = lucid.from_numpy(np.ascontiguousarray(np.asarray(canvas).transpose(2, 0, 1)))
    if image.is_floating_point():
        out = out.to(image.dtype) * (1.0 / 255)
    return out
