"""``MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)``: the Gaussian over vectors, held
by the lower Cholesky factor of its covariance."""
from __future__ import annotations

__all__ = ["MultivariateNormal"]

import math

from .._creation import eye
from .._tensor import Size
from ..linalg import cholesky, solve_triangular
from ..ops.decomp import cholesky_solve
from ..ops.shape import broadcast_shapes
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, standard_normal


def batch_mv(matrix, vector):
    """Matrix-vector products over broadcast batch dimensions: (..., n, m) @ (..., m) -> (..., n)."""
    return (matrix @ vector.unsqueeze(-1)).squeeze(-1)


def batch_mahalanobis(scale_tril, x):
    """|L^-1 x|^2 for the lower-triangular L (..., n, n) and x (..., n), whose batch dimensions end with L's
    (x may have more in front: the sample dimensions). Those leading dimensions become columns of one triangular
    solve, so L is never copied per sample."""
    n = x.shape[-1]
    l_batch = tuple(scale_tril.shape[:-2])
    x_batch = tuple(x.shape[:-1])
    inner = tuple(broadcast_shapes(l_batch, x_batch[len(x_batch) - len(l_batch):])) if l_batch else ()
    outer = x_batch[:len(x_batch) - len(inner)]
    x = x.expand(outer + inner + (n,))
    columns = x.reshape((-1,) + inner + (n,)).movedim(0, -1)  # inner + (n, outer samples)
    solved = solve_triangular(scale_tril.expand(inner + (n, n)), columns, upper=False)
    return solved.pow(2).sum(-2).movedim(-1, 0).reshape(outer + inner)


def precision_to_scale_tril(precision):
    """The lower Cholesky factor of the inverse of ``precision``, without inverting it: with P flipped in both
    axes factored as L_f L_f^T, flipping L_f back gives an upper factor U of P = U U^T, and L = U^-T."""
    flipped = cholesky(precision.flip((-2, -1)))
    inverse_factor = flipped.flip((-2, -1)).mT
    return solve_triangular(inverse_factor, eye(precision.shape[-1], dtype=precision.dtype), upper=False)


class MultivariateNormal(Distribution):
    """The multivariate normal with mean ``loc`` (..., n) and exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (the lower Cholesky factor of the covariance), each (..., n, n).
    The batch shape broadcasts ``loc.shape[:-1]`` with the matrix's batch dimensions.

    :param loc: the mean vector, shape (..., event).
    :param covariance_matrix: a positive-definite covariance matrix (give exactly one of covariance_matrix,
        precision_matrix, scale_tril).
    :param precision_matrix: a positive-definite precision (inverse covariance) matrix.
    :param scale_tril: a lower-triangular factor of the covariance with a positive diagonal.
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                                                ("precision_matrix", precision_matrix)) if m is not None)
        if matrix.dim() < 2:
            raise ValueError(f"{name}{' matrix' if name == 'scale_tril' else ''} must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = tuple(broadcast_shapes(matrix.shape[:-2], loc.shape[:-1]))
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        matrix_shape = tuple(batch_shape) + tuple(self.event_shape) * 2
        new.loc = self.loc.expand(tuple(batch_shape) + tuple(self.event_shape))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(matrix_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        lower = self._unbroadcasted_scale_tril
        identity = eye(lower.shape[-1], dtype=lower.dtype)
        return cholesky_solve(identity.expand(lower.shape), lower).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape)
                                                                      + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        eps = standard_normal(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h

