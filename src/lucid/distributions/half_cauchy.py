"""``HalfCauchy(scale)``: |X| for X ~ Cauchy(0, scale)."""
from __future__ import annotations

__all__ = ["HalfCauchy"]

import math

from .._creation import full
from ._half import FoldedAtZero
from .cauchy import Cauchy


class HalfCauchy(FoldedAtZero):
    """The half-Cauchy distribution: the absolute value of a Cauchy(0, ``scale``) (infinite mean).

    :param scale: the scale (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    base_family = Cauchy

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfCauchy, _instance))

    @property
    def mean(self):
        return full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance
