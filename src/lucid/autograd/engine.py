"""The engine: ``backward`` and ``grad``.

One walk serves both. From the roots' nodes it collects the reachable graph iteratively (no recursion, so 10^5-deep
graphs work), orders it topologically by dependency counts (Kahn), optionally prunes it to the nodes that lead to
the requested inputs, and then visits each node once: sum of its incoming gradients -> hooks -> its backward
(``node.apply``) -> the results conformed to each receiving node's shape and dtype (undoing broadcasting and type
promotion in this one place) and added into that node's buffer. ``backward`` adds what reaches leaves into their
``.grad``; ``grad`` captures what reaches the inputs and touches no ``.grad``.

``_fast_walk`` is the walk that runs; ``reference.py`` states the same walk as a plain loop on Tensors (read it
first), and ``use_reference()`` switches to it. The fast walk differs only in how: without ``create_graph`` it hands
MLX arrays between raw nodes and adds hook-free leaves' gradients from the array (docs/architecture.md).
"""
from __future__ import annotations

import contextlib
import functools
import os
import warnings
from collections.abc import Mapping

import mlx.core as mx

from .. import _checks, _cpu_route, _legacy, _meta, _sums
from .._grad_mode import is_compiling
from .._tensor import Tensor, _shape_str, _size_str, _wrap, after_write, backward_starting, evaluate_later
from .._dtype import dtype_name, is_complex
from .. import _grad_mode as gm
from .anomaly import _state as _anomaly, apply_checked
from .graph import AccumulateGrad, GradientEdge, GraphTask, edge_of, running_tasks

_ALL = object()  # "accumulate into every leaf"


# ---------------------------------------------------------------------------------------------------- public API
def _float64_on_cpu(walk):
    """``backward``/``grad`` on a GPU default device (which has no float64) through a graph that holds float64: the
    whole walk, seeds included, runs on the CPU stream (lucid._cpu_route). On a CPU default: one device query."""

    @functools.wraps(walk)
    def run(*args, **kwargs):
        if _cpu_route.gpu_default() and _holds_float64(args[0] if args else kwargs.get("tensors",
                                                                                       kwargs.get("outputs"))):
            with _cpu_route.on_cpu():
                return walk(*args, **kwargs)
        return walk(*args, **kwargs)

    return run


def _holds_float64(tensors) -> bool:
    """Whether a root, an output of a node reachable from the roots or a tensor such a node saved is float64."""
    f64 = mx.float64
    roots = [tensors] if isinstance(tensors, Tensor) else [t for t in tensors if isinstance(t, Tensor)]
    if any(t._storage.data.dtype == f64 for t in roots):
        return True
    stack = [t._node for t in roots if t._node is not None]
    seen = set(stack)
    while stack:
        node = stack.pop()
        saved = getattr(node, "args", None)  # an op's saved inputs: one that needs no gradient still feeds the VJPs
        if type(saved) is tuple and any(isinstance(a, Tensor) and a._storage.data.dtype == f64 for a in saved):
            return True
        for e in node.next:
            if e is not None and e[0] not in seen:
                if e[0].output_meta(e[1])[1] == f64:
                    return True
                seen.add(e[0])
                stack.append(e[0])
    return False


