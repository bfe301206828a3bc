"""``Gumbel(loc, scale)``: loc - scale log(-log U) for U uniform."""
from __future__ import annotations

__all__ = ["Gumbel"]

import math

from .._creation import full_like, ones_like
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant, finfo_eps, finfo_tiny, params_batch_shape


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution with location ``loc`` and scale ``scale``.

    :param loc: the location (broadcast against the other parameters).
    :param scale: the scale (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        tiny, eps = finfo_tiny(self.loc.dtype), finfo_eps(self.loc.dtype)
        if params_batch_shape((loc, scale), self.loc) == ():
            base_dist = Uniform(tiny, 1 - eps, validate_args=validate_args)
        else:
            base_dist = Uniform(full_like(self.loc, tiny), full_like(self.loc, 1 - eps), validate_args=validate_args)
        # U -> -log U -> log(-log U) ... -> loc - scale log(-log U)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)), ExpTransform().inv,
                      AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
