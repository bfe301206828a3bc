"""``MixtureSameFamily(mixture_distribution, component_distribution)``: a finite mixture of distributions of one
family, the mixture weights a Categorical over the components' rightmost batch dimension."""
from __future__ import annotations

__all__ = ["MixtureSameFamily"]

from .._grad_mode import no_grad
from .._tensor import Size
from ..ops.index import gather
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamily(Distribution):
    """p(x) = sum_k pi_k p_k(x): ``mixture_distribution`` a Categorical of batch shape B (broadcastable) over K
    components, ``component_distribution`` of batch shape B + (K,). E.g. a Gaussian mixture:
    ``MixtureSameFamily(Categorical(logits=w), Normal(mu, sigma))`` with w, mu, sigma of shape (K,).

    :param mixture_distribution: a Categorical over the components (batch shape the components' minus the last dim).
    :param component_distribution: the components, a distribution whose rightmost batch dim indexes them.
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        mdbs = mixture_distribution.batch_shape
        cdbs = Size(component_distribution.batch_shape[:-1])
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(batch_shape=cdbs, event_shape=component_distribution.event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(tuple(batch_shape)
                                                                           + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        """The law of total variance: E[Var(x | k)] + Var(E[x | k])."""
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = (probs * self.component_distribution.variance).sum(-1 - self._event_ndims)
        var_cond_mean = (probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)).sum(
            -1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix_prob = self.mixture_distribution.logits.log_softmax(dim=-1)
        return (log_prob_x + log_mix_prob).logsumexp(dim=-1)

    def sample(self, sample_shape=Size()):
        with no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            event = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            index = mix_sample.reshape(tuple(mix_sample.shape) + (1,) * (len(event) + 1))
            index = index.expand(tuple(mix_sample.shape) + (1,) + event)
            return gather(comp_samples, gather_dim, index).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(xs[:-1] + (1,) * pad_ndims + xs[-1:] + (1,) * self._event_ndims)

    def __repr__(self) -> str:
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
