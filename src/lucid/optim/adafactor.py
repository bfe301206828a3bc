"""Adafactor (Shazeer & Stern 2018) as PyTorch 2.13's ``torch.optim.Adafactor``: the second moment of a matrix
gradient is kept factored (a row and a column running mean of g**2, so O(rows + cols) memory), the step size is
relative to the parameter's RMS, and the update's RMS is clipped to ``d``.

Per parameter and step t (PyTorch's single-tensor algorithm, with its defaults): beta_t = t ** beta2_decay,
rho_t = min(lr, 1 / sqrt(t)), alpha = max(eps2, RMS(x)) * rho_t; decoupled weight decay x *= 1 - lr * wd; for a
matrix (dims > 1, the last two factored) the row/col means of g**2 are lerped into ``row_var``/``col_var`` and the
estimate is row_var @ col_var / max(mean(row_var), eps1); for a vector, ``variance`` is lerped to g**2.
u = g / sqrt(max(estimate, eps1**2)); x -= alpha / max(1, RMS(u) / d) * u. eps1 None means the dtype's epsilon.
Everything stays on the device (PyTorch reads the norms back with ``.item()``; here they are 0-d arrays).
"""
from __future__ import annotations

import math

import mlx.core as mx
import numpy as np

from .._tensor import _wrap
from .optimizer import Optimizer, _assign, _float_arg, _scalar_tensor

__all__ = ["Adafactor"]


_EPS = {mx.float16: float(np.finfo(np.float16).eps), mx.bfloat16: 2.0 ** -7,  # torch.finfo(dtype).eps
        mx.float32: float(np.finfo(np.float32).eps), mx.float64: float(np.finfo(np.float64).eps)}


def _lerp(start: mx.array, end: mx.array, weight: float) -> mx.array:
    """PyTorch's lerp, whose two formulas (by which side of 0.5 the weight is) make weight 1 give ``end`` exactly."""
    if weight < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


def _rms(a: mx.array) -> mx.array:
    return mx.sqrt(mx.sum(mx.square(a))) / math.sqrt(max(a.size, 1))


class Adafactor(Optimizer):
    """Adafactor with PyTorch's options and defaults: ``lr=1e-2``, ``beta2_decay=-0.8``, ``eps=(None, 1e-3)``,
    ``d=1.0``, ``weight_decay=0.0``, ``maximize``. State: ``step`` (0-d float32) and ``row_var``/``col_var`` (for
    gradients of 2 or more dims) or ``variance``.

    :param params: the tensors to optimize, or param groups (dicts).
    :param lr: the learning rate (an upper bound on the relative step size).
    :param beta2_decay: the decay exponent of the second-moment average, beta2_t = t ** beta2_decay.
    :param eps: (eps1, eps2): eps1 guards the second moment (None: the dtype's epsilon), eps2 the parameter's RMS.
    :param d: the clipping threshold of the update's RMS.
    :param weight_decay: decoupled weight decay.
    :param foreach: accepted, as PyTorch's (one fused update either way).
    :param maximize: maximize the objective instead.
    """

    _scalar_state = Optimizer._scalar_state | {"row_var", "col_var"}  # (shapes other than the parameter's)

    def __init__(self, params, lr: float = 1e-2, beta2_decay: float = -0.8, eps=(None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach=None, maximize: bool = False):
        lr = _float_arg("lr", lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = _scalar_tensor(0.0)
        x = p._st.data
        if x.ndim > 1:
            state["row_var"] = _wrap(mx.zeros(x.shape[:-1] + (1,), x.dtype))
            state["col_var"] = _wrap(mx.zeros(x.shape[:-2] + (1,) + x.shape[-1:], x.dtype))
        else:
            state["variance"] = _wrap(mx.zeros_like(x))

    def _update(self, param, grad, state, hyper):
        x, staged, dt = param._st.data, self._staged, param._st.data.dtype
        g = -grad if hyper.maximize else grad
        eps1, eps2 = hyper.eps
        if eps1 is None:
            eps1 = _EPS[dt]
        lr, wd, d = hyper.lr, hyper.weight_decay, hyper.d
        t = self._advance(state["step"], staged)
        beta = t ** hyper.beta2_decay
        rho = min(lr, 1 / t ** 0.5)
        alpha = mx.maximum(mx.array(eps2, dt), _rms(x)) * rho
        if wd != 0:
            x = x * (1 - lr * wd)
        if g.ndim > 1:
            row, col = state["row_var"], state["col_var"]
            new_row = _lerp(row._st.data, mx.sum(mx.square(g), axis=-1, keepdims=True) / g.shape[-1], beta)
            new_col = _lerp(col._st.data, mx.sum(mx.square(g), axis=-2, keepdims=True) / g.shape[-2], beta)
            estimate = (new_row @ new_col) / mx.maximum(mx.mean(new_row, axis=-2, keepdims=True), eps1)
            _assign(row, new_row, staged)
            _assign(col, new_col, staged)
        else:
            variance = state["variance"]
            estimate = _lerp(variance._st.data, g * g, beta)
            _assign(variance, estimate, staged)
        update = mx.rsqrt(mx.maximum(estimate, eps1 * eps1)) * g
        denom = mx.maximum(1.0, _rms(update) / d)
        _assign(param, (x - (alpha / denom) * update).astype(dt), staged)
