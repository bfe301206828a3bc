"""``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: a Gaussian whose covariance is W W^T + D, computed
through the m x m capacitance matrix I + W^T D^-1 W (Woodbury) instead of the n x n covariance."""
from __future__ import annotations

__all__ = ["LowRankMultivariateNormal"]

import math

from .._creation import eye
from .._tensor import Size
from ..linalg import cholesky, solve_triangular
from ..ops.linalg import diag_embed
from ..ops.shape import broadcast_tensors
from . import constraints
from .distribution import Distribution
from .multivariate_normal import batch_mahalanobis, batch_mv
from .utils import lazy_property, standard_normal


def capacitance_tril(factor, diag):
    """The lower Cholesky factor of I + W^T D^-1 W (W = ``factor`` (..., n, m), D = diag(``diag``))."""
    m = factor.shape[-1]
    return cholesky((factor.mT / diag.unsqueeze(-2)) @ factor + eye(m, dtype=factor.dtype))


def lowrank_logdet(factor, diag, capacitance):
    """log det(W W^T + D) = log det(capacitance) + log det(D) (the matrix determinant lemma)."""
    return 2 * capacitance.diagonal(dim1=-2, dim2=-1).log().sum(-1) + diag.log().sum(-1)


def lowrank_mahalanobis(factor, diag, x, capacitance):
    """x^T (W W^T + D)^-1 x = x^T D^-1 x - |C^-1 W^T D^-1 x|^2 (Woodbury; C C^T the capacitance)."""
    wt_dinv_x = batch_mv(factor.mT / diag.unsqueeze(-2), x)
    return (x.pow(2) / diag).sum(-1) - batch_mahalanobis(capacitance, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """The multivariate normal with mean ``loc`` (..., n) and covariance ``cov_factor @ cov_factor.mT +
    diag(cov_diag)``, ``cov_factor`` (..., n, m), ``cov_diag`` (..., n) > 0: log_prob, entropy and sampling cost
    O(n m^2) rather than O(n^3).

    :param loc: the location (broadcast against the other parameters).
    :param cov_factor: the low-rank factor W of the covariance ``W W^T + diag(cov_diag)``, shape (..., event, rank).
    :param cov_diag: the diagonal part of the covariance (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {Size(event_shape)}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2: factor the well-conditioned middle term
        n = self._event_shape[0]
        diag_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / diag_sqrt
        middle = scaled @ scaled.mT + eye(n, dtype=scaled.dtype)
        return (diag_sqrt * cholesky(middle)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        factor = self._unbroadcasted_cov_factor
        return (factor @ factor.mT + diag_embed(self._unbroadcasted_cov_diag)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: (W W^T + D)^-1 = D^-1 - D^-1 W C^-T C^-1 W^T D^-1
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        return (diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - a.mT @ a).expand(self._matrix_shape())

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        eps_w = standard_normal(shape[:-1] + tuple(self.cov_factor.shape[-1:]), self.loc.dtype)
        eps_d = standard_normal(shape, self.loc.dtype)
        return (self.loc + batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _log_det(self):
        return lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, value - self.loc,
                                self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + m)

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h
