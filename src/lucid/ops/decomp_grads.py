"""The differentiable primitives behind ``lucid.linalg``: each forward is MLX's LAPACK routine on the CPU stream
(MLX runs its linalg only there; all of them are float64-accurate), each backward a published matrix-calculus
identity written with lucid ops, so it is differentiable again. MLX itself has no derivative for these.

  inv             gA = -A^-T g A^-T                       (an exactly singular matrix gives NaN: see below)
  det             gA = g det(A) A^-T                      (sign * exp(logabsdet) with an exact float64 exp:
  logabsdet       gA = g A^-T                              MLX's own det is only float32-accurate in float64)
  solve           gB = A^-T g,  gA = -gB X^T
  solve_triangular  the same, gA kept to the triangle that is read
  cholesky        gA = sym(L^-T Phi(L^T gL) L^-1), Phi: the lower triangle with the diagonal halved (Murray 2016)
  pinv            PyTorch's pinv_backward (constant rank)
  qr, svd, eigh   one node for all outputs, as in PyTorch; see the backward functions for the formulas

Masks (triangles, diagonals) are constant arrays multiplied in, so the backward graphs need no new ops. Inputs
arrive checked and of a floating dtype (``decomp.py`` does the checks and the PyTorch argument handling).
"""
from __future__ import annotations

import mlx.core as mx

from .._dtype import broadcast_shapes
from .._tensor import Tensor, _wrap
from .. import _grad_mode as gm
from ..autograd.graph import FREED_MESSAGE, Node, edge_of
from . import _f64
from ._core import _version_error, defop
from .elementwise import _zeros
from .linalg import _mT, matmul
from .shape import cat

CPU = mx.cpu
mT = _mT


# ---------------------------------------------------------------------------------------------------- masks
def _mask(dtype, n: int, m: int, k: int, upper: bool):
    """1 on the lower (on and below diagonal k) or upper (on and above k) triangle of an n x m matrix."""
    return (1 - mx.tri(n, m, k - 1, dtype=dtype)) if upper else mx.tri(n, m, k, dtype=dtype)


def triangle(x: Tensor, upper: bool, k: int = 0) -> Tensor:
    """``triu(x, k)`` or ``tril(x, k)`` over the last two dims (a multiply by a constant mask)."""
    n, m = x.shape[-2:]
    return x * _wrap(_mask(x.dtype, n, m, k, upper))


def _eye(x: Tensor, n: int) -> Tensor:
    return _wrap(mx.eye(n, dtype=x.dtype))


def diag_embed(v: Tensor) -> Tensor:
    """Vectors (..., n) as diagonal matrices (..., n, n)."""
    return v.unsqueeze(-1) * _eye(v, v.shape[-1])


def broadcast_batch(a, b):
    """Both arrays broadcast to their common batch dims (all but the last two); MLX's solvers need them equal."""
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return mx.broadcast_to(a, batch + a.shape[-2:]), mx.broadcast_to(b, batch + b.shape[-2:])


# ---------------------------------------------------------------------------------------------------- singular input
# MLX's CPU backend raises on an exactly singular matrix (LAPACK's info) only sometimes: the same evaluation may
# also return garbage. So LAPACK's solvers never see one: flagged matrices are swapped for the identity, and their
# results are NaN, where PyTorch raises (raising would need the value on the host). MLX's slogdet never raises and,
# unlike its lu_factor, works under mx.vmap; ``*_ex`` report PyTorch's info from the LU pivots.
def singular(a):
    """Which matrices are exactly singular (a zero pivot: log|det| = -inf), by batch index."""
    return mx.linalg.slogdet(a, stream=CPU)[1] == -mx.inf


def lu_pivots(a):
    """The diagonal of U in MLX's (LAPACK's) LU factorization PA = LU."""
    return mx.diagonal(mx.linalg.lu_factor(a, stream=CPU)[0], 0, -2, -1)


def lapack_info(failed):
    """LAPACK's info from per-pivot failure flags (..., n): the 1-based index of the first failed pivot, 0 where
    none failed."""
    return mx.where(mx.any(failed, axis=-1), mx.argmax(failed, axis=-1) + 1, 0).astype(mx.int32)


def _guarded(lapack, a, flagged, *rest):
    """``lapack(a, *rest)`` with the flagged matrices replaced by the identity, and NaN as their result."""
    flag = mx.expand_dims(flagged, (-2, -1))
    out = lapack(mx.where(flag, mx.eye(a.shape[-1], dtype=a.dtype), a), *rest)
    return mx.where(flag, mx.array(float("nan"), out.dtype), out)


