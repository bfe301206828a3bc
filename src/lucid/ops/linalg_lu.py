"""The LU family of ``torch.linalg`` (``lu_factor``, ``lu_factor_ex``, ``lu``, ``lu_solve``, ``solve_ex``), PyTorch's
top-level forms (``torch.lu``, ``lu_solve``, ``lu_unpack``) and ``LinAlgError``.

The factorization is MLX's LAPACK ``getrf`` (partial pivoting, PA = LU, for any m x n). LAPACK's pivots are a
sequence of row swaps (row i was swapped with row pivots[i], 1-based as PyTorch reports them); ``_permutation``
replays them lazily, one masked swap per pivot, so nothing is read on the host.

One backward node serves ``lu`` and ``lu_factor`` (the packed LU is L - I + U). With A = P L U, k = min(m, n), and
gL, gU the incoming gradients (derived from dL = L X, dU = Y U with X strictly lower, Y upper):

    square   gA = P L^-T (tril_-1(L^T gL) + triu(gU U^T)) U^-T
    wide     U = [U1 U2]:    phi = tril_-1(L^T gL - gU2 U2^T) + triu(gU1 U1^T),   gA = P L^-T [phi U1^-T, gU2]
    tall     L = [L1; L2]:   phi = tril_-1(L1^T gL1) + triu(gU U^T - L2^T gL2),  gA = P [L1^-T phi; gL2] U^-T

written with lucid's differentiable triangular solves, so it is differentiable again. A zero pivot (a singular
matrix) gives NaN gradients, as PyTorch's (which divides by it too).

Errors PyTorch raises on a value (``lu_factor`` of a singular matrix, ``check_errors=True``, pivots out of range)
are deferred checks (``lucid._checks``): they raise at the next point lucid evaluates anyway (printing, ``.item()``,
``backward()``, an optimizer step), naming the user's line, and the op itself never waits for its values.
"""
from __future__ import annotations

__all__ = ["LinAlgError", "lu_factor", "lu_factor_ex", "lu", "lu_solve", "solve_ex", "lu_unpack", "torch_lu",
           "torch_lu_solve"]

from collections import namedtuple

import mlx.core as mx

from .. import _checks, _cpu_route, _threads
from .._tensor import Tensor, _wrap
from . import decomp_grads as _g
from ._core import declare
from .decomp import _matrices, _rhs, _same_dtype, solve, solve_triangular
from .linalg import matmul
from .shape import cat

_CPU = mx.cpu

linalg_lu_factor = namedtuple("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lu = namedtuple("linalg_lu", ["P", "L", "U"])
lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])
linalg_solve_ex = namedtuple("linalg_solve_ex", ["result", "info"])


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input's values (a singular matrix, one that is not positive
    definite): PyTorch's ``torch.linalg.LinAlgError``, a ``RuntimeError``."""


LinAlgError.__module__ = "lucid.linalg"


# ---------------------------------------------------------------------------------------------------- pivots
def _permutation(pivots0: mx.array, m: int) -> mx.array:
    """``perm`` (..., m) with (P^T A)[i] = A[perm[i]], from LAPACK's 0-based swap sequence (..., k)."""
    idx = mx.arange(m, dtype=mx.int32)
    perm = mx.broadcast_to(idx, pivots0.shape[:-1] + (m,))
    for i in range(pivots0.shape[-1]):
        p = pivots0[..., i:i + 1]
        here, there = perm[..., i:i + 1], mx.take_along_axis(perm, p, axis=-1)
        perm = mx.where(idx == i, there, mx.where(idx == p, here, perm))
    return perm


def _permutation_matrix(perm: mx.array, dtype) -> mx.array:
    """P with A = P (P^T A): P[perm[j], j] = 1."""
    m = perm.shape[-1]
    return (mx.expand_dims(mx.arange(m, dtype=mx.int32), -1) == mx.expand_dims(perm, -2)).astype(dtype)


