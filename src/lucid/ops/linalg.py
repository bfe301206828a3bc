"""Matrix products: matmul (1-D, 2-D, batched, broadcasting) and its spellings mm, bmm, dot, mv, outer; the fused
``beta * input + alpha * product`` forms addmm, baddbmm, addmv, addr; einsum, tensordot, kron, cross; triangles and
diagonals (tril, triu, diag, diagonal, diag_embed, diagonal_scatter, trace); block_diag, cartesian_prod.

Each product is one declared op whose VJP is again a product (with a transpose), so second derivatives come for
free. Batch dims broadcast; the engine sums gradients back over them. Mixed dtypes promote as elementwise ops do
(PyTorch would raise; promoting is a strict superset). Integer products, which MLX's matmul does not support, are
computed exactly as a broadcast multiply and sum.
"""
from __future__ import annotations

__all__ = ["matmul", "mm", "bmm", "dot", "mv", "outer", "ger", "addmm", "baddbmm", "addmv", "addr", "einsum",
           "tensordot", "kron", "cross", "tril", "triu", "diag", "diagonal", "diag_embed", "diagonal_scatter", "trace",
           "block_diag", "cartesian_prod"]

import functools
import math
import string
import warnings
from collections import Counter

import mlx.core as mx

from .. import _cpu_route
from .._dtype import broadcast_shapes, promote
from .._tensor import Tensor, _wrap
from ._core import as_tensor, attach, data, declare, defop
from .shape import _FULL, _expanded_shape, stack, take_slices, wrap_dim, zeros_for
from ..autograd.grad_mode import state as _gm_state  # lucid.autocast's hook (ops/autocast_policy.py)


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
_mT = defop("transpose", lambda a: mx.swapaxes(a, -1, -2), vjp=lambda g, ans, x: _mT(g), save=None, raw=True)

# a product's gradient w.r.t. one factor reads only the other factor (PyTorch saves each only when needed)
PRODUCT_SAVE = {0: (1,), 1: (0,)}
_dot = defop("dot", _dot_fwd, save=PRODUCT_SAVE, vjp=(lambda g, ans, a, b: g * b, lambda g, ans, a, b: g * a))
_mv = defop("mv", _mv_fwd, save=PRODUCT_SAVE, vjp=(lambda g, ans, m, v: g.reshape(-1, 1) * v, lambda g, ans, m, v: _mv(_mT(m), g)))
_mm = defop("mm", _product, save=PRODUCT_SAVE, vjp=(lambda g, ans, a, b: _mm(g, _mT(b)), lambda g, ans, a, b: _mm(_mT(a), g)), raw=True)
# batched and broadcasting products (3-D and up, or 2-D with N-D); gradients of broadcast batch dims are summed
# back by the engine
_bmm = defop("bmm", _product, save=PRODUCT_SAVE, vjp=(lambda g, ans, a, b: _bmm(g, _mT(b)), lambda g, ans, a, b: _bmm(_mT(a), g)))


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


