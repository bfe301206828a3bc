"""The tape's nodes.

A non-leaf Tensor points at the Node that made it (``grad_fn``) and its output slot (``output_nr``). A Node holds
its edges (``next``): one ``(node, output_nr)`` pair per input, or None for an input that needs no gradient. A
leaf that requires grad is reached through its ``AccumulateGrad`` node. ``apply(grads)`` maps the gradients of a
node's outputs to the gradients of its inputs (one per edge); the engine (engine.py) walks the nodes.
"""
from __future__ import annotations

import itertools
import weakref
from typing import Callable

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have already "
    "been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). "
    "Specify retain_graph=True if you need to backward through the graph a second time or if you need to access "
    "saved tensors after calling backward."
)


class RemovableHandle:
    """Returned by the ``register_*hook`` methods; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_key")
    _keys = itertools.count(1)  # next() on it is atomic: hooks registered from two threads never share a key

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self._key = next(RemovableHandle._keys)

    def remove(self) -> None:
        self._hooks.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks: dict, fn: Callable) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle._key] = fn
    return handle


class _Hooks:
    """A node's hooks; allocated only for nodes that have some."""

    __slots__ = ("tensor_pre", "pre", "post", "retain")

    def __init__(self):
        self.tensor_pre = {}  # output_nr -> {key: fn(grad)}: Tensor.register_hook on a non-leaf
        self.pre = {}  # fn(grad_outputs): Node.register_prehook
        self.post = {}  # fn(grad_inputs, grad_outputs): Node.register_hook
        self.retain = {}  # output_nr -> weakref to the Tensor that called retain_grad()


class Node:
    """Base of all graph nodes. Subclasses define ``next``, ``apply``, ``release`` and ``output_meta``."""

    __slots__ = ("_hooks", "__weakref__")
    num_outputs = 1

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def next_functions(self) -> tuple:
        return tuple((None, 0) if e is None else e for e in self.next)

    @property
    def metadata(self) -> dict:
        return {}

    def hooks(self) -> _Hooks:
        h = self._hooks
        if h is None:
            h = self._hooks = _Hooks()
        return h

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs) -> None | tuple``: runs before this node's backward; may replace the grads."""
        return add_hook(self.hooks().pre, fn)

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs) -> None | tuple``: runs after this node's backward; may replace
        grad_inputs (one entry per next edge)."""
        return add_hook(self.hooks().post, fn)


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: the engine adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable",)
    next = ()

    def __init__(self, variable):
        self._hooks = None
        self.variable = variable

    def output_meta(self, nr):
        v = self.variable
        return v._st.data.shape, v._st.data.dtype

    def release(self):
        pass


class Meta:
    """What a released node keeps of an input that its backward needs only the shape of."""

    __slots__ = ("shape", "dtype")

    def __init__(self, tensor):
        a = tensor._st.data
        self.shape = a.shape
        self.dtype = a.dtype

    @property
    def ndim(self):
        return len(self.shape)

    def dim(self):
        return len(self.shape)

    def size(self, d=None):
        return self.shape if d is None else self.shape[d]

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n


def accumulator(tensor) -> AccumulateGrad:
    """The AccumulateGrad node of a leaf, shared by every graph that uses it while one is alive."""
    ref = tensor._accum
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._accum = weakref.ref(acc)
    return acc


def edge_of(tensor):
    """The (node, output_nr) edge a gradient for ``tensor`` flows into; None if it needs no gradient."""
    if not tensor._rg:
        return None
    fn = tensor._fn
    return (accumulator(tensor), 0) if fn is None else (fn, tensor._nr)
