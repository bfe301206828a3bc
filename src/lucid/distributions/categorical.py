"""``Categorical(probs | logits)``: one of K categories, as integers 0..K-1."""
from __future__ import annotations

__all__ = ["Categorical"]

import math

import mlx.core as mx

from .._creation import _key, arange, full
from .._dtype import int64
from .._tensor import Size, _wrap
from ..ops.index import gather
from ..ops.shape import broadcast_tensors
from . import constraints
from ._params import check_probs_or_logits, enumerate_along
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits


class Categorical(Distribution):
    """A draw is an index into the last dimension of ``probs`` (non-negative, normalised to sum to 1) or of
    ``logits`` (unnormalised log-probabilities, normalised with logsumexp); the leading dimensions are the batch.
    ``probs`` and ``logits`` read back normalised.

    :param probs: the event probabilities (give ``probs`` or ``logits``, not both).
    :param logits: the event log-odds (unnormalized log-probabilities for categorical families).
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).

    >>> import lucid
    >>> d = lucid.distributions.Categorical(probs=lucid.tensor([0.25, 0.75]))
    >>> d.probs
    Tensor([0.25, 0.75])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        check_probs_or_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(self._param.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        param_shape = tuple(batch_shape) + (self._num_events,)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(param_shape))
                new._param = getattr(new, name)
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return Size(self._param.shape)

    @property
    def mean(self):
        return full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        logits = self.logits.detach().mlx.astype(mx.float32)  # MLX's categorical draw works in float32
        return _wrap(mx.random.categorical(logits, axis=-1, shape=shape, key=_key(None)).astype(mx.int64))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, log_pmf = broadcast_tensors(value.long().unsqueeze(-1), self.logits)
        return gather(log_pmf, -1, value[..., :1]).squeeze(-1)

    def entropy(self):
        # a zero probability has logits -inf: the clamp makes its term 0 * (finite), not NaN
        logits = self.logits.clamp(min=float(mx.finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True):
        return enumerate_along(arange(self._num_events, dtype=int64), self._batch_shape, expand)