@declare(method=True)
def matmul(input, other) -> Tensor:
    """Matrix product with PyTorch's rules: 1-D·1-D is the dot product (0-d), 2-D·1-D and 1-D·2-D are
    matrix-vector products, 2-D·2-D is ``mm``, and with more dims the leading (batch) dims broadcast; a 1-D operand
    is treated as a row (left) or column (right) and that dim is removed from the result."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("matmul", matmul, input, other)
    if input.__class__ is not Tensor and getattr(input, "is_sparse", False):  # lucid.sparse's own products
        return input.matmul(other)
    if other.__class__ is not Tensor and getattr(other, "is_sparse", False):
        return other.__rmatmul__(input)
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


@declare(method=True)
def mm(input, mat2) -> Tensor:
    """Product of two 2-D matrices (no broadcasting); a sparse ``input`` is ``lucid.sparse.mm``."""
    if input.__class__ is not Tensor and getattr(input, "is_sparse", False):
        return input.mm(mat2)
    if mat2.__class__ is not Tensor and getattr(mat2, "is_sparse", False):
        return mat2.__rmatmul__(input)
    _check_mm(data(input).shape, data(mat2).shape)
    return _mm(input, mat2)


@declare(method=True)
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


@declare(method=True)
def dot(input, tensor) -> Tensor:
    """Inner product of two 1-D tensors of the same length (a 0-d result)."""
    _check_dot(data(input).shape, data(tensor).shape)
    return _dot(input, tensor)


@declare(method=True)
def mv(input, vec) -> Tensor:
    """Product of a 2-D matrix and a 1-D vector."""
    _check_mv(data(input).shape, data(vec).shape)
    return _mv(input, vec)


@declare(method=("outer", "ger"))
def outer(input, vec2) -> Tensor:
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]`` (a broadcast multiply, as in
    PyTorch, so its node is MulBackward0)."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return input.reshape(-1, 1) * vec2


ger = outer


# ---------------------------------------------------------------------------------------------------- fused forms
def _scaled(t, s):
    return t if s == 1 else t * s


def _fused(name: str, product, grad_a, grad_b, kernel=None):
    """The op ``beta * input + alpha * product(a, b)``; with ``beta == 0`` input is ignored (NaN and inf in it do
    not propagate), as in PyTorch. ``grad_a(g, a, b)``, ``grad_b(g, a, b)``: the product's VJPs. ``kernel``: MLX's
    fused form for floating inputs of one dtype (one call instead of a product and an add)."""
    def fwd(c, a, b, beta, alpha):
        if kernel is not None and beta != 0 and type(c) is mx.array:
            dt = a.dtype
            if dt == b.dtype == c.dtype and mx.issubdtype(dt, mx.inexact):
                return kernel(c, a, b, alpha=alpha, beta=beta)
        p = product(a, b)
        if alpha != 1:
            p = p * alpha
        return p if beta == 0 else (c if beta == 1 else c * beta) + p

    return defop(name, fwd, save={1: (2,), 2: (1,)}, vjp=(lambda g, ans, c, a, b, beta, alpha: _scaled(g, beta),
                                 lambda g, ans, c, a, b, beta, alpha: _scaled(grad_a(g, a, b), alpha),
                                 lambda g, ans, c, a, b, beta, alpha: _scaled(grad_b(g, a, b), alpha)))


_addmm = _fused("addmm", _product, lambda g, a, b: _mm(g, _mT(b)), lambda g, a, b: _mm(_mT(a), g),
                kernel=mx.addmm)
_baddbmm = _fused("baddbmm", _product, lambda g, a, b: _bmm(g, _mT(b)), lambda g, a, b: _bmm(_mT(a), g))
_addmv = _fused("addmv", _mv_fwd, lambda g, a, b: g.reshape(-1, 1) * b, lambda g, a, b: _mv(_mT(a), g))
_addr = _fused("addr", lambda a, b: mx.expand_dims(a, 1) * b, lambda g, a, b: _mv(g, b),
               lambda g, a, b: _mv(_mT(g), a))


def _check_input(input, shape: tuple) -> None:
    """``input`` must broadcast to the product's shape (PyTorch's expand error otherwise)."""
    _expanded_shape(tuple(data(input).shape), shape)


@declare(method=True, inplace=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-D matrices; ``input`` broadcasts to the result."""
    sa, sb = data(mat1).shape, data(mat2).shape
    for name, s in (("mat1", sa), ("mat2", sb)):
        if len(s) != 2:
            raise RuntimeError(f"{name} must be a matrix, got {len(s)}-D tensor")
    _check_mm(sa, sb)
    _check_input(input, (sa[0], sb[1]))
    return _addmm(input, mat1, mat2, beta, alpha)


