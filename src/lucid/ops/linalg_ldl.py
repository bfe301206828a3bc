"""``torch.linalg.ldl_factor``, ``ldl_factor_ex`` and ``ldl_solve``: A = L D L^T of a symmetric matrix with LAPACK's
Bunch-Kaufman pivoting (``sytrf`` with the lower triangle), in LAPACK's and PyTorch's compact form: D's 1x1 and 2x2
blocks and L's multipliers in the lower triangle of ``LD`` (the upper triangle zero), and ``pivots`` (1-based; a
2x2 block's two entries are both -p, where p is the row swapped with the block's second row).

MLX has no ``sytrf``, so the factorization is computed here, step by step as LAPACK's unblocked ``dsytf2`` does
(the same pivot tests with alpha = (1 + sqrt(17)) / 8, the same updates in the same order of rounding). Which
pivot a step takes depends on the values, which lucid does not read inside an op: each matrix of a batch makes its
choices lazily, with masks, and a step that is the second column of a 2x2 block is skipped by that matrix alone.
The working matrix is kept symmetric in full, so LAPACK's row and column interchanges of the trailing block are
one symmetric permutation (gathers with computed, always in-range indices).

``ldl_solve`` replays LAPACK's ``sytrs`` the same way. PyTorch has no derivative for either; neither has lucid.
"""
from __future__ import annotations

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

import math
from collections import namedtuple

import mlx.core as mx

from .. import _checks, _cpu_route
from .._tensor import Tensor, _wrap
from . import decomp_grads as _g
from .decomp import _matrices, _same_dtype
from .linalg_lu import LinAlgError, _batch_prefix, _raise_later

linalg_ldl_factor = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _col(w, j):
    return w[..., :, j]  # (..., n)


def _swap_perm(n: int, a, b) -> mx.array:
    """The permutation (..., n) exchanging a and b (per matrix, (...,) int arrays)."""
    idx = mx.arange(n, dtype=mx.int32)
    a, b = mx.expand_dims(a, -1), mx.expand_dims(b, -1)
    return mx.where(idx == a, b, mx.where(idx == b, a, idx))


def _permute_sym(w, perm):
    """P^T W P for the permutation ``perm``: rows and columns gathered."""
    w = mx.take_along_axis(w, mx.expand_dims(perm, -1), axis=-2)
    return mx.take_along_axis(w, mx.expand_dims(perm, -2), axis=-1)


def _factor(a: mx.array):
    """(LD, 1-based pivots, info) of a batch of symmetric matrices (only the lower triangles are read)."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    w = mx.tril(a) + mx.swapaxes(mx.tril(a, -1), -1, -2)  # the symmetric working matrix
    ld = mx.zeros_like(a)
    rows = mx.arange(n, dtype=mx.int32)
    skip = mx.zeros(batch, mx.bool_)  # this step is the second column of a 2x2 block
    info = mx.zeros(batch, mx.int32)
    pivots = []
    for k in range(n):
        active = ~skip
        below = rows > k
        col = mx.abs(_col(w, k))
        absakk = col[..., k]
        colmax = mx.max(mx.where(below, col, -1.0), axis=-1) if k < n - 1 else mx.zeros(batch, a.dtype)
        colmax = mx.maximum(colmax, 0)
        imax = (mx.argmax(mx.where(below, col, -1.0), axis=-1) if k < n - 1 else mx.full(batch, k)).astype(mx.int32)
        zero = (mx.maximum(absakk, colmax) == 0) | mx.isnan(absakk)
        # the largest off-diagonal magnitude in row imax of the trailing block
        row = mx.abs(mx.take_along_axis(w, imax.reshape(*batch, 1, 1), axis=-2)[..., 0, :])
        rowmax = mx.max(mx.where((rows >= k) & (rows != mx.expand_dims(imax, -1)), row, 0), axis=-1)
        wii = mx.abs(mx.take_along_axis(_diag(w), mx.expand_dims(imax, -1), axis=-1)[..., 0])
        one_no_swap = zero | (absakk >= _ALPHA * colmax) | (absakk >= _ALPHA * colmax * (colmax / rowmax))
        one_swap = ~one_no_swap & (wii >= _ALPHA * rowmax)
        two = ~one_no_swap & ~one_swap & (k < n - 1) & active
        kp = mx.where(one_no_swap, k, imax)
        kk = mx.where(two, k + 1, k)
        w_swapped = _permute_sym(w, _swap_perm(n, kk, kp))
        w1 = _update_one(w_swapped, k, n)
        w2 = _update_two(w_swapped, k, n) if k < n - 1 else w1
        new = mx.where(mx.expand_dims(two, (-2, -1)), w2, mx.where(mx.expand_dims(zero, (-2, -1)), w, w1))
        w = mx.where(mx.expand_dims(active, (-2, -1)), new, w)
        # the finished columns: k (and k + 1 for a 2x2 block), rows from the diagonal down
        done_k = mx.where(rows >= k, _col(w, k), 0)
        ld = _set_col(ld, k, mx.where(mx.expand_dims(active, -1), done_k, _col(ld, k)))
        if k < n - 1:
            done_k1 = mx.where(rows >= k + 1, _col(w, k + 1), 0)
            ld = _set_col(ld, k + 1, mx.where(mx.expand_dims(two, -1), done_k1, _col(ld, k + 1)))
        info = mx.where(active & zero & (info == 0), k + 1, info)
        p = mx.where(two, -(kp + 1), kp + 1)
        pivots.append(mx.where(active, p, pivots[-1] if pivots else p))
        skip = two
    return ld, mx.stack(pivots, -1).astype(mx.int32), info


def _diag(w):
    return mx.diagonal(w, 0, -2, -1)


def _set_col(m, j: int, v):
    return mx.where(mx.arange(m.shape[-1]) == j, mx.expand_dims(v, -1), m)


def _sym_lower(w):
    """W with its upper triangle replaced by its lower one (LAPACK updates only the lower triangle)."""
    return mx.tril(w) + mx.swapaxes(mx.tril(w, -1), -1, -2)


def _update_one(w, k: int, n: int):
    """dsytf2's 1x1 step: the trailing block loses d11 x x^T, column k becomes the multipliers x / d_kk."""
    if k == n - 1:
        return w
    rows = mx.arange(n)
    x = mx.where(rows > k, _col(w, k), 0)
    d11 = 1.0 / w[..., k, k]
    temp = -mx.expand_dims(d11, -1) * x  # dsyr: A(i, j) += x(i) * (alpha x(j))
    trail = (rows > k)[:, None] & (rows > k)[None, :]
    w = mx.where(trail, w + mx.expand_dims(x, -1) * mx.expand_dims(temp, -2), w)
    return _set_col(_sym_lower(w), k, mx.where(rows > k, x * mx.expand_dims(d11, -1), _col(w, k)))