@_float64_on_cpu
def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False, grad_variables=None,
             inputs=None) -> None:
    """Compute the sum of gradients of ``tensors`` with respect to graph leaves and accumulate it into their
    ``.grad``.

    :param tensors: the roots: a Tensor or a sequence of Tensors (each must require grad).
    :param grad_tensors: one seed per root, each of its root's shape (a Tensor or a number); None means ones,
        allowed only for one-element roots. Several roots are summed at shared leaves.
    :param retain_graph: keep the saved tensors so the graph can be walked again; defaults to ``create_graph``
        (without it, a second walk raises "Trying to backward through the graph a second time").
    :param create_graph: record the backward itself, so ``.grad`` is differentiable (higher-order derivatives).
    :param grad_variables: the deprecated name of ``grad_tensors`` (warns).
    :param inputs: accumulate only into these tensors (a non-leaf among them gets ``.grad`` via ``retain_grad``).
    :returns: None; the gradients are added to the leaves' ``.grad``.

    >>> import lucid
    >>> x = lucid.tensor([1.0, 2.0], requires_grad=True)
    >>> lucid.autograd.backward((x * x).sum())
    >>> x.grad
    Tensor([2., 4.])
    """
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.", FutureWarning, stacklevel=2)
        if grad_tensors is None:
            grad_tensors = grad_variables
    roots = _as_tensors(tensors)
    if inputs is not None:
        inputs = _as_inputs(inputs, "backward")
        for t in inputs:
            if isinstance(t, Tensor) and not t._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    seeds = _make_seeds(roots, grad_tensors, allow_scalars=False)
    for i, t in enumerate(roots):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
            "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
            "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
            "to None after use to break the cycle and avoid the leak.", UserWarning, stacklevel=2)
    if inputs is None:
        accumulate, targets = _ALL, None
    else:
        for t in inputs:
            if isinstance(t, Tensor):
                t.retain_grad()  # a non-leaf input gets .grad (a no-op on leaves)
        edges = [_input_edge(t) for t in inputs]
        accumulate = {e[0] for e in edges if type(e[0]) is AccumulateGrad}
        targets = {e[0] for e in edges}
    backward_starting()  # bounds the in-place writes of a training loop that has no optimizer
    _execute([edge_of(t) for t in roots], seeds, retain_graph, create_graph, accumulate, targets, None)
    if not is_compiling():
        for t in roots:
            if t._storage.data.size == 1:  # the loss: computed by the optimizer's evaluation, so reading it is free
                evaluate_later(t)


@_float64_on_cpu
def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False, only_inputs: bool = True,
         allow_unused=None, is_grads_batched: bool = False, materialize_grads: bool = False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated.

    Unlike PyTorch, a single Tensor ``inputs`` gives the gradient Tensor itself, not a 1-tuple: code ported from
    PyTorch that writes ``grad(y, x)[0]`` gets the gradient's first row. Pass ``[x]`` for PyTorch's tuple
    (``lucid.compat.torch.autograd.grad`` always returns it). Nothing's ``.grad`` is read or written (except
    retain_grad'ed non-leaves, as in PyTorch), and only nodes that lead to ``inputs`` are visited.

    :param outputs: a Tensor or a sequence of Tensors to differentiate.
    :param inputs: a Tensor (its gradient is returned as a Tensor), a list or tuple (a tuple is returned) or a
        dict (a dict with the same keys), of tensors that require grad or ``GradientEdge`` objects.
    :param grad_outputs: one seed per output (the vector of the vector-Jacobian product); omitted means ones (for
        one-element outputs only); Python scalars are accepted.
    :param retain_graph: keep the saved tensors for another walk; defaults to ``create_graph``.
    :param create_graph: record the backward, so the returned gradients are differentiable.
    :param only_inputs: deprecated and ignored (warns when False), as in PyTorch.
    :param allow_unused: an input the outputs do not depend on gets None instead of raising; outputs that do not
        require grad are then skipped.
    :param is_grads_batched: dim 0 of every grad_output is a batch of seeds; the results are stacked along it.
    :param materialize_grads: unused inputs get zeros instead of None (implies ``allow_unused``).
    :returns: the gradients, shaped like ``inputs`` (see ``inputs``).

    >>> import lucid
    >>> x = lucid.tensor([1.0, -2.0, 3.0], requires_grad=True)
    >>> lucid.autograd.grad((x * x).sum(), x)
    Tensor([ 2., -4.,  6.])
    >>> (g,) = lucid.autograd.grad((x ** 3).sum(), [x], create_graph=True)
    >>> lucid.autograd.grad(g.sum(), x)
    Tensor([  6., -12.,  18.])
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=2)
    keys = list(inputs.keys()) if isinstance(inputs, dict) else None
    single = isinstance(inputs, (Tensor, GradientEdge))
    inputs = _as_inputs(inputs, "grad")
    for t in inputs:
        if not isinstance(t, GradientEdge) and not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    outputs = _as_tensors(outputs)
    seeds_in = grad_outputs
    if seeds_in is not None:
        seeds_in = list(seeds_in) if isinstance(seeds_in, (list, tuple)) else [seeds_in]
        if len(seeds_in) < len(outputs):
            raise RuntimeError(f"got {len(outputs)} tensors and {len(seeds_in)} gradients")
    if allow_unused:  # the seed contract: with allow_unused, outputs that have no graph are skipped
        keep = [i for i, o in enumerate(outputs) if o._requires_grad]
        outputs = [outputs[i] for i in keep]
        seeds_in = None if seeds_in is None else [seeds_in[i] for i in keep]
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    if retain_graph is None:
        retain_graph = create_graph
    edges = [_input_edge(t) for t in inputs]

    if is_grads_batched:
        results = _batched(outputs, seeds_in, edges, retain_graph, create_graph)
    else:
        seeds = _make_seeds(outputs, seeds_in, allow_scalars=True)
        results = _execute([edge_of(t) for t in outputs], seeds, retain_graph, create_graph, None,
                           {e[0] for e in edges}, edges) if outputs else [None] * len(inputs)

    for i, (g, t) in enumerate(zip(results, inputs)):
        if g is None:
            if materialize_grads:
                if isinstance(t, GradientEdge):  # an edge has no tensor to take the zeros' shape from
                    raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
                results[i] = _wrap(mx.zeros_like(t._storage.data), rg=bool(create_graph))
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
    if single:
        return results[0]
    if keys is not None:
        return dict(zip(keys, results))
    return tuple(results)


