"""``Wishart(df, covariance_matrix | precision_matrix | scale_tril)``: the distribution of sums of outer products
of Gaussian vectors, over positive-definite matrices; sampled by Bartlett's decomposition."""
from __future__ import annotations

__all__ = ["Wishart"]

import math
import warnings
from numbers import Number

from .._creation import arange, eye, tensor
from .._grad_mode import no_grad
from .._pending import _tracing
from .._tensor import Size
from ..linalg import cholesky, slogdet
from ..ops.decomp import cholesky_solve
from ..ops.elementwise import where
from ..ops.linalg import diag_embed
from ..ops.shape import broadcast_shapes
from ..special import digamma, multigammaln
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import precision_to_scale_tril
from .utils import finfo_eps, lazy_property, standard_normal

_LOG_2 = math.log(2)


def _mvdigamma(x, p: int):
    """The multivariate digamma: sum_{i<p} digamma(x - i/2) (the derivative of multigammaln(x, p))."""
    return digamma(x.unsqueeze(-1) - arange(p, dtype=x.dtype) / 2).sum(-1)


class Wishart(ExponentialFamily):
    """The Wishart distribution with ``df`` > n - 1 degrees of freedom and scale matrix V (n x n) given as
    ``covariance_matrix`` (V), ``precision_matrix`` (V^-1) or ``scale_tril`` (V's lower Cholesky factor).
    ``rsample`` is differentiable in the scale matrix and in ``df`` (through the Chi2 draws of Bartlett's
    decomposition); ``rsample(max_try_correction=...)`` redraws singular samples as PyTorch does.

    :param df: the degrees of freedom (> event size - 1).
    :param covariance_matrix: a positive-definite covariance matrix (give exactly one of covariance_matrix,
        precision_matrix, scale_tril).
    :param precision_matrix: a positive-definite precision (inverse covariance) matrix.
    :param scale_tril: a lower-triangular factor of the covariance with a positive diagonal.
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                 "specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype)
        else:
            batch_shape = tuple(broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        if bool((self.df <= event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        for name, value in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                            ("precision_matrix", precision_matrix)):
            if value is not None:
                setattr(self, name, value.expand(batch_shape + (-1, -1)))
        if bool((self.df < event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df "
                          "< ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        """The Chi2(df - i) laws of the squared diagonal of Bartlett's factor, i = 0..n-1."""
        offsets = arange(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=self.df.unsqueeze(-1) - offsets.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape)

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
        identity = eye(self._event_shape[-1], dtype=lower.dtype)
        return cholesky_solve(identity.expand(lower.shape), lower).expand(self._matrix_shape())

    def _df_matrix(self):
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = where(factor <= 0, math.nan, factor)  # no mode below df = n + 1
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        diag = v.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (v.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=Size()):
        """L A A^T L^T with A lower triangular: sqrt(Chi2(df - i)) on the diagonal, standard normals below it."""
        p = self._event_shape[-1]
        diag = self._dist_chi2.rsample(sample_shape).sqrt()
        diag = diag.clamp(min=finfo_eps(diag.dtype))
        below = standard_normal(tuple(sample_shape) + tuple(self._batch_shape) + (p, p), diag.dtype).tril(-1)
        chol = self._unbroadcasted_scale_tril @ (diag_embed(diag) + below)
        return chol @ chol.mT

    def _singular(self, sample, sample_shape):
        """Per sample (over the batch dimensions too): whether any matrix of it is not positive definite."""
        singular = ~self.support.check(sample)
        return singular.reshape(tuple(sample_shape) + (-1,)).any(-1) if self._batch_shape else singular

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """A reparameterized draw. Singular draws (possible at small df, in finite precision) are redrawn up to
        ``max_try_correction`` times (default 10; 3 inside a compile trace, where every round runs)."""
        tracing = _tracing()
        if max_try_correction is None:
            max_try_correction = 3 if tracing else 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        with no_grad():
            singular = self._singular(sample, sample_shape)
        if not tracing and not bool(singular.any()):
            return sample
        if not tracing:
            warnings.warn("Singular sample detected.", stacklevel=2)
        mask_shape = tuple(singular.shape) + (1,) * (len(self._batch_shape) + 2)
        for _ in range(max_try_correction):
            fresh = self._bartlett_sampling(sample_shape)
            sample = where(singular.reshape(mask_shape), fresh, sample)
            with no_grad():
                singular = self._singular(sample, sample_shape)
            if not tracing and not bool(singular.any()):
                break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        lower = self._unbroadcasted_scale_tril
        return (-nu * (p * _LOG_2 / 2 + lower.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - multigammaln(nu / 2, p) + (nu - p - 1) / 2 * slogdet(value).logabsdet
                - cholesky_solve(value, lower).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        lower = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + lower.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + multigammaln(nu / 2, p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + multigammaln(y + (p + 1) / 2, p))
