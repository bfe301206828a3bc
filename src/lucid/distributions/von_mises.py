"""``VonMises(loc, concentration)``: the circular normal distribution on (-pi, pi]."""
from __future__ import annotations

__all__ = ["VonMises"]

import math

from .._grad_mode import no_grad
from .._random import next_key
from .._tensor import Size, _wrap
from ..special import i0e, i1e
from . import constraints
from ._sampling import von_mises
from .distribution import Distribution
from .utils import broadcast_all, lazy_property


def _log_i0(x):
    """log I0(x), from the exponentially scaled Bessel function (I0 itself overflows for large x)."""
    return i0e(x).log() + x


class VonMises(Distribution):
    """The von Mises distribution: density exp(concentration cos(x - loc)) / (2 pi I0(concentration)) on the
    circle. ``sample`` has no gradient (``has_rsample`` is False, as in PyTorch).

    :param loc: the mean angle, in radians.
    :param concentration: the concentration, kappa (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration * (value - self.loc).cos() - math.log(2 * math.pi) - _log_i0(self.concentration)

    @no_grad()
    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        return _wrap(von_mises(self.loc.mlx, self.concentration.mlx, shape, next_key()))

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, _instance, "loc", "concentration")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance, 1 - I1(kappa) / I0(kappa)."""
        return 1 - i1e(self.concentration) / i0e(self.concentration)
