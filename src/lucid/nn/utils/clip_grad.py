"""Gradient clipping. The total norm stays a lazy Tensor (nothing is evaluated here): the clip factor
min(1, max_norm / (norm + 1e-6)) multiplies every gradient whatever its value, as in PyTorch."""
from __future__ import annotations

import math
from typing import Iterable

import mlx.core as mx

from ... import _sums
from ..._tensor import Tensor, _wrap
from ..._threads import item
from ... import _grad_mode as gm

_Tensors = Tensor | Iterable[Tensor]


def _as_list(tensors: _Tensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _norm(a: mx.array, p: float) -> mx.array:
    """The p-norm of all of ``a``'s entries, in float32 or wider."""
    if a.dtype in (mx.float16, mx.bfloat16):
        a = a.astype(mx.float32)
    if p == math.inf:
        return mx.max(mx.abs(a)) if a.size else mx.array(0.0, a.dtype)
    if p == -math.inf:
        return mx.min(mx.abs(a))
    if p == 0:
        return mx.sum(a != 0).astype(a.dtype)
    if p == 1:
        return _sums.sum(mx.abs(a))
    if p == 2:
        return mx.sqrt(_sums.sum(a * a))
    return mx.power(_sums.sum(mx.power(mx.abs(a), p)), 1.0 / p)


def get_total_norm(tensors: _Tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The norm of the norms of ``tensors`` (the norm of all their entries together)."""
    tensors = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return _wrap(mx.array(0.0))
    norms = mx.stack([_norm(t.mlx, norm_type) for t in tensors])
    total = _norm(norms, norm_type)
    if error_if_nonfinite and not item(mx.isfinite(total)):  # the user asked for a check: that needs the value
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return _wrap(total)


def clip_grads_with_norm_(parameters: _Tensors, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scale the gradients of ``parameters`` by min(1, max_norm / (total_norm + 1e-6))."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    total = total_norm.mlx if isinstance(total_norm, Tensor) else mx.array(total_norm)
    coef = _wrap(mx.minimum(float(max_norm) / (total + 1e-6), 1.0))
    with gm.no_grad():
        for g in grads:
            g.mul_(coef)


def clip_grad_norm_(parameters: _Tensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total ``norm_type``-norm is at most
    ``max_norm``; returns the total norm before clipping (a Tensor)."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total_norm)
    return total_norm


def clip_grad_value_(parameters: _Tensors, clip_value: float, foreach=None) -> None:
    """Clamp every gradient of ``parameters`` to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with gm.no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]
