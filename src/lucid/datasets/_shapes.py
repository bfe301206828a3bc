"""A generated image classification data set (``make_shapes``): coloured shapes at random positions, sizes and
rotations on noisy backgrounds. Nothing is downloaded; the same seed gives the same images on every machine."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._creation import from_numpy, tensor

SHAPE_CLASSES = ["circle", "square", "triangle", "star", "cross", "ring"]

# Star-shaped polygons: vertex radii (relative to the shape's radius), going round once.
_POLYGONS = {
    "square": np.ones(4),
    "triangle": np.ones(3),
    "star": np.tile([1.0, 0.42], 5),
}
_RING_INNER = 0.55      # inner radius of a ring, relative to its outer radius
_CROSS_HALF_WIDTH = 0.3  # half the width of a cross's bars, relative to its half length


def _polygon_depth(u: np.ndarray, v: np.ndarray, vertex_radii: np.ndarray) -> np.ndarray:
    """How far each point (u, v) lies inside a star-shaped polygon, measured to the line of the edge that the ray
    from the centre through the point crosses (the true distance for convex polygons, away from the corners).

    The polygon's vertices are at angles 2*pi*j/k with radii ``vertex_radii[j]``; the depth of a point p in the
    wedge of edge j is (P_j - p) . n_j, with n_j the edge's outward unit normal."""
    k = len(vertex_radii)
    angles = 2 * np.pi * np.arange(k + 1) / k
    radii = np.append(vertex_radii, vertex_radii[0])
    px, py = (radii * np.cos(angles)).astype(np.float32), (radii * np.sin(angles)).astype(np.float32)
    ex, ey = np.diff(px), np.diff(py)
    length = np.hypot(ex, ey)
    out_x, out_y = ey / length, -ex / length  # each edge's outward unit normal
    offset = px[:-1] * out_x + py[:-1] * out_y  # each edge line's distance from the centre
    edge = np.floor(np.arctan2(v, u) * np.float32(k / (2 * np.pi))).astype(np.int64) % k
    return offset[edge] - (u * out_x[edge] + v * out_y[edge])


def _inside_distance(name: str, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """How far (in units of the shape's radius) each point (u, v) of the shape's own frame lies inside the shape's
    boundary; negative outside. Exact for circles and rings, close to it for polygons and crosses (enough for a
    one-pixel anti-aliased edge)."""
    if name in _POLYGONS:
        return _polygon_depth(u, v, _POLYGONS[name])
    rho = np.hypot(u, v)
    if name == "circle":
        return 1.0 - rho
    if name == "ring":
        return np.minimum(1.0 - rho, rho - _RING_INNER)
    if name == "cross":
        bar = lambda a, b: np.minimum(1.0 - np.abs(a), _CROSS_HALF_WIDTH - np.abs(b))  # noqa: E731
        return np.maximum(bar(u, v), bar(v, u))


def _distinct_colours(rng: np.random.Generator, n: int, min_distance: float = 0.45) -> tuple:
    """(background, foreground) RGB colours (n, 3) in [0, 1], redrawn until every pair is at least
    ``min_distance`` apart (Euclidean), so every shape stands out from its background."""
    background, foreground = rng.random((n, 3)), rng.random((n, 3))
    close = np.linalg.norm(background - foreground, axis=1) < min_distance
    while close.any():
        foreground[close] = rng.random((int(close.sum()), 3))
        close = np.linalg.norm(background - foreground, axis=1) < min_distance
    return background, foreground


def make_shapes(n: int, size: int = 32, seed: int = 0, noise: float = 0.08):
    """``n`` generated RGB images of six shape classes (``SHAPE_CLASSES``: circle, square, triangle, star, cross,
    ring), each shape with a random colour, radius (18-42% of the image), position (fully inside the image) and
    rotation, on a background of another random colour with a random linear gradient and Gaussian pixel noise
    (standard deviation ``noise``). Colour says nothing about the class, so a model has to see the shape.

    Returns ``(images, labels)``: float32 Tensor (n, 3, size, size) in [0, 1] and int64 Tensor (n,) of class
    indices into ``SHAPE_CLASSES``. Deterministic for a given ``(n, size, seed, noise)``; the first m images of a
    larger draw are not the m images of a smaller one (draw once and split)."""
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n should be a non-negative integer, got {n!r}")
    if not isinstance(size, int) or size < 8:
        raise ValueError(f"size should be an integer of at least 8 pixels, got {size!r}")
    if noise < 0:
        raise ValueError(f"noise should be non-negative, got {noise}")
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(SHAPE_CLASSES), size=n)
    radius = (rng.uniform(0.18, 0.42, size=n) * size).astype(np.float32)
    centre = rng.uniform(radius[:, None], size - radius[:, None], size=(n, 2)).astype(np.float32)
    angle = rng.uniform(0, 2 * np.pi, size=n).astype(np.float32)
    background, foreground = (c.astype(np.float32) for c in _distinct_colours(rng, n))
    gradient = rng.uniform(-0.15, 0.15, size=(n, 2)).astype(np.float32)

    pixel = np.arange(size, dtype=np.float32) + 0.5
    dx = pixel[None, None, :] - centre[:, 0, None, None]  # (n, 1, size): columns
    dy = pixel[None, :, None] - centre[:, 1, None, None]  # (n, size, 1): rows
    cos, sin = np.cos(angle)[:, None, None], np.sin(angle)[:, None, None]
    u = (cos * dx + sin * dy) / radius[:, None, None]   # the pixel in the shape's own (rotated, scaled) frame
    v = (-sin * dx + cos * dy) / radius[:, None, None]
    coverage = np.empty((n, size, size), dtype=np.float32)
    for index, name in enumerate(SHAPE_CLASSES):
        rows = labels == index
        inside_pixels = _inside_distance(name, u[rows], v[rows]) * radius[rows, None, None]
        coverage[rows] = np.clip(inside_pixels + 0.5, 0.0, 1.0)  # a one-pixel soft edge

    ramp = (gradient[:, 0, None, None] * (pixel[None, None, :] / size - 0.5)
            + gradient[:, 1, None, None] * (pixel[None, :, None] / size - 0.5))  # (n, size, size)
    back = background[:, :, None, None] + ramp[:, None]
    cover = coverage[:, None]
    images = back * (1.0 - cover) + foreground[:, :, None, None] * cover
    images += noise * rng.standard_normal(size=images.shape, dtype=np.float32)
    np.clip(images, 0.0, 1.0, out=images)
    return from_numpy(images), tensor(labels, dtype=_dtype.int64)
