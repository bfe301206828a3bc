"""``Distribution``: the base class of every distribution (``torch.distributions.Distribution``).

A distribution has a ``batch_shape`` (independent, differently parameterised copies) and an ``event_shape`` (the
shape of one draw); ``sample(sample_shape)`` has shape ``sample_shape + batch_shape + event_shape``.

Validation, as in PyTorch: with ``validate_args`` on (the default unless Python runs with ``-O``;
``Distribution.set_default_validate_args`` changes it), the constructor checks every parameter against its
``arg_constraints`` and ``log_prob``/``cdf``/``icdf`` check the value's shape and support, raising ``ValueError``.
Those checks read values, so they evaluate the parameters once; ``validate_args=False`` skips them (and inside a
``lucid.compile`` or ``lucid.func`` trace, where nothing can be evaluated, value checks are skipped).
"""
from __future__ import annotations

__all__ = ["Distribution"]

import warnings

from .._grad_mode import no_grad
from .._pending import _tracing
from .._tensor import Size, Tensor
from ..ops.shape import stack
from . import constraints
from .utils import lazy_property


def all_true(valid: Tensor) -> bool:
    """Whether every entry of the boolean ``valid`` is True (True inside a trace, where it cannot be read)."""
    return _tracing() or bool(valid.all())


class Distribution:
    """The abstract base class for probability distributions.

    :param batch_shape: the shape over which the parameters are batched.
    :param event_shape: the shape of a single sample (without batching).
    :param validate_args: whether to validate the arguments (None: the class default).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution made afterwards (the default mimics
        ``assert``: on, unless Python runs with ``-O``)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args: bool | None = None) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                          "or initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=3)
        checked = []
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # derived lazily from another parameter, which is checked
            value = getattr(self, param)
            checked.append((param, constraint, value, constraint.check(value).all()))
        if not checked or _tracing():
            return
        # one evaluation for all the parameters (reading each verdict alone would evaluate once per parameter)
        verdicts = stack([ok for *_, ok in checked]).tolist()
        for (param, constraint, value, _), ok in zip(checked, verdicts):
            if not ok:
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                                 f"but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A new distribution with the batch dimensions expanded to ``batch_shape`` (the parameters are expanded,
        not copied, and not validated again)."""
        raise NotImplementedError

    def _expand_params(self, cls, batch_shape, _instance, *names):
        """``expand`` for a distribution whose state is the parameters ``names`` (each of the batch shape):
        a new instance of ``cls`` holding them expanded, with this one's validation setting."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        for name in names:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def batch_shape(self) -> Size:
        """The shape over which the parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """The constraint each parameter must satisfy, by name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint that samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()) -> Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape``, not connected to the parameters."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        """A reparameterized sample: gradients flow from it to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """``n`` samples (deprecated: ``sample((n,))``)."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete distribution, along dimension 0: shape ``(cardinality,) + batch_shape +
        event_shape`` (``expand=False``: singleton batch dimensions)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """exp(entropy), of shape ``batch_shape``."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()) -> Size:
        """``sample_shape + batch_shape + event_shape``."""
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value) -> None:
        """Check a value given to ``log_prob``/``cdf``/``icdf``: a Tensor whose rightmost dimensions match the event
        shape, broadcastable with ``batch_shape + event_shape``, inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = value.shape
        start = len(shape) - len(self._event_shape)
        if tuple(shape[start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {shape} vs {self._event_shape}.")
        expected = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {shape} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=2)
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        if not all_true(support.check(value)):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                             f"to be within the support ({support!r}) of the distribution {self!r}, "
                             f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        """The instance ``expand`` fills: a bare one of this class (a subclass with its own ``__init__`` must
        define its own ``expand``)."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                         for p in names)
        return f"{type(self).__name__}({args})"
