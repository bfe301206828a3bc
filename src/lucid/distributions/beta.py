"""``Beta(concentration1, concentration0)``: the first coordinate of a two-category Dirichlet."""
from __future__ import annotations

__all__ = ["Beta"]

from numbers import Number

from .._creation import tensor
from .._dtype import get_default_dtype
from .._tensor import Size
from ..ops.shape import stack
from ..special import gammaln
from . import constraints
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Beta(ExponentialFamily):
    """The Beta distribution on [0, 1], density proportional to x^(c1 - 1) (1 - x)^(c0 - 1); held as a
    Dirichlet over (x, 1 - x), whose Gamma draws make it reparameterized.

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
        if isinstance(concentration1, Number) and isinstance(concentration0, Number):
            both = tensor([float(concentration1), float(concentration0)], dtype=get_default_dtype())
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        ExponentialFamily.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x, y):
        return gammaln(x) + gammaln(y) - gammaln(x + y)
