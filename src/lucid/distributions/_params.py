"""What the discrete families share: the either-or check of ``probs`` and ``logits``, the lazily derived other
parameter, ``expand`` of whichever of the two was given, and the layout of ``enumerate_support``."""
from __future__ import annotations

from .._tensor import Size
from .utils import lazy_property, logits_to_probs, probs_to_logits


def enumerate_along(values, batch_shape, expand: bool):
    """The support ``values`` (count, *event_shape) of a discrete distribution with a batch dimension for each of
    ``batch_shape`` inserted after the first (``expand``: broadcast to it, else singletons)."""
    count, event = values.shape[0], tuple(values.shape[1:])
    values = values.reshape((count,) + (1,) * len(batch_shape) + event)
    return values.expand((count,) + tuple(batch_shape) + event) if expand else values


def check_probs_or_logits(probs, logits) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def expand_probs_or_logits(source, new, shape) -> None:
    """Give ``new`` the parameter ``source`` holds (``probs``, ``logits`` or both), expanded to ``shape``."""
    shape = tuple(shape)
    for name in ("probs", "logits"):
        if name in source.__dict__:
            setattr(new, name, getattr(source, name).expand(shape))
            new._param = getattr(new, name)


class BinaryParams:
    """Mixin: ``probs`` (of success) and ``logits`` (its log-odds), each derived from the other on first use."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return Size(self._param.shape)

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)
