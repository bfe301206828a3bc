"""``Geometric(probs | logits)``: the number of failures before the first success."""
from __future__ import annotations

__all__ = ["Geometric"]

from numbers import Number

from .._grad_mode import no_grad
from .._tensor import Size
from ..ops.elementwise import where
from ..ops.index import masked_select
from ..ops.loss import binary_cross_entropy_with_logits
from . import constraints
from ._params import BinaryParams, check_probs_or_logits, expand_probs_or_logits
from .distribution import Distribution, all_true
from .utils import broadcast_all, open_uniform


class Geometric(BinaryParams, Distribution):
    """P(X = k) = (1 - p)^k p for k = 0, 1, ...: trial k + 1 is the first success (``Tensor.geometric_`` counts
    the trials instead, from 1). ``probs`` must lie in (0, 1].

    :param probs: the probability of success of each trial (give ``probs`` or ``logits``).
    :param logits: the event log-odds (unnormalized log-probabilities for categorical families).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        check_probs_or_logits(probs, logits)
        given = probs if probs is not None else logits
        (self._param,) = broadcast_all(given)
        setattr(self, "probs" if probs is not None else "logits", self._param)
        super().__init__(Size() if isinstance(given, Number) else self._param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            valid = self.probs > 0
            if not all_true(valid):
                raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                                 f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but found "
                                 f"invalid values:\n{masked_select(self.probs.detach(), ~valid)}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        expand_probs_or_logits(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return self.probs.new_zeros(self.probs.shape)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):
        with no_grad():
            u = open_uniform(self._extended_shape(sample_shape), self.probs.dtype)
            return (u.log() / (-self.probs).log1p()).floor()  # inversion of the survival function (1 - p)^(k+1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = where((probs == 1) & (value == 0), 0.0, probs)  # 0 * log(0) is 0 there: P(X = 0) = 1
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
