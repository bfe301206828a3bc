"""``StudentT(df, loc=0., scale=1.)``."""
from __future__ import annotations

__all__ = ["StudentT"]

import math

from .._tensor import Size
from ..ops.elementwise import where
from ..special import digamma, gammaln
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all, standard_normal


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``; sampled as
    loc + scale X / sqrt(Z / df), X standard normal, Z ~ Chi2(df) (reparameterized through both).

    :param df: the degrees of freedom (> 0).
    :param loc: the location (broadcast against the other parameters).
    :param scale: the scale (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(StudentT, batch_shape, _instance, "df", "loc", "scale")
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return where(self.df <= 1, math.nan, self.loc)  # undefined for df <= 1

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # scale^2 df / (df - 2) for df > 2; infinite for 1 < df <= 2; undefined for df <= 1
        finite = where(self.df > 2, self.df, 3.0)
        result = where(self.df > 2, self.scale.pow(2) * finite / (finite - 2), math.inf)
        return where(self.df <= 1, math.nan, result)

    def rsample(self, sample_shape=Size()):
        x = standard_normal(self._extended_shape(sample_shape), self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + gammaln(0.5 * self.df)
                    - gammaln(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - log_norm

    def entropy(self):
        lbeta = gammaln(0.5 * self.df) + math.lgamma(0.5) - gammaln(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
