"""``GeneralizedPareto(loc, scale, concentration)``: the limit distribution of threshold exceedances."""
from __future__ import annotations

__all__ = ["GeneralizedPareto"]

import math
from numbers import Real

from .._creation import ones_like
from .._tensor import Size
from ..ops.elementwise import isclose, where
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, params_batch_shape, standard_uniform


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution: Exponential(1 / scale) shifted by ``loc`` at concentration 0,
    heavy-tailed for concentration > 0, bounded above by loc - scale / concentration for concentration < 0.

    :param loc: the location (broadcast against the other parameters).
    :param scale: the scale (> 0).
    :param concentration: the shape, xi.
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(params_batch_shape((loc, scale, concentration), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, "loc", "scale", "concentration")

    def rsample(self, sample_shape=Size()):
        return self.icdf(standard_uniform(self._extended_shape(sample_shape), self.loc.dtype))

    def _safe_concentration(self):
        """(concentration == 0, the concentration with its zeros replaced by 1): the zero case has its own
        formula, and the general one must not divide by zero on the branch ``where`` discards."""
        eq_zero = isclose(self.concentration, self.concentration.new_zeros(()))
        return eq_zero, where(eq_zero, ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, conc = self._safe_concentration()
        y = 1 / conc + ones_like(z)
        nonzero = where(y == 0, y, y * (conc * z).log1p())
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, conc = self._safe_concentration()
        return where(eq_zero, -z, -(conc * z).log1p() / conc)

    def log_cdf(self, value):
        """log P(X <= value)."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        eq_zero, conc = self._safe_concentration()
        log_u = (-value).log1p()
        return where(eq_zero, self.loc - self.scale * log_u, self.loc + self.scale / conc * (-conc * log_u).expm1())

    @property
    def mean(self):
        valid = self.concentration < 1
        conc = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        conc = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - conc) ** 2 * (1 - 2 * conc)), math.nan)

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).broadcast_to(tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
