"""``ExponentialFamily``: distributions whose density is exp(<t(x), theta> - F(theta) + k(x)).

Knowing the natural parameters theta and the log normalizer F gives the entropy for free: it is
F(theta) - <theta, grad F(theta)> - E[k(x)] (Nielsen & Nock, "Entropies and cross-entropies of exponential
families"), with grad F taken by lucid's autograd (``create_graph``, so the entropy stays differentiable). The
Bregman divergence of F gives the KL divergence between two members of one family the same way.
"""
from __future__ import annotations

__all__ = ["ExponentialFamily"]

from ..autograd import enable_grad, grad
from .distribution import Distribution


class ExponentialFamily(Distribution):
    """Base class of the exponential-family distributions (see the module docstring).

    :param batch_shape: the shape of the batch of distributions.
    :param event_shape: the shape of one sample.
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    @property
    def _natural_params(self) -> tuple:
        """The natural parameters theta, one Tensor each."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """F(theta), batched over ``batch_shape``."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        """E[k(x)]."""
        raise NotImplementedError

    def entropy(self):
        """F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with enable_grad():
            log_norm = self._log_normalizer(*params)
            grads = grad(log_norm.sum(), params, create_graph=True)
        result = result + log_norm
        for theta, g in zip(params, grads):
            result = result - (theta * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
