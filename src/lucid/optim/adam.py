"""The Adam family — Adam, AdamW, Adamax, NAdam, RAdam — with PyTorch's update rules and state names.

Each rule is a pure function of arrays compiled with ``mx.compile``: the per-step numbers (bias corrections, step
sizes) are computed in Python floats by the optimizer, exactly as PyTorch's default path computes them, and handed
to the kernel as 0-d arrays, so a changing learning rate never recompiles anything. Options that change the shape of
the computation (maximize, amsgrad, how weight decay applies) are compile-time constants. ``foreach``, ``fused``,
``capturable`` and ``differentiable`` are accepted for compatibility and change nothing.
"""
from __future__ import annotations

import mlx.core as mx

from .._threads import compiled_on_main_thread
from .optimizer import (Optimizer, _assign, _check_betas, _check_exclusive_flags, _check_nonnegative, _f32,
                        _float_arg, _head, _scalar_tensor, _state_zeros, _wd_mode, _zeros_like)

__all__ = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam"]


# ---------------------------------------------------------------------------------------------------- update rules
@compiled_on_main_thread
def adam_update(x, g, m, v, vmax, one_minus_beta1, beta2, one_minus_beta2, bc2_sqrt, eps, neg_step_size,
                weight_decay, decay, *, maximize, wd_mode, amsgrad):
    """m <- lerp(m, g, 1 - beta1); v <- beta2 v + (1 - beta2) g^2; vmax <- max(vmax, v) (amsgrad);
    x <- x - step_size * m / (sqrt(v or vmax) / sqrt(1 - beta2^t) + eps), step_size = lr / (1 - beta1^t).
    Returns ``(x, m, v)`` plus ``vmax`` with amsgrad."""
    x, g = _head(x, g, weight_decay, decay, maximize, wd_mode)
    m = m + one_minus_beta1 * (g - m)
    v = v * beta2 + one_minus_beta2 * g * g
    if amsgrad:
        vmax = mx.maximum(vmax, v)
        denom = mx.sqrt(vmax) / bc2_sqrt + eps
        return x + neg_step_size * m / denom, m, v, vmax
    denom = mx.sqrt(v) / bc2_sqrt + eps
    return x + neg_step_size * m / denom, m, v


@compiled_on_main_thread
def adamax_update(x, g, m, u, one_minus_beta1, beta2, eps, neg_clr, weight_decay, *, maximize, wd_mode):
    """m <- lerp(m, g, 1 - beta1); u <- max(beta2 u, |g| + eps); x <- x - lr / (1 - beta1^t) * m / u."""
    x, g = _head(x, g, weight_decay, None, maximize, wd_mode)
    m = m + one_minus_beta1 * (g - m)
    u = mx.maximum(u * beta2, mx.abs(g) + eps)
    return x + neg_clr * m / u, m, u


@compiled_on_main_thread
def nadam_update(x, g, m, v, one_minus_beta1, beta2, one_minus_beta2, bc2, eps, grad_coef, avg_coef, weight_decay,
                 decay, *, maximize, wd_mode):
    """Adam moments, then a Nesterov step: x <- x + grad_coef * g / denom + avg_coef * m / denom with
    denom = sqrt(v / (1 - beta2^t)) + eps, grad_coef = -lr (1 - mu_t) / (1 - prod mu), avg_coef =
    -lr mu_{t+1} / (1 - prod mu * mu_{t+1})."""
    x, g = _head(x, g, weight_decay, decay, maximize, wd_mode)
    m = m + one_minus_beta1 * (g - m)
    v = v * beta2 + one_minus_beta2 * g * g
    denom = mx.sqrt(v / bc2) + eps
    x = x + grad_coef * g / denom
    return x + avg_coef * m / denom, m, v


@compiled_on_main_thread
def radam_update(x, g, m, v, one_minus_beta1, beta2, one_minus_beta2, bc1, bc2_sqrt, eps, lr, rect, weight_decay,
                 decay, *, maximize, wd_mode, rectified):
    """Adam moments; x <- x - lr * m_hat * rect * sqrt(1 - beta2^t) / (sqrt(v) + eps) once the variance is tractable
    (rho_t > 5), else the un-adapted step x <- x - lr * m_hat, with m_hat = m / (1 - beta1^t)."""
    x, g = _head(x, g, weight_decay, decay, maximize, wd_mode)
    m = m + one_minus_beta1 * (g - m)
    v = v * beta2 + one_minus_beta2 * g * g
    m_hat = m / bc1
    if rectified:
        adaptive = bc2_sqrt / (mx.sqrt(v) + eps)
        return x - m_hat * lr * adaptive * rect, m, v
    return x - m_hat * lr, m, v


def _check_adam_args(lr, betas, eps, weight_decay) -> float:
    lr = _float_arg("lr", lr)
    _check_nonnegative(lr=lr, eps=eps)
    _check_betas(betas)
    _check_nonnegative(weight_decay=weight_decay)
    return lr


def _init_moments(p, state) -> None:
    state["step"] = _scalar_tensor(0.0)
    state["exp_avg"] = _zeros_like(p)
    state["exp_avg_sq"] = _zeros_like(p)


