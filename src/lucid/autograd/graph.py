"""The tape's nodes.

A non-leaf Tensor points at the Node that made it (``grad_fn``) and its output slot (``output_nr``). A Node holds
its edges (``next``): one ``(node, output_nr)`` pair per input, or None for an input that needs no gradient. A
leaf that requires grad is reached through its ``AccumulateGrad`` node. ``apply(grads)`` maps the gradients of a
node's outputs to the gradients of its inputs (one per edge); the engine (engine.py) walks the nodes.
"""
from __future__ import annotations

import itertools
import re
import threading
import weakref
from typing import Callable, NamedTuple

from .._tensor import Tensor

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have already "
    "been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). "
    "Specify retain_graph=True if you need to backward through the graph a second time or if you need to access "
    "saved tensors after calling backward."
)


def _version_error(tensor_or_node, version: int, expected: int):
    if isinstance(tensor_or_node, Tensor):
        t = tensor_or_node
        desc = f"[Tensor {str(t.dtype).replace('mlx.core.', '')} {list(t.shape)}]"
        fn = t._node
        which = "" if fn is None else f", which is output {t._output_nr} of {_short(fn.name())},"
    else:
        node = tensor_or_node
        shape, dtype = node.output_meta(0)
        desc = f"[Tensor {str(dtype).replace('mlx.core.', '')} {list(shape)}]"
        which = f", which is output 0 of {_short(node.name())},"
    raise RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"{desc}{which} is at version {version}; expected version {expected} instead. Hint: enable anomaly detection "
        "to find the operation that failed to compute its gradient, with "
        "lucid.autograd.set_detect_anomaly(True).")


def _short(node_name: str) -> str:
    return re.sub(r"Backward\d*$", "", node_name)



# ---------------------------------------------------------------------------------------------------- node observers
# Anomaly mode (remembers each node's forward stack) and non-reentrant checkpointing (collects the nodes of its
# segment) watch nodes being recorded. The op recorder reads ``watch["on"]`` once per recorded node, the same single
# test it made for anomaly mode alone; it is True only while one of them is active.
watch = {"on": False}
_anomaly_observer: list = [None]
_segments_active = [0]  # checkpoint observers pushed, all threads


class _Observers(threading.local):
    def __init__(self):
        self.stack: list = []


_observers = _Observers()


def _sync_watch() -> None:
    watch["on"] = _anomaly_observer[0] is not None or _segments_active[0] > 0


def set_anomaly_observer(fn) -> None:
    """anomaly.py: ``fn(node)`` on every recorded node while anomaly mode is on (None: off)."""
    _anomaly_observer[0] = fn
    _sync_watch()


def push_observer(fn) -> None:
    """Make ``fn(node)`` see every node recorded in this thread until ``pop_observer`` (the innermost only)."""
    _observers.stack.append(fn)
    _segments_active[0] += 1
    _sync_watch()


def pop_observer() -> None:
    _observers.stack.pop()
    _segments_active[0] -= 1
    _sync_watch()


def node_recorded(node) -> None:
    """Called by the op recorder for each node while ``watch["on"]``."""
    fn = _anomaly_observer[0]
    if fn is not None:
        fn(node)
    stack = _observers.stack
    if stack:
        stack[-1](node)


class Dropped:
    """Stands, in a node's saved values, for a tensor a non-reentrant checkpoint dropped: where it sits in the
    graph, not its value (utils/checkpoint.py gives the value back by recomputing)."""

    __slots__ = ("fn", "nr", "rg")

    def __init__(self, t):
        self.fn, self.nr, self.rg = t._node, t._output_nr, t._requires_grad


# ``peek_dropped[0](node, read)``: registered by utils/checkpoint.py. Reading a dropped saved value outside backward
# (``grad_fn._saved_result``, ``ctx.saved_tensors``) recomputes the segment, returns ``read()`` and drops the values
# again, as PyTorch does.
peek_dropped: list = [None]


def read_dropped(node, read):
    if peek_dropped[0] is None:
        raise RuntimeError(FREED_MESSAGE)
    return peek_dropped[0](node, read)


class RemovableHandle:
    """Returned by the ``register_*hook`` methods; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_key", "_extra")
    _keys = itertools.count(1)  # next() on it is atomic: hooks registered from two threads never share a key

    def __init__(self, hooks: dict, *, extra_dict=None):
        self._hooks = hooks
        self._key = next(RemovableHandle._keys)
        # dicts keyed by the same id that remove() also clears (a forward hook's with_kwargs/always_call flags)
        self._extra = () if extra_dict is None else (extra_dict,) if isinstance(extra_dict, dict) else \
            tuple(extra_dict)

    @property
    def id(self) -> int:
        """The key of the hook in its dict (unique among all handles, as in PyTorch)."""
        return self._key

    def hooks_dict_ref(self) -> dict:
        """The dict the hook is registered in (PyTorch keeps a weak reference it calls the same way)."""
        return self._hooks

    def remove(self) -> None:
        self._hooks.pop(self._key, None)
        for extra in self._extra:
            extra.pop(self._key, None)

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

    __slots__ = ("tensor_pre", "pre", "post", "retain", "metadata")

    def __init__(self):
        self.metadata = {}  # Node.metadata: free for the user's own annotations
        self.tensor_pre = {}  # output_nr -> {key: fn(grad)}: Tensor.register_hook on a non-leaf
        self.pre = {}  # fn(grad_outputs): Node.register_prehook
        self.post = {}  # fn(grad_inputs, grad_outputs): Node.register_hook
        self.retain = {}  # output_nr -> weakref to the Tensor that called retain_grad()


class Node:
    """Base of all graph nodes. Subclasses define ``next``, ``apply``, ``release`` and ``output_meta``."""

    __slots__ = ("_hooks", "__weakref__")
    num_outputs = 1
    raw = False  # whether ``apply_raw`` (MLX arrays in and out) serves a walk that records nothing (ops/_core.py)
    runs_on_undefined = False  # called by the engine when only undefined (None) gradients reach it

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def next_functions(self) -> tuple:
        return tuple((None, 0) if e is None else e for e in self.next)

    @property
    def metadata(self) -> dict:
        """A dict kept with the node for the user's own annotations (it lives as long as the node)."""
        return self.hooks().metadata

    def __call__(self, *grads):
        """``node(*grad_outputs)``: run this node's backward once on the given output gradients (one per output)
        and return the input gradients (a Tensor for a one-input node, else a tuple)."""
        if len(grads) != self.num_outputs:
            raise TypeError(f"expected {self.num_outputs} arguments, got {len(grads)} instead")
        res = self._tensor_input_grads(self.apply(list(grads)))
        return res[0] if len(res) == 1 else tuple(res)

    def _tensor_input_grads(self, grads: list) -> list:
        """The entries of ``grads`` for the inputs that were Tensors (a node whose edges include non-Tensor
        arguments drops theirs)."""
        return grads

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
        return v._storage.data.shape, v._storage.data.dtype

    def release(self):
        pass


