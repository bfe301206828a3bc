"""Activation checkpointing: run a segment without keeping its intermediate values, and recompute them during
backward. Same gradients, less memory held between forward and backward.

Two variants, as in PyTorch:

- ``use_reentrant=False`` (recommended): the segment runs normally and records its graph, so everything works as
  without checkpointing (``autograd.grad``, parameters closed over by the function get gradients even when no
  input requires grad, keyword arguments, nesting, higher derivatives). What the segment's nodes saved for backward
  is dropped at the end of the forward; the first backward that reaches one of them reruns the function once and
  hands each node its values back, in order of recording. With early stop (the default; see
  ``set_checkpoint_early_stop``) the rerun stops as soon as every dropped value is back.
- ``use_reentrant=True``: the segment is one node whose backward reruns the function and runs a nested
  ``backward`` through it (PyTorch's older variant; its output needs an input that requires grad). As in PyTorch,
  only a full ``backward()`` may reach it: ``autograd.grad`` or ``backward(inputs=...)`` raise.
"""
from __future__ import annotations

import contextlib
import warnings
import weakref

from .._random import get_rng_state, set_rng_state
from .._tensor import Storage, Tensor, _wrap
from .. import _grad_mode as gm
from ..autograd.engine import backward, grad
from ..autograd.function import Function, FunctionCtx
from ..autograd.graph import (FREED_MESSAGE, Dropped as _Dropped, Meta, peek_dropped, pop_observer, push_observer,
                              running_tasks)

