"""Muon (MomentUm Orthogonalized by Newton-schulz; Jordan et al. 2024) as PyTorch 2.13's ``torch.optim.Muon``,
for 2-D parameters: a momentum buffer (an exponential average, ``buf.lerp_(g, 1 - momentum)``), a Nesterov look-ahead,
then the update is approximately orthogonalized by ``ns_steps`` quintic Newton-Schulz iterations run in bfloat16 (as
PyTorch runs them), scaled by the shape-dependent learning rate, after decoupled weight decay."""
from __future__ import annotations

import math

import mlx.core as mx

from .optimizer import Optimizer, _assign, _float_arg, _new_state, _state_tensor

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad: mx.array, ns_coefficients, ns_steps: int, eps: float) -> mx.array:
    """PyTorch's orthogonalization: X = G / |G| in bfloat16 (transposed to be wide), then k times
    X <- a X + (b A + c A A) X with A = X X^T."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.shape[0] > grad.shape[1]
    x = grad.astype(mx.bfloat16)
    if tall:
        x = x.T
    norm = mx.sqrt(mx.sum(mx.square(x.astype(mx.float32)))).astype(mx.bfloat16)
    x = x / mx.maximum(norm, mx.array(eps, mx.bfloat16))
    for _ in range(ns_steps):
        gram = x @ x.T
        gram_update = mx.addmm(gram, gram, gram, alpha=c, beta=b)
        x = mx.addmm(x, gram_update, x, alpha=1.0, beta=a)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn, shape) -> float:
    """The shape-dependent scale: sqrt(max(1, A / B)) ("original", the default) or 0.2 * sqrt(max(A, B))
    ("match_rms_adamw", Moonshot's AdamW-matching RMS)."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon with PyTorch's options and defaults: ``lr=1e-3``, ``weight_decay=0.1``, ``momentum=0.95``,
    ``nesterov=True``, ``ns_coefficients=(3.4445, -4.7750, 2.0315)``, ``eps=1e-7``, ``ns_steps=5``,
    ``adjust_lr_fn=None``. Only 2-D parameters (optimize biases and embeddings with AdamW). State:
    ``momentum_buffer``.

    :param params: the 2-D tensors to optimize, or param groups (dicts).
    :param lr: the learning rate.
    :param weight_decay: decoupled weight decay.
    :param momentum: the momentum buffer's averaging factor.
    :param nesterov: use the Nesterov look-ahead.
    :param ns_coefficients: (a, b, c) of the quintic Newton-Schulz iteration.
    :param eps: guards the normalization before the iteration.
    :param ns_steps: the number of Newton-Schulz iterations (< 100).
    :param adjust_lr_fn: None or "original" (sqrt(max(1, rows / cols))), or "match_rms_adamw" (0.2 sqrt(max(rows,
        cols))).
    """

    def __init__(self, params, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps: float = EPS,
                 ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None):
        lr = _float_arg("lr", lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _update(self, param, grad, state, hyper):
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        x, staged, dt = param._storage.data, self._staged, param._storage.data.dtype
        momentum, lr = hyper.momentum, hyper.lr
        buf = state.get("momentum_buffer")
        old = mx.zeros_like(grad) if buf is None else buf._storage.data
        w = 1 - momentum  # buf.lerp_(grad, 1 - momentum), with lerp's two formulas
        new = old + w * (grad - old) if w < 0.5 else grad - (grad - old) * (1 - w)
        if buf is None:
            _new_state(state, "momentum_buffer", _state_tensor(param, new), staged)
        else:
            _assign(buf, new, staged)
        if hyper.nesterov:  # grad.lerp(buf, momentum)
            update = grad + momentum * (new - grad) if momentum < 0.5 else new - (new - grad) * (1 - momentum)
        else:
            update = new
        update = _zeropower_via_newtonschulz(update, hyper.ns_coefficients, hyper.ns_steps, hyper.eps)
        adjusted = _adjust_lr(lr, hyper.adjust_lr_fn, tuple(x.shape))
        x = x * (1 - lr * hyper.weight_decay)
        _assign(param, (x - adjusted * update.astype(dt)).astype(dt), staged)