@declare(method=True, inplace=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` for 3-D batches of the same size; ``input`` broadcasts."""
    sa, sb = data(batch1).shape, data(batch2).shape
    for name, s in (("batch1", sa), ("batch2", sb)):
        if len(s) != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if sb[:2] != (sa[0], sa[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{sa[0]}, {sa[2]}] but "
                           f"got: [{sb[0]}, {sb[1]}].")
    _check_input(input, (sa[0], sa[1], sb[2]))
    return _baddbmm(input, batch1, batch2, beta, alpha)


@declare(method=True, inplace=True)
def addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)`` for a 2-D ``mat`` and a 1-D ``vec``."""
    sm, sv, si = data(mat).shape, data(vec).shape, data(input).shape
    if len(sm) != 2 or len(sv) != 1 or len(si) > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {len(si)}, {len(sm)}, {len(sv)}")
    if sm[1] != sv[0] or (si and si[0] not in (1, sm[0])):
        raise RuntimeError(f"size mismatch, got input ({si[0] if si else 1}), mat ({sm[0]}x{sm[1]}), vec ({sv[0]})")
    return _addmv(input, mat, vec, beta, alpha)


@declare(method=True, inplace=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.ndim}-D")
    _check_input(input, (vec1.shape[0], vec2.shape[0]))
    return _addr(input, vec1, vec2, beta, alpha)


# ---------------------------------------------------------------------------------------------------- einsum
# The forward is MLX's einsum on an equation spelled out in letters (an ellipsis becomes fresh letters). The
# gradient for operand k is again an einsum: of the output's gradient with the other operands, into k's letters.
# Two cases need more than that: a letter repeated in k ("ii", a diagonal) is spelled with a fresh letter tied to
# the first by an identity matrix, and a letter only k has (summed away in the forward) is absent from the other
# terms, so the gradient is computed without it and expanded along it.
_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # PyTorch's order for the implicit output


def _einsum_fwd(*arrays, subs, result):  # `result`: the output letters (not `out`, which means out=)
    return mx.einsum(",".join(subs) + "->" + result, *arrays)


def _einsum_grad(g, xs, subs, out, k):
    used = set("".join(subs) + out)
    fresh = (c for c in _LETTERS if c not in used)
    target, eyes, eye_subs = [], [], []
    for c, size in zip(subs[k], xs[k].shape):
        if c in target:
            f = next(fresh)
            eyes.append(_wrap(mx.eye(size, dtype=g.dtype)))
            eye_subs.append(c + f)
            c = f
        target.append(c)
    terms = [out] + [s for j, s in enumerate(subs) if j != k] + eye_subs
    present = set("".join(terms))
    kept = "".join(c for c in target if c in present)
    others = [x for j, x in enumerate(xs) if j != k]
    res = _einsum_op(len(terms))(g, *others, *eyes, subs=tuple(terms), result=kept)
    if len(kept) < len(target):
        it = iter(data(res).shape)
        res = res.reshape([next(it) if c in present else 1 for c in target])
    # size 1 where operand k has more: a letter only k has, or one broadcast from size 1 in the others (a size the
    # other way round, k's own broadcast, the engine sums back)
    shape = data(res).shape
    if any(r == 1 and n != 1 for r, n in zip(shape, xs[k].shape)):
        res = res.expand([n if r == 1 else -1 for r, n in zip(shape, xs[k].shape)])
    return res


def _einsum_vjp(k: int):
    return lambda g, ans, *xs, subs, result: _einsum_grad(g, xs, subs, result, k)


@functools.cache
def _einsum_op(n: int):
    """The einsum op of n operands: one VJP per operand, so only the gradients that are needed get computed."""
    return defop("einsum", _einsum_fwd, vjp=tuple(_einsum_vjp(k) for k in range(n)))


@functools.lru_cache(maxsize=256)  # a training loop calls the same equation on the same shapes
def _parse_einsum(equation: str, shapes: tuple) -> tuple:
    """``(subs, out)``: each operand's letters (an ellipsis spelled out in fresh letters, right-aligned across the
    operands as broadcasting is) and the output's letters, with PyTorch's checks and errors."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for i, c in enumerate(eq):
        if not (c in _LETTERS or c in ".,->"):
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, subscripts "
                               "must be in [a-zA-Z]")
    ell_dims = []
    for k, (t, shape) in enumerate(zip(terms, shapes)):
        letters = t.replace("...", "", 1)
        if "." in letters:
            raise RuntimeError(f"einsum(): found '.' for operand {k} "
                               + ("for which an ellipsis was already found" if "..." in t
                                  else "that is not part of any ellipsis"))
        if "..." in t and len(letters) <= len(shape):
            ell_dims.append(len(shape) - len(letters))
        elif len(letters) != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) does not match "
                               f"the number of dimensions ({len(shape)}) for operand {k}"
                               + ("" if "..." in t else " and no ellipsis was given"))
        else:
            ell_dims.append(0)
    fresh = [c for c in _LETTERS if c not in eq]
    ell = "".join(fresh[:max(ell_dims, default=0)])
    subs = tuple(t.replace("...", ell[len(ell) - n:]) for t, n in zip(terms, ell_dims))
    sizes: dict = {}
    for k, (s, shape) in enumerate(zip(subs, shapes)):
        mine: dict = {}
        for c, n in zip(s, shape):
            if c in mine and mine[c] != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the sizes don't match, "
                                   f"{mine[c]} != {n}")
            mine[c] = n
            seen = sizes.get(c, 1)
            if n != seen and n != 1 and seen != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which does not broadcast "
                                   f"with previously seen size {seen}")
            sizes[c] = max(seen, n)
    if arrow:
        out = rhs.replace("...", ell)
        for c in out:
            if out.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if c not in sizes:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
    else:  # the ellipsis dims, then the letters that appear once, in order
        counts = Counter(lhs.replace(".", "").replace(",", ""))
        out = ell + "".join(sorted((c for c, n in counts.items() if n == 1), key=_LETTERS.index))
    return subs, out


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``. Repeated letters in an operand take its
    diagonal, ``...`` stands for broadcast dims, and without ``->`` the output is the ellipsis dims followed by the
    letters that appear once, in alphabetical order. The operands may also be given as one list."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = [as_tensor(x) for x in operands]
    subs, out = _parse_einsum(equation, tuple(data(x).shape for x in operands))
    return _einsum_op(len(operands))(*operands, subs=subs, result=out)


# ---------------------------------------------------------------------------------------------------- tensordot, kron
def tensordot(a, b, dims=2) -> Tensor:
    """Contract the last ``dims`` dims of ``a`` with the first ``dims`` of ``b``, or the listed dims
    (``dims=([1, 0], [0, 1])``); computed as one matrix product of the permuted, flattened operands."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("tensordot", tensordot, a, b, dims)
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da, db = [wrap_dim(d, a.ndim) for d in da], [wrap_dim(d, b.ndim) for d in db]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[i]} in dim {i} and "
                               f"second has size {b.shape[j]} in dim {j}")
    free_a = [i for i in range(a.ndim) if i not in da]
    free_b = [j for j in range(b.ndim) if j not in db]
    k = math.prod(a.shape[i] for i in da)
    pa = _permuted(a, free_a + da).reshape(-1 if k else math.prod(a.shape[i] for i in free_a), k)
    pb = _permuted(b, db + free_b).reshape(k, -1 if k else math.prod(b.shape[j] for j in free_b))
    return _mm(pa, pb).reshape([a.shape[i] for i in free_a] + [b.shape[j] for j in free_b])


def _permuted(x, perm: list):
    return x if perm == sorted(perm) else x.permute(perm)


@declare(method=True)
def kron(input, other) -> Tensor:
    """The Kronecker product: ``out[i * m + k, ...] = input[i, ...] * other[k, ...]`` (shapes padded with leading
    ones to the same length)."""
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    a = input.reshape([v for s in sa for v in (s, 1)])
    b = other.reshape([v for s in sb for v in (1, s)])
    return (a * b).reshape([x * y for x, y in zip(sa, sb)])


# ---------------------------------------------------------------------------------------------------- cross
# component i of a x b is a[i+1] b[i+2] - a[i+2] b[i+1]. Written with take, not roll: MLX 0.32's compile fails on
# some graphs of rolls ("_Map_base::at"), e.g. f(a) = roll(a, 1) * roll(2 * a, 2) - roll(2 * a, 2) * roll(a, 1).
_NEXT, _AFTER = mx.array([1, 2, 0]), mx.array([2, 0, 1])


def _cross_fwd(a, b, dim):
    if a.dtype != b.dtype:
        a, b = promote(a, b)
    return mx.take(a, _NEXT, dim) * mx.take(b, _AFTER, dim) - mx.take(a, _AFTER, dim) * mx.take(b, _NEXT, dim)


# g . (a x b) = a . (b x g) = b . (g x a)
_cross = defop("linalg_cross", _cross_fwd, vjp=(lambda g, ans, a, b, dim: _cross(b, g, dim),
                                                lambda g, ans, a, b, dim: _cross(g, a, dim)))


@declare(method=True)
def cross(input, other, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (the other dims broadcast). Without ``dim``, as in PyTorch,
    the first dim of size 3 (deprecated there, with a warning: pass ``dim=-1`` for linalg.cross's default)."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    return _cross(input, other, d)


def vecdot(x, y, *, dim: int = -1) -> Tensor:
    """``torch.linalg.vecdot`` (real dtypes): the dot product along ``dim``, the other dims broadcast. Kept out of
    ``__all__``: PyTorch has it under ``linalg`` only."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("vecdot", vecdot, x, y, dim=dim)
    return (x * y).sum(dim)


# ---------------------------------------------------------------------------------------------------- triangles
_tril = defop("tril", lambda a, k: mx.tril(a, k), vjp=lambda g, ans, x, k: _tril(g, k), save=None)
_triu = defop("triu", lambda a, k: mx.triu(a, k), vjp=lambda g, ans, x, k: _triu(g, k), save=None)


@declare(method=True, inplace=True)
def tril(input, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims: entries on and below the ``diagonal``-th diagonal (0 is the main
    diagonal, positive counts up), the rest zero."""
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return _tril(input, diagonal)


@declare(method=True, inplace=True)
def triu(input, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims: entries on and above the ``diagonal``-th diagonal, the rest zero."""
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return _triu(input, diagonal)


# ---------------------------------------------------------------------------------------------------- diagonals
# diagonal reads a diagonal over two dims (as a new last dim), diagonal_scatter writes one; each one's VJP is the
# other, so they are differentiable to any order. diag_embed writes into zeros.
def _diagonal_put(base, v, offset, d1, d2):
    """``base`` with its ``offset`` diagonal over dims d1, d2 replaced by v's last dim."""
    m, n = base.shape[d1], base.shape[d2]
    length = max(0, min(m, n - offset) if offset >= 0 else min(m + offset, n))
    key = [_FULL] * base.ndim
    key[d1] = mx.arange(length) + max(-offset, 0)
    key[d2] = mx.arange(length) + max(offset, 0)
    # the index arrays' dim lands where the two dims were if they are adjacent, else first (NumPy's rule)
    out = mx.array(base)
    out[tuple(key)] = mx.moveaxis(v, -1, min(d1, d2) if abs(d1 - d2) == 1 else 0)
    return out


_diagonal = defop("diagonal", lambda a, offset, d1, d2: mx.diagonal(a, offset, d1, d2), save=None,
                  vjp=lambda g, ans, x, offset, d1, d2: _diagonal_scatter(zeros_for(x.shape, g), g, offset, d1, d2))
_diagonal_scatter = defop(
    "diagonal_scatter", _diagonal_put, save=None,
    vjp=(lambda g, ans, base, v, offset, d1, d2: _diagonal_scatter(g, zeros_for(v.shape, g), offset, d1, d2),
         lambda g, ans, base, v, offset, d1, d2: _diagonal(g, offset, d1, d2)))
_diag_embed = defop("diag_embed", lambda a, shape, offset, d1, d2: _diagonal_put(mx.zeros(shape, a.dtype), a, offset,
                                                                                 d1, d2),
                    vjp=lambda g, ans, x, shape, offset, d1, d2: _diagonal(g, offset, d1, d2), save=None)


def _diag_dims(dim1: int, dim2: int, ndim: int) -> tuple:
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


@declare(method=True)
def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The ``offset`` diagonal over dims ``dim1``, ``dim2`` (``input[i, i + offset]``), as a new last dim; a view:
    writing into it writes into ``input``."""
    d1, d2 = _diag_dims(dim1, dim2, input.ndim)
    return _diagonal(input, offset, d1, d2)._set_view_of(
        input, lambda b: _diagonal(b, offset, d1, d2), lambda b, v: _diagonal_scatter(b, v, offset, d1, d2))


@declare(method=True)
@_cpu_route.float64_args
def diagonal_scatter(input, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``input`` with ``diagonal(input, offset, dim1, dim2)`` replaced by ``src`` (a copy)."""
    d1, d2 = _diag_dims(dim1, dim2, input.ndim)
    expected = mx.diagonal(data(input), offset, d1, d2).shape  # MLX infers the shape without computing
    if tuple(src.shape) != expected:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(expected)}")
    return _diagonal_scatter(input, src, offset, d1, d2)


@declare(method=True)
def diag_embed(input, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices (over dims ``dim1``, ``dim2`` of the result) whose ``offset`` diagonal holds input's last dim."""
    n = input.ndim + 1
    d1, d2 = _diag_dims(dim1, dim2, n)
    size = (input.shape[-1] if input.ndim else 1) + abs(offset)
    shape = list(input.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, size)
    return _diag_embed(input, tuple(shape), offset, d1, d2)


@declare(method=True)
def diag(input, diagonal: int = 0) -> Tensor:
    """A 1-D input becomes a square matrix with it on the ``diagonal``-th diagonal; a 2-D input gives that diagonal
    (a copy)."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return _diagonal(input, diagonal, 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


_trace = defop("trace", mx.trace, save=None,
               vjp=lambda g, ans, x: g * _wrap(mx.eye(x.shape[0], x.shape[1], dtype=g.dtype)))


@declare(method=True)
def trace(input) -> Tensor:
    """The sum of the main diagonal of a 2-D matrix."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return _trace(input)


# ---------------------------------------------------------------------------------------------------- block_diag
def _block_keys(shapes: list) -> list:
    keys, r, c = [], 0, 0
    for m, n in shapes:
        keys.append((slice(r, r + m), slice(c, c + n)))
        r, c = r + m, c + n
    return keys


def _block_diag_fwd(*arrays):
    shapes = [a.shape for a in arrays]
    out = mx.zeros((sum(s[0] for s in shapes), sum(s[1] for s in shapes)), mx.result_type(*arrays))
    for a, key in zip(arrays, _block_keys(shapes)):
        out[key] = a
    return out


_block_diag = defop("block_diag", _block_diag_fwd, save=None,
                    vjp_all=lambda g, ans, *xs: [take_slices(g, k) for k in _block_keys([x.shape for x in xs])])


def block_diag(*tensors) -> Tensor:
    """The tensors as blocks along the diagonal of one matrix (0-d counts as 1x1, 1-d of length n as 1xn)."""
    if not tensors:
        return _wrap(mx.zeros((1, 0)))
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
    return _block_diag(*(t if t.ndim == 2 else t.reshape(1, -1) for t in tensors))


def cartesian_prod(*tensors) -> Tensor:
    """All combinations of one element from each 1-D tensor, one per row (itertools.product's order)."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    sizes = [t.shape[0] for t in tensors]
    n = len(tensors)
    grids = [t.reshape([-1 if j == i else 1 for j in range(n)]).expand(sizes).reshape(-1)
             for i, t in enumerate(tensors)]
    return stack(grids, 1)


# ---------------------------------------------------------------------------------------------------- methods
attach("__matmul__", matmul)
attach("__rmatmul__", lambda self, other: matmul(other, self))
