"""``Gamma(concentration, rate)``, reparameterized through the implicit gradient of the standard Gamma draw."""
from __future__ import annotations

__all__ = ["Gamma"]

from .._tensor import Size, Tensor
from ..ops.elementwise import xlogy
from ..special import digamma, gammainc, gammaln
from . import constraints
from ._sampling import standard_gamma
from .exp_family import ExponentialFamily
from .utils import broadcast_all, finfo_tiny, params_batch_shape


class Gamma(ExponentialFamily):
    """The Gamma distribution with shape ``concentration`` and inverse scale ``rate`` (mean concentration / rate).

    :param concentration: the concentration (> 0).
    :param rate: the rate (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(params_batch_shape((concentration, rate), self.concentration), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, "concentration", "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=finfo_tiny(value.dtype))  # a draw that underflowed to 0 has no log density

    def log_prob(self, value):
        if not isinstance(value, Tensor):  # a number or an array, as torch.as_tensor takes it
            value = self.rate.new_tensor(value)
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value) - self.rate * value
                - gammaln(self.concentration))

    def entropy(self):
        return (self.concentration - self.rate.log() + gammaln(self.concentration)
                + (1.0 - self.concentration) * digamma(self.concentration))

    @property
    def _natural_params(self):
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return gammaln(x + 1) + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)
