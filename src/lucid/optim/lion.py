"""Lion (EvoLved Sign Momentum; Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms").

PyTorch has no Lion; this follows the paper's Algorithm 2 and the widely used ``lion-pytorch`` implementation:
decoupled weight decay, a sign update from an interpolation of momentum and gradient, then the momentum update.
"""
from __future__ import annotations

import mlx.core as mx

from .._threads import compiled_on_main_thread
from .optimizer import Optimizer, _assign, _float_arg, _head, _wd_mode, _zeros_like

__all__ = ["Lion"]


@compiled_on_main_thread
def lion_update(x, g, m, beta1, one_minus_beta1, beta2, one_minus_beta2, neg_lr, decay, *, maximize, wd_mode):
    """x <- x (1 - lr wd); x <- x - lr sign(beta1 m + (1 - beta1) g); m <- beta2 m + (1 - beta2) g."""
    x, g = _head(x, g, None, decay, maximize, wd_mode)
    update = mx.sign(m * beta1 + one_minus_beta1 * g)
    return x + neg_lr * update, m * beta2 + one_minus_beta2 * g


class Lion(Optimizer):
    r"""Lion: ``p *= 1 - lr * weight_decay``; ``p -= lr * sign(beta1 * m + (1 - beta1) * g)``;
    ``m = beta2 * m + (1 - beta2) * g``. State: ``exp_avg``. Its sign update has unit size per coordinate, so the
    usual learning rate is 3-10x smaller than AdamW's and the weight decay 3-10x larger.

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param betas: the interpolation factor of the update (beta1) and the momentum's decay (beta2).
    :param weight_decay: the decoupled decay rate.
    :param maximize: maximize the objective (step along the gradient).
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    """

    def __init__(self, params, lr: float = 1e-4, betas=(0.9, 0.99), weight_decay: float = 0.0, *,
                 maximize: bool = False, foreach=None, differentiable: bool = False):
        lr = _float_arg("lr", lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        for i in (0, 1):
            if not 0.0 <= betas[i] <= 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["exp_avg"] = _zeros_like(p)

    def _update(self, param, grad, state, hyper):
        x, dt, staged = param._st.data, grad.dtype, self._staged
        (beta1, beta2), lr, wd, maximize = hyper.betas, hyper.lr, hyper.weight_decay, hyper.maximize
        c = self._const
        m = state["exp_avg"]
        out = lion_update(x, grad, m._st.data, c(beta1, dt), c(1 - beta1, dt), c(beta2, dt), c(1 - beta2, dt),
                          c(-lr, dt), c(1 - lr * wd, dt), maximize=maximize, wd_mode=_wd_mode(wd, True))
        _assign(param, out[0], staged)
        _assign(m, out[1], staged)