# ---------------------------------------------------------------------------------------------------- optimizers
class Adam(Optimizer):
    r"""Adam (``torch.optim.Adam``), optionally AMSGrad and decoupled weight decay (then it is AdamW).

    State per parameter: ``step`` (0-d float32), ``exp_avg``, ``exp_avg_sq`` and, with amsgrad, ``max_exp_avg_sq``.
    ``foreach``, ``fused``, ``capturable`` and ``differentiable`` are accepted for compatibility and change nothing
    (updates are fused MLX kernels, never recorded on the autograd tape).

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param betas: the decay rates of the running averages of the gradient and of its square.
    :param eps: added to the denominator for numerical stability.
    :param weight_decay: L2 penalty: ``weight_decay * p`` is added to the gradient.
    :param amsgrad: use the maximum of the past squared-gradient averages (AMSGrad).
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param maximize: maximize the objective (step along the gradient).
    :param capturable: accepted for PyTorch's signature (for CUDA graphs).
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    :param fused: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param decoupled_weight_decay: decay the weights directly (``p *= 1 - lr * weight_decay``) instead of adding
        the penalty to the gradient.

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> opt = lucid.optim.Adam([w], lr=1e-3)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w.shape
    lucid.Size([2])
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 amsgrad: bool = False, *, foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused=None, decoupled_weight_decay: bool = False):
        lr = _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_exclusive_flags(foreach, fused, differentiable)

    def _init_state(self, p, state, group):
        _init_moments(p, state)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = _zeros_like(p)

    def _update(self, param, grad, state, hyper):
        x, dt, staged = param._storage.data, grad.dtype, self._staged
        (beta1, beta2), lr, eps, wd = hyper.betas, hyper.lr, hyper.eps, hyper.weight_decay
        amsgrad, maximize, decoupled = hyper.amsgrad, hyper.maximize, hyper.decoupled_weight_decay
        t = self._advance(state["step"], staged)
        c = self._const
        m, v = state["exp_avg"], state["exp_avg_sq"]
        vmax = _state_zeros(state, "max_exp_avg_sq", param, staged) if amsgrad else None
        out = adam_update(x, grad, m._storage.data, v._storage.data, None if vmax is None else vmax._storage.data,
                          c(1 - beta1, dt), c(beta2, dt), c(1 - beta2, dt), c((1 - beta2 ** t) ** 0.5, dt),
                          c(eps, dt), c(-(lr / (1 - beta1 ** t)), dt), c(wd, dt), c(1 - lr * wd, dt),
                          maximize=maximize, wd_mode=_wd_mode(wd, decoupled), amsgrad=amsgrad)
        _assign(param, out[0], staged)
        _assign(m, out[1], staged)
        _assign(v, out[2], staged)
        if amsgrad:
            _assign(vmax, out[3], staged)


class AdamW(Adam):
    r"""Adam with decoupled weight decay (``torch.optim.AdamW``): ``p *= 1 - lr * weight_decay`` before the Adam
    step, so the decay never enters the moments. Default ``weight_decay=1e-2``.

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param betas: the decay rates of the running averages of the gradient and of its square.
    :param eps: added to the denominator for numerical stability.
    :param weight_decay: the decoupled decay rate (``p *= 1 - lr * weight_decay`` each step).
    :param amsgrad: use the maximum of the past squared-gradient averages (AMSGrad).
    :param maximize: maximize the objective (step along the gradient).
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param capturable: accepted for PyTorch's signature (for CUDA graphs).
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    :param fused: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> opt = lucid.optim.AdamW([w], lr=1e-3, weight_decay=0.01)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w.shape
    lucid.Size([2])
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 1e-2,
                 amsgrad: bool = False, *, maximize: bool = False, foreach=None, capturable: bool = False,
                 differentiable: bool = False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


class Adamax(Optimizer):
    r"""Adamax, Adam with the infinity norm (``torch.optim.Adamax``). State: ``step``, ``exp_avg``, ``exp_inf``.

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param betas: the decay rates of the running averages of the gradient and of its square.
    :param eps: added to the denominator for numerical stability.
    :param weight_decay: L2 penalty: ``weight_decay * p`` is added to the gradient.
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param maximize: maximize the objective (step along the gradient).
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    :param capturable: accepted for PyTorch's signature (for CUDA graphs).
    """

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 foreach=None, *, maximize: bool = False, differentiable: bool = False, capturable: bool = False):
        lr = _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = _scalar_tensor(0.0)
        state["exp_avg"] = _zeros_like(p)
        state["exp_inf"] = _zeros_like(p)

    def _update(self, param, grad, state, hyper):
        x, dt, staged = param._storage.data, grad.dtype, self._staged
        (beta1, beta2), lr, eps, wd = hyper.betas, hyper.lr, hyper.eps, hyper.weight_decay
        maximize = hyper.maximize
        t = self._advance(state["step"], staged)
        c = self._const
        m, u = state["exp_avg"], state["exp_inf"]
        out = adamax_update(x, grad, m._storage.data, u._storage.data, c(1 - beta1, dt), c(beta2, dt), c(eps, dt),
                            c(-(lr / (1 - beta1 ** t)), dt), c(wd, dt), maximize=maximize,
                            wd_mode=_wd_mode(wd, False))
        _assign(param, out[0], staged)
        _assign(m, out[1], staged)
        _assign(u, out[2], staged)