# ---------------------------------------------------------------------------------------------------- arguments
def _as_tensors(tensors) -> list:
    if isinstance(tensors, Tensor):
        return [tensors]
    tensors = list(tensors)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected a Tensor or a sequence of Tensors, but got {type(t).__name__}")
    return tensors


def _as_inputs(inputs, fn_name: str) -> list:
    if isinstance(inputs, Mapping) and not isinstance(inputs, dict):
        raise TypeError(f"inputs to {fn_name}() must be a Tensor, a sequence of Tensors or a dict, "
                        f"not {type(inputs).__name__}")
    if isinstance(inputs, dict):
        inputs = list(inputs.values())
    inputs = [inputs] if isinstance(inputs, (Tensor, GradientEdge)) else list(inputs)
    for t in inputs:
        if not isinstance(t, (Tensor, GradientEdge)):
            raise TypeError(f"expected a Tensor or a sequence of Tensors, but got {type(t).__name__}")
    if not inputs:
        raise RuntimeError(f"`inputs` argument to `{fn_name}()` cannot be empty.")
    return inputs


def _input_edge(t):
    """The edge an input names: a Tensor's (edge_of), or a GradientEdge as given."""
    return (t.node, t.output_nr) if isinstance(t, GradientEdge) else edge_of(t)


def _make_seeds(outputs: list, grads, allow_scalars: bool) -> list:
    """One seed Tensor per output, validated as PyTorch does."""
    if grads is None:
        grads = [None] * len(outputs)
    elif isinstance(grads, Tensor) or (allow_scalars and isinstance(grads, (int, float, complex))):
        grads = [grads]
    else:
        grads = list(grads)  # a bare float raises "'float' object is not iterable", as in PyTorch
    if len(grads) < len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        a = out._storage.data
        if g is None:
            if not out._requires_grad:
                seeds.append(None)
                continue
            if a.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if is_complex(a.dtype):
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{dtype_name(a.dtype)}")
            seeds.append(_wrap(mx.ones(a.shape, a.dtype)))
        elif isinstance(g, Tensor):
            ga = g._storage.data
            if ga.shape != a.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {_size_str(ga.shape)} and "
                                   f"output[{i}] has a shape of {_size_str(a.shape)}.")
            if is_complex(ga.dtype) != is_complex(a.dtype):
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch "
                    f"in dtype: grad_output[{i}] has a dtype of {dtype_name(ga.dtype)} and output[{i}] has a dtype "
                    f"of {dtype_name(a.dtype)}.")
            seeds.append(g if ga.dtype == a.dtype else g.to(a.dtype))
        elif allow_scalars and isinstance(g, (int, float, complex)) and not isinstance(g, bool):
            seeds.append(_wrap(mx.full(a.shape, g, a.dtype)))
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return seeds


