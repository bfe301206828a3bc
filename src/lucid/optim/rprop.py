"""Resilient backpropagation (``torch.optim.Rprop``): a per-coordinate step size that grows while the gradient keeps
its sign and shrinks when it flips, and an update that uses only the gradient's sign."""
from __future__ import annotations

import mlx.core as mx

from .._threads import compiled_on_main_thread
from .optimizer import Optimizer, _assign, _float_arg, _full_like, _scalar_tensor, _zeros_like

__all__ = ["Rprop"]


@compiled_on_main_thread
def rprop_update(x, g, prev, step_size, etaminus, etaplus, size_min, size_max, *, maximize):
    """s = sign(g * prev); step_size <- clamp(step_size * (etaplus | etaminus | 1 for s > 0 | < 0 | = 0)); where the
    sign flipped the gradient counts as 0 (no move, and no flip next time); x <- x - sign(g) * step_size; prev <- g.
    Returns ``(x, prev, step_size)``."""
    if maximize:
        g = -g
    s = mx.sign(g * prev)
    flipped = s < 0
    factor = mx.where(s > 0, etaplus, mx.where(flipped, etaminus, mx.ones_like(etaplus)))
    step_size = mx.clip(step_size * factor, size_min, size_max)
    g = mx.where(flipped, mx.zeros_like(g), g)
    return x - mx.sign(g) * step_size, g, step_size


class Rprop(Optimizer):
    r"""Rprop (``torch.optim.Rprop``), with PyTorch's update:

    .. code-block:: text

        g = -grad if maximize else grad
        f = etaplus if g * prev > 0, etaminus if g * prev < 0, else 1
        step_size = clamp(step_size * f, *step_sizes);  g = 0 where g * prev < 0
        p -= sign(g) * step_size;  prev = g

    State per parameter: ``step`` (0-d float32), ``prev`` (zeros) and ``step_size`` (filled with ``lr`` at the first
    step). ``capturable``, ``foreach`` and ``differentiable`` are accepted and change nothing.

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param etas: (etaminus, etaplus): the step-size factors when the gradient's sign flips or stays.
    :param step_sizes: (min, max) step sizes.
    :param capturable: accepted for PyTorch's signature (for CUDA graphs).
    :param foreach: accepted and validated as in PyTorch; every update is one fused MLX kernel anyway.
    :param maximize: maximize the objective (step along the gradient).
    :param differentiable: PyTorch's flag for differentiating through ``step()``.
    """

    def __init__(self, params, lr: float = 1e-2, etas: tuple = (0.5, 1.2), step_sizes: tuple = (1e-6, 50), *,
                 capturable: bool = False, foreach=None, maximize: bool = False, differentiable: bool = False):
        lr = _float_arg("lr", lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = _scalar_tensor(0.0)
        state["prev"] = _zeros_like(p)
        state["step_size"] = _full_like(p, group["lr"])

    def _update(self, param, grad, state, hyper):
        x, dt, staged = param._st.data, grad.dtype, self._staged
        (etaminus, etaplus), (size_min, size_max) = hyper.etas, hyper.step_sizes
        self._advance(state["step"], staged)
        c = self._const
        prev, size = state["prev"], state["step_size"]
        out = rprop_update(x, grad, prev._st.data, size._st.data, c(etaminus, dt), c(etaplus, dt), c(size_min, dt),
                           c(size_max, dt), maximize=hyper.maximize)
        _assign(param, out[0], staged)
        _assign(prev, out[1], staged)
        _assign(size, out[2], staged)
