"""``ContinuousBernoulli(probs=None, logits=None)``: the continuous Bernoulli on [0, 1] (Loaiza-Ganem &
Cunningham, "The continuous Bernoulli: fixing a pervasive error in variational autoencoders", 2019)."""
from __future__ import annotations

__all__ = ["ContinuousBernoulli"]

import math
from numbers import Number

from .._creation import ones_like, zeros_like
from .._grad_mode import no_grad
from .._tensor import Size
from ..nn.functional import binary_cross_entropy_with_logits
from ..ops.elementwise import where
from . import constraints
from .distribution import all_true
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits, standard_uniform


class ContinuousBernoulli(ExponentialFamily):
    """The density is C(p) p^x (1 - p)^(1 - x) on [0, 1], with C(p) its normalising constant. Near p = 1/2 (inside
    ``lims``) the closed forms cancel catastrophically and Taylor expansions around 1/2 are used instead.

    :param probs: the event probabilities (give ``probs`` or ``logits``, not both).
    :param logits: the event log-odds (unnormalized log-probabilities for categorical families).
    :param lims: the interval of probabilities around 0.5 where the normalizer uses its Taylor expansion.
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # checked before clamping (which would hide invalid values), when validation is asked for explicitly
            if validate_args is not None and not all_true(self.arg_constraints["probs"].check(self.probs)):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(Size() if is_scalar else self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        batch_shape = Size(batch_shape)
        new._lims = self._lims
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        ExponentialFamily.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs, with those in the unstable region replaced by lims[0] (their results come from Taylor series)."""
        return where(self._outside_unstable_region(), self.probs, self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(p), the log normalising constant as a function of probs."""
        cut = self._cut_probs()
        below_half = where(cut <= 0.5, cut, zeros_like(cut))
        above_half = where(cut >= 0.5, cut, ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - where(
            cut <= 0.5, (-2.0 * below_half).log1p(), (2.0 * above_half - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / ((-cut).log1p() - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    def sample(self, sample_shape=Size()):
        u = standard_uniform(self._extended_shape(sample_shape), self.probs.dtype)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        return self.icdf(standard_uniform(self._extended_shape(sample_shape), self.probs.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, zeros_like(value), where(value >= 1.0, ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inverted = ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p())
        return where(self._outside_unstable_region(), inverted, value)

    def entropy(self):
        log_p0 = (-self.probs).log1p()
        log_p1 = self.probs.log()
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log C as a function of the natural parameter (the logits)."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(outside, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)
