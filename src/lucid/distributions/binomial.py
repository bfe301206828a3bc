"""``Binomial(total_count, probs | logits)``: successes in ``total_count`` independent trials."""
from __future__ import annotations

__all__ = ["Binomial"]

from .._creation import arange
from .._grad_mode import no_grad
from .._tensor import Size, _wrap
from ..special import gammaln
from . import _counts, constraints
from ._params import BinaryParams, check_probs_or_logits, enumerate_along, expand_probs_or_logits
from .distribution import Distribution
from .utils import broadcast_all


def _clamp_by_zero(x):
    """max(x, 0), with gradient 1/2 at 0 (as PyTorch's)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def common_count(total_count, what: str) -> int:
    """The one total count of every batch element (``enumerate_support`` and ``entropy`` need it to be shared)."""
    count = int(total_count.max())
    if not total_count.min() == count:
        raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
    return count


class Binomial(BinaryParams, Distribution):
    """The Binomial distribution: the number of successes in ``total_count`` trials of probability ``probs``
    (or sigmoid(``logits``)); ``total_count`` broadcasts with the probabilities.

    :param total_count: the number of trials (>= 0).
    :param probs: the event probabilities (give ``probs`` or ``logits``, not both).
    :param logits: the event log-odds (unnormalized log-probabilities for categorical families).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        check_probs_or_logits(probs, logits)
        total_count, self._param = broadcast_all(total_count, probs if probs is not None else logits)
        self.total_count = total_count.type_as(self._param)
        setattr(self, "probs" if probs is not None else "logits", self._param)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        new.total_count = self.total_count.expand(tuple(batch_shape))
        expand_probs_or_logits(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            count, probs = self.total_count.expand(shape), self.probs.expand(shape)
            return _wrap(_counts.binomial(count.mlx, probs.mlx))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        # log(1 + e^l) written so that it neither overflows nor loses the small term
        normalizer = n * _clamp_by_zero(self.logits) + n * (-self.logits.abs()).exp().log1p() - gammaln(n + 1)
        return value * self.logits - gammaln(value + 1) - gammaln(n - value + 1) - normalizer

    def entropy(self):
        common_count(self.total_count, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True):
        count = common_count(self.total_count, "enumerate_support")
        return enumerate_along(arange(count + 1, dtype=self._param.dtype), self._batch_shape, expand)
