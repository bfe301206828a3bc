"""``NegativeBinomial(total_count, probs | logits)``: successes before ``total_count`` failures."""
from __future__ import annotations

__all__ = ["NegativeBinomial"]

from .._grad_mode import no_grad
from .._tensor import Size, _wrap
from ..ops.activation import logsigmoid
from ..ops.elementwise import sigmoid
from ..special import gammaln
from . import _counts, constraints
from ._params import BinaryParams, check_probs_or_logits, expand_probs_or_logits
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, lazy_property


class NegativeBinomial(BinaryParams, Distribution):
    """The number of successes (probability ``probs`` each, or sigmoid(``logits``)) before ``total_count``
    failures; ``total_count`` > 0 may be real. Drawn as Poisson(Gamma(total_count, e^-logits)).

    :param total_count: the number of failures before the stop (> 0).
    :param probs: the event probabilities (give ``probs`` or ``logits``, not both).
    :param logits: the event log-odds (unnormalized log-probabilities for categorical families).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None) -> None:
        check_probs_or_logits(probs, logits)
        total_count, self._param = broadcast_all(total_count, probs if probs is not None else logits)
        self.total_count = total_count.type_as(self._param)
        setattr(self, "probs" if probs is not None else "logits", self._param)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        new.total_count = self.total_count.expand(tuple(batch_shape))
        expand_probs_or_logits(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return _wrap(_counts.poisson(self._gamma.sample(sample_shape).mlx))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -gammaln(self.total_count + value) + gammaln(1.0 + value) + gammaln(self.total_count)
        # total_count + value = 0 only at total_count = 0, value = 0: a point mass, probability 1
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