def _update_two(w, k: int, n: int):
    """dsytf2's 2x2 step on columns k, k + 1."""
    rows = mx.arange(n)
    if k >= n - 2:
        return w
    d21 = w[..., k + 1, k]
    d11 = w[..., k + 1, k + 1] / d21
    d22 = w[..., k, k] / d21
    t = 1.0 / (d11 * d22 - 1.0)
    d21 = t / d21
    ak, ak1 = _col(w, k), _col(w, k + 1)
    e = lambda v: mx.expand_dims(v, -1)  # noqa: E731
    wk = e(d21) * (e(d11) * ak - ak1)
    wkp1 = e(d21) * (e(d22) * ak1 - ak)
    trail = (rows > k + 1)[:, None] & (rows > k + 1)[None, :]
    upd = w - mx.expand_dims(ak, -1) * mx.expand_dims(wk, -2) - mx.expand_dims(ak1, -1) * mx.expand_dims(wkp1, -2)
    w = _sym_lower(mx.where(trail, upd, w))
    w = _set_col(w, k, mx.where(rows > k + 1, wk, _col(w, k)))
    return _set_col(w, k + 1, mx.where(rows > k + 1, wkp1, _col(w, k + 1)))


# ---------------------------------------------------------------------------------------------------- public
def _check_hermitian(hermitian) -> None:
    if not isinstance(hermitian, bool):
        raise TypeError(f"ldl_factor(): argument 'hermitian' must be bool, not {type(hermitian).__name__}")


@_cpu_route.float64_args
def ldl_factor_ex(A, *, hermitian: bool = False, check_errors: bool = False) -> linalg_ldl_factor_ex:
    """``(LD, pivots, info)`` of the symmetric (real: also Hermitian) matrices A; info is the 1-based index of
    the first zero block of D (0 if none). ``check_errors``: raise LinAlgError (deferred) where info > 0."""
    _check_hermitian(hermitian)
    A = _matrices(A, "torch.linalg.ldl_factor_ex")
    ld, piv, info = _factor(A.mlx)
    if check_errors:
        _raise_later(info, _not_invertible("torch.linalg.ldl_factor_ex"), "linalg.ldl_factor_ex")
    return linalg_ldl_factor_ex(_wrap(ld), _wrap(piv), _wrap(info))


def _not_invertible(fn: str):
    def error(info):
        b = int((info.reshape(-1) > 0).argmax())
        return LinAlgError(f"{fn}: {_batch_prefix(info, b)}The factorization could not be completed because the "
                           f"input is not invertible (D[{int(info.reshape(-1)[b])}] is zero).")
    return error


