"""Householder reflectors, LAPACK's compact form of QR: ``geqrf`` (the factorization), ``linalg.householder_product``
/ ``orgqr`` (Q from the reflectors) and ``ormqr`` (Q, or Q^T, times a matrix).

``geqrf`` stores R on and above the diagonal and, below it, the vectors v_i of the reflectors H_i = I - tau_i v_i v_i^T
(v_i[i] = 1 implicit, zeros above), with Q = H_1 H_2 ... H_k. Each reflector is LAPACK's ``dlarfg``: beta =
-sign(alpha) ||x||, tau = (beta - alpha) / beta, v = x / (alpha - beta); a column already zero below the diagonal
gets tau = 0 (H = I). The choice is made per matrix with masks, never by reading values. PyTorch has no derivative
for ``geqrf``; ``householder_product`` and ``ormqr`` are written with lucid's ops, so they are differentiable (and
their derivatives again) in the reflectors, tau and the other operand.
"""
from __future__ import annotations

__all__ = ["geqrf", "householder_product", "orgqr", "ormqr"]

from collections import namedtuple

import mlx.core as mx

from .. import _cpu_route
from .._tensor import Tensor, _wrap
from . import decomp_grads as _g
from ._core import declare
from .decomp import _TORCH_NAMES
from .linalg import matmul

geqrf_result = namedtuple("geqrf", ["a", "tau"])


def _floating(A, fn: str) -> None:
    if not isinstance(A, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if A.dtype not in (mx.float32, mx.float64):
        raise RuntimeError(f"{fn}: Expected a floating point tensor (float32 or float64), got "
                           f"{_TORCH_NAMES.get(A.dtype, A.dtype)}")


@_cpu_route.float64_args
def geqrf(input) -> geqrf_result:
    """``(a, tau)``: LAPACK's QR in Householder form (see the module docstring). Not differentiable (as in
    PyTorch)."""
    _floating(input, "geqrf")
    r = input.mlx
    m, n = r.shape[-2:]
    rows = mx.arange(m).reshape(m, 1)
    taus = []
    for j in range(min(m, n)):
        col = r[..., :, j:j + 1]  # (..., m, 1)
        alpha = r[..., j:j + 1, j:j + 1]
        below = mx.where(rows > j, col, 0)
        xnorm2 = mx.sum(below * below, axis=-2, keepdims=True)
        norm = mx.sqrt(alpha * alpha + xnorm2)
        beta = mx.where(alpha >= 0, -norm, norm)
        still = xnorm2 == 0  # nothing below the diagonal: H = I (tau 0), the column is kept
        tau = mx.where(still, 0, (beta - alpha) / mx.where(still, 1, beta))
        v = mx.where(rows > j, below / mx.where(still, 1, alpha - beta), (rows == j).astype(r.dtype))
        cols = mx.arange(n) > j  # H applied to the columns right of j (column j becomes beta and v)
        update = v * (tau * mx.sum(v * r, axis=-2, keepdims=True))  # LAPACK dlarf's order of rounding
        r = r - mx.where(cols, update, 0)
        packed = mx.where(rows == j, mx.where(still, alpha, beta), mx.where(rows > j, v, col))
        r = mx.where(mx.arange(n) == j, packed, r)
        taus.append(tau[..., 0, 0])
    tau = mx.stack(taus, -1) if taus else mx.zeros(r.shape[:-2] + (0,), r.dtype)
    return geqrf_result(_wrap(r), _wrap(tau))


def _reflectors(A: Tensor, tau, fn: str) -> Tensor:
    """The unit lower-trapezoidal matrix of the reflectors' vectors (its first tau.shape[-1] columns count)."""
    if not isinstance(tau, Tensor):
        raise TypeError(f"{fn}(): argument 'tau' must be Tensor, not {type(tau).__name__}")
    if tau.ndim != A.ndim - 1 or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{tuple(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{fn}: tau dtype {_TORCH_NAMES.get(tau.dtype)} does not match input dtype "
                           f"{_TORCH_NAMES.get(A.dtype)}")
    m, n = A.shape[-2:]
    return _g.triangle(A, False, -1) + _wrap(mx.eye(m, n, dtype=A.dtype))


def _reflect(C: Tensor, v: Tensor, t: Tensor, left: bool) -> Tensor:
    """H C (``left``) or C H, H = I - t v v^T; v (..., m, 1), t (..., 1, 1)."""
    if left:
        return C - t * v * matmul(_g.mT(v), C)
    return C - t * matmul(C, v) * _g.mT(v)


@_cpu_route.float64_args
def householder_product(A, tau) -> Tensor:
    """The first n columns of Q = H_1 ... H_k from reflectors stored as ``geqrf`` does (A m x n, m >= n >= k)."""
    fn = "torch.linalg.householder_product"
    _floating(A, fn)
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.shape[-1] > n:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    V = _reflectors(A, tau, fn)
    Q = _wrap(mx.broadcast_to(mx.eye(m, n, dtype=A.dtype), tuple(A.shape)))
    for i in reversed(range(tau.shape[-1])):
        Q = _reflect(Q, V[..., :, i:i + 1], tau[..., i:i + 1].unsqueeze(-1), True)
    return Q


def orgqr(input, tau) -> Tensor:
    """torch.orgqr: ``linalg.householder_product``."""
    return householder_product(input, tau)


@_cpu_route.float64_args
def ormqr(input, tau, other, left: bool = True, transpose: bool = False) -> Tensor:
    """Q C, Q^T C (``transpose``), C Q or C Q^T (``left=False``) for the full m x m (n x n) Q = H_1 ... H_k of
    ``geqrf``'s reflectors ``input``, ``tau``, and C = ``other``."""
    fn = "torch.ormqr"
    _floating(input, fn)
    _floating(other, fn)
    size = other.shape[-2] if left else other.shape[-1]
    if input.shape[-2] != size:
        raise RuntimeError(f"{fn}: input.shape[-2] must be equal to other.shape[{-2 if left else -1}]")
    if tau.shape[-1] > input.shape[-1]:
        raise RuntimeError(f"{fn}: tau.shape[-1] must be less than or equal to input.shape[-1]")
    if input.ndim != other.ndim or tuple(input.shape[:-2]) != tuple(other.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of other to be equal to input.shape[:-2], but got "
                           f"{tuple(other.shape[:-2])}")
    V = _reflectors(input, tau, fn)
    k = tau.shape[-1]
    # Q C = H_1 (H_2 (... H_k C)); Q^T C = H_k ... H_1 C; C Q = ((C H_1) H_2) ...; C Q^T = C H_k ... H_1
    order = range(k) if left == transpose else reversed(range(k))
    C = other
    for i in order:
        C = _reflect(C, V[..., :, i:i + 1], tau[..., i:i + 1].unsqueeze(-1), left)
    return C


declare(geqrf, method=True)
declare(orgqr, method=True)
declare(ormqr, method=True)