def _checked_pivots(pivots, m: int, fn: str, message: str) -> mx.array:
    """The 0-based pivots, range-checked (now if known, else deferred: MLX never sees one out of range)."""
    if not isinstance(pivots, Tensor):
        raise TypeError(f"{fn}(): argument 'pivots' must be Tensor, not {type(pivots).__name__}")
    if pivots.dtype != mx.int32:
        raise RuntimeError(f"{fn}: pivots should be a Tensor of scalar type torch.int32")
    piv = pivots.mlx - 1
    if _checks.is_known(pivots.mlx):  # host data: checked now
        _checks.mark_known(piv)
    return _checks.checked_index(piv, m, lambda _: RuntimeError(message), fn)


# ---------------------------------------------------------------------------------------------------- the factor
def _lu_grad(P: Tensor, L: Tensor, U: Tensor, gL, gU) -> Tensor:
    """gA for A = P L U (see the module docstring); None gradients count as zeros."""
    m, n = L.shape[-2], U.shape[-1]
    gL = L.new_zeros(L.shape) if gL is None else gL
    gU = U.new_zeros(U.shape) if gU is None else gU

    def left_inv_t(Lk, M):  # Lk^-T M (Lk unit lower triangular)
        return solve_triangular(_g.mT(Lk), M, upper=True, unitriangular=True)

    def right_inv_t(M, Uk):  # M Uk^-T
        return solve_triangular(_g.mT(Uk), M, upper=False, left=False)

    if m == n:
        phi = _g.triangle(matmul(_g.mT(L), gL), False, -1) + _g.triangle(matmul(gU, _g.mT(U)), True)
        return matmul(P, right_inv_t(left_inv_t(L, phi), U))
    if m < n:
        U1, U2, gU1, gU2 = U[..., :m], U[..., m:], gU[..., :m], gU[..., m:]
        phi = (_g.triangle(matmul(_g.mT(L), gL) - matmul(gU2, _g.mT(U2)), False, -1)
               + _g.triangle(matmul(gU1, _g.mT(U1)), True))
        return matmul(P, cat([left_inv_t(L, right_inv_t(phi, U1)), left_inv_t(L, gU2)], -1))
    L1, L2, gL1, gL2 = L[..., :n, :], L[..., n:, :], gL[..., :n, :], gL[..., n:, :]
    phi = (_g.triangle(matmul(_g.mT(L1), gL1), False, -1)
           + _g.triangle(matmul(gU, _g.mT(U)) - matmul(_g.mT(L2), gL2), True))
    return matmul(P, cat([right_inv_t(left_inv_t(L1, phi), U), right_inv_t(gL2, U)], -2))


def _split(LU: Tensor, k: int) -> tuple:
    """(L, U) of a packed m x n factor: L m x k unit lower, U k x n upper."""
    L = _g.triangle(LU[..., :, :k], False, -1) + _wrap(mx.eye(LU.shape[-2], k, dtype=LU.dtype))
    return L, _g.triangle(LU[..., :k, :], True)


def _lu_formula(grads, L, U, P):
    return _lu_grad(P, L, U, grads[0], grads[1])


def _lu_factor_formula(grads, LU, P):
    k = min(LU.shape[-2:])
    L, U = _split(LU, k)
    g = grads[0]
    gL, gU = (None, None) if g is None else _split_grad(g, k)
    return _lu_grad(P, L, U, gL, gU)


def _split_grad(g: Tensor, k: int) -> tuple:
    return _g.triangle(g[..., :, :k], False, -1), _g.triangle(g[..., :k, :], True)


_LuNode = _g._factor_node("LinalgLuBackward0", _lu_formula)
_LuFactorNode = _g._factor_node("LinalgLuFactorExBackward0", _lu_factor_formula)


def _factor(A: Tensor, pivot: bool, fn: str) -> tuple:
    """(packed LU, 0-based pivots, P as an array) of a checked batch of matrices."""
    if not pivot:
        raise RuntimeError(f"{fn}: LU without pivoting is not implemented on the CPU")
    LU, piv = mx.linalg.lu_factor(A.mlx, stream=_CPU)
    piv = piv.astype(mx.int32)
    return LU, piv, _permutation_matrix(_permutation(piv, A.shape[-2]), A.dtype)


