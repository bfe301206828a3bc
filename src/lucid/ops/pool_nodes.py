"""The backward nodes of max pooling and of the adaptive pools' empty outputs, as PyTorch records them.

- ``max_pool_values``: the values of max pooling (fixed, adaptive and fractional windows), x at the flat per-plane
  index of each window's maximum. Like PyTorch's max-pool nodes, the node saves x and the indices it returns
  (``result1``), so an in-place change to either before backward raises the saved-tensor version error. The VJP
  scatter-adds g to those positions (``scatter_add_axis``, whose VJP gathers again: every order). ``empty`` (a bool
  mask over the output, or None) marks windows of padding only: their value is the dtype's lowest (-inf), they take
  nothing from x and their index (past the plane, as PyTorch reports it) is never read.
- ``empty_adaptive_output``: an adaptive pool whose output has an empty non-batch dim (``output_size`` 0) is
  computed, as in PyTorch, but its backward refuses, with PyTorch's message.
"""
from __future__ import annotations

import math

import mlx.core as mx

from .._tensor import _wrap
from ._core import data, defop
from .conv import scatter_add_axis
from .elementwise import where


def _take_planes(a, idx, empty=None):
    """a (N, C, *spatial) at the flat positions idx (N, C, *out) of each (n, c) plane."""
    n, c = idx.shape[:2]
    if idx.size == 0:  # an empty batch or output: nothing to take
        return mx.zeros(idx.shape, a.dtype)
    if empty is not None:
        idx = mx.where(empty, 0, idx)
    values = mx.take_along_axis(a.reshape(n, c, -1), idx.reshape(n, c, -1), axis=2).reshape(idx.shape)
    if empty is None:
        return values
    lowest = -math.inf if mx.issubdtype(a.dtype, mx.floating) else mx.iinfo(a.dtype).min
    return mx.where(empty, mx.array(lowest, a.dtype), values)


def _take_planes_vjp(g, ans, x, indices, empty=None):
    planes, plane, length = x.shape[0] * x.shape[1], math.prod(x.shape[2:]), math.prod(indices.shape[2:])
    idx = data(indices)
    if empty is not None:
        idx, g = mx.where(empty, 0, idx), where(_wrap(empty), 0.0, g)
    flat = idx.reshape(planes, length) + (mx.arange(planes, dtype=mx.int64) * plane).reshape(planes, 1)
    return scatter_add_axis(g.reshape(planes * length), flat.reshape(-1), 0, planes * plane).reshape(x.shape)


max_pool_values = {node: defop(op, _take_planes, vjp=(_take_planes_vjp, None, None), node=node) for op, node in
                   [(f"max_pool{n}d_values", f"MaxPool{n}DWithIndicesBackward0") for n in (1, 2, 3)]
                   + [(f"adaptive_max_pool{n}d_values", f"AdaptiveMaxPool{n}DBackward0") for n in (1, 2, 3)]
                   + [(f"fractional_max_pool{n}d_values", f"FractionalMaxPool{n}DBackward0") for n in (2, 3)]}


def padding_windows(firsts: tuple, spatial: tuple):
    """For max pooling, given per dim each window's first position at or past 0: None if every window holds an
    element of the input (every first position is inside it), else (a mask over the output of the windows that
    hold none, and the flat index PyTorch reports for each window: the row-major index of its first positions)."""
    if all(f < size for dim, size in zip(firsts, spatial) for f in dim):
        return None
    mask, flat = mx.array(False), mx.array(0, mx.int64)
    for i, (dim, size) in enumerate(zip(firsts, spatial)):
        shape = (-1,) + (1,) * (len(firsts) - 1 - i)
        mask = mask | (mx.array(dim).reshape(shape) >= size)
        flat = flat * size + mx.array(dim, mx.int64).reshape(shape)
    return mask, flat


# ---------------------------------------------------------------------------------------------------- empty outputs
def _refuse_backward(g, ans, x, shape, fn):
    sizes = list(g.shape)
    if fn.endswith("1d"):  # PyTorch pools 1-d inputs as 2-d ones over a unit dim, and words it so
        fn, sizes = fn[:-2] + "2d", sizes[:-1] + [1] + sizes[-1:]
    d = next(i for i in range(1, len(sizes)) if sizes[i] == 0)
    raise RuntimeError(f"{fn}_backward(): Expected grad_output to have non-zero size for non-batch dimensions, but "
                       f"grad_output has sizes {sizes} with dimension {d} being empty")


def _node(fn: str) -> str:
    """PyTorch's node of the adaptive pool ``fn`` (the 1-d pools are its 2-d ones)."""
    n = "2" if fn.endswith("1d") else fn[-2]
    return f"Adaptive{fn[9:12].capitalize()}Pool{n}DBackward0"


# fn -> the op ``f(input, shape, fn)``: zeros of ``shape`` (the output, as the caller returns it), whose backward
# raises PyTorch's error
empty_adaptive_output = {fn: defop("adaptive_pool_empty_output", lambda a, shape, fn: mx.zeros(shape, a.dtype),
                                   vjp=(_refuse_backward, None, None), save=None, node=_node(fn))
                         for fn in [f"adaptive_{kind}_pool{n}d" for kind in ("avg", "max") for n in (1, 2, 3)]}
