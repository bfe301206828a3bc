"""``HalfNormal(scale)``: |X| for X ~ Normal(0, scale)."""
from __future__ import annotations

__all__ = ["HalfNormal"]

import math

from ._half import FoldedAtZero
from .normal import Normal


class HalfNormal(FoldedAtZero):
    """The half-normal distribution: the absolute value of a Normal(0, ``scale``).

    :param scale: the scale (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    base_family = Normal

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfNormal, _instance))

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
