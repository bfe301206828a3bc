"""Per-coordinate adaptive step sizes: RMSprop, Adagrad, Adadelta — PyTorch's update rules and state names.

As in ``adam.py``, each rule is a pure function of arrays compiled with ``mx.compile``, its per-step numbers given as
0-d arrays and its structural options as compile-time constants. ``foreach``, ``fused``, ``capturable`` and
``differentiable`` are accepted for compatibility and change nothing.
"""
from __future__ import annotations

import mlx.core as mx

from .._threads import compiled_on_main_thread
from ..nn.parameter import is_lazy
from .optimizer import (Optimizer, _assign, _check_exclusive_flags, _check_nonnegative, _float_arg, _full_like,
                        _head, _scalar_tensor, _state_zeros, _wd_mode, _zeros_like)

__all__ = ["RMSprop", "Adagrad", "Adadelta"]


# ---------------------------------------------------------------------------------------------------- update rules
@compiled_on_main_thread
def rmsprop_update(x, g, sq, grad_avg, buf, alpha, one_minus_alpha, eps, neg_lr, momentum, weight_decay, *,
                   maximize, wd_mode, centered, use_momentum):
    """sq <- alpha sq + (1 - alpha) g^2; centered: grad_avg <- lerp(grad_avg, g, 1 - alpha) and the variance
    sq - grad_avg^2 replaces sq; avg = sqrt(.) + eps; with momentum buf <- momentum buf + g / avg, x <- x - lr buf,
    else x <- x - lr g / avg. Returns ``(x, sq)`` then ``grad_avg`` (centered) then ``buf`` (momentum)."""
    x, g = _head(x, g, weight_decay, None, maximize, wd_mode)
    sq = sq * alpha + one_minus_alpha * g * g
    out = [None, sq]
    if centered:
        grad_avg = grad_avg + one_minus_alpha * (g - grad_avg)
        avg = mx.sqrt(sq - grad_avg * grad_avg) + eps
        out.append(grad_avg)
    else:
        avg = mx.sqrt(sq) + eps
    if use_momentum:
        buf = buf * momentum + g / avg
        out[0] = x + neg_lr * buf
        out.append(buf)
    else:
        out[0] = x + neg_lr * g / avg
    return tuple(out)


@compiled_on_main_thread
def adagrad_update(x, g, total, eps, neg_clr, weight_decay, *, maximize, wd_mode):
    """total <- total + g^2; x <- x - clr * g / (sqrt(total) + eps), clr = lr / (1 + (t - 1) lr_decay)."""
    x, g = _head(x, g, weight_decay, None, maximize, wd_mode)
    total = total + g * g
    return x + neg_clr * g / (mx.sqrt(total) + eps), total


@compiled_on_main_thread
def adadelta_update(x, g, sq, acc, rho, one_minus_rho, eps, neg_lr, weight_decay, *, maximize, wd_mode):
    """sq <- rho sq + (1 - rho) g^2; delta = sqrt(acc + eps) / sqrt(sq + eps) * g;
    acc <- rho acc + (1 - rho) delta^2; x <- x - lr delta."""
    x, g = _head(x, g, weight_decay, None, maximize, wd_mode)
    sq = sq * rho + one_minus_rho * g * g
    delta = mx.sqrt(acc + eps) / mx.sqrt(sq + eps) * g
    acc = acc * rho + one_minus_rho * delta * delta
    return x + neg_lr * delta, sq, acc


