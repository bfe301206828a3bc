"""Matrix products: matmul (1-D, 2-D, batched, broadcasting) and its spellings mm, bmm, dot, mv, outer.

Each product is one declared op whose VJP is again a product (with a transpose), so second derivatives come for
free. Batch dims broadcast; the engine sums gradients back over them. Mixed dtypes promote as elementwise ops do
(PyTorch would raise; promoting is a strict superset). Integer products, which MLX's matmul does not support, are
computed exactly as a broadcast multiply and sum.
"""
from __future__ import annotations

__all__ = ["matmul", "mm", "bmm", "dot", "mv", "outer", "ger"]

import mlx.core as mx

from .._dtype import promote
from .._tensor import Tensor
from ._core import as_tensor, data, defop, methods


def _product(a, b):
    """``a @ b`` for arrays of at least 2 dims (batch dims broadcast), with PyTorch's type promotion."""
    if a.dtype != b.dtype:
        a, b = promote(a, b)
    if mx.issubdtype(a.dtype, mx.inexact):
        return mx.matmul(a, b)
    return mx.sum(mx.expand_dims(a, -1) * mx.expand_dims(b, -3), axis=-2)


def _dot_fwd(a, b):
    return _product(a.reshape(1, -1), b.reshape(-1, 1)).reshape(())


def _mv_fwd(m, v):
    return _product(m, v.reshape(-1, 1)).reshape(-1)


# the transpose of the last two dims, for the VJPs (x.mT)
_mT = defop("transpose", lambda a: mx.swapaxes(a, -1, -2), vjp=lambda g, ans, x: _mT(g), save=None)

_dot = defop("dot", _dot_fwd, vjp=(lambda g, ans, a, b: g * b, lambda g, ans, a, b: g * a))
_mv = defop("mv", _mv_fwd, vjp=(lambda g, ans, m, v: g.reshape(-1, 1) * v, lambda g, ans, m, v: _mv(_mT(m), g)))
_mm = defop("mm", _product, vjp=(lambda g, ans, a, b: _mm(g, _mT(b)), lambda g, ans, a, b: _mm(_mT(a), g)))
# batched and broadcasting products (3-D and up, or 2-D with N-D); gradients of broadcast batch dims are summed
# back by the engine
_bmm = defop("bmm", _product, vjp=(lambda g, ans, a, b: _bmm(g, _mT(b)), lambda g, ans, a, b: _bmm(_mT(a), g)))


def _batch_shape(sa, sb) -> tuple:
    """The broadcast of the batch dims (all but the last two) of shapes sa and sb."""
    ba, bb = sa[:-2], sb[:-2]
    n = len(ba) if len(ba) > len(bb) else len(bb)
    ba, bb = (1,) * (n - len(ba)) + ba, (1,) * (n - len(bb)) + bb
    out = []
    for i, (x, y) in enumerate(zip(ba, bb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"matmul: the batch dimensions of shapes {list(sa)} and {list(sb)} cannot be "
                               f"broadcast: the size of tensor a ({x}) must match the size of tensor b ({y}) at "
                               f"non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _check_dot(sa, sb):
    if len(sa) != 1 or len(sb) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(sa)}D and {len(sb)}D tensors")
    if sa[0] != sb[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the same "
                           f"number of elements, but got {sa[0]} and {sb[0]} elements respectively")


def _check_mv(sa, sb):
    if len(sa) != 2 or len(sb) != 1:
        raise RuntimeError(f"mv: expected a 2-D matrix and a 1-D vector, but got shapes {list(sa)} and {list(sb)}")
    if sa[1] != sb[0]:
        raise RuntimeError(f"size mismatch, got input ({sa[0]}), mat ({sa[0]}x{sa[1]}), vec ({sb[0]})")


def _check_mm(sa, sb):
    if len(sa) != 2:
        raise RuntimeError(f"mm: self must be a matrix, but got a tensor of shape {list(sa)}")
    if len(sb) != 2:
        raise RuntimeError(f"mm: mat2 must be a matrix, but got a tensor of shape {list(sb)}")
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})")


def matmul(input, other) -> Tensor:
    """Matrix product with PyTorch's rules: 1-D·1-D is the dot product (0-d), 2-D·1-D and 1-D·2-D are
    matrix-vector products, 2-D·2-D is ``mm``, and with more dims the leading (batch) dims broadcast; a 1-D operand
    is treated as a row (left) or column (right) and that dim is removed from the result."""
    a, b = as_tensor(input), as_tensor(other)
    sa, sb = data(a).shape, data(b).shape
    da, db = len(sa), len(sb)
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 2 and db == 2:
        _check_mm(sa, sb)
        return _mm(a, b)
    if da == 2 and db == 1:
        _check_mv(sa, sb)
        return _mv(a, b)
    if da == 1 and db == 1:
        _check_dot(sa, sb)
        return _dot(a, b)
    k = sb[-2] if db > 1 else sb[0]
    if sa[-1] != k:
        raise RuntimeError(f"matmul: shapes {list(sa)} and {list(sb)} cannot be multiplied ({sa[-1]} != {k})")
    if da == 1 and db == 2:
        return _mv(_mT(b), a)
    # N-D: a 1-D operand becomes a (1, n) row or an (n, 1) column; that dim is dropped from the result after
    a2 = a.reshape(1, -1) if da == 1 else a
    b2 = b.reshape(-1, 1) if db == 1 else b
    out_shape = _batch_shape(data(a2).shape, data(b2).shape) + sa[-2:-1] + (sb[-1:] if db > 1 else ())
    out = _bmm(a2, b2)
    return out if data(out).shape == out_shape else out.reshape(out_shape)


def mm(input, mat2) -> Tensor:
    """Product of two 2-D matrices (no broadcasting)."""
    _check_mm(data(input).shape, data(mat2).shape)
    return _mm(input, mat2)


def bmm(input, mat2) -> Tensor:
    """Batched product of two 3-D tensors with the same batch size (no broadcasting)."""
    sa, sb = data(input).shape, data(mat2).shape
    if len(sa) != 3:
        raise RuntimeError(f"bmm: batch1 must be a 3D tensor, but got a tensor of shape {list(sa)}")
    if len(sb) != 3:
        raise RuntimeError(f"bmm: batch2 must be a 3D tensor, but got a tensor of shape {list(sb)}")
    if sa[0] != sb[0] or sa[2] != sb[1]:
        raise RuntimeError(f"bmm: shapes {list(sa)} and {list(sb)} cannot be multiplied: expected size for first two "
                           f"dimensions of batch2 tensor to be: [{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}].")
    return _bmm(input, mat2)


def dot(input, tensor) -> Tensor:
    """Inner product of two 1-D tensors of the same length (a 0-d result)."""
    _check_dot(data(input).shape, data(tensor).shape)
    return _dot(input, tensor)


def mv(input, vec) -> Tensor:
    """Product of a 2-D matrix and a 1-D vector."""
    _check_mv(data(input).shape, data(vec).shape)
    return _mv(input, vec)


def outer(input, vec2) -> Tensor:
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]`` (a broadcast multiply, as in
    PyTorch, so its node is MulBackward0)."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return input.reshape(-1, 1) * vec2


ger = outer

methods(matmul, mm, bmm, dot, mv, outer, ger=outer)
Tensor.__matmul__ = matmul
Tensor.__rmatmul__ = lambda self, other: matmul(other, self)