class NAdam(Optimizer):
    r"""Adam with Nesterov momentum (``torch.optim.NAdam``), with the momentum schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``; ``decoupled_weight_decay=True`` gives NAdamW.
    State: ``step``, ``mu_product`` (both 0-d float32), ``exp_avg``, ``exp_avg_sq``.

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param betas: the decay rates of the running averages of the gradient and of its square.
    :param eps: added to the denominator for numerical stability.
    :param weight_decay: L2 penalty: ``weight_decay * p`` is added to the gradient.
    :param momentum_decay: the momentum schedule's decay.
    :param decoupled_weight_decay: decay the weights directly (``p *= 1 - lr * weight_decay``) instead of adding
        the penalty to the gradient.
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param maximize: maximize the objective (step along the gradient).
    :param capturable: accepted for PyTorch's signature (for CUDA graphs).
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    """

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False):
        lr = _check_adam_args(lr, betas, eps, weight_decay)
        _check_nonnegative(momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = _scalar_tensor(0.0)
        state["mu_product"] = _scalar_tensor(1.0)
        state["exp_avg"] = _zeros_like(p)
        state["exp_avg_sq"] = _zeros_like(p)

    def _update(self, param, grad, state, hyper):
        x, dt, staged = param._storage.data, grad.dtype, self._staged
        (beta1, beta2), lr, eps, wd = hyper.betas, hyper.lr, hyper.eps, hyper.weight_decay
        psi, maximize, decoupled = hyper.momentum_decay, hyper.maximize, hyper.decoupled_weight_decay
        t = self._advance(state["step"], staged)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (t * psi)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * psi)))
        prev = self._scalar(state["mu_product"])
        if type(prev) is mx.array and prev.dtype == mx.float64:  # a float64 count differentiated through: exact
            mu_product = prev * mu
        else:  # PyTorch multiplies mu into a float32 tensor: keep the product rounded the same way
            mu_product = _f32(_f32(prev) * _f32(mu))
        self._set_scalar(state["mu_product"], mu_product, staged)
        c = self._const
        m, v = state["exp_avg"], state["exp_avg_sq"]
        out = nadam_update(x, grad, m._storage.data, v._storage.data, c(1 - beta1, dt), c(beta2, dt), c(1 - beta2, dt),
                           c(1 - beta2 ** t, dt), c(eps, dt), c(-lr * (1.0 - mu) / (1.0 - mu_product), dt),
                           c((-lr * mu_next) / (1.0 - mu_product * mu_next), dt), c(wd, dt), c(1 - lr * wd, dt),
                           maximize=maximize, wd_mode=_wd_mode(wd, decoupled))
        _assign(param, out[0], staged)
        _assign(m, out[1], staged)
        _assign(v, out[2], staged)


class RAdam(Optimizer):
    r"""Rectified Adam (``torch.optim.RAdam``): an SGD-with-momentum step while the variance estimate is
    intractable (rho_t <= 5), the rectified Adam step after. ``decoupled_weight_decay=True`` gives RAdamW.
    State: ``step``, ``exp_avg``, ``exp_avg_sq``.

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param betas: the decay rates of the running averages of the gradient and of its square.
    :param eps: added to the denominator for numerical stability.
    :param weight_decay: L2 penalty: ``weight_decay * p`` is added to the gradient.
    :param decoupled_weight_decay: decay the weights directly (``p *= 1 - lr * weight_decay``) instead of adding
        the penalty to the gradient.
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param maximize: maximize the objective (step along the gradient).
    :param capturable: accepted for PyTorch's signature (for CUDA graphs).
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 decoupled_weight_decay: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False):
        lr = _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        _init_moments(p, state)

    def _update(self, param, grad, state, hyper):
        x, dt, staged = param._storage.data, grad.dtype, self._staged
        (beta1, beta2), lr, eps, wd = hyper.betas, hyper.lr, hyper.eps, hyper.weight_decay
        maximize, decoupled = hyper.maximize, hyper.decoupled_weight_decay
        t = self._advance(state["step"], staged)
        bc2 = 1 - beta2 ** t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * (beta2 ** t) / bc2
        rectified = rho_t > 5.0
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5 \
            if rectified else 1.0
        c = self._const
        m, v = state["exp_avg"], state["exp_avg_sq"]
        out = radam_update(x, grad, m._storage.data, v._storage.data, c(1 - beta1, dt), c(beta2, dt), c(1 - beta2, dt),
                           c(1 - beta1 ** t, dt), c(bc2 ** 0.5, dt), c(eps, dt), c(lr, dt), c(rect, dt), c(wd, dt),
                           c(1 - lr * wd, dt), maximize=maximize, wd_mode=_wd_mode(wd, decoupled),
                           rectified=rectified)
        _assign(param, out[0], staged)
        _assign(m, out[1], staged)
        _assign(v, out[2], staged)
