"""``Kumaraswamy(concentration1, concentration0)``: (1 - U^(1/b))^(1/a) for U uniform on [0, 1]."""
from __future__ import annotations

__all__ = ["Kumaraswamy"]

import math

from .._creation import full_like
from ..ops.elementwise import where
from ..special import digamma, gammaln
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant


def _moments(a, b, n):
    """The n-th moment: b B(1 + n / a, b)."""
    arg1 = 1 + n / a
    return b * (gammaln(arg1) + gammaln(b) - gammaln(arg1 + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on [0, 1], a Beta-like distribution with a closed-form cdf (so sampling is
    reparameterized without a Gamma draw).

    :param concentration1: the first concentration, alpha (> 0).
    :param concentration0: the second concentration, beta (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(full_like(self.concentration0, 0), full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        undefined = (self.concentration0 < 1) | (self.concentration1 < 1)
        return where(undefined, math.nan, log_mode).exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()
