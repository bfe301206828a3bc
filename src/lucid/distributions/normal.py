"""``Normal(loc, scale)``: the Gaussian distribution."""
from __future__ import annotations

__all__ = ["Normal"]

import math
from numbers import Real

from .._tensor import Size
from ..ops.elementwise import erf, erfinv
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, params_batch_shape, standard_normal


class Normal(ExponentialFamily):
    """The normal (Gaussian) distribution with mean ``loc`` and standard deviation ``scale``.

    :param loc: the mean.
    :param scale: the standard deviation (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).

    >>> import lucid
    >>> d = lucid.distributions.Normal(0.0, 1.0)
    >>> round(d.log_prob(lucid.tensor(0.0)).item(), 4)
    -0.9189
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(params_batch_shape((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Normal, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=Size()):
        eps = standard_normal(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * self.variance) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self):
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
