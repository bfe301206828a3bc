"""``Uniform(low, high)``: the uniform distribution on [low, high)."""
from __future__ import annotations

__all__ = ["Uniform"]

import math

from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, params_batch_shape, standard_uniform


class Uniform(Distribution):
    """Uniform on the half-open interval [low, high).

    :param low: the lower bound (inclusive).
    :param high: the upper bound (exclusive).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    has_rsample = True

    def __init__(self, low, high, validate_args=None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(params_batch_shape((low, high), self.low), validate_args=validate_args)

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Uniform, batch_shape, _instance, "low", "high")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=Size()):
        u = standard_uniform(self._extended_shape(sample_shape), self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value).type_as(self.low) * (self.high > value).type_as(self.low)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