# lucid's differentiable ``stack`` (a create_graph result is recorded) joins batched gradients. Ops sit above the
# engine, so lucid.ops.shape puts it here when it is imported.
stack_op = None


def _batched(outputs, seeds_in, edges, retain_graph, create_graph) -> list:
    """``is_grads_batched``: one walk per row of the seeds, results stacked along a new dim 0."""
    stack = stack_op
    if seeds_in is None:
        raise RuntimeError("is_grads_batched=True needs grad_outputs with a leading batch dimension")
    n = None
    for i, (o, g) in enumerate(zip(outputs, seeds_in)):
        gs, os_ = tuple(g.shape), tuple(o.shape)
        if gs[1:] != os_:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of {_size_str(gs[1:])} and "
                f"output[{i}] has a shape of {_size_str(os_)}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap.")
        n = gs[0]
    if n == 0:  # an empty batch: empty results of shape (0, *input.shape)
        return [_wrap(mx.zeros((0,) + tuple(e[0].output_meta(e[1])[0]), e[0].output_meta(e[1])[1])) for e in edges]
    per_row = []
    for b in range(n):
        seeds = _make_seeds(outputs, [g[b] for g in seeds_in], allow_scalars=True)
        keep = retain_graph or b < n - 1
        per_row.append(_execute([edge_of(t) for t in outputs], seeds, keep, create_graph, None,
                                {e[0] for e in edges}, edges))
    out = []
    for j, e in enumerate(edges):
        col = [row[j] for row in per_row]
        if any(c is None for c in col):
            out.append(None)
        else:
            out.append(stack(col))
    return out


# ---------------------------------------------------------------------------------------------------- the walk
def _topological(root_nodes: list) -> list:
    """Every node reachable from the roots, parents before children, found without recursion."""
    deps: dict = {}
    seen = set(root_nodes)
    stack = list(seen)
    while stack:
        for e in stack.pop().next:
            if e is not None:
                m = e[0]
                deps[m] = deps.get(m, 0) + 1
                if m not in seen:
                    seen.add(m)
                    stack.append(m)
    ready = [n for n in dict.fromkeys(root_nodes) if n not in deps]
    order = []
    while ready:
        n = ready.pop()
        order.append(n)
        for e in n.next:
            if e is not None:
                m = e[0]
                d = deps[m] - 1
                deps[m] = d
                if d == 0:
                    ready.append(m)
    return order


_MAX_NESTED_WALKS = 100  # walks nested in one thread (a backward inside a backward) before the next gets a new thread


def _execute(roots, seeds, retain_graph, create_graph, accumulate, targets, capture):
    """Walk the graph from ``roots`` (edges) with ``seeds``.

    accumulate: _ALL, a set of AccumulateGrad nodes, or None (accumulate nothing).
    targets: None, or the nodes the walk must reach (it then skips every node that leads to none of them).
    capture: None, or a list of edges whose gradients are returned, in order.
    """
    walk = reference_walk if _reference[0] else _fast_walk
    if len(running_tasks()) >= _MAX_NESTED_WALKS:  # deeply reentrant backward: escape Python's recursion limit
        return _on_fresh_thread(walk, roots, seeds, retain_graph, create_graph, accumulate, targets, capture)
    return walk(roots, seeds, retain_graph, create_graph, accumulate, targets, capture)


# The reference engine (autograd/reference.py, the plain statement of what a walk computes) puts its walk here when
# it is imported; ``use_reference`` or LUCID_REFERENCE_ENGINE=1 makes every walk, in every thread, use it.
reference_walk = None
_reference = [os.environ.get("LUCID_REFERENCE_ENGINE", "") not in ("", "0")]


@contextlib.contextmanager
def use_reference(enabled: bool = True):
    """Within the block, ``backward()`` and ``grad()`` run the reference walk (``enabled=False``: the fast one)."""
    before, _reference[0] = _reference[0], enabled
    try:
        yield
    finally:
        _reference[0] = before


