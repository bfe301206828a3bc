"""What HalfNormal and HalfCauchy share: |X| for X of a distribution symmetric about 0 with a ``scale``, whose
density, cdf, quantile and entropy follow from the base's by folding (a factor 2 on the half line)."""
from __future__ import annotations

import math

from .._creation import zeros_like
from .._tensor import Tensor
from ..ops.elementwise import where
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class FoldedAtZero(TransformedDistribution):
    """``base(0, scale)`` folded at 0 by ``AbsTransform``; subclasses name the base family."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base_family = None  # the symmetric family, called as base_family(0, scale)

    def __init__(self, scale, validate_args=None) -> None:
        base_dist = self.base_family(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        if not isinstance(value, Tensor):
            value = self.scale.new_tensor(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