class Meta:
    """What a released node keeps of an input that its backward needs only the shape of."""

    __slots__ = ("shape", "dtype")

    def __init__(self, tensor):
        a = tensor._storage.data
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
    if not tensor._requires_grad:
        return None
    fn = tensor._node
    return (accumulator(tensor), 0) if fn is None else (fn, tensor._output_nr)


# ---------------------------------------------------------------------------------------------------- public graph API
class GradientEdge(NamedTuple):
    """Where a gradient enters the graph: a node and which of its outputs. ``get_gradient_edge(t)`` gives a
    tensor's; ``autograd.grad`` and ``backward(inputs=...)`` accept one in place of a tensor (it still names the
    same place after the tensor is modified in place)."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor) -> GradientEdge:
    """The GradientEdge a gradient for ``tensor`` flows into (its grad_fn and output slot, or its leaf's
    AccumulateGrad node)."""
    if not tensor._requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    node, nr = edge_of(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor) -> None:
    """Bump ``tensor``'s version counter, as an in-place write does (for code that changes a tensor's value
    behind autograd's back, so that nodes that saved it notice). Inference tensors have no counter: a no-op."""
    ex = tensor._extra
    if ex is not None and ex.inference:
        return
    tensor._storage.version += 1


class GraphTask:
    """One running backward()/grad() walk, as seen by hooks: ``will_execute(node)`` says whether the walk runs that
    node's backward. The engine pushes one on ``running_tasks()`` for the length of each walk."""

    __slots__ = ("order", "needed", "_set", "callbacks", "__weakref__")

    def __init__(self, order: list, needed):
        self.order = order
        self.needed = needed  # None, or the nodes a pruned walk (grad, backward(inputs=...)) keeps
        self._set = None
        self.callbacks = None  # queue_callback: run, in order, when the walk has finished

    def will_execute(self, node) -> bool:
        if self._set is None:
            self._set = set(self.order)  # built on first use: walks without such hooks never pay for it
        return node in self._set and (self.needed is None or node in self.needed)


class _Tasks(threading.local):
    def __init__(self):
        self.stack: list = []


_tasks = _Tasks()


def running_tasks() -> list:
    """This thread's stack of running walks (a backward inside a hook nests)."""
    return _tasks.stack


def queue_callback(callback: Callable[[], None]) -> None:
    """Run ``callback()`` when the backward walk now running (the innermost one, for a backward inside a hook) has
    finished, after every node's gradient; callbacks run in the order queued, and one may queue another. PyTorch
    spells it ``Variable._execution_engine.queue_callback``."""
    stack = _tasks.stack
    if not stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    task = stack[-1]
    if task.callbacks is None:
        task.callbacks = []
    task.callbacks.append(callback)


def register_multi_grad_hook(tensors, fn: Callable, *, mode: str = "all") -> RemovableHandle:
    """Run ``fn`` once per backward walk over several tensors.

    ``mode="all"``: ``fn(grads)`` after the gradients of all the tensors that this walk computes are ready; ``grads``
    has one entry per tensor, None for a tensor the walk does not reach. ``mode="any"``: ``fn(grad)`` with the first
    of them computed, once per walk. Returns one handle that removes the hook from every tensor.
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    state: dict = {}  # the running walk (weakly: a finished walk's entry goes with it) -> what was seen of it

    def seen_by(task):
        key = id(task)
        entry = state.get(key)
        if entry is None or entry[0]() is not task:
            entry = state[key] = (weakref.ref(task, lambda _r: state.pop(key, None)), [None] * len(tensors), [False])
        return entry

    def make_hook(i):
        def hook(grad):
            stack = running_tasks()
            if not stack:
                return None
            task = stack[-1]
            _, grads, fired = seen_by(task)
            if mode == "any":
                if not fired[0]:
                    fired[0] = True
                    fn(grad)
                return None
            grads[i] = grad
            expected = sum(1 for t in tensors if t._requires_grad and task.will_execute(edge_of(t)[0]))
            if not fired[0] and sum(g is not None for g in grads) >= expected:
                fired[0] = True
                fn(tuple(grads))
            return None
        return hook

    handles = [t.register_hook(make_hook(i)) for i, t in enumerate(tensors) if t._requires_grad]
    return _MultiHandle(handles)


class _MultiHandle(RemovableHandle):
    """One handle for the hooks that ``register_multi_grad_hook`` put on several tensors."""

    __slots__ = ("_handles",)

    def __init__(self, handles: list):
        self._handles = handles

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
