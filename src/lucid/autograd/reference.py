"""The reference engine: what ``backward()`` and ``grad()`` compute, as one plain loop over the graph's nodes.

This is the executable specification of a walk. It runs on Tensors only (grad mode stays what ``create_graph``
says), and every node applies itself: an op's node runs its VJP (``node.apply``), a leaf's ``AccumulateGrad`` node
adds into ``.grad``. The walk that ``backward()`` and ``grad()`` normally run, ``engine._fast_walk``, computes the
same thing faster: without ``create_graph`` it hands MLX arrays between the nodes whose VJPs can run on arrays
(``defop(..., raw=True)``) and takes a shortcut for hook-free leaves. ``tests/test_engine_reference.py`` runs every
declared op and random graphs through both and checks they agree on gradients, hook calls, errors, the identity
of ``.grad`` objects and the points at which saved tensors are freed.

``with lucid.autograd.engine.use_reference():`` (or ``LUCID_REFERENCE_ENGINE=1`` in the environment) makes every
walk use this one. docs/architecture.md ("Backward") walks through both.
"""
from __future__ import annotations

from .. import _checks
from .. import _grad_mode as gm
from . import engine
from .anomaly import _state as _anomaly, apply_checked
from .engine import (_add_to, _fresh, _node_pre_hooks, _pass_on, _post_hooks, _tensor_pre_hooks, _topological,
                     _visit_leaf)
from .graph import AccumulateGrad, GraphTask, running_tasks


class Walk:
    """One walk: what it was asked for and where it stands (the buffers of gradients waiting for each node)."""

    __slots__ = ("order", "needed", "buffers", "undefined", "retain_graph", "create_graph", "accumulate",
                 "captured", "slots", "task")

    def __init__(self, roots, seeds, retain_graph, create_graph, accumulate, targets, capture):
        """roots: edges; seeds: one Tensor per root. accumulate: ``_ALL``, a set of AccumulateGrad nodes, or None.
        targets: None, or the nodes the walk must reach (nodes leading to none of them are skipped). capture:
        None, or the edges whose gradients ``grad()`` returns."""
        pairs = [(e, s) for e, s in zip(roots, seeds) if e is not None and s is not None]
        self.order = _topological([e[0] for e, _ in pairs])  # every node after all the nodes that feed it
        self.needed = None
        if targets is not None:  # keep only the nodes from which a target can be reached
            self.needed = set(targets)
            for n in reversed(self.order):
                if any(e is not None and e[0] in self.needed for e in n.next):
                    self.needed.add(n)
        self.retain_graph, self.create_graph, self.accumulate = retain_graph, create_graph, accumulate
        self.buffers: dict = {}  # node -> the sum of the gradients sent to each of its outputs so far
        self.undefined: set = set()  # nodes a None gradient was sent to: they run even if nothing else reaches them
        for (node, nr), seed in pairs:
            _add_to(self.buffers, node, nr, seed)
        self.captured = self.slots = None
        if capture is not None:
            self.captured = [None] * len(capture)
            self.slots = {}
            for i, e in enumerate(capture):
                self.slots.setdefault(e, []).append(i)
        self.task = GraphTask(self.order, self.needed)

    def runs(self, node, grads) -> bool:
        return (self.needed is None or node in self.needed) and (grads is not None or node in self.undefined)

    def leads_on(self, node) -> bool:
        return self.needed is None or any(e is not None and e[0] in self.needed for e in node.next)


def walk(roots, seeds, retain_graph, create_graph, accumulate, targets, capture):
    """``engine._fast_walk``'s contract, computed plainly (arguments as for ``Walk``)."""
    if _checks._state.pending:  # an index out of range in the forward: raise before any .grad changes
        _checks.flush()
    w = Walk(roots, seeds, retain_graph, create_graph, accumulate, targets, capture)
    state = gm.state
    modes = state.grad, state.autocast
    state.grad, state.autocast = bool(create_graph), None  # backward ops keep the dtypes their forward ops chose
    running_tasks().append(w.task)
    try:
        for node in w.order:
            grads = w.buffers.pop(node, None)
            if not w.runs(node, grads):
                continue
            if grads is None:  # only undefined gradients reached it
                grads = [None] * node.num_outputs
            if type(node) is AccumulateGrad:
                accumulate_grad(node, grads[0], w)
            else:
                apply_node(node, grads, w)
        callbacks = w.task.callbacks
        while callbacks:  # queue_callback: after the walk, still inside it (a callback may queue another)
            callbacks.pop(0)()
        if w.captured is not None:
            return [None if g is None else _fresh(g, create_graph) for g in w.captured]
        return None
    finally:
        running_tasks().pop()
        state.grad, state.autocast = modes


def apply_node(node, grads: list, w: Walk) -> None:
    """An op's (or a custom Function's) node: hooks on its outputs' gradients, its backward, hooks on the results,
    which then go to the nodes of its inputs."""
    hooks = node._hooks
    if hooks is not None:
        grads = _tensor_pre_hooks(hooks, grads, w.create_graph)  # Tensor.register_hook, then retain_grad
    if w.captured is not None:
        for nr, g in enumerate(grads):
            for i in w.slots.get((node, nr), ()) if g is not None else ():
                w.captured[i] = g if w.captured[i] is None else w.captured[i] + g
        if not w.leads_on(node):
            return  # grad(): an input's own node with nothing further to reach is not run (nor are its hooks)
    if hooks is not None:
        grads = _node_pre_hooks(hooks, grads)  # Node.register_prehook
    if node.runs_on_undefined or any(g is not None for g in grads):
        in_grads = apply_checked(node, grads, w.needed) if _anomaly["enabled"] else node.apply(grads, w.needed)
    else:  # a built-in node passes undefined gradients on
        in_grads = [None] * len(node.next)
    if not w.retain_graph:
        node.release()  # what it saved is freed now, as the fast walk frees it
    if hooks is not None:
        in_grads = _post_hooks(hooks, in_grads, grads)  # Node.register_hook
    _pass_on(w.buffers, node, node.next, in_grads, w.needed, False, w.undefined)  # summed, conformed to each input


def accumulate_grad(node: AccumulateGrad, g, w: Walk) -> None:
    """A leaf's node: its tensor hooks, then ``.grad += g`` (backward) or capture (grad)."""
    if g is None:  # an undefined gradient reaches a leaf's hooks only
        ex = node.variable._extra
        for fn in list(ex.leaf_hooks.values()) if ex is not None and ex.leaf_hooks else ():
            fn(None)
        return
    _visit_leaf(node, g, w.accumulate, w.create_graph, w.captured, w.slots)


engine.reference_walk = walk
