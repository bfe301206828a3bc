"""``Exponential(rate)``."""
from __future__ import annotations

__all__ = ["Exponential"]

from .._creation import zeros_like
from .._tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, params_batch_shape, standard_uniform


class Exponential(ExponentialFamily):
    """The exponential distribution with rate ``rate`` (mean 1 / rate).

    :param rate: the rate (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(params_batch_shape((rate,), self.rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Exponential, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        # -log(1 - u), u in [0, 1): a standard exponential draw (never log 0)
        u = standard_uniform(self._extended_shape(sample_shape), self.rate.dtype)
        return -(-u).log1p() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()
