"""``OneHotCategorical`` and ``OneHotCategoricalStraightThrough``: a Categorical draw as a one-hot vector."""
from __future__ import annotations

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]

from .._creation import eye
from .._tensor import Size
from ..ops.nn_basic import one_hot
from . import constraints
from ._params import enumerate_along
from .categorical import Categorical
from .distribution import Distribution


class OneHotCategorical(Distribution):
    """A Categorical(``probs`` | ``logits``) draw k as the vector e_k of length K (event shape (K,)).

    :param probs: the event probabilities (give ``probs`` or ``logits``, not both).
    :param logits: the event log-odds (unnormalized log-probabilities for categorical families).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=Size()):
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(self._categorical.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True):
        n = self.event_shape[0]
        return enumerate_along(eye(n, dtype=self._param.dtype), self.batch_shape, expand)


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical with the straight-through gradient estimator (Bengio et al., 2013): ``rsample`` is the
    one-hot draw in value and has the gradient of ``probs``.

    :param probs: the event probabilities (give ``probs`` or ``logits``, not both).
    :param logits: the event log-odds (unnormalized log-probabilities for categorical families).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    has_rsample = True

    def rsample(self, sample_shape=Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