def _on_fresh_thread(fn, *args):
    """``fn(*args)`` on a new thread, which starts with its own recursion budget (as PyTorch hands a deep reentrant
    backward to another worker), in this thread's grad modes; its result or error comes back here."""
    import threading
    st = gm.state
    modes = (st.grad, st.inference, st.compiling, st.mlx_transform_depth)
    box = {}

    def run():
        s = gm.state
        s.grad, s.inference, s.compiling, s.mlx_transform_depth = modes
        try:
            box["result"] = fn(*args)
        except BaseException as e:  # noqa: BLE001  (re-raised in the caller's thread)
            box["error"] = e

    worker = threading.Thread(target=run, name="lucid-reentrant-backward")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


def _fast_walk(roots, seeds, retain_graph, create_graph, accumulate, targets, capture):
    """What ``reference.walk`` computes (the specification: read it first), with gradients handed between raw
    nodes as MLX arrays when nothing is recorded, and a shortcut for leaves without hooks."""
    if _checks._state.pending:  # an index out of range in the forward: raise before any .grad changes
        _checks.flush()
    pairs = [(e, s) for e, s in zip(roots, seeds) if e is not None and s is not None]
    order = _topological([e[0] for e, _ in pairs])
    needed = None
    if targets is not None:
        needed = set(targets)
        for n in reversed(order):
            if n not in needed:
                for e in n.next:
                    if e is not None and e[0] in needed:
                        needed.add(n)
                        break
    captured = None
    if capture is not None:
        captured = [None] * len(capture)
        slots: dict = {}
        for i, e in enumerate(capture):
            slots.setdefault(e, []).append(i)

    # Without create_graph nothing in the walk is recorded, so the gradients flow between nodes as MLX arrays: a
    # node that can (``raw`` OpNodes, whose VJPs compute on arrays as written) runs its VJP on arrays, with no Tensor
    # or Node made per backward op. Hooks, other nodes, captured results and .grad see Tensors, wrapped at the edge.
    raw = not create_graph and not _anomaly["enabled"]
    buffers: dict = {}
    undefined: set = set()  # nodes an undefined (None) gradient was sent to: they run even if nothing else comes
    for (node, nr), seed in pairs:
        _add_to(buffers, node, nr, seed._storage.data if raw else seed)

    mode_before, autocast_before = gm.state.grad, gm.state.autocast
    gm.state.grad = bool(create_graph)
    gm.state.autocast = None  # backward ops run in the dtypes their forward ops chose, as in PyTorch
    tasks = running_tasks()
    task = GraphTask(order, needed)  # for hooks that ask what this walk runs (register_multi_grad_hook)
    tasks.append(task)
    state = gm.state
    try:
        for node in order:
            grads = buffers.pop(node, None)
            if grads is None or (needed is not None and node not in needed):
                if grads is None and node in undefined and (needed is None or node in needed):
                    if raw:
                        state.grad = False  # hooks and Tensor nodes run below
                    _visit_undefined(node, buffers, undefined, needed, retain_graph, captured,
                                     slots if capture else None, raw)
                continue
            if type(node) is AccumulateGrad:
                g = grads[0]
                if _meta.used[0] and g is not None and _meta.is_meta(node.variable._storage.data):
                    g = _meta_grad(g)  # a meta leaf's .grad is meta (nothing computed from placeholders is kept)
                if raw and captured is None and accumulate is _ALL and node._hooks is None:
                    var = node.variable  # the common leaf (a parameter, no hooks): .grad from the array directly
                    ex = var._extra
                    if ex is None or not (ex.leaf_hooks or ex.post_hooks):
                        old = var._grad
                        if old is None:
                            var._grad = _wrap(g)  # a new Tensor, as _fresh makes (MLX arrays are never written)
                        elif old._requires_grad:
                            var._grad = old + _wrap(g)
                        else:
                            st = old._storage
                            st.data = _meta.written(st.data, st.data + g) if _meta.used[0] else st.data + g
                            after_write(st, True)
                        continue
                if raw:
                    state.grad = False
                _visit_leaf(node, _wrap(g) if raw else g, accumulate, create_graph, captured,
                            slots if capture else None)
                continue
            hooks = node._hooks
            nxt = node.next
            if raw:
                if node.raw and hooks is None and captured is None:
                    # lucid ops given only arrays return arrays while grad is None: None during raw nodes (and the
                    # hook-free leaves, which run no op on a Tensor that requires grad), False again before any
                    # other code runs (hooks, other nodes, callbacks); the finally restores the caller's mode
                    state.grad = None
                    in_grads = node.apply_raw(grads, needed)
                    if not retain_graph:
                        node.release()
                    _pass_on(buffers, node, nxt, in_grads, needed, True, undefined)
                    continue
                state.grad = False
                grads = [None if g is None else _wrap(g) for g in grads]
            if hooks is not None and (hooks.tensor_pre or hooks.retain):
                grads = _tensor_pre_hooks(hooks, grads, create_graph)
            if captured is not None:
                for nr, g in enumerate(grads):
                    for i in slots.get((node, nr), ()):
                        captured[i] = g if captured[i] is None else captured[i] + g
                if not any(e is not None and e[0] in needed for e in nxt):
                    # grad(): an input's own node with nothing further to reach is not run, so its pre- and
                    # post-hooks do not fire (backward(inputs=...) runs it, hooks and all, as PyTorch does)
                    continue
            if hooks is not None and hooks.pre:
                grads = _node_pre_hooks(hooks, grads)
            if _anomaly["enabled"]:
                in_grads = apply_checked(node, grads, needed)
            else:
                in_grads = node.apply(grads, needed)
            _finish(node, hooks, grads, in_grads, buffers, needed, retain_graph, raw, undefined)
        if raw:
            state.grad = False
        callbacks = task.callbacks
        while callbacks:  # queue_callback: after the walk, still inside it (a callback may queue another)
            callbacks.pop(0)()
        if captured is not None:
            return [None if g is None else _fresh(g, create_graph) for g in captured]
        return None
    finally:
        tasks.pop()
        gm.state.grad, gm.state.autocast = mode_before, autocast_before


