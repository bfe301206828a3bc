"""Shape ops: reshape/view, flatten/unflatten, squeeze/unsqueeze, transpose/permute, expand/broadcast_to,
repeat/tile, flip, roll, clone/contiguous; cat, stack, split, chunk, unbind."""
from __future__ import annotations

__all__ = ["reshape", "expand"]

import mlx.core as mx

from .._tensor import Tensor
from ._core import defop, methods


def _size_arg(shape) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` both mean the shape (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


_reshape = defop("reshape", lambda a, shape: mx.reshape(a, shape), vjp=lambda g, ans, x, shape: g.reshape(x.shape),
                 save=None, node="ViewBackward0")


def reshape(input, *shape) -> Tensor:
    """The same elements in a new shape (one dim may be -1)."""
    shape = _size_arg(shape)
    if tuple(input.shape) == shape:
        return input if not input.requires_grad else _reshape(input, shape)
    return _reshape(input, shape)


def _expand_fwd(a, shape):
    shape = tuple(a.shape[i - (len(shape) - a.ndim)] if s == -1 else s for i, s in enumerate(shape))
    return mx.broadcast_to(a, shape)


_expand = defop("expand", _expand_fwd, vjp=lambda g, ans, x, shape: g, save=None)


def expand(input, *sizes) -> Tensor:
    """Broadcast to ``sizes`` (-1 keeps a dim); the gradient is summed back (by the engine)."""
    return _expand(input, _size_arg(sizes))


methods(reshape, expand)
Tensor.view = reshape
