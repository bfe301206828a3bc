"""``Bernoulli(probs | logits)``: one trial, 1 with probability ``probs``."""
from __future__ import annotations

__all__ = ["Bernoulli"]

import math
from numbers import Number

from .._creation import arange
from .._tensor import Size
from ..ops.elementwise import where
from ..ops.loss import binary_cross_entropy_with_logits
from ..ops.tensor_api import bernoulli
from ..special import logit
from . import constraints
from ._params import BinaryParams, check_probs_or_logits, enumerate_along, expand_probs_or_logits
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Bernoulli(BinaryParams, ExponentialFamily):
    """The Bernoulli distribution: 1 with probability ``probs`` (or sigmoid(``logits``)), else 0.

    :param probs: the event probabilities (give ``probs`` or ``logits``, not both).
    :param logits: the event log-odds (unnormalized log-probabilities for categorical families).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        check_probs_or_logits(probs, logits)
        given = probs if probs is not None else logits
        (self._param,) = broadcast_all(given)
        setattr(self, "probs" if probs is not None else "logits", self._param)
        batch_shape = Size() if isinstance(given, Number) else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        expand_probs_or_logits(self, new, batch_shape)
        ExponentialFamily.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        """1 where probs > 1/2, 0 where below, NaN at exactly 1/2 (both are modes)."""
        return where(self.probs == 0.5, math.nan, (self.probs > 0.5).to(self.probs.dtype))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        return bernoulli(self.probs.detach().expand(tuple(self._extended_shape(sample_shape))))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True):
        return enumerate_along(arange(2, dtype=self._param.dtype), self._batch_shape, expand)

    @property
    def _natural_params(self):
        return (logit(self.probs),)

    def _log_normalizer(self, x):
        return x.exp().log1p()
