"""``Independent``: reinterpret batch dimensions of a distribution as event dimensions."""
from __future__ import annotations

__all__ = ["Independent"]

from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import sum_rightmost


class Independent(Distribution):
    """``base_distribution`` with its ``reinterpreted_batch_ndims`` rightmost batch dimensions made event
    dimensions: ``log_prob`` and ``entropy`` sum over them. E.g. a diagonal Gaussian over vectors is
    ``Independent(Normal(loc, scale), 1)`` with ``loc`` of shape (..., D).

    :param base_distribution: the distribution transformed (or whose batch dims are reinterpreted).
    :param reinterpreted_batch_ndims: how many rightmost batch dims become event dims.
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims: int, validate_args=None) -> None:
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = Size(batch_shape)
        new.base_dist = self.base_dist.expand(tuple(batch_shape)
                                              + tuple(self.event_shape[:self.reinterpreted_batch_ndims]))
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=Size()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"