def ldl_factor(A, *, hermitian: bool = False) -> linalg_ldl_factor:
    """``(LD, pivots)`` of ``ldl_factor_ex``; a zero block of D raises LinAlgError (deferred)."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    _raise_later(info.mlx, _not_invertible("torch.linalg.ldl_factor"), "linalg.ldl_factor")
    return linalg_ldl_factor(LD, pivots)


@_cpu_route.float64_args
def ldl_solve(LD, pivots, B, *, hermitian: bool = False) -> Tensor:
    """X with A X = B from A's ``ldl_factor`` (``sytrs``). Batch dims must match LD's (broadcast)."""
    _check_hermitian(hermitian)
    LD = _matrices(LD, "torch.linalg.ldl_solve")
    _same_dtype(LD, B, "torch.linalg.ldl_solve")
    if B.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_solve: The input tensor B must have at least 2 dimensions.")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"torch.linalg.ldl_solve: Incompatible shapes of A and B for the equation AX = B ({n}x{n} "
                           f"and {B.shape[-2]}x{B.shape[-1]})")
    if not isinstance(pivots, Tensor) or pivots.dtype != mx.int32:
        raise RuntimeError("torch.linalg.ldl_solve: Expected LD and pivots to be int32 pivots")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {tuple(pivots.shape)} instead")
    a, b = _g.broadcast_batch(LD.mlx, B.mlx)
    piv = mx.broadcast_to(pivots.mlx, a.shape[:-1])
    # |pivot| - 1 must index a row: out-of-range entries are made safe and reported (deferred)
    swap = _checks.checked_index(mx.abs(piv) - 1, n, lambda _: RuntimeError(
        "torch.linalg.ldl_solve: pivots must be in the range [-n, n] without 0"), "linalg.ldl_solve")
    return _wrap(_solve(a, piv, swap, b))


def _solve(a, piv, swap, b):
    n = a.shape[-1]
    rows = mx.arange(n)
    e = lambda v: mx.expand_dims(v, -1)  # noqa: E731
    # which steps open a 2x2 block (the first of two negative pivots), read from the pivots lazily
    first = []
    for k in range(n):
        neg = piv[..., k] < 0
        first.append(neg & ~(first[-1] if first else mx.zeros_like(neg)) & (k < n - 1))
    second = [mx.zeros_like(first[0])] + first[:-1]

    def row(m, i):
        return m[..., i, :]

    def set_row(m, i: int, v):
        return mx.where(e(rows == i), mx.expand_dims(v, -2), m)

    def swapped(m, i: int, p):
        return mx.take_along_axis(m, e(_swap_perm(n, mx.full(p.shape, i, mx.int32), p)), axis=-2)

    # L D Y = B
    for k in range(n):
        one = ~first[k] & ~second[k]
        two = first[k]
        # 1x1: swap k <-> p, eliminate below with column k, divide by d_kk
        b1 = swapped(b, k, swap[..., k])
        b1 = mx.where(e(rows > k), b1 - e(a[..., :, k]) * mx.expand_dims(row(b1, k), -2), b1)
        b1 = set_row(b1, k, row(b1, k) * (1.0 / e(a[..., k, k])))  # dscal by the reciprocal, as LAPACK
        if k < n - 1:  # 2x2: swap k + 1 <-> p, eliminate below with columns k, k + 1, solve the block
            b2 = swapped(b, k + 1, swap[..., k])
            lower = e(rows > k + 1)
            b2 = mx.where(lower, b2 - e(a[..., :, k]) * mx.expand_dims(row(b2, k), -2), b2)
            b2 = mx.where(lower, b2 - e(a[..., :, k + 1]) * mx.expand_dims(row(b2, k + 1), -2), b2)
            akm1k = e(a[..., k + 1, k])
            akm1 = e(a[..., k, k]) / akm1k
            ak = e(a[..., k + 1, k + 1]) / akm1k
            denom = akm1 * ak - 1.0
            bkm1, bk = row(b2, k) / akm1k, row(b2, k + 1) / akm1k
            b2 = set_row(set_row(b2, k, (ak * bkm1 - bk) / denom), k + 1, (akm1 * bk - bkm1) / denom)
        else:
            b2 = b1
        b = mx.where(e(e(two)), b2, mx.where(e(e(one)), b1, b))
    # L^T X = Y
    for k in reversed(range(n)):
        one = ~first[k] & ~second[k]
        two = second[k]  # the block's last column: its rows k - 1 and k are finished together
        tail = e(rows > k)
        dot_k = mx.sum(mx.where(tail, e(a[..., :, k]) * b, 0), axis=-2)
        b1 = swapped(set_row(b, k, row(b, k) - dot_k), k, swap[..., k])
        if k > 0:
            dot_km1 = mx.sum(mx.where(tail, e(a[..., :, k - 1]) * b, 0), axis=-2)
            b2 = set_row(set_row(b, k, row(b, k) - dot_k), k - 1, row(b, k - 1) - dot_km1)
            b2 = swapped(b2, k, swap[..., k])
        else:
            b2 = b1
        b = mx.where(e(e(two)), b2, mx.where(e(e(one)), b1, b))
    return b