def _pass_on(buffers: dict, node, nxt, in_grads, needed, raw: bool, undefined: set) -> None:
    """Add a node's input gradients (Tensors, or MLX arrays when ``raw``) into the buffers of the nodes its edges
    lead to, each conformed to the shape and dtype of the tensor it is for; a None (undefined) gradient marks the
    node it was for in ``undefined``, which the walk then runs all the same (``_visit_undefined``)."""
    for i, e in enumerate(nxt):
        if e is None:
            continue
        m, nr = e
        if needed is not None and m not in needed:
            continue
        g = in_grads[i]
        if g is None:
            undefined.add(m)
            continue
        shape, dtype = m.output_meta(nr)
        a = g if raw else g._storage.data
        if not (a.shape == shape and a.dtype == dtype):  # (MLX's dtype == costs 2/3 of its !=)
            # (a custom Function may return a float64 gradient in a float32 graph: cast on the CPU on a GPU default)
            g = (_cpu_route.build(_conform_array, a, shape, dtype, node, i) if raw
                 else _conform(g, shape, dtype, node, i))
        buf = buffers.get(m)
        if buf is None:
            buf = buffers[m] = [None] * m.num_outputs
        prev = buf[nr]
        buf[nr] = g if prev is None else prev + g


def _visit_undefined(node, buffers, undefined, needed, retain_graph, captured, slots, raw: bool) -> None:
    """A node that only undefined gradients reached (a backward returned None for its edge; gradcheck's
    UndefinedGrad). PyTorch runs it all the same: its tensor hooks and pre-hooks see None, a custom Function's
    backward gets zeros (or None with ``ctx.set_materialize_grads(False)``) and what it returns flows on; a built-in
    node passes undefined gradients on to all its inputs."""
    if type(node) is AccumulateGrad:
        ex = node.variable._extra
        if ex is not None and ex.leaf_hooks:
            for fn in list(ex.leaf_hooks.values()):
                fn(None)
        return
    grads = [None] * node.num_outputs
    hooks = node._hooks
    if hooks is not None and hooks.tensor_pre:
        grads = _tensor_pre_hooks(hooks, grads, False)
    nxt = node.next
    if captured is not None and not any(e is not None and e[0] in needed for e in nxt):
        return  # grad(): an input's own node with nothing further to reach is not run
    if hooks is not None and hooks.pre:
        grads = _node_pre_hooks(hooks, grads)
    if node.runs_on_undefined or any(g is not None for g in grads):
        in_grads = node.apply(grads, needed)
    else:
        in_grads = [None] * len(nxt)
    _finish(node, hooks, grads, in_grads, buffers, needed, retain_graph, raw, undefined)


