"""``InverseGamma(concentration, rate)``: 1 / X for X ~ Gamma(concentration, rate)."""
from __future__ import annotations

__all__ = ["InverseGamma"]

import math

from ..ops.elementwise import where
from ..special import digamma, gammaln
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform


class InverseGamma(TransformedDistribution):
    """The inverse-Gamma distribution: the reciprocal of a Gamma(``concentration``, ``rate``) (``rate`` is the
    scale of the result).

    :param concentration: the concentration (> 0).
    :param rate: the rate (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base_dist, PowerTransform(-base_dist.rate.new_ones(())), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(InverseGamma, _instance))

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        return where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        result = self.rate.square() / ((self.concentration - 1).square() * (self.concentration - 2))
        return where(self.concentration > 2, result, math.inf)

    def entropy(self):
        return (self.concentration + self.rate.log() + gammaln(self.concentration)
                - (1 + self.concentration) * digamma(self.concentration))