def _info(LU: mx.array) -> mx.array:
    """LAPACK's info: the 1-based index of the first exactly zero pivot U[i, i], 0 if none."""
    return _g.lapack_info(mx.diagonal(LU, 0, -2, -1) == 0)


def _raise_later(info: mx.array, error, fn: str) -> None:
    """A deferred check that raises ``error(info as numpy)`` where info > 0 (see the module docstring)."""
    _checks.check_later(mx.any(info > 0), lambda _: error(_threads.to_numpy(info, copy=None)), fn)


def _batch_prefix(info, i: int) -> str:
    """PyTorch's "(Batch element b): " for the first failed matrix of a batch."""
    if info.ndim == 0:
        return ""
    return f"(Batch element {int(i)}): "


def _zero_pivot_error(fn: str):
    def error(info):
        flat = info.reshape(-1)
        b = int((flat > 0).argmax())
        i = int(flat[b])
        return RuntimeError(f"{fn}: {_batch_prefix(info, b)}U[{i},{i}] is zero and using it on lu_solve would "
                            "result in a division by zero. If you still want to perform the factorization, consider "
                            "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return error


def _singular_error(fn: str):
    def error(info):
        b = int((info.reshape(-1) > 0).argmax())
        return LinAlgError(f"{fn}: {_batch_prefix(info, b)}The solver failed because the input matrix is singular.")
    return error


@_cpu_route.float64_args
def lu_factor_ex(A, *, pivot: bool = True, check_errors: bool = False) -> linalg_lu_factor_ex:
    """``(LU, pivots, info)``: the packed LU factorization with partial pivoting (PA = LU; pivots 1-based, int32),
    and info, the 1-based index of the first zero pivot U[i, i] (0 if none). ``check_errors``: raise (deferred)
    where info > 0."""
    A = _matrices(A, "torch.linalg.lu_factor_ex", square=False)
    LU, piv, P = _factor(A, pivot, "linalg.lu_factor_ex")
    info = _info(LU)
    if check_errors:
        _raise_later(info, _zero_pivot_error("torch.linalg.lu_factor_ex"), "linalg.lu_factor_ex")
    (out,) = _g.factor_outputs(_LuFactorNode, A, [LU], P=_wrap(P))
    return linalg_lu_factor_ex(out, _wrap(piv + 1), _wrap(info))


def lu_factor(A, *, pivot: bool = True) -> linalg_lu_factor:
    """``(LU, pivots)`` of ``lu_factor_ex``; a zero pivot U[i, i] raises PyTorch's RuntimeError (deferred)."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    _raise_later(info.mlx, _zero_pivot_error("torch.linalg.lu_factor"), "linalg.lu_factor")
    return linalg_lu_factor(LU, pivots)


@_cpu_route.float64_args
def lu(A, *, pivot: bool = True) -> linalg_lu:
    """``(P, L, U)`` with A = P L U: P a permutation matrix, L (m x k) unit lower triangular, U (k x n) upper
    triangular, k = min(m, n). Differentiable in L and U."""
    A = _matrices(A, "linalg.lu", square=False)
    LU, _, P = _factor(A, pivot, "linalg.lu")
    k = min(A.shape[-2:])
    L = mx.tril(LU[..., :, :k], -1) + mx.eye(A.shape[-2], k, dtype=A.dtype)
    U = mx.triu(LU[..., :k, :])
    outs = _g.factor_outputs(_LuNode, A, [L, U], P=_wrap(P))
    return linalg_lu(_wrap(P), *outs)


@_cpu_route.float64_args
def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True) -> lu_unpack_result:
    """``(P, L, U)`` from ``lu_factor``'s packed factor and pivots; differentiable in ``LU_data``. Without
    ``unpack_data`` (``unpack_pivots``) L and U (P) are empty."""
    LU = _matrices(LU_data, "torch.lu_unpack", square=False)
    m, n = LU.shape[-2:]
    k = min(m, n)
    if LU_pivots.shape[-1:] != (k,) or tuple(LU_pivots.shape[:-1]) != tuple(LU.shape[:-2]):
        raise RuntimeError(f"torch.lu_unpack: LU_pivots of shape {tuple(LU_pivots.shape)} do not match LU_data of "
                           f"shape {tuple(LU.shape)} (expected the batch shape and min(m, n) = {k} pivots)")
    empty = _wrap(mx.zeros((0,), LU.dtype))
    if unpack_pivots:
        piv = _checked_pivots(LU_pivots, m, "lu_unpack", "pivots passed to lu_unpack must be between 1 and "
                              "LU.size(-2) inclusive.Did you properly pass the result of lu_factor?")
        P = _wrap(_permutation_matrix(_permutation(piv, m), LU.dtype))
    else:
        P = empty
    if not unpack_data:
        return lu_unpack_result(P, empty, empty)
    return lu_unpack_result(P, *_split(LU, k))


# ---------------------------------------------------------------------------------------------------- solving
@_cpu_route.float64_args
def lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """X with A X = B from A's ``lu_factor`` (``adjoint``: A^T X = B; ``left=False``: X A = B). Batch dims
    broadcast; differentiable in LU and B."""
    LU = _matrices(LU, "linalg.lu_solve")
    _same_dtype(LU, B, "linalg.lu_solve")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got "
                           f"pivots with shape {tuple(pivots.shape)} instead")
    piv = _checked_pivots(pivots, n, "linalg.lu_solve", "Pivots given to lu_solve must all be smaller or equal to "
                          "LU.size(-2). Did you properly pass the result of lu_factor?")
    P = _wrap(_permutation_matrix(_permutation(piv, n), LU.dtype))
    if not left:  # X A = B  <=>  A^T X^T = B^T  (and X A^T = B  <=>  A X^T = B^T)
        return _g.mT(_lu_solve_left(LU, P, _g.mT(B), not adjoint))
    return _lu_solve_left(LU, P, B, adjoint)


def _lu_solve_left(LU: Tensor, P: Tensor, B: Tensor, adjoint: bool) -> Tensor:
    if adjoint:  # A^T = U^T L^T P^T: X = P L^-T U^-T B
        Y = solve_triangular(_g.mT(LU), B, upper=False)
        return matmul(P, solve_triangular(_g.mT(LU), Y, upper=True, unitriangular=True))
    Y = solve_triangular(LU, matmul(_g.mT(P), B), upper=False, unitriangular=True)
    return solve_triangular(LU, Y, upper=True)


@_cpu_route.float64_args
def solve_ex(A, B, *, left: bool = True, check_errors: bool = False) -> linalg_solve_ex:
    """``(result, info)``: ``linalg.solve``'s result and LAPACK's info (the 1-based index of the first zero pivot
    of A's LU factorization, 0 if A is invertible; the result is NaN where info > 0). ``check_errors``: raise
    LinAlgError (deferred) where info > 0."""
    A = _matrices(A, "linalg.solve_ex")
    _rhs(A, B, "linalg.solve_ex", left)
    info = _info(mx.linalg.lu_factor(A.mlx, stream=_CPU)[0])
    if check_errors:
        _raise_later(info, _singular_error("torch.linalg.solve_ex"), "linalg.solve_ex")
    return linalg_solve_ex(solve(A, B, left=left), _wrap(info))


# ---------------------------------------------------------------------------------------------------- torch.lu & co.
def torch_lu(A, pivot: bool = True, get_infos: bool = False):
    """torch.lu / Tensor.lu: ``(A_LU, pivots)``, and ``infos`` with ``get_infos`` (a zero pivot then does not
    raise; without it, it raises as ``linalg.lu_factor``)."""
    if get_infos:
        return tuple(lu_factor_ex(A, pivot=pivot))
    return tuple(lu_factor(A, pivot=pivot))


def torch_lu_solve(b, LU_data, LU_pivots) -> Tensor:
    """torch.lu_solve / Tensor.lu_solve: ``linalg.lu_solve(LU_data, LU_pivots, b)``."""
    return lu_solve(LU_data, LU_pivots, b)


torch_lu.__name__ = "lu"
torch_lu_solve.__name__ = "lu_solve"
declare(torch_lu, method="lu")
declare(torch_lu_solve, method="lu_solve")