def _finish(node, hooks, grads, in_grads, buffers, needed, retain_graph, raw, undefined) -> None:
    """After a node ran on Tensors: release what it saved (unless retained), run its post-hooks, and pass its input
    gradients on (as arrays in a raw walk)."""
    if not retain_graph:
        node.release()
    if hooks is not None and hooks.post:
        in_grads = _post_hooks(hooks, in_grads, grads)
    if raw:
        in_grads = [g if g is None else g._storage.data for g in in_grads]
    _pass_on(buffers, node, node.next, in_grads, needed, raw, undefined)


def _meta_grad(g):
    """The gradient (an array, or a Tensor) of a meta leaf: a placeholder of its shape and dtype."""
    return _meta.like(g) if isinstance(g, mx.array) else _wrap(_meta.like(g._storage.data))


def _fresh(g: Tensor, create_graph: bool) -> Tensor:
    """A new tensor for a gradient we hand out: it must not alias a seed or another tensor's storage, and with
    create_graph it must stay connected to g's graph (g may be a seed leaf that requires grad)."""
    if create_graph and g._requires_grad:
        return g.clone() if g._node is None else _wrap(g._storage.data, g._node, True, g._output_nr)
    return _wrap(g._storage.data)


def _add_to(buffers: dict, node, nr: int, g: Tensor) -> None:
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node.num_outputs
    prev = buf[nr]
    buf[nr] = g if prev is None else prev + g


def _conform(g: Tensor, shape: tuple, dtype, producer, index: int) -> Tensor:
    """Sum a gradient back over broadcast dimensions and cast it to the dtype of the tensor it is for."""
    a = g._storage.data
    gshape = a.shape
    if gshape != shape:
        lead, dims = _broadcast_dims(gshape, shape, producer, index)
        if dims:
            g = g.sum(dim=dims, keepdim=True)
        if lead:
            g = g.reshape(shape)
    if a.dtype != dtype:
        g = g.to(dtype)
    return g


def _conform_array(a, shape: tuple, dtype, producer, index: int):
    """``_conform`` on an MLX array (the raw walk): the same sum, reshape and cast that those lucid ops compute."""
    if a.shape != shape:
        lead, dims = _broadcast_dims(a.shape, shape, producer, index)
        if dims:
            a = _sums.sum(a, dims, keepdims=True)  # accurate at any size, as the lucid op
        if lead:
            a = mx.reshape(a, shape)
    if a.dtype != dtype:
        a = a.astype(dtype)
    return a


def _broadcast_dims(gshape: tuple, shape: tuple, producer, index: int) -> tuple:
    """How a gradient of ``gshape`` maps back onto ``shape``: (leading dims to drop, dims to sum)."""
    lead = len(gshape) - len(shape)
    if lead < 0 or any(s != 1 and s != gs for s, gs in zip(shape, gshape[lead:])):
        raise RuntimeError(f"Function {producer.name()} returned an invalid gradient at index {index} - got "
                           f"{_shape_str(gshape)} but expected shape compatible with {_shape_str(shape)}")
    return lead, tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1)


def _tensor_pre_hooks(hooks, grads: list, create_graph) -> list:
    """Tensor hooks of the node's outputs, then retain_grad (which sees what the tensor hooks made of the gradient,
    but not what the node's own pre-hooks make of it: those run after, as in PyTorch)."""
    grads = list(grads)
    for nr, g in enumerate(grads):
        for fn in list(hooks.tensor_pre.get(nr, {}).values()):
            # an output that got no gradient in this walk still runs its hooks, with None (as PyTorch does)
            g = fn(g) if g is None else _run_tensor_hook(fn, g)
        if g is None:
            continue
        grads[nr] = g
        ref = hooks.retain.get(nr)
        t = ref() if ref is not None else None
        if t is not None:
            _accumulate(t, g, create_graph)
    return grads


