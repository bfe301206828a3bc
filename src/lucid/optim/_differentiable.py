"""``differentiable=True``: an optimizer step recorded on the autograd tape, as PyTorch records it.

PyTorch's differentiable optimizers run their update with grad mode on, so the new parameter and state values are
functions of the old ones, of the gradient and of any state given as tensors that require grad (learning to learn,
hyper-gradients; PyTorch's TestDifferentiableOptimizer gradchecks through ``step``). lucid's update rules are pure
functions of MLX arrays, so one generic node serves every optimizer: its forward runs the optimizer's own rule on
stand-ins of the parameter and its state, its backward differentiates the same rule with ``mx.vjp``, and the results
are written into the parameter and the state tensors by recorded in-place copies (``p.copy_``), which is what
PyTorch's in-place updates record. The 0-d counts (``step``, NAdam's ``mu_product``) are plain numbers, unless one
requires grad (PyTorch's test learns through ``mu_product``): then it is an input and an output of the rule like the
rest of the state, computed with as an array (as inside ``lucid.compile``).
"""
from __future__ import annotations

import mlx.core as mx

from .._grad_mode import enable_grad
from .._tensor import Tensor, _wrap
from ..autograd.function import Function


class _Rule:
    """One parameter's update as a pure function of arrays: (x, g, *state) -> (new x, *new state, *created state).
    Each call runs the optimizer's rule on fresh stand-in tensors, so it can run again in the backward pass."""

    def __init__(self, opt, state: dict | None, hyper):
        self.opt, self.state, self.hyper = opt, state, hyper
        self.staged = type(opt._staged)  # (made during step(): optimizer.py's _Staged, which imports this module)
        tensors = [(k, v) for k, v in (state or {}).items() if isinstance(v, Tensor)]
        self.keys = [k for k, v in tensors if k not in opt._scalar_state or v.requires_grad]
        self.counts = {k: opt._scalar(v) for k, v in tensors if k not in self.keys}
        self.created: list = []  # the keys of state the rule creates (its first step), in order
        self.new_counts: dict = {}

    def __call__(self, x, g, *arrays):
        opt, stand_in = self.opt, _wrap(x)
        shadow = None
        if self.state is not None:
            shadow = {}
            for k, v in self.state.items():
                if k in self.keys:
                    shadow[k] = _wrap(arrays[self.keys.index(k)])
                    if k in opt._scalar_state:  # a count that requires grad: its "value" is the array itself
                        opt._scalars[shadow[k]] = (shadow[k]._storage.data, shadow[k]._storage.data)
                elif k in self.counts:
                    shadow[k] = _wrap(v._storage.data)
                    opt._scalars[shadow[k]] = (shadow[k]._storage.data, self.counts[k])
                else:
                    shadow[k] = v
        outer = opt._staged
        opt._staged = self.staged()  # a throwaway one: the rule's writes are read back, never committed
        try:
            opt._update(stand_in, g, shadow, self.hyper)
            written = opt._staged
        finally:
            opt._staged = outer
        stored = {id(st): arr for st, arr in written.stores}
        self.created = [key for mapping, key, _ in written.entries if mapping is shadow]
        created = {key: value for mapping, key, value in written.entries if mapping is shadow}
        for k in self.counts:
            self.new_counts[k] = opt._scalars.pop(shadow[k])[1]
        for k in self.keys:
            if k in opt._scalar_state:
                opt._scalars.pop(shadow[k], None)  # (the shadow dies with this call)
        outs = [stored.get(id(stand_in._storage), x)]
        outs += [stored.get(id(shadow[k]._storage), shadow[k]._storage.data) for k in self.keys]
        outs += [stored.get(id(created[k]._storage), created[k]._storage.data) for k in self.created]
        return outs


class _Step(Function):
    @staticmethod
    def forward(ctx, rule, x, g, *states):
        ctx.rule = rule
        ctx.primals = [x._storage.data, g._storage.data] + [s._storage.data for s in states]
        return tuple(_wrap(a) for a in rule(*ctx.primals))

    @staticmethod
    def backward(ctx, *grads):
        primals = ctx.primals
        _, vjps = mx.vjp(lambda *a: ctx.rule(*a), primals, [g._storage.data for g in grads])
        return (None,) + tuple(_wrap(v) for v in vjps)


def differentiable_update(opt, param: Tensor, state: dict | None, hyper) -> None:
    """Update ``param`` (and its state) by ``opt``'s rule, on the autograd tape."""
    rule = _Rule(opt, state, hyper)
    inputs = [state[k] for k in rule.keys]
    outs = _Step.apply(rule, param, param._grad, *inputs)
    with enable_grad():
        param.copy_(outs[0])
        for k, new in zip(rule.keys, outs[1:]):
            state[k].copy_(new)
    for k, new in zip(rule.created, outs[1 + len(rule.keys):]):
        state[k] = new
    for k, value in rule.new_counts.items():
        opt._set_scalar(state[k], value, opt._staged)
