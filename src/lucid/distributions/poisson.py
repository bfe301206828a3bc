"""``Poisson(rate)``: counts of events that occur independently at a constant rate."""
from __future__ import annotations

__all__ = ["Poisson"]

from numbers import Number

from .._grad_mode import no_grad
from .._tensor import Size, _wrap
from ..ops.elementwise import xlogy
from ..special import gammaln
from . import _counts, constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Poisson(ExponentialFamily):
    """P(X = k) = rate^k e^(-rate) / k!. Samples are exact (inversion below rate 10, transformed rejection above).

    :param rate: the rate (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(Size() if isinstance(rate, Number) else self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        with no_grad():
            return _wrap(_counts.poisson(self.rate.expand(tuple(self._extended_shape(sample_shape))).mlx))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - gammaln(value + 1)

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()
