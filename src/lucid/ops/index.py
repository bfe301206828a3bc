"""Indexing: ``x[key]`` (ints, slices with steps, None, Ellipsis, integer tensors/lists, boolean masks) and
``x[key] = value``."""
from __future__ import annotations

__all__: list = []
