"""``ExpRelaxedCategorical`` and ``RelaxedOneHotCategorical``: the Concrete / Gumbel-softmax relaxation of a
Categorical draw (Maddison et al., 2017; Jang et al., 2017), reparameterized."""
from __future__ import annotations

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]

from .._creation import full_like
from .._tensor import Size
from ..special import gammaln
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs, standard_uniform


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical draw: log softmax((logits + Gumbel noise) / temperature), a point
    of the log-simplex (event shape (K,)). Working in log space keeps small probabilities accurate.

    :param temperature: the relaxation temperature (> 0; smaller is closer to discrete).
    :param probs: the event probabilities (give ``probs`` or ``logits``, not both).
    :param logits: the event log-odds (unnormalized log-probabilities for categorical families).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=Size()):
        uniforms = clamp_probs(standard_uniform(self._extended_shape(sample_shape), self.logits.dtype))
        gumbels = -(-uniforms.log()).log()
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = gammaln(full_like(self.temperature, float(k))) + self.temperature.log() * (k - 1)
        score = logits - value * self.temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """softmax((logits + Gumbel noise) / temperature): a point of the simplex that approaches a one-hot
    Categorical draw as ``temperature`` goes to 0; ``rsample`` is differentiable in the logits (and the
    temperature).

    :param temperature: the relaxation temperature (> 0; smaller is closer to discrete).
    :param probs: the event probabilities (give ``probs`` or ``logits``, not both).
    :param logits: the event log-odds (unnormalized log-probabilities for categorical families).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
