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
            for hook in self.hooks:  # there is no grad_input to replace: a hook may only give back Nones
                result = hook(self.module, (None,) * self.n_inputs, grads)
                if result is not None and not (isinstance(result, tuple) and all(r is None for r in result)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_output = None
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


class BackwardHookFunction(Function):
    """Identity on a module's input or output tensors; its backward is where the module's backward hooks run. (Its
    name is PyTorch's: it appears in errors, ``Output 0 of BackwardHookFunction is a view ...``, and as the
    ``BackwardHookFunctionBackward`` grad_fn of the tensors it passes.)"""

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
    """Pass the Tensors in ``value`` (a Tensor or a tuple holding some) through one BackwardHookFunction node. As in
    PyTorch, tensors inside another container (a dict or a list output) are not seen, and such an output is warned
    about: the backward hooks will not run for it."""
    if stage == "output" and not isinstance(value, (Tensor, tuple)):
        warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of Tensors but "
                      f"received {type(value)}", stacklevel=4)
    items = [value] if isinstance(value, Tensor) else list(value) if isinstance(value, tuple) else []
    positions = [i for i, v in enumerate(items) if isinstance(v, Tensor)]
    if stage == "input":
        state.n_inputs = len(positions)
    if not positions:
        return value
    tensors = [items[i] for i in positions]
    outs = BackwardHookFunction.apply(state, stage, *tensors)
    if stage == "input":
        state.inputs_recorded = any(t.requires_grad for t in tensors) and gm.state.grad
    for i, o in zip(positions, outs):
        items[i] = o
    if isinstance(value, Tensor):
        return items[0]
    return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)


# ---------------------------------------------------------------------------------------------------- legacy hooks
class _LegacyHook:
    """A module's legacy backward hook as a post-hook of an autograd node: ``hook(module, grad_input, grad_output)``."""

    __slots__ = ("hook", "module")

    def __init__(self, hook, module):
        self.hook, self.module = hook, module

    def __call__(self, grad_inputs, grad_outputs):
        return self.hook(self.module, grad_inputs, grad_outputs)


def _attach_legacy_hooks(module, hooks, inputs, result) -> None:
    """``Module.register_backward_hook``: as PyTorch, hook the node that made the first Tensor of ``result`` and
    warn where that node's gradients are not the module's."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(_LegacyHook(hook, module))
    _warn_partial_gradients(inputs, result, grad_fn)


_DEPRECATED = "is deprecated and will be removed in future versions."
_DOCUMENTED = "Please use register_full_backward_hook to get the documented behavior."


def _warn_partial_gradients(inputs, result, grad_fn) -> None:
    def tensors(value) -> tuple | None:
        if isinstance(value, Tensor):
            return (value,)
        return value if isinstance(value, tuple) and all(isinstance(v, Tensor) for v in value) else None

    outputs, ins = tensors(result), tensors(inputs)
    if outputs is None:
        message = ("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                   f"Tensors {_DEPRECATED} This hook will be missing some of the grad_output. {_DOCUMENTED}")
    elif ins is None:
        message = ("Using non-full backward hooks on a Module that does not take as input a single Tensor or a tuple "
                   f"of Tensors {_DEPRECATED} This hook will be missing some of the grad_input. {_DOCUMENTED}")
    else:
        out_fns = {o.grad_fn for o in outputs if o.grad_fn is not None}
        if not out_fns or (len(out_fns) == 1 and grad_fn not in out_fns):
            message = ("Using a non-full backward hook when outputs are nested in python data structure "
                       f"{_DEPRECATED} This hook will be missing some grad_output.")
        elif len(out_fns) > 1:
            message = ("Using a non-full backward hook when outputs are generated by different autograd Nodes "
                       f"{_DEPRECATED} This hook will be missing some grad_output. {_DOCUMENTED}")
        elif {i.grad_fn for i in ins if i.grad_fn is not None} != {n[0] for n in grad_fn.next_functions}:
            message = ("Using a non-full backward hook when the forward contains multiple autograd Nodes "
                       f"{_DEPRECATED} This hook will be missing some grad_input. {_DOCUMENTED}")
        else:
            return
    warnings.warn(message, FutureWarning, stacklevel=4)
