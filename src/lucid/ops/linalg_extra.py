"""More of ``torch.linalg``: ``matrix_exp``, ``cond``, ``tensorinv``, ``tensorsolve``, ``vander``, ``cross``,
``diagonal``, ``eig``/``eigvals``; and PyTorch's top-level ``cholesky_inverse`` and ``triangular_solve``.

``matrix_exp`` is scaling and squaring with the degree-13 Pade approximant (Higham 2005): A / 2^s has 1-norm at most
theta_13 = 5.37, and its approximant is squared s times. s depends on A's values, which lucid does not read inside an
op, so each matrix of the batch computes its own s lazily and the squarings are masked: up to ``_MAX_SQUARINGS``
of them, each kept only where it is one of that matrix's s (enough for 1-norms up to about 9e7 in float32 and 6e12
in float64; beyond that float32's exponential overflows unless A is far from normal). Its derivative is the Frechet
derivative, read off the exponential of a block matrix (Mathias 1996):

    exp([[A^T, G], [0, A^T]]) = [[exp(A^T), L(A^T, G)], [0, exp(A^T)]],   gA = L(A^T, G)

computed by ``matrix_exp`` itself, so every higher derivative follows.

``eig``/``eigvals`` are MLX's LAPACK ``geev`` (eigenvectors of unit norm, as PyTorch's). MLX has no complex128, so
their results are complex64 for float64 inputs too (PyTorch: complex128). Their derivative is PyTorch's
(``linalg_eig_backward``), computed on MLX arrays with complex solves as real block systems (MLX's solvers are
real): first derivatives only, in single precision.
"""
from __future__ import annotations

__all__ = ["matrix_exp", "cond", "tensorinv", "tensorsolve", "vander", "linalg_cross", "linalg_diagonal", "eig",
           "eigvals", "cholesky_inverse", "triangular_solve"]

import math
from collections import namedtuple

import mlx.core as mx

from .. import _checks, _cpu_route, _threads
from .._tensor import Tensor, _wrap
from . import decomp_grads as _g
from ._core import declare, defop, expect_tensor
from .decomp import _matrices, cholesky_solve, inv, matrix_norm, solve, solve_triangular, svdvals
from .linalg import cross, diagonal
from .linalg_lu import LinAlgError
from .shape import cat, stack

_CPU = mx.cpu

linalg_eig = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
triangular_solve_result = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


# ---------------------------------------------------------------------------------------------------- matrix_exp
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152
_MAX_SQUARINGS = {mx.float32: 24, mx.float64: 40}


def _pade13(a: mx.array) -> mx.array:
    """The [13/13] Pade approximant of exp(a), for 1-norms up to theta_13."""
    b = _PADE13
    eye = mx.broadcast_to(mx.eye(a.shape[-1], dtype=a.dtype), a.shape)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    return mx.linalg.solve(v - u, v + u, stream=_CPU)


def _matrix_exp_fwd(a):
    if a.shape[-1] == 0:
        return a
    norm1 = mx.max(mx.sum(mx.abs(a), axis=-2), axis=-1)
    most = _MAX_SQUARINGS[a.dtype]
    s = mx.clip(mx.ceil(mx.log2(norm1 / _THETA13)), 0, most)
    s = mx.where(mx.isfinite(s), s, most)  # a zero matrix: log2(0) = -inf -> clipped to 0; NaN/inf: the most
    s = mx.expand_dims(s, (-2, -1))
    r = _pade13(a * mx.power(mx.array(2.0, a.dtype), -s))
    for i in range(most):
        r = mx.where(i < s, r @ r, r)
    return r


def _matrix_exp_vjp(g, ans, A):
    n = A.shape[-1]
    At = _g.mT(A)
    top = cat([At, g], -1)
    bottom = cat([A.new_zeros(A.shape), At], -1)
    return _matrix_exp(cat([top, bottom], -2))[..., :n, n:]


_matrix_exp = defop("linalg_matrix_exp", _matrix_exp_fwd, vjp=_matrix_exp_vjp, save="args")


@_cpu_route.float64_args
def matrix_exp(A) -> Tensor:
    """The matrix exponential exp(A) = sum_k A^k / k! of each square matrix."""
    return _matrix_exp(_matrices(A, "linalg.matrix_exp"))