# ---------------------------------------------------------------------------------------------------- inverse
inv = defop("linalg_inv", lambda a: _guarded(lambda x: mx.linalg.inv(x, stream=CPU), a, singular(a)), save="ans",
            node="LinalgInvExBackward0", vjp=lambda g, ans, A: -matmul(matmul(mT(ans), g), mT(ans)))


def _solve_fwd(a, b):
    a, b = broadcast_batch(a, b)
    return _guarded(lambda x, y: mx.linalg.solve(x, y, stream=CPU), a, singular(a), b)


def _solve_vjp(g, X, A, B):
    gB = solve(mT(A), g)
    return -matmul(gB, mT(X)), gB


solve = defop("linalg_solve", _solve_fwd, vjp_all=_solve_vjp, save="both", node="LinalgSolveExBackward0")


def _solve_triangular_fwd(a, b, upper):
    # the other triangle is zeroed here: under mx.vmap, MLX 0.32's solve_triangular reads the whole matrix
    a, b = broadcast_batch(mx.triu(a) if upper else mx.tril(a), b)
    zero_pivot = mx.any(mx.diagonal(a, 0, -2, -1) == 0, axis=-1)
    return _guarded(lambda x, y: mx.linalg.solve_triangular(x, y, upper=upper, stream=CPU), a, zero_pivot, b)


def _solve_triangular_vjp(g, X, A, B, upper):
    gB = solve_triangular(mT(A), g, not upper)
    return -triangle(matmul(gB, mT(X)), upper), gB, None


solve_triangular = defop("linalg_solve_triangular", _solve_triangular_fwd, vjp_all=_solve_triangular_vjp,
                         save="both")


# ---------------------------------------------------------------------------------------------------- determinants
def _det_fwd(a):
    sign, logabs = mx.linalg.slogdet(a, stream=CPU)
    return sign * (_f64.exp(logabs) if a.dtype == mx.float64 else mx.exp(logabs))


def _per_matrix(g: Tensor) -> Tensor:
    """A gradient of one value per matrix, shaped to broadcast over the matrices."""
    return g.reshape(tuple(g.shape) + (1, 1))


det = defop("linalg_det", _det_fwd, save="both", vjp=lambda g, ans, A: _per_matrix(g * ans) * mT(inv(A)))
# logabsdet is computed once with the sign, for slogdet's two outputs, and passed in (a plain array: no edge)
logabsdet = defop("linalg_slogdet", lambda a, logabs: logabs,
                  vjp=(lambda g, ans, A, logabs: _per_matrix(g) * mT(inv(A)),))


# ---------------------------------------------------------------------------------------------------- cholesky
def cholesky_factor(a, upper: bool):
    """MLX's (LAPACK's) factor. LAPACK stops at the first non-positive pivot and leaves it on the diagonal; MLX
    reports nothing."""
    return mx.linalg.cholesky(a, upper=upper, stream=CPU)


def _cholesky_fwd(a, upper, factor):
    """The factor, or NaN for a matrix that is not positive definite, where PyTorch raises (raising would need
    the value on the host)."""
    ok = mx.all(mx.diagonal(factor, 0, -2, -1) > 0, axis=-1, keepdims=True)
    return mx.where(mx.expand_dims(ok, -1), factor, mx.array(float("nan"), factor.dtype))


def cholesky_info(factor):
    """PyTorch's ``info`` of cholesky_ex from MLX's factor: the order of the first leading minor that is not
    positive definite, 0 where the factorization succeeded."""
    return lapack_info(~(mx.diagonal(factor, 0, -2, -1) > 0))


def _cholesky_vjp(g, L, A, upper, factor):
    if upper:
        L, g = mT(L), mT(g)
    n = L.shape[-1]
    half_diag = _mask(L.dtype, n, n, 0, False) - 0.5 * mx.eye(n, dtype=L.dtype)
    phi = matmul(mT(L), g) * _wrap(half_diag)
    Lt = mT(L)
    gA = mT(solve_triangular(Lt, mT(solve_triangular(Lt, phi, True)), True))  # L^-T phi L^-1
    return (gA + mT(gA)) * 0.5


cholesky = defop("linalg_cholesky", _cholesky_fwd, vjp=(_cholesky_vjp,), save="ans",
                 node="LinalgCholeskyExBackward0")


