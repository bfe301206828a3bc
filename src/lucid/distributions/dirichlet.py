"""``Dirichlet(concentration)``: the distribution on the probability simplex, reparameterized through Gamma draws."""
from __future__ import annotations

__all__ = ["Dirichlet"]

from .._tensor import Size
from ..ops.elementwise import where, xlogy
from ..ops.nn_basic import one_hot
from ..special import digamma, gammaln
from . import constraints
from ._sampling import standard_gamma
from .exp_family import ExponentialFamily
from .utils import finfo_tiny


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution with ``concentration`` (..., K) > 0: batch shape ``concentration.shape[:-1]``,
    event shape (K,). A draw normalises K independent Gamma(concentration_k, 1) draws, whose implicit
    reparameterization gradients make ``rsample`` differentiable in the concentration.

    :param concentration: the concentration (> 0).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        gammas = standard_gamma(self.concentration.expand(tuple(self._extended_shape(sample_shape))))
        draw = gammas / gammas.sum(-1, keepdim=True)
        tiny = finfo_tiny(draw.dtype)
        return draw.clamp(min=tiny, max=1 - tiny)  # as PyTorch: every coordinate strictly inside (0, 1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration - 1.0, value).sum(-1) + gammaln(self.concentration.sum(-1))
                - gammaln(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        """(c - 1) / sum(c - 1) with the negative parts clamped to 0. Where every concentration is below 1 that is
        0 / 0 and the density peaks at the vertices: PyTorch gives the one-hot vector at the argmax of that row of
        NaNs (the first category), and so does this."""
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, keepdim=True)
        vertex = one_hot(mode.argmax(dim=-1), shifted.shape[-1]).to(mode.dtype)
        return where((self.concentration < 1).all(dim=-1, keepdim=True), vertex, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        k = self.concentration.shape[-1]
        total = self.concentration.sum(-1)
        return (gammaln(self.concentration).sum(-1) - gammaln(total) - (k - total) * digamma(total)
                - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return gammaln(x).sum(-1) - gammaln(x.sum(-1))
