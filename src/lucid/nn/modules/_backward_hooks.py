"""Module's full backward hooks (``register_full_backward_hook``, ``register_full_backward_pre_hook``): the module's
inputs and outputs pass through one identity ``Function`` node each, whose backward sees the gradients with respect
to the module's outputs and inputs and runs the hooks on them."""
from __future__ import annotations

import warnings

from ..._tensor import Tensor
from ... import _grad_mode as gm
from ...autograd.function import Function


# ---------------------------------------------------------------------------------------------------- backward hooks
class _BackwardHookState:
    """One module call's full backward hooks: the output stage records grad_output, the input stage (or the output
    stage, when no input requires grad) calls the hooks with (module, grad_input, grad_output)."""

    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.n_inputs = 0
        self.inputs_recorded = False
        self.grad_output = None

    def on_grad_output(self, grads: tuple) -> tuple:
        for hook in self.pre_hooks:
            result = hook(self.module, grads)
            if result is not None:
                grads = _check_hook_result(result, grads, "backward pre hook")
        self.grad_output = grads
        if not self.inputs_recorded:
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                          "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=5)
            self.run_hooks((None,) * self.n_inputs)
        return grads

    def run_hooks(self, grad_input: tuple) -> tuple:
        if self.grad_output is None:
            # the gradient reached the module's inputs without passing through its outputs: a double backward
            # through the first backward's graph. The hooks ran for that backward already (as in PyTorch).
            return grad_input
        for hook in self.hooks:
            result = hook(self.module, grad_input, self.grad_output)
            if result is not None:
                grad_input = _check_hook_result(result, grad_input, "backward hook")
        self.grad_output = None
        return grad_input


def _check_hook_result(result, grads: tuple, what: str) -> tuple:
    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(result) != len(grads):
        raise RuntimeError(f"{what} returned an invalid number of grad_input, got {len(result)}, but expected "
                           f"{len(grads)}")
    return result


class _BackwardHookFn(Function):
    """Identity on a module's input or output tensors; its backward is where the module's backward hooks run."""

    @staticmethod
    def forward(ctx, state, stage, *tensors):
        ctx.state, ctx.stage = state, stage  # grads stay materialized: an unused output's grad is zeros
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        if ctx.stage == "output":
            grads = ctx.state.on_grad_output(grads)
        else:
            grads = ctx.state.run_hooks(grads)
        return (None, None) + tuple(grads)


def _wrap_tensors(value, state, stage):
    """Pass the Tensors in ``value`` (a Tensor or a tuple/list holding some) through one _BackwardHookFn node."""
    items = [value] if isinstance(value, Tensor) else list(value) if isinstance(value, (tuple, list)) else []
    positions = [i for i, v in enumerate(items) if isinstance(v, Tensor)]
    if stage == "input":
        state.n_inputs = len(positions)
    if not positions:
        return value
    tensors = [items[i] for i in positions]
    outs = _BackwardHookFn.apply(state, stage, *tensors)
    if stage == "input":
        state.inputs_recorded = any(t.requires_grad for t in tensors) and gm.state.grad
    for i, o in zip(positions, outs):
        items[i] = o
    if isinstance(value, Tensor):
        return items[0]
    return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
