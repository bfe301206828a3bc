"""A generated 2-D data set (``make_moons``): two interleaving half circles, the classic toy density for
normalizing flows. Nothing is downloaded; the same seed gives the same points on every machine."""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._creation import from_numpy, tensor


def make_moons(n: int, noise: float = 0.05, seed=0):
    """``n`` points of two interleaving half circles (scikit-learn's ``make_moons`` geometry): moon 0 is the upper
    unit half circle (cos a, sin a), moon 1 the lower one shifted right and down, (1 - cos a, 0.5 - sin a), for a in
    [0, pi]. Unlike scikit-learn's evenly spaced points, each angle is drawn uniformly at random (every point an
    independent draw, so any split of the points is a fair train/test split), then Gaussian noise of standard
    deviation ``noise`` is added to both coordinates. Each point's moon is a fair coin flip.

    Returns ``(points, labels)``: float32 Tensor (n, 2) and int64 Tensor (n,) of moon indices (0 or 1).
    Deterministic for a given ``(n, noise, seed)`` (``seed``: anything ``numpy.random.default_rng`` takes)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n should be a non-negative integer, got {n!r}")
    if not (isinstance(noise, (int, float)) and math.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise should be a finite non-negative number, got {noise!r}")
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, size=n)
    angle = rng.uniform(0.0, np.pi, size=n)
    lower = labels == 1
    x = np.where(lower, 1.0 - np.cos(angle), np.cos(angle))
    y = np.where(lower, 0.5 - np.sin(angle), np.sin(angle))
    points = np.stack([x, y], axis=1) + noise * rng.standard_normal((n, 2))
    return from_numpy(points.astype(np.float32)), tensor(labels, dtype=_dtype.int64)
