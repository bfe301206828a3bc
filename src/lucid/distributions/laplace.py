"""``Laplace(loc, scale)``."""
from __future__ import annotations

__all__ = ["Laplace"]

from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, finfo_eps, params_batch_shape, standard_uniform


class Laplace(Distribution):
    """The Laplace (double exponential) distribution with location ``loc`` and scale ``scale``.

    :param loc: the location (broadcast against the other parameters).
    :param scale: the scale (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(params_batch_shape((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Laplace, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=Size()):
        # u uniform on [eps - 1, 1): |u| < 1, so log1p(-|u|) stays finite
        eps = finfo_eps(self.loc.dtype)
        u = standard_uniform(self._extended_shape(sample_shape), self.loc.dtype) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
