"""``Multinomial(total_count, probs | logits)``: counts of each of K categories in ``total_count`` draws."""
from __future__ import annotations

__all__ = ["Multinomial"]

import math

from .._creation import tensor
from .._tensor import Size
from ..ops.elementwise import where
from ..ops.nn_basic import one_hot
from ..special import gammaln
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all


class Multinomial(Distribution):
    """The counts (event shape (K,)) of ``total_count`` independent Categorical(``probs`` | ``logits``) draws.
    ``total_count`` is one int shared by the batch (``sample`` needs it; ``log_prob`` reads the count from the
    value).

    :param total_count: the number of trials.
    :param probs: the event probabilities (give ``probs`` or ``logits``, not both).
    :param logits: the event log-odds (unnormalized log-probabilities for categorical families).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs=None, logits=None, validate_args=None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        draws = self._categorical.sample((self.total_count,) + tuple(sample_shape))
        return one_hot(draws, self._categorical._num_events).sum(0).to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)  # 0 * log(0) is 0
        return gammaln(value.sum(-1) + 1) - gammaln(value + 1).sum(-1) + (logits * value).sum(-1)

    def entropy(self):
        """n H(categorical) - log n! + sum_k E[log x_k!], the expectation over each count's Binomial marginal."""
        n = tensor(float(self.total_count), dtype=self.probs.dtype)
        counts = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(counts).exp()
        return (n * self._categorical.entropy() - gammaln(n + 1)
                + (binomial_probs * gammaln(counts + 1)).sum(0).sum(-1))