# ---------------------------------------------------------------------------------------------------- pinv
def pinv_tolerance(s, atol, rtol, m: int, n: int):
    """PyTorch's cutoff for small singular values: max(atol, rtol * s_max) with rtol = eps * max(m, n) when
    neither is given, and rtol = 0 when only atol is."""
    if rtol is None:
        atol_given = atol is not None and (not isinstance(atol, float) or atol > 0)
        rtol = 0.0 if atol_given else mx.finfo(s.dtype).eps * max(m, n)
    # tensor tolerances have the batch shape: one per matrix
    atol, rtol = (mx.expand_dims(t, -1) if isinstance(t, mx.array) else t for t in (atol, rtol))
    tol = rtol * mx.max(s, axis=-1, keepdims=True)
    return tol if atol is None else mx.maximum(tol, atol)


def _pinv_fwd(a, atol, rtol, hermitian):
    m, n = a.shape[-2:]
    if hermitian:
        w, v = mx.linalg.eigh(a, stream=CPU)
        keep = mx.abs(w) > pinv_tolerance(mx.abs(w), atol, rtol, m, n)
        winv = mx.where(keep, 1 / mx.where(keep, w, 1), 0)
        return mx.matmul(v * mx.expand_dims(winv, -2), mx.swapaxes(v, -1, -2))
    u, s, vh = mx.linalg.svd(a, stream=CPU)
    k = s.shape[-1]
    keep = s > pinv_tolerance(s, atol, rtol, m, n)
    sinv = mx.where(keep, 1 / mx.where(keep, s, 1), 0)
    return mx.matmul(mx.swapaxes(vh[..., :k, :], -1, -2) * mx.expand_dims(sinv, -2),
                     mx.swapaxes(u[..., :k], -1, -2))


def _pinv_vjp(g, P, A, atol, rtol, hermitian):
    """PyTorch's pinv_backward, arranged so the intermediate products are as small as possible."""
    m, n = A.shape[-2:]
    Ph, gh = mT(P), mT(g)
    if m <= n:
        K = matmul(gh, P)
        KPh = matmul(K, Ph)
        return (-mT(matmul(P, K)) + KPh - matmul(matmul(A, P), KPh)
                + matmul(matmul(Ph, P), gh - matmul(K, A)))
    K = matmul(P, gh)
    PhK = matmul(Ph, K)
    return (-mT(matmul(K, P)) + matmul(matmul(gh - matmul(A, K), P), Ph) + PhK
            - matmul(matmul(PhK, P), A))


pinv = defop("linalg_pinv", _pinv_fwd, vjp=(_pinv_vjp,), save="both")

# A^0: the identity for each matrix, with a zero gradient (PyTorch's result still requires grad)
identity_like = defop("matrix_power", lambda a: mx.broadcast_to(mx.eye(a.shape[-1], dtype=a.dtype), a.shape),
                      vjp=_zeros, save=None)


# ---------------------------------------------------------------------------------------------------- factorizations
class _FactorNode(Node):
    """The one backward node of all outputs of a factorization (qr, svd, eigh), as in PyTorch. It keeps the
    outputs and maps their gradients (None for an output that got none) to the input's gradient with
    ``formula(grads, *outputs, **opts)``. The outputs it hands the formula are connected to this node, so the
    formula, written with lucid ops, is differentiable again."""

    __slots__ = ("next", "num_outputs", "arrays", "storages", "metas", "opts")
    formula = None

    def __init__(self, edge, arrays: list, opts: dict):
        self._hooks = None
        self.next = [edge]
        self.num_outputs = len(arrays)
        self.arrays = arrays
        self.storages = ()
        self.metas = [(a.shape, a.dtype) for a in arrays]
        self.opts = opts

    def output_meta(self, nr):
        return self.metas[nr]

    def rebind_output(self, st) -> None:
        pass

    def release(self) -> None:
        self.arrays = None

    def apply(self, grads: list, needed=None) -> list:
        if self.arrays is None:
            raise RuntimeError(FREED_MESSAGE)
        outs = [_wrap(a, self, True, i) for i, a in enumerate(self.arrays)]
        for i, st in enumerate(self.storages):
            if st.version:  # an output was modified in place after it was saved
                _version_error(_wrap(st.data, self, True, i), st.version, 0)
        return [type(self).formula(grads, *outs, **self.opts)]


def factor_outputs(node_class, A: Tensor, arrays: list, **opts) -> list:
    """The output tensors of one factorization of A, sharing one ``node_class`` node when A needs a gradient."""
    node = node_class(edge_of(A), arrays, opts) if A._requires_grad and gm.state.grad else None
    outs = [_wrap(a, node, node is not None, i) for i, a in enumerate(arrays)]
    if node is not None:
        node.storages = [o._storage for o in outs]
    if gm.state.inference:
        for o in outs:
            o._ex().inference = True
    return outs