def _node_pre_hooks(hooks, grads: list) -> list:
    """The node's own pre-hooks (``Node.register_prehook``); each may replace the gradients."""
    for fn in list(hooks.pre.values()):
        r = fn(tuple(grads))
        if r is not None:
            if len(r) != len(grads):
                raise RuntimeError(f"hook '{_hook_name(fn)}' has returned an incorrect number of values "
                                   f"(got {len(r)}, but expected {len(grads)})")
            grads = [_checked(fn, g, v) for g, v in zip(grads, r)]
    return grads


def _post_hooks(hooks, in_grads, grads) -> tuple:
    for fn in list(hooks.post.values()):
        r = fn(tuple(in_grads), tuple(grads))
        if r is not None:
            if len(r) != len(in_grads):
                raise RuntimeError(f"hook '{_hook_name(fn)}' has returned an incorrect number of values "
                                   f"(got {len(r)}, but expected {len(in_grads)})")
            in_grads = tuple(_checked(fn, g, v) for g, v in zip(in_grads, r))
    return in_grads


def _run_tensor_hook(fn, g: Tensor) -> Tensor:
    r = fn(g)
    return g if r is None else _checked(fn, g, r)


def _checked(fn, g, r):
    """What hook ``fn`` returned (``r``) in place of the gradient ``g``, refused as PyTorch refuses it when its type
    or size differs (a gradient of another dtype or shape would be cast or broadcast silently further on)."""
    if g is None or r is None:
        return r
    if not isinstance(r, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    if r.dtype != g.dtype:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the type of value (was {_type_name(g.dtype)} got "
                           f"{_type_name(r.dtype)})")
    if r._storage.data.shape != g._storage.data.shape:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value")
    return r


def _hook_name(fn) -> str:
    return getattr(fn, "__name__", "<unknown>")


def _type_name(dtype) -> str:
    """PyTorch's legacy type name, lucid's spelling: lucid.FloatTensor (lucid.complex64 where there is none)."""
    for name in _legacy.__all__:
        if getattr(_legacy, name).dtype == dtype:
            return f"lucid.{name}"
    return f"lucid.{dtype_name(dtype)}"


def _visit_leaf(node: AccumulateGrad, g: Tensor, accumulate, create_graph, captured, slots) -> None:
    """A leaf's node, in PyTorch's order: the leaf's tensor hooks, capture (grad), and, when accumulating
    (backward), the node's pre-hooks, ``.grad += g``, the post-accumulate-grad hooks, the node's post-hooks."""
    var = node.variable
    ex = var._extra
    if ex is not None and ex.leaf_hooks:
        for fn in list(ex.leaf_hooks.values()):
            g = _run_tensor_hook(fn, g)
    if captured is not None:
        for i in slots.get((node, 0), ()):
            captured[i] = g if captured[i] is None else captured[i] + g
    if accumulate is _ALL or (accumulate is not None and node in accumulate):
        hooks = node._hooks
        if hooks is not None and hooks.pre:
            g = _node_pre_hooks(hooks, [g])[0]
        fresh = var._grad is None
        _accumulate(var, g, create_graph)
        if fresh:  # PyTorch steals the incoming gradient for a new .grad, so the post-hooks below see .grad itself
            g = var._grad
        if ex is not None and ex.post_hooks:
            for fn in list(ex.post_hooks.values()):
                if fn(var) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        if hooks is not None and hooks.post:
            _post_hooks(hooks, (), (g,))  # an AccumulateGrad node has no grad_inputs


def _accumulate(var: Tensor, g: Tensor, create_graph: bool) -> None:
    """``var.grad += g``, in place when no graph is being built (the .grad object keeps its identity)."""
    old = var._grad
    if old is None:
        # a fresh tensor: .grad must never alias a seed the caller holds or another tensor's grad
        var._grad = _fresh(g, create_graph)
    elif create_graph or old._requires_grad:
        var._grad = old + g
    else:
        st = old._storage
        new = st.data + g._storage.data
        st.data = _meta.written(st.data, new) if _meta.used[0] else new
        after_write(st, True)
