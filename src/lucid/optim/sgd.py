"""Stochastic gradient descent, optionally with (Nesterov) momentum — PyTorch's ``torch.optim.SGD``."""
from __future__ import annotations

import mlx.core as mx

from .._threads import compiled_on_main_thread
from .optimizer import (Optimizer, _assign, _check_exclusive_flags, _check_nonnegative, _float_arg, _head,
                        _new_state, _state_tensor, _wd_mode)

__all__ = ["SGD"]


@compiled_on_main_thread
def sgd_update(x, g, buf, weight_decay, momentum, damp, neg_lr, *, maximize, wd_mode, use_momentum, nesterov):
    """One SGD step on arrays. ``buf`` is the momentum buffer (None at the first step: it starts as the gradient);
    ``damp`` is ``1 - dampening``. Returns ``(x, buf)`` (``buf`` only with momentum)."""
    x, g = _head(x, g, weight_decay, None, maximize, wd_mode)
    if not use_momentum:
        return (x + neg_lr * g,)
    buf = g if buf is None else buf * momentum + damp * g
    d = g + momentum * buf if nesterov else buf
    return x + neg_lr * d, buf


class SGD(Optimizer):
    r"""Stochastic gradient descent (``torch.optim.SGD``), with PyTorch's update:

    .. code-block:: text

        g = -grad if maximize else grad;  g += weight_decay * p
        b = g (first step)  or  momentum * b + (1 - dampening) * g       (when momentum != 0)
        g = g + momentum * b if nesterov else b
        p -= lr * g

    State per parameter: ``momentum_buffer`` (only when momentum != 0). ``foreach``, ``fused`` and
    ``differentiable`` are accepted for compatibility; they change nothing here (updates are fused MLX kernels and
    are never recorded on the autograd tape).

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param momentum: the momentum factor.
    :param dampening: dampening of the momentum.
    :param weight_decay: L2 penalty: ``weight_decay * p`` is added to the gradient.
    :param nesterov: Nesterov momentum.
    :param maximize: maximize the objective (step along the gradient).
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    :param fused: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.

    >>> import lucid
    >>> w = lucid.nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> opt = lucid.optim.SGD([w], lr=0.1)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    Tensor([ 0.8, -1.6], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None):
        lr = _float_arg("lr", lr)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        _check_nonnegative(momentum=momentum, weight_decay=weight_decay)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_exclusive_flags(foreach, fused, differentiable)

    _param_dtypes = Optimizer._param_dtypes | {mx.complex64}  # the update is linear: exact on complex numbers

    def _has_state(self, group):
        return group["momentum"] != 0

    def _update(self, param, grad, state, hyper):
        x, dt, staged = param._storage.data, grad.dtype, self._staged
        lr, momentum, dampening, wd = hyper.lr, hyper.momentum, hyper.dampening, hyper.weight_decay
        nesterov, maximize = hyper.nesterov, hyper.maximize
        c = self._const
        buf = None if state is None else state.get("momentum_buffer")
        use_momentum = momentum != 0
        if not (use_momentum or wd or maximize):  # plain SGD: two MLX ops cost less than a compiled call
            _assign(param, x + c(-lr, dt) * grad, staged)
            return
        out = sgd_update(x, grad, None if buf is None else buf._storage.data, c(wd, dt) if wd else None,
                         c(momentum, dt) if use_momentum else None, c(1 - dampening, dt) if use_momentum else None,
                         c(-lr, dt), maximize=maximize, wd_mode=_wd_mode(wd, False), use_momentum=use_momentum,
                         nesterov=nesterov)
        _assign(param, out[0], staged)
        if state is not None:
            if buf is None:
                _new_state(state, "momentum_buffer", _state_tensor(param, out[1]), staged)
            else:
                _assign(buf, out[1], staged)
