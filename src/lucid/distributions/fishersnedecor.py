"""``FisherSnedecor(df1, df2)``: the F distribution, (X1 / df1) / (X2 / df2) for chi-squared X1, X2."""
from __future__ import annotations

__all__ = ["FisherSnedecor"]

import math

from .._tensor import Size
from ..ops.elementwise import where
from ..special import gammaln
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, finfo_tiny, params_batch_shape


class FisherSnedecor(Distribution):
    """The Fisher-Snedecor (F) distribution with ``df1`` and ``df2`` degrees of freedom.

    :param df1: the numerator's degrees of freedom (> 0).
    :param df2: the denominator's degrees of freedom (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(params_batch_shape((df1, df2), self.df1), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(FisherSnedecor, batch_shape, _instance, "df1", "df2")
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = finfo_tiny(x2.dtype)
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = gammaln(ct1 + ct2) - gammaln(ct1) - gammaln(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
