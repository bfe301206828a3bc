"""``lucid.linalg``: PyTorch's torch.linalg names, signatures and return structures, on batches of matrices
(leading batch dims) of float32 or float64.

Each function checks its arguments as PyTorch does (with PyTorch's messages), then calls a differentiable
primitive of ``decomp_grads`` or composes lucid ops (matrix_power, cholesky_solve, lstsq, the norms), so every
gradient is differentiable again.

Where PyTorch raises on a value (a singular or non-positive-definite matrix) lucid cannot look at the value without
evaluating, and MLX's own LAPACK errors are unreliable (the same evaluation sometimes raises, sometimes returns
garbage): ``inv``, ``solve``, ``solve_triangular`` of an exactly singular matrix and ``cholesky`` of one that is
not positive definite give NaN, and ``inv_ex``/``cholesky_ex`` report PyTorch's ``info``. ``det``/``slogdet`` of a
singular matrix give 0 / (0, -inf) as in PyTorch; their gradients there are NaN (PyTorch: the adjugate).
"""
from __future__ import annotations

__all__ = ["inv", "inv_ex", "det", "slogdet", "solve", "solve_triangular", "cholesky", "cholesky_ex", "cholesky_solve",
           "qr", "svd", "svdvals", "eigh", "eigvalsh", "pinv", "lstsq", "matrix_norm", "vector_norm", "norm",
           "matrix_power", "matrix_rank", "matmul", "vecdot", "multi_dot"]

import math
from collections import namedtuple

import mlx.core as mx

from .. import _cpu_route
from .._tensor import Tensor, _wrap
from . import decomp_grads as _g
from . import reduce as _reduce
from ._core import declare
from .elementwise import abs
from .linalg import matmul
from .shape import clone, movedim
from ..autograd.grad_mode import state as _gm_state  # lucid.autocast's hook (ops/autocast_policy.py)
from .autocast_policy import POLICY

_CPU = mx.cpu
_NO_KWARGS: dict = {}  # never mutated

linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
linalg_inv_ex = namedtuple("linalg_inv_ex", ["inverse", "info"])
linalg_cholesky_ex = namedtuple("linalg_cholesky_ex", ["L", "info"])
linalg_qr = namedtuple("linalg_qr", ["Q", "R"])
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])
linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])

_TORCH_NAMES = {mx.float16: "Half", mx.bfloat16: "BFloat16", mx.int64: "Long", mx.int32: "Int", mx.int16: "Short",
                mx.int8: "Char", mx.uint8: "Byte", mx.bool_: "Bool", mx.uint16: "UInt16", mx.uint32: "UInt32",
                mx.uint64: "UInt64", mx.float32: "Float", mx.float64: "Double"}


