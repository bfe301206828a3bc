"""Averaged stochastic gradient descent (``torch.optim.ASGD``; Polyak and Juditsky 1992): SGD with a decaying step
size ``eta`` and a running average ``ax`` of the iterates that starts after ``t0`` steps."""
from __future__ import annotations

import mlx.core as mx

from .._threads import compiled_on_main_thread
from .optimizer import Optimizer, _assign, _f32, _float_arg, _head, _scalar_tensor, _wd_mode, _zeros_like

__all__ = ["ASGD"]


@compiled_on_main_thread
def asgd_update(x, g, ax, decay, neg_eta, mu, weight_decay, *, maximize, wd_mode):
    """g += weight_decay * x; x <- x * (1 - lambd * eta) - eta * g; ax <- x while mu == 1 (PyTorch copies), else
    ax + (x - ax) * mu. Returns ``(x, ax)``."""
    x, g = _head(x, g, weight_decay, None, maximize, wd_mode)
    x = x * decay + neg_eta * g
    return x, mx.where(mu == 1, x, ax + (x - ax) * mu)


class ASGD(Optimizer):
    r"""ASGD (``torch.optim.ASGD``), with PyTorch's update:

    .. code-block:: text

        g = -grad if maximize else grad;  g += weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = p if mu == 1 else ax + (p - ax) * mu
        eta = lr / (1 + lambd * lr * step) ** alpha;  mu = 1 / max(1, step - t0)

    State per parameter: ``step``, ``eta`` (``lr`` at first), ``mu`` (1 at first), all 0-d float32, and ``ax``.
    ``foreach``, ``capturable`` and ``differentiable`` are accepted and change nothing.

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param lambd: the decay term.
    :param alpha: the power of the eta update.
    :param t0: the step at which averaging starts.
    :param weight_decay: L2 penalty: ``weight_decay * p`` is added to the gradient.
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param maximize: maximize the objective (step along the gradient).
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    :param capturable: accepted for PyTorch's signature (for CUDA graphs).
    """

    _scalar_state = Optimizer._scalar_state | {"eta", "mu"}

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0, foreach=None, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        lr = _float_arg("lr", lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = _scalar_tensor(0.0)
        state["eta"] = _scalar_tensor(group["lr"])
        state["mu"] = _scalar_tensor(1.0)
        state["ax"] = _zeros_like(p)

    def _update(self, param, grad, state, hyper):
        x, dt, staged = param._st.data, grad.dtype, self._staged
        lr, lambd, alpha, t0, wd = hyper.lr, hyper.lambd, hyper.alpha, hyper.t0, hyper.weight_decay
        step = self._advance(state["step"], staged)
        eta, mu = self._scalar(state["eta"]), self._scalar(state["mu"])
        if type(step) is mx.array:  # traced by lucid.compile: the counts are arrays, computed with, never read
            new_eta, new_mu = lr / ((1 + lambd * lr * step) ** alpha), 1 / mx.maximum(step - t0, 1)
        else:  # eta and mu as PyTorch reads them: float32 values, in Python float arithmetic
            eta, mu = _f32(eta), _f32(mu)
            new_eta, new_mu = _f32(lr / ((1 + lambd * lr * step) ** alpha)), _f32(1 / max(1, step - t0))
        c = self._const
        ax = state["ax"]
        out = asgd_update(x, grad, ax._st.data, c(1 - lambd * eta, dt), c(-eta, dt), c(mu, dt), c(wd, dt),
                          maximize=hyper.maximize, wd_mode=_wd_mode(wd, False))
        _assign(param, out[0], staged)
        _assign(ax, out[1], staged)
        self._set_scalar(state["eta"], new_eta, staged)
        self._set_scalar(state["mu"], new_mu, staged)