_early_stop = [True]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether non-reentrant checkpoints run under this context stop their recomputation as soon as every value
    backward needs is back (default True). It applies to checkpoints whose forward runs inside, wherever their
    backward runs."""
    prev = _early_stop[0]
    _early_stop[0] = bool(enable)
    try:
        yield
    finally:
        _early_stop[0] = prev


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _warn_use_reentrant(fn_name: str, extra: str) -> None:
    warnings.warn(
        f"torch.utils.checkpoint{fn_name}: the use_reentrant parameter should be passed explicitly. {extra}"
        "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can pass "
        "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
        stacklevel=3)


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = "default", debug: bool = False, preserve_rng_state: bool = True, **kwargs):
    """``checkpoint(fn, *args, use_reentrant=False, **kwargs)``: ``fn(*args, **kwargs)`` without keeping its
    intermediates; backward recomputes them. Returns what ``fn`` returns.

    The random state is replayed so dropout inside ``fn`` draws the same mask. ``use_reentrant`` should be passed:
    without it PyTorch's warning is given and the reentrant variant runs (PyTorch's default). ``context_fn``
    (non-reentrant only) returns two context managers, entered around the forward and around the recomputation.
    """
    if use_reentrant is None:
        _warn_use_reentrant("", "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
                                "exception. ")
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return _CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _Segment(function, args, kwargs, preserve_rng_state, context_fn).run()


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Split a sequence of functions (or an nn.Sequential) into ``segments`` checkpointed chunks."""
    if use_reentrant is None:
        _warn_use_reentrant(".checkpoint_sequential", "In version 2.9 we will raise an exception if use_reentrant "
                                                      "is not passed. ")
        use_reentrant = True
    functions = list(functions)
    size = max(1, -(-len(functions) // segments))

    def run(chunk):
        def f(x):
            for fn in chunk:
                x = fn(x)
            return x
        return f

    for start in range(0, len(functions), size):
        input = checkpoint(run(functions[start:start + size]), input, use_reentrant=use_reentrant, **kwargs)
    return input


# ---------------------------------------------------------------------------------------------------- non-reentrant
def _droppable(a, inputs: set) -> bool:
    """A saved value the segment drops: any tensor but its inputs and leaves that require grad (which the caller
    holds anyway, and whose identity backward needs)."""
    return isinstance(a, Tensor) and id(a) not in inputs and not (a._node is None and a._requires_grad)


class _StopRecomputation(Exception):
    pass


class _Segment:
    """One non-reentrant checkpointed call: runs it, drops what its nodes saved, recomputes on demand."""

    def __init__(self, function, args, kwargs, preserve_rng_state, context_fn):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state = get_rng_state() if preserve_rng_state else None
        self.early_stop = _early_stop[0]  # as set when the forward runs
        self.context_fn = context_fn
        self.slots: list = []  # one weakref per node the call recorded, in order; None for a node that kept all
        self.done = False

    def run(self):
        recorded: list = []
        forward_ctx, self.recompute_ctx = self.context_fn()
        push_observer(recorded.append)  # innermost only: a nested checkpoint's nodes are its own
        try:
            with forward_ctx:
                out = self.function(*self.args, **self.kwargs)
        finally:
            pop_observer()
        inputs = {id(a) for a in list(self.args) + list(self.kwargs.values()) if isinstance(a, Tensor)}
        hook = self._prehook
        for node in recorded:
            if isinstance(node, FunctionCtx):  # a custom Function: drop what it gave save_for_backward
                if node._released or not any(_droppable(t, inputs) for t in node._saved):
                    self.slots.append(None)
                    continue
                node._saved = tuple(_Dropped(t) if _droppable(t, inputs) else t for t in node._saved)
                node._checkpointed = True
                node.register_prehook(hook)
                _segment_of[node] = self
                self.slots.append(weakref.ref(node))
                continue
            if node.args is None:  # already used and freed by a backward inside the function
                self.slots.append(None)
                continue
            d = node.out_st.data
            node.meta, node.out_st = (d.shape, d.dtype), None  # the output's value is not kept
            if node.save_args or node.save_ans:
                node.args = tuple(_Dropped(a) if _droppable(a, inputs) else a for a in node.args)
                node.register_prehook(hook)
                _segment_of[node] = self
                self.slots.append(weakref.ref(node))
            else:  # saves nothing: backward needs only shapes, never a recomputation
                node.args = tuple(Meta(a) if isinstance(a, Tensor) else a for a in node.args)
                self.slots.append(None)
        return out

    def _prehook(self, grad_outputs):
        if not self.done:
            self.recompute()

    def recompute(self) -> None:
        """Rerun the function on the same inputs and give every dropped value back to its node."""
        pending = {k for k, ref in enumerate(self.slots) if ref is not None and ref() is not None}
        count = [0]
        slots, early_stop = self.slots, self.early_stop

        def restore(node):
            k = count[0]
            count[0] += 1
            if k not in pending:
                return
            orig = slots[k]()
            if type(orig) is not type(node):
                raise RuntimeError(f"torch.utils.checkpoint: the recomputation recorded {node.name()} where the "
                                   f"forward pass recorded {orig.name()} (op {k}): the checkpointed function must "
                                   "run the same ops each time it is called")
            _give_back(orig, node)
            pending.discard(k)
            if early_stop and not pending:
                raise _StopRecomputation

        args = [a.detach().requires_grad_(a._requires_grad) if isinstance(a, Tensor) else a for a in self.args]
        kwargs = {k: v.detach().requires_grad_(v._requires_grad) if isinstance(v, Tensor) else v for k, v in self.kwargs.items()}
        if self.rng_state is not None:
            now = get_rng_state()
            set_rng_state(self.rng_state)
        push_observer(restore)
        try:
            with gm.enable_grad(), self.recompute_ctx:
                self.function(*args, **kwargs)
        except _StopRecomputation:
            pass
        finally:
            pop_observer()
            if self.rng_state is not None:
                set_rng_state(now)
        if pending:
            raise RuntimeError("torch.utils.checkpoint: the recomputation recorded fewer ops than the forward pass: "
                               "the checkpointed function must run the same ops each time it is called")
        self.done = True


    def peek(self, node, read):
        """``read()`` a value of ``node`` outside backward: recompute, read, and drop every value again (PyTorch
        keeps recomputed values only for the backward that made them)."""
        if self.done:
            raise RuntimeError(FREED_MESSAGE)
        nodes = [n for n in (ref() for ref in self.slots if ref is not None) if n is not None]
        dropped = [(n, n._saved) if isinstance(n, FunctionCtx) else (n, n.args, n.out_st) for n in nodes]
        self.recompute()
        try:
            return read()
        finally:
            for entry in dropped:
                n = entry[0]
                if isinstance(n, FunctionCtx):
                    n._saved = entry[1]
                else:
                    n.args, n.out_st = entry[1], entry[2]
            self.done = False


_segment_of: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # node whose values were dropped -> _Segment


def _peek(node, read):
    seg = _segment_of.get(node)
    if seg is None:
        raise RuntimeError(FREED_MESSAGE)
    return seg.peek(node, read)


peek_dropped[0] = _peek


def _regraph(a, r, version):
    """The recomputed value ``r`` at the graph position of the dropped tensor ``a``, at the version backward expects."""
    t = _wrap(r._storage.data, a.fn, a.rg, a.nr)
    t._storage.version = version
    return t


def _give_back(orig, node) -> None:
    """Put the values that ``node`` (recorded by the recomputation) saved into ``orig`` (the forward's node), each
    at the graph position of the tensor it replaces, so higher derivatives still flow through the forward's graph."""
    if isinstance(orig, FunctionCtx):
        vs = orig._saved_versions
        orig._saved = tuple(_regraph(a, r, vs[i] or 0) if isinstance(a, _Dropped) else a
                            for i, (a, r) in enumerate(zip(orig._saved, node._saved)))
        return
    vs = orig.versions
    args = []
    for i, (a, r) in enumerate(zip(orig.args, node.args)):
        if isinstance(a, _Dropped):
            a = _regraph(a, r, vs[i] if vs is not None else 0)
        args.append(a)
    orig.args = tuple(args)
    if orig.save_ans:
        st = Storage()  # the forward's output storage was let go: a fresh one at the version backward expects
        st.data, st.version = node.out_st.data, orig.out_v
        orig.out_st = st


# ---------------------------------------------------------------------------------------------------- reentrant
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
        tasks = running_tasks()
        if tasks and tasks[-1].needed is not None:  # grad() or backward(inputs=...) reached this node
            raise RuntimeError(_REENTRANT_PRUNED)
        saved = iter(ctx.saved_tensors)
        inputs = [next(saved) if a is None else a for a in ctx.args]
        create_graph = gm.state.grad
        if create_graph:  # recompute from the inputs themselves, so higher derivatives reach them
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
        if not pairs:  # the recomputation recorded nothing to differentiate (e.g. the function runs under no_grad)
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        if create_graph:  # lucid's extension: a differentiable gradient for the inputs (PyTorch's is not)
            wanted = [d for d in detached if isinstance(d, Tensor) and d.requires_grad]
            grads = iter(grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True,
                              create_graph=True) if wanted else ())
            return (None, None) + tuple(next(grads) if isinstance(d, Tensor) and d.requires_grad else None
                                        for d in detached)
        # as PyTorch: a full backward of the recomputation, so the leaves the function closes over (a module's
        # parameters) accumulate their gradients, and the detached inputs' .grad is this node's result
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(d.grad if isinstance(d, Tensor) else None for d in detached)


_REENTRANT_PRUNED = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter to "
    ".backward(). To resolve this error, you can either set use_reentrant=False, or call .backward() without passing "
    "the `inputs` argument.")