# ---------------------------------------------------------------------------------------------------- cond
_COND_ORDS = (None, "fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf)


@_cpu_route.float64_args
def cond(A, p=None) -> Tensor:
    """The condition number of each matrix in the ``p`` norm: sigma_max / sigma_min for None or 2 (any m x n),
    sigma_min / sigma_max for -2, else norm(A, p) norm(A^-1, p) (square A; inf where A is singular)."""
    if p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if p in (None, 2, -2):
        s = svdvals(_matrices(A, "linalg.cond", square=False))
        big, small = s[..., 0], s[..., -1]
        return small / big if p == -2 else big / small
    A = _matrices(A, f"linalg.cond(ord={p})")
    value = matrix_norm(A, p) * matrix_norm(inv(A), p)
    return value.masked_fill(_wrap(_g.singular(A.mlx)), math.inf)


# ---------------------------------------------------------------------------------------------------- tensors
def _prod(shape) -> int:
    return math.prod(shape)


def tensorinv(A, ind: int = 2) -> Tensor:
    """The inverse of A for ``tensordot(A, ., ind)``: A read as a (prod(shape[:ind]) x prod(shape[ind:])) square
    matrix; the result has shape shape[ind:] + shape[:ind]."""
    expect_tensor("linalg_tensorinv", "input", 1, A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if _prod(rows) != _prod(cols):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {_prod(cols)} != {_prod(rows)}")
    return inv(A.reshape(_prod(rows), _prod(cols))).reshape(cols + rows)


def tensorsolve(A, B, dims=None) -> Tensor:
    """X with ``tensordot(A, X, X.ndim) = B``: X has shape A.shape[B.ndim:] (``dims``: dims of A moved to the end
    first)."""
    expect_tensor("linalg_tensorsolve", "input", 1, A)
    expect_tensor("linalg_tensorsolve", "other", 2, B)
    if dims is not None:
        moved = [d % A.ndim for d in dims]
        A = A.permute(*[d for d in range(A.ndim) if d not in moved], *moved)
    rows, cols = tuple(A.shape[:B.ndim]), tuple(A.shape[B.ndim:])
    if _prod(rows) != _prod(cols):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {_prod(cols)} != {_prod(rows)}")
    return solve(A.reshape(_prod(rows), _prod(cols)), B.reshape(_prod(rows))).reshape(cols)


def vander(x, *, N=None) -> Tensor:
    """The Vandermonde matrices of the vectors x (..., n): columns x^0, x^1, ..., x^(N-1) (N defaults to n)."""
    expect_tensor("linalg_vander", "x", 1, x)
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least 1 dimension.")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = [x.new_ones(x.shape), x]
    while len(powers) < n:
        powers.append(powers[-1] * x)
    return stack(powers[:n], -1)


def linalg_cross(input, other, *, dim: int = -1) -> Tensor:
    """torch.linalg.cross: the cross product of 3-vectors along ``dim`` (default the last); other dims broadcast."""
    expect_tensor("linalg_cross", "input", 1, input)
    expect_tensor("linalg_cross", "other", 2, other)
    return cross(input, other, dim)


def linalg_diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """torch.linalg.diagonal: ``diagonal`` over the last two dims by default (a view)."""
    expect_tensor("linalg_diagonal", "A", 1, A)
    return diagonal(A, offset, dim1, dim2)


linalg_cross.__name__, linalg_diagonal.__name__ = "cross", "diagonal"


# ---------------------------------------------------------------------------------------------------- eig
def _mH(a: mx.array) -> mx.array:
    return mx.conj(mx.swapaxes(a, -1, -2))


def _complex_solve(a: mx.array, b: mx.array) -> mx.array:
    """X with A X = B for complex A (MLX's solvers are real): the real system [[Ar, -Ai], [Ai, Ar]]."""
    n = a.shape[-1]
    ar, ai, br, bi = mx.real(a), mx.imag(a), mx.real(b), mx.imag(b)
    big = mx.concatenate([mx.concatenate([ar, -ai], -1), mx.concatenate([ai, ar], -1)], -2)
    x = mx.linalg.solve(big, mx.concatenate([br, bi], -2), stream=_CPU)
    return x[..., :n, :] + 1j * x[..., n:, :]


def _eig_grad(gL, gV, L: mx.array, V: mx.array, dtype) -> Tensor:
    """PyTorch's linalg_eig_backward: gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H gV))) / conj(E)) V^H,
    E_ij = L_j - L_i off the diagonal; the real part for a real A."""
    n = V.shape[-1]
    eye = mx.eye(n, dtype=mx.bool_)
    inner = mx.zeros_like(V)
    if gV is not None:
        vhgv = _mH(V) @ gV
        re_diag = mx.real(mx.diagonal(vhgv, 0, -2, -1))
        inner = vhgv - _mH(V) @ (V * mx.expand_dims(re_diag, -2).astype(V.dtype))
        econj = mx.conj(mx.expand_dims(L, -2) - mx.expand_dims(L, -1))
        inner = mx.where(eye, 0, inner / mx.where(eye, 1, econj))
    if gL is not None:
        inner = inner + mx.expand_dims(gL, -1) * eye.astype(V.dtype)
    return _wrap(mx.real(_complex_solve(_mH(V), inner @ _mH(V))).astype(dtype))


def _eig_formula(grads, L, V, dtype):
    gL, gV = (None if g is None else g.mlx.astype(mx.complex64) for g in grads)
    return _eig_grad(gL, gV, L.mlx, V.mlx, dtype)


def _eigvals_formula(grads, L, V, dtype):
    return _eig_grad(grads[0].mlx.astype(mx.complex64), None, L.mlx, V, dtype)


_EigNode = _g._factor_node("LinalgEigBackward0", _eig_formula)
_EigvalsNode = _g._factor_node("LinalgEigBackward0", _eigvals_formula)


@_cpu_route.float64_args
def eig(A) -> linalg_eig:
    """``(eigenvalues, eigenvectors)`` (complex64) of a square real matrix: A V = V diag(L), columns of V of unit
    norm. Differentiable (first derivatives; see the module docstring)."""
    A = _matrices(A, "linalg.eig")
    w, v = mx.linalg.eig(A.mlx, stream=_CPU)
    return linalg_eig(*_g.factor_outputs(_EigNode, A, [w, v], dtype=A.dtype))


@_cpu_route.float64_args
def eigvals(A) -> Tensor:
    """The (complex64) eigenvalues of each square real matrix; differentiable (first derivatives)."""
    A = _matrices(A, "linalg.eigvals")
    w, v = mx.linalg.eig(A.mlx, stream=_CPU)
    (out,) = _g.factor_outputs(_EigvalsNode, A, [w], V=v, dtype=A.dtype)
    return out


# ---------------------------------------------------------------------------------------------------- legacy forms
@_cpu_route.float64_args
def cholesky_inverse(L, upper: bool = False) -> Tensor:
    """The inverse of A = L L^T from its Cholesky factor L (``upper``: A = U^T U). A zero on L's diagonal raises
    LinAlgError (deferred: at the next evaluation)."""
    L = _matrices(L, "cholesky_inverse")
    d = mx.diagonal(L.mlx, 0, -2, -1) == 0
    info = _g.lapack_info(d)
    _checks.check_later(mx.any(d), lambda _: LinAlgError(
        f"cholesky_inverse: The diagonal element {int(_threads.to_numpy(info, copy=None).max())} is zero, the "
        "inversion could not be completed because the input matrix is singular."), "cholesky_inverse")
    return cholesky_solve(_g._eye(L, L.shape[-1]).expand(*L.shape), L, upper)


def triangular_solve(b, A, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> triangular_solve_result:
    """torch.triangular_solve: ``(X, A.clone())`` with A X = b (``transpose``: A^T X = b) for triangular A."""
    expect_tensor("triangular_solve", "input", 1, b)
    expect_tensor("triangular_solve", "A", 2, A)
    A2 = _g.mT(A) if transpose else A
    X = solve_triangular(A2, b, upper=upper != transpose, unitriangular=unitriangular)
    return triangular_solve_result(X, A.clone())


declare(matrix_exp, method=True)
declare(cholesky_inverse, method=True)
declare(triangular_solve, method=True)