# ---------------------------------------------------------------------------------------------------- checks
def _matrices(A, fn: str, square: bool = True) -> Tensor:
    """A batch of float32/float64 matrices (square ones unless ``square`` is False), or PyTorch's error."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{fn}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if not mx.issubdtype(A.dtype, mx.floating):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{_TORCH_NAMES.get(A.dtype, A.dtype)}")
    if A.dtype in (mx.float16, mx.bfloat16):
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got {_TORCH_NAMES[A.dtype]}")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    return A


def _same_dtype(A: Tensor, B, fn: str) -> None:
    if not isinstance(B, Tensor):
        raise TypeError(f"{fn}(): argument 'B' must be Tensor, not {type(B).__name__}")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of type "
                           f"{_TORCH_NAMES.get(A.dtype)} and B of type {_TORCH_NAMES.get(B.dtype)} instead.")


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    """PyTorch's rule: B is a (batch of) vector(s) if it is 1-D, or has A's shape without the last dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _check_batch(A: Tensor, B: Tensor) -> None:
    """The batch dims (all but the last two) of A and B must broadcast; PyTorch's message if not."""
    ba, bb = tuple(A.shape[:-2]), tuple(B.shape[:-2])
    n = max(len(ba), len(bb))
    ba, bb = (1,) * (n - len(ba)) + ba, (1,) * (n - len(bb)) + bb
    for i, (x, y) in enumerate(zip(ba, bb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")


def _rhs(A: Tensor, B, fn: str, left: bool = True) -> tuple:
    """B as a batch of matrices for AX = B, and whether it was a vector. ``left=False`` (XA = B) reads the rows."""
    _same_dtype(A, B, fn)
    vector = _is_vector_rhs(A, B)
    B2 = B.unsqueeze(-1 if left else -2) if vector else B
    if B2.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    rows = B2.shape[-2] if left else B2.shape[-1]
    if rows != A.shape[-2]:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {eq} ({A.shape[-2]}x"
                           f"{A.shape[-1]} and {B2.shape[-2]}x{B2.shape[-1]})")
    _check_batch(A, B2)
    return B2, vector


# ---------------------------------------------------------------------------------------------------- inverse, solve
@declare(method="inverse")
def inv(A) -> Tensor:
    """The inverse of each square matrix; NaN for an exactly singular one (see ``inv_ex``)."""
    return _g.inv(_matrices(A, "linalg.inv"))


@_cpu_route.float64_args
def inv_ex(A, *, check_errors: bool = False) -> linalg_inv_ex:
    """``(inverse, info)``: info is 0 where A is invertible, else the (1-based) index of the first zero pivot of
    its LU factorization. ``check_errors`` would need the value on the host: not supported."""
    _no_check_errors(check_errors, "linalg.inv_ex")
    A = _matrices(A, "linalg.inv_ex")
    return linalg_inv_ex(_g.inv(A), _wrap(_g.lapack_info(_g.lu_pivots(A.mlx) == 0)))


def _no_check_errors(check_errors: bool, fn: str) -> None:
    if check_errors:
        raise NotImplementedError(f"{fn}: check_errors=True is not supported (lucid does not evaluate inside ops); "
                                  "check info instead")


@_cpu_route.float64_args
def solve(A, B, *, left: bool = True) -> Tensor:
    """X with AX = B (``left=False``: XA = B). B may be a (batch of) vector(s); batch dims broadcast."""
    A = _matrices(A, "linalg.solve")
    B2, vector = _rhs(A, B, "linalg.solve", left)
    if left:
        X = _g.solve(A, B2)
    else:  # XA = B  <=>  A^T X^T = B^T
        X = _g.mT(_g.solve(_g.mT(A), _g.mT(B2)))
    return X.squeeze(-1 if left else -2) if vector else X


@_cpu_route.float64_args
def solve_triangular(A, B, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
    """X with AX = B (``left=False``: XA = B) for triangular A: only its ``upper`` or lower triangle is read (and
    not its diagonal when ``unitriangular``, which takes it as ones)."""
    A = _matrices(A, "linalg.solve_triangular")
    _same_dtype(A, B, "linalg.solve_triangular")
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    if (B.shape[-2] if left else B.shape[-1]) != A.shape[-1]:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    _check_batch(A, B)
    if unitriangular:
        A = _g.triangle(A, upper, 1 if upper else -1) + _g._eye(A, A.shape[-1])
    if left:
        return _g.solve_triangular(A, B, upper)
    return _g.mT(_g.solve_triangular(_g.mT(A), _g.mT(B), not upper))


@declare(method=True)
def matrix_power(A, n: int) -> Tensor:
    """A^n by repeated squaring; n = 0 gives the identity, a negative n powers the inverse."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim > 1 else 1} by {A.shape[-1] if A.ndim else 1} matrices")
    if n == 0:
        return _g.identity_like(A)
    if n == 1:
        return clone(A)  # a new tensor, as PyTorch's
    if n < 0:
        A, n = inv(A), -n
    result = None
    while True:  # binary powering: A^n from the squares A, A^2, A^4, ...
        if n & 1:
            result = A if result is None else matmul(result, A)
        n >>= 1
        if not n:
            return result
        A = matmul(A, A)


# ---------------------------------------------------------------------------------------------------- determinants
@declare(method=True)
def det(A) -> Tensor:
    """The determinant of each square matrix."""
    return _g.det(_matrices(A, "linalg.det"))


@declare(method=True)
@_cpu_route.float64_args
def slogdet(A) -> linalg_slogdet:
    """``(sign, logabsdet)`` with det = sign * exp(logabsdet); a singular matrix gives (0, -inf)."""
    A = _matrices(A, "linalg.slogdet")
    sign, logabs = mx.linalg.slogdet(A.mlx, stream=_CPU)
    return linalg_slogdet(_wrap(sign), _g.logabsdet(A, logabs))


# ---------------------------------------------------------------------------------------------------- cholesky
def cholesky(A, *, upper: bool = False) -> Tensor:
    """L with A = L L^T (``upper``: U with A = U^T U) for symmetric positive-definite A; only the lower (``upper``:
    the upper) triangle of A is read. A matrix that is not positive definite gives NaN (see ``cholesky_ex``)."""
    return cholesky_ex(A, upper=upper).L


@_cpu_route.float64_args
def cholesky_ex(A, *, upper: bool = False, check_errors: bool = False) -> linalg_cholesky_ex:
    """``(L, info)``: info is 0 where the factorization succeeded, else the order of the first leading minor that
    is not positive definite. ``check_errors`` would need the value on the host: not supported."""
    _no_check_errors(check_errors, "linalg.cholesky_ex")
    A = _matrices(A, "linalg.cholesky")
    factor = _g.cholesky_factor(A.mlx, upper)
    return linalg_cholesky_ex(_g.cholesky(A, upper, factor), _wrap(_g.cholesky_info(factor)))


@declare(method=True)
@_cpu_route.float64_args
def cholesky_solve(B, L, upper: bool = False) -> Tensor:
    """X with (L L^T) X = B for a Cholesky factor L (``upper``: (U^T U) X = B): two triangular solves. Only L's
    triangle is read, and its gradient stays there (PyTorch's also fills the other triangle, which changes nothing
    when L comes from ``cholesky``)."""
    L = _matrices(L, "cholesky_solve")
    _same_dtype(L, B, "cholesky_solve")
    if B.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.ndim} dimensions instead")
    if B.shape[-2] != L.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {L.shape[-1]} by "
                           f"{L.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    _check_batch(L, B)
    U = L if upper else _g.mT(L)  # (U^T U) X = B: U^T Y = B, then U X = Y
    return _g.solve_triangular(U, _g.solve_triangular(_g.mT(U), B, False), True)


# ---------------------------------------------------------------------------------------------------- factorizations
@_cpu_route.float64_args
def qr(A, mode: str = "reduced") -> linalg_qr:
    """``(Q, R)`` with A = QR: 'reduced' (Q is m x k, R k x n, k = min(m, n)), 'complete' (Q m x m, R m x n) or
    'r' (R only; Q is empty). Differentiable except for 'r' and for 'complete' with m > n."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    A = _matrices(A, "linalg.qr", square=False)
    a = A.mlx
    m, n = a.shape[-2:]
    if mode == "complete" and m > n:
        # the first n Householder reflectors of [A | I] are A's own, so its Q extends A's and R = [R_A; 0]
        q, r = mx.linalg.qr(mx.concatenate([a, mx.broadcast_to(mx.eye(m, dtype=a.dtype), a.shape[:-1] + (m,))],
                                           axis=-1), stream=_CPU)
        r = r[..., :n]
    else:
        q, r = mx.linalg.qr(a, stream=_CPU)
    Q, R = _g.factor_outputs(_g.LinalgQrBackward0, A, [q, r], mode=mode)
    if mode == "r":
        Q = _wrap(mx.zeros((0,), a.dtype))
    return linalg_qr(Q, R)


@_cpu_route.float64_args
def svd(A, full_matrices: bool = True, *, driver=None) -> linalg_svd:
    """``(U, S, Vh)`` with A = U diag(S) Vh, S descending. ``full_matrices=False``: U is m x k and Vh k x n. The
    gradient needs distinct singular values and a loss that does not depend on the signs of the singular vectors."""
    A = _matrices(A, "linalg.svd", square=False)
    u, s, vh = mx.linalg.svd(A.mlx, stream=_CPU)
    if not full_matrices:
        k = s.shape[-1]
        u, vh = u[..., :k], vh[..., :k, :]
    return linalg_svd(*_g.factor_outputs(_g.LinalgSvdBackward0, A, [u, s, vh], full_matrices=full_matrices))


@_cpu_route.float64_args
def svdvals(A, *, driver=None) -> Tensor:
    """The singular values of each matrix, descending (gradient U diag(gS) Vh)."""
    A = _matrices(A, "linalg.svdvals", square=False)
    if not A.requires_grad:
        return _wrap(mx.linalg.svd(A.mlx, compute_uv=False, stream=_CPU))
    return svd(A, full_matrices=False).S


def _uplo(UPLO: str) -> str:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


@_cpu_route.float64_args
def eigh(A, UPLO: str = "L") -> linalg_eigh:
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix, eigenvalues ascending; only the ``UPLO``
    triangle is read. The gradient needs distinct eigenvalues and a loss that does not depend on the signs of the
    eigenvectors (e.g. eigenvalues, or V diag(f(L)) V^T)."""
    A = _matrices(A, "linalg.eigh")
    w, v = mx.linalg.eigh(A.mlx, UPLO=_uplo(UPLO), stream=_CPU)
    return linalg_eigh(*_g.factor_outputs(_g.LinalgEighBackward0, A, [w, v]))


@_cpu_route.float64_args
def eigvalsh(A, UPLO: str = "L") -> Tensor:
    """The eigenvalues of each symmetric matrix, ascending (gradient V diag(gL) V^T)."""
    A = _matrices(A, "linalg.eigvalsh")
    if not A.requires_grad:
        return _wrap(mx.linalg.eigvalsh(A.mlx, UPLO=_uplo(UPLO), stream=_CPU))
    return eigh(A, UPLO).eigenvalues


@_cpu_route.float64_args
def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """PyTorch's ``torch.lobpcg``: the ``k`` largest (or smallest) eigenpairs ``(E, X)`` of the symmetric
    matrices ``A`` (``(*, m, m)``), or of the generalized problem ``A x = lambda B x`` with ``B`` symmetric positive
    definite; ``E`` is ``(*, k)`` in descending (largest) or ascending order, ``X`` is ``(*, m, k)``.

    lucid computes the pairs that LOBPCG converges to exactly, by a dense symmetric eigendecomposition of
    ``(A + A^T) / 2`` (after a Cholesky reduction for ``B``), so the result does not depend on the initial ``X``
    (only its shape counts), and ``iK``, ``niter``, ``tol``, ``method`` ('basic' or 'ortho'), ``tracker`` and the
    ``ortho_*`` parameters are accepted and change nothing. Differentiable as PyTorch's (the gradient of ``A`` is
    symmetric; the eigenvalues must be distinct), and differentiable again; also with ``B``, where PyTorch's is not."""
    A = _matrices(A, "lobpcg", square=False)
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and B.shape != A.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    if method not in (None, "basic", "ortho"):
        raise ValueError(f"lobpcg: method must be 'basic' or 'ortho', got {method!r}")
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    S = (A + A.mT) / 2
    if B is None:
        E, V = eigh(S)
    else:
        L = cholesky((B + B.mT) / 2)
        C = solve_triangular(L, solve_triangular(L, S, upper=False).mT, upper=False)  # L^-1 S L^-T
        E, Y = eigh((C + C.mT) / 2)
        V = solve_triangular(L.mT, Y, upper=True)
    if largest is None or largest:
        return E[..., m - k:].flip(-1), V[..., m - k:].flip(-1)
    return E[..., :k], V[..., :k]


# ---------------------------------------------------------------------------------------------------- pinv, lstsq
def _tolerance(value):
    if isinstance(value, Tensor):
        return value.mlx
    return None if value is None else float(value)


@_cpu_route.float64_args
def pinv(A, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse: singular values at most max(atol, rtol * s_max) count as zero (rtol =
    eps * max(m, n) by default). ``hermitian`` uses eigh (A must be symmetric). The gradient assumes the rank
    stays constant."""
    autocast = _gm_state.autocast
    if autocast is not None:
        # PyTorch's linalg.pinv(A, atol=, rtol=) is composite: the SVD in A's dtype, the closing product a matmul,
        # which autocast lowers (pinverse's overload is on the fp32 list instead: the declared op's policy)
        _gm_state.autocast = None
        try:
            P = pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)
        finally:
            _gm_state.autocast = autocast
        return autocast.apply(POLICY["matmul"], (P,), _NO_KWARGS)[0][0]
    A = _matrices(A, "linalg.pinv", square=hermitian)
    return _g.pinv(A, _tolerance(atol), _tolerance(rtol), hermitian)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@_cpu_route.float64_args
def lstsq(A, B, rcond=None, *, driver=None) -> linalg_lstsq:
    """``(solution, residuals, rank, singular_values)`` of min ||AX - B||_F (the minimum-norm solution, through
    pinv; differentiable in A and B). As in PyTorch's CPU drivers: ``rank`` for 'gelsy' (the default), 'gelsd' and
    'gelss'; ``singular_values`` for 'gelsd' and 'gelss'; ``residuals`` (||AX - B||^2 per column) for m > n with
    every driver but 'gelsy' (PyTorch also leaves them out for a rank-deficient A; lucid cannot check that without
    evaluating). What is not computed is an empty tensor."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("linalg_lstsq", lstsq, A, B, rcond, driver=driver)
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of {_DRIVERS}")
    A = _matrices(A, "torch.linalg.lstsq", square=False)
    B2, vector = _rhs(A, B, "torch.linalg.lstsq")
    m, n = A.shape[-2:]
    rtol = mx.finfo(A.dtype).eps * max(m, n) if rcond is None or rcond < 0 else float(rcond)
    X = matmul(_g.pinv(A, None, rtol, False), B2)
    empty = _wrap(mx.zeros((0,), A.dtype))
    residuals = empty
    if m > n and driver != "gelsy":
        residuals = ((matmul(A, X) - B2) ** 2).sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    rank, singular_values = _wrap(mx.zeros((0,), mx.int64)), empty
    if driver != "gels":
        s = mx.linalg.svd(A.mlx, compute_uv=False, stream=_CPU)
        rank = _wrap(mx.sum(s > rtol * s[..., :1], axis=-1).astype(mx.int64))
        if driver != "gelsy":
            singular_values = _wrap(s)
    return linalg_lstsq(X.squeeze(-1) if vector else X, residuals, rank, singular_values)


@_cpu_route.float64_args
def matrix_rank(A, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The number of singular values above max(atol, rtol * s_max) (the defaults of ``pinv``), as int64."""
    A = _matrices(A, "linalg.matrix_rank", square=hermitian)
    a = A.mlx
    s = mx.abs(mx.linalg.eigvalsh(a, stream=_CPU)) if hermitian else mx.linalg.svd(a, compute_uv=False,
                                                                                   stream=_CPU)
    tol = _g.pinv_tolerance(s, _tolerance(atol), _tolerance(rtol), *a.shape[-2:])
    return _wrap(mx.sum(s > tol, axis=-1).astype(mx.int64))


# ---------------------------------------------------------------------------------------------------- norms
def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The ``ord``-norm of x over ``dim`` (all elements when None): any number, inf, -inf, or 0 (the count of
    nonzeros)."""
    if not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    return _reduce.norm(x, ord, dim, keepdim, dtype)


_MATRIX_ORDS = ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """A matrix norm over the two dims ``dim``: 'fro', 'nuc' (sum of singular values), 2 / -2 (largest /
    smallest singular value), 1 / -1 (max / min column sum of |A|), inf / -inf (max / min row sum)."""
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if dtype is not None:
        A = A.to(dtype)
    A = _matrices(A, "linalg.matrix_norm", square=False)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {list(dims)}")
    d0, d1 = (d % A.ndim for d in dims)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, {dims[1]})")
    if ord == "fro":
        return _reduce.norm(A, 2, (d0, d1), keepdim)
    kept = tuple(1 if i in (d0, d1) else s for i, s in enumerate(A.shape))
    out_shape = kept if keepdim else tuple(s for i, s in enumerate(A.shape) if i not in (d0, d1))
    if ord in ("nuc", 2, -2):
        s = svdvals(movedim(A, (d0, d1), (-2, -1)))
        r = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        return r.reshape(out_shape)
    # 1 / -1: over columns of the sums down each column; inf / -inf: over rows of the sums along each row
    summed, over = (d0, d1) if ord in (1, -1) else (d1, d0)
    sums = abs(A).sum(summed, keepdim=True)
    r = sums.amax(over, keepdim=True) if ord > 0 else sums.amin(over, keepdim=True)
    return r.reshape(out_shape)


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """A vector norm (``dim`` an int, or ord and dim None: all elements as one vector) or a matrix norm (``dim``
    a 2-tuple, or a 2-D input with ord given), as torch.linalg.norm."""
    dims = None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if dims is not None and len(dims) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
    if dims is None and ord is not None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               f"{A.ndim}D.")
        dims = tuple(range(A.ndim))
    if dims is not None and len(dims) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)


# ---------------------------------------------------------------------------------------------------- products
def vecdot(x, y, *, dim: int = -1) -> Tensor:
    """The dot product of x and y along ``dim`` (batch dims broadcast)."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("vecdot", vecdot, x, y, dim=dim)
    return (x * y).sum(dim)


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (the first and last may be 1-D), left to right."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


# ---------------------------------------------------------------------------------------------------- legacy names
# PyTorch's top-level spellings (torch.inverse, torch.svd, ...), also Tensor methods; not part of lucid.linalg
legacy_svd_result = namedtuple("svd", ["U", "S", "V"])


@declare(method=True)
@_cpu_route.float64_args
def logdet(input) -> Tensor:
    """log(det(input)): NaN for a negative determinant, -inf for a singular matrix."""
    sign, logabs = slogdet(input)
    nan = mx.array(float("nan"), logabs.dtype)
    return logabs + _wrap(mx.where(sign.mlx < 0, nan, mx.zeros((), logabs.dtype)))


@declare(method=True)
def pinverse(input, rcond: float = 1e-15) -> Tensor:
    """torch.pinverse: ``pinv`` with relative tolerance ``rcond`` (under autocast: float32, as its PyTorch overload)."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("linalg_pinv", pinverse, input, rcond)
    return _g.pinv(_matrices(input, "linalg.pinv", square=False), None, float(rcond), False)


@declare(method="cholesky")
def legacy_cholesky(input, upper: bool = False) -> Tensor:
    """torch.cholesky (``upper`` may be positional)."""
    return cholesky(input, upper=upper)


@declare(method="qr")
def legacy_qr(input, some: bool = True) -> linalg_qr:
    """torch.qr: reduced when ``some``, else complete."""
    return qr(input, "reduced" if some else "complete")


@declare(method="svd")
def legacy_svd(input, some: bool = True, compute_uv: bool = True) -> legacy_svd_result:
    """torch.svd: (U, S, V) with V (not Vh), reduced when ``some``; without ``compute_uv`` U and V are zeros of
    the full shapes."""
    if not compute_uv:
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return legacy_svd_result(_wrap(mx.zeros(batch + (m, m), input.dtype)), svdvals(input),
                                 _wrap(mx.zeros(batch + (n, n), input.dtype)))
    U, S, Vh = svd(input, full_matrices=not some)
    return legacy_svd_result(U, S, _g.mT(Vh))


_reduce._matrix_norm = matrix_norm  # norm(x, "nuc") (reduce cannot import this module: it imports reduce)