def _factor_node(name: str, formula):
    return type(name, (_FactorNode,), {"__slots__": (), "formula": staticmethod(formula), "__module__": __name__})


def _copyltu(M: Tensor) -> Tensor:
    """The symmetric matrix with M's lower triangle."""
    return triangle(M, False) + mT(triangle(M, False, -1))


def _qr_tall(Q, R, gQ, gR):
    """m >= n (Q is m x n, R n x n): gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q (Walter and Lehmann;
    Seeger et al. 2017)."""
    M = None
    if gR is not None:
        M = matmul(R, mT(gR))
    if gQ is not None:
        QgQ = matmul(mT(gQ), Q)
        M = -QgQ if M is None else M - QgQ
    b = matmul(Q, _copyltu(M))
    if gQ is not None:
        b = b + gQ
    return mT(solve_triangular(R, mT(b), True))


def _qr_formula(grads, Q, R, mode):
    gQ, gR = grads
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if m >= n:
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        return _qr_tall(Q, R, gQ, gR)
    # m < n: A = [X | Y] = Q [U | V], where X = QU is a square QR and Y = QV
    if gR is None:
        gR = _wrap(mx.zeros(R.shape, R.dtype))
    U, V, gU, gV = R[..., :m], R[..., m:], gR[..., :m], gR[..., m:]
    YgV = matmul(matmul(Q, V), mT(gV))
    gX = _qr_tall(Q, U, YgV if gQ is None else gQ + YgV, gU)
    return cat([gX, matmul(Q, gV)], -1)


def _svd_formula(grads, U, S, Vh, full_matrices):
    """PyTorch's svd_backward for A = U diag(S) Vh (reduced), with E_jk = S_k^2 - S_j^2 and skew(X) = X - X^T:
    gA = U [(skew(U^T gU) S + S skew(Vh gVh^T)) / E + diag(gS)] Vh, plus the parts of gU, gVh outside the spans
    of U, V when m != n. The gradient is only defined for distinct singular values and gauge-invariant losses.
    With full_matrices the extra columns of U / rows of Vh are arbitrary and their gradients are ignored."""
    gU, gS, gVh = grads
    k = S.shape[-1]
    if full_matrices:
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        return matmul(U * gS.unsqueeze(-2), Vh)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye(S, k)  # any nonzero diagonal: the skew parts are 0 there
    gA = None
    if gU is not None:
        UgU = matmul(mT(U), gU)
        gA = (UgU - mT(UgU)) * S.unsqueeze(-2)
    if gVh is not None:
        VgV = matmul(Vh, mT(gVh))
        VgV = S.unsqueeze(-1) * (VgV - mT(VgV))
        gA = VgV if gA is None else gA + VgV
    gA = gA / E
    if gS is not None:
        gA = gA + diag_embed(gS)
    if m > n and gU is not None:  # gA = [U gA + (I - U U^T) gU S^-1] Vh
        gUSinv = gU / S.unsqueeze(-2)
        return matmul(matmul(U, gA) + gUSinv - matmul(U, matmul(mT(U), gUSinv)), Vh)
    if m < n and gVh is not None:  # gA = U [gA Vh + S^-1 gVh (I - V Vh)]
        SinvgVh = gVh / S.unsqueeze(-1)
        return matmul(U, matmul(gA, Vh) + SinvgVh - matmul(matmul(SinvgVh, mT(Vh)), Vh))
    return matmul(matmul(U, gA), Vh)


def _eigh_formula(grads, L, V):
    """A = V diag(L) V^T: gA = V (diag(gL) + F o skew(V^T gV) / 2) V^T with F_ij = 1 / (L_j - L_i) off the
    diagonal (first-order perturbation of the eigenvectors); defined for distinct eigenvalues. Symmetric, as in
    PyTorch: the symmetric part of V (F o V^T gV) V^T, the gradient for symmetric perturbations of A."""
    gL, gV = grads
    if gV is None:
        return matmul(V * gL.unsqueeze(-2), mT(V))
    n = L.shape[-1]
    eye = _eye(L, n)
    VgV = matmul(mT(V), gV)
    inner = (VgV - mT(VgV)) * (0.5 - 0.5 * eye) / (L.unsqueeze(-2) - L.unsqueeze(-1) + eye)
    if gL is not None:
        inner = inner + diag_embed(gL)
    return matmul(matmul(V, inner), mT(V))


LinalgQrBackward0 = _factor_node("LinalgQrBackward0", _qr_formula)
LinalgSvdBackward0 = _factor_node("LinalgSvdBackward0", _svd_formula)
LinalgEighBackward0 = _factor_node("LinalgEighBackward0", _eigh_formula)