# ---------------------------------------------------------------------------------------------------- optimizers
class RMSprop(Optimizer):
    r"""RMSprop (``torch.optim.RMSprop``), optionally centered and with momentum.

    State: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered).

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param alpha: the smoothing constant of the squared-gradient average.
    :param eps: added to the denominator for numerical stability.
    :param weight_decay: L2 penalty: ``weight_decay * p`` is added to the gradient.
    :param momentum: the momentum factor.
    :param centered: normalize by the estimated variance (subtract the squared mean gradient).
    :param capturable: accepted for PyTorch's signature (for CUDA graphs).
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param maximize: maximize the objective (step along the gradient).
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, capturable: bool = False, foreach=None,
                 maximize: bool = False, differentiable: bool = False):
        lr = _float_arg("lr", lr)
        _check_nonnegative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = _scalar_tensor(0.0)
        state["square_avg"] = _zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = _zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _zeros_like(p)

    def _update(self, param, grad, state, hyper):
        x, dt, staged = param._st.data, grad.dtype, self._staged
        lr, alpha, eps, wd = hyper.lr, hyper.alpha, hyper.eps, hyper.weight_decay
        momentum, centered, maximize = hyper.momentum, hyper.centered, hyper.maximize
        self._advance(state["step"], staged)
        c = self._const
        sq = state["square_avg"]
        ga = _state_zeros(state, "grad_avg", param, staged) if centered else None
        buf = _state_zeros(state, "momentum_buffer", param, staged) if momentum > 0 else None
        out = rmsprop_update(x, grad, sq._st.data, None if ga is None else ga._st.data,
                             None if buf is None else buf._st.data, c(alpha, dt), c(1 - alpha, dt), c(eps, dt),
                             c(-lr, dt), c(momentum, dt), c(wd, dt), maximize=maximize, wd_mode=_wd_mode(wd, False),
                             centered=centered, use_momentum=momentum > 0)
        _assign(param, out[0], staged)
        _assign(sq, out[1], staged)
        if ga is not None:
            _assign(ga, out[2], staged)
        if buf is not None:
            _assign(buf, out[-1], staged)


class Adagrad(Optimizer):
    r"""Adagrad (``torch.optim.Adagrad``). As in PyTorch the state (``step``, ``sum`` filled with
    ``initial_accumulator_value``) exists from construction on.

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param lr_decay: the learning rate decays as ``lr / (1 + (step - 1) * lr_decay)``.
    :param weight_decay: L2 penalty: ``weight_decay * p`` is added to the gradient.
    :param initial_accumulator_value: the squared-gradient sum's starting value.
    :param eps: added to the denominator for numerical stability.
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param maximize: maximize the objective (step along the gradient).
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    :param fused: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, fused=None):
        lr = _float_arg("lr", lr)
        _check_nonnegative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_exclusive_flags(foreach, fused, differentiable)

    def _on_new_group(self, group):
        for p in group["params"]:
            if is_lazy(p):  # its state would need its shape, which it does not have yet (as in PyTorch)
                raise ValueError("Attempted to use an uninitialized parameter in full_like. This error happens when "
                                 "you are using a `LazyModule` or explicitly manipulating "
                                 "`torch.nn.parameter.UninitializedParameter` objects. When using LazyModules Call "
                                 "`forward` with a dummy batch to initialize the parameters before calling torch "
                                 "functions")
            self._init_state(p, self.state[p], group)

    def _init_state(self, p, state, group):
        state["step"] = _scalar_tensor(0.0)
        state["sum"] = _full_like(p, group["initial_accumulator_value"])

    def _update(self, param, grad, state, hyper):
        x, dt, staged = param._st.data, grad.dtype, self._staged
        lr, lr_decay, eps, wd, maximize = hyper.lr, hyper.lr_decay, hyper.eps, hyper.weight_decay, hyper.maximize
        t = self._advance(state["step"], staged)
        c = self._const
        total = state["sum"]
        out = adagrad_update(x, grad, total._st.data, c(eps, dt), c(-(lr / (1 + (t - 1) * lr_decay)), dt), c(wd, dt),
                             maximize=maximize, wd_mode=_wd_mode(wd, False))
        _assign(param, out[0], staged)
        _assign(total, out[1], staged)


class Adadelta(Optimizer):
    r"""Adadelta (``torch.optim.Adadelta``). State: ``step``, ``square_avg``, ``acc_delta``.

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: scales the delta before it is applied (default 1).
    :param rho: the decay rate of the running averages.
    :param eps: added to the denominator for numerical stability.
    :param weight_decay: L2 penalty: ``weight_decay * p`` is added to the gradient.
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param capturable: accepted for PyTorch's signature (for CUDA graphs).
    :param maximize: maximize the objective (step along the gradient).
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    """

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach=None, *, capturable: bool = False, maximize: bool = False, differentiable: bool = False):
        lr = _float_arg("lr", lr)
        _check_nonnegative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative(eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = _scalar_tensor(0.0)
        state["square_avg"] = _zeros_like(p)
        state["acc_delta"] = _zeros_like(p)

    def _update(self, param, grad, state, hyper):
        x, dt, staged = param._st.data, grad.dtype, self._staged
        lr, rho, eps, wd, maximize = hyper.lr, hyper.rho, hyper.eps, hyper.weight_decay, hyper.maximize
        self._advance(state["step"], staged)
        c = self._const
        sq, acc = state["square_avg"], state["acc_delta"]
        out = adadelta_update(x, grad, sq._st.data, acc._st.data, c(rho, dt), c(1 - rho, dt), c(eps, dt), c(-lr, dt),
                              c(wd, dt), maximize=maximize, wd_mode=_wd_mode(wd, False))
        _assign(param, out[0], staged)
        _assign(sq, out[1], staged)
        _assign(acc, out[2], staged)
