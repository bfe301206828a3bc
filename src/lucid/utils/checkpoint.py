"""Activation checkpointing: run a segment without keeping its intermediate values, and recompute them during
backward. Same gradients, less memory held between forward and backward."""
from __future__ import annotations

from .._random import get_rng_state, set_rng_state
from .._tensor import Tensor
from ..autograd import grad_mode as gm
from ..autograd.engine import grad
from ..autograd.function import Function


class _CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None  # replay dropout masks exactly
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        return run_function(*args)  # Function.forward runs under no_grad: nothing is recorded

    @staticmethod
    def backward(ctx, *grad_outputs):
        saved = iter(ctx.saved_tensors)
        inputs = [next(saved) if a is None else a for a in ctx.args]
        if gm.state.grad:  # create_graph: recompute from the inputs themselves, so higher derivatives reach them
            detached = inputs
        else:
            detached = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in inputs]
        if ctx.rng_state is not None:
            now = get_rng_state()
            set_rng_state(ctx.rng_state)
        try:
            with gm.enable_grad():
                outputs = ctx.run_function(*detached)
        finally:
            if ctx.rng_state is not None:
                set_rng_state(now)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if isinstance(o, Tensor) and o.requires_grad]
        wanted = [d for d in detached if isinstance(d, Tensor) and d.requires_grad]
        grads = iter(grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True,
                          create_graph=gm.state.grad) if pairs and wanted else [None] * len(wanted))
        return (None, None) + tuple(next(grads) if isinstance(d, Tensor) and d.requires_grad else None
                                    for d in detached)


def checkpoint(function, *args, use_reentrant: bool | None = None, preserve_rng_state: bool = True,
               **kwargs):
    """``checkpoint(fn, *args)``: ``fn(*args)`` without saving its intermediates; backward recomputes them.

    The random state is replayed so dropout inside ``fn`` draws the same mask. Keyword arguments are passed to
    ``fn``. Returns what ``fn`` returns.
    """
    if kwargs:
        return _CheckpointFunction.apply(lambda *a: function(*a, **kwargs), preserve_rng_state, *args)
    return _CheckpointFunction.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Split a sequence of functions (or an nn.Sequential) into ``segments`` checkpointed chunks."""
    functions = list(functions)
    size = max(1, -(-len(functions) // segments))

    def run(chunk):
        def f(x):
            for fn in chunk:
                x = fn(x)
            return x
        return f

    for start in range(0, len(functions), size):
        input = checkpoint(run(functions[start:start + size]), input, **kwargs)
    return input
