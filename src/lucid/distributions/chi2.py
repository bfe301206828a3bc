"""``Chi2(df)``: Gamma(df / 2, 1 / 2)."""
from __future__ import annotations

__all__ = ["Chi2"]

from . import constraints
from .gamma import Gamma


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom (Gamma(df / 2, rate 1 / 2)).

    :param df: the degrees of freedom (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self):
        return self.concentration * 2
