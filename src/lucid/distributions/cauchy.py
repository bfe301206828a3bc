"""``Cauchy(loc, scale)``."""
from __future__ import annotations

__all__ = ["Cauchy"]

import math

from .._creation import full
from .._tensor import Size
from ..ops.elementwise import atan, tan
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, open_uniform, params_batch_shape


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution: the ratio of two independent zero-mean normals. Its mean is
    undefined (NaN) and its variance infinite.

    :param loc: the location (broadcast against the other parameters).
    :param scale: the scale (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(params_batch_shape((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Cauchy, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=Size()):
        u = open_uniform(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + tan(math.pi * (u - 0.5)) * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
