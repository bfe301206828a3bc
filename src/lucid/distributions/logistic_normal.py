"""``LogisticNormal(loc, scale)``: a Normal pushed onto the simplex by stick-breaking."""
from __future__ import annotations

__all__ = ["LogisticNormal"]

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform


class LogisticNormal(TransformedDistribution):
    """The logistic-normal distribution on the simplex: X ~ Normal(loc, scale) of K entries, then
    ``StickBreakingTransform`` to K + 1 probabilities.

    :param loc: the location (broadcast against the other parameters).
    :param scale: the scale (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(LogisticNormal, _instance))

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
