"""``lucid.compile``: run a whole PyTorch-style step as one ``mx.compile``d MLX graph.

The step is ordinary lucid code — forward through modules, loss, ``backward()``, ``optimizer.step()``,
``zero_grad()``. lucid traces it once with MLX's compiler: every MLX call that lucid's ops, engine and optimizers
make is recorded, and later calls replay the compiled graph with no Python tape at all.

What persists between calls is passed through the compiled function as state: the parameters and buffers of the
modules, the parameters' ``.grad``, the optimizers' state tensors and learning rates, and lucid's random key (so
dropout draws new masks every call). The modules and optimizers are found in the function's closure and globals,
or given with ``state=[...]``.

A new trace is made when something Python-side changes what the step computes: input shapes and dtypes,
``train()``/``eval()``, which parameters hold a gradient, optimizer options other than the learning rate. The
first call with each new configuration runs eagerly (creating optimizer state, lazy modules); the next one
compiles.
"""
from __future__ import annotations

import functools

import mlx.core as mx

from . import _random, _threads
from ._tensor import Tensor, _wrap
from .autograd import grad_mode as gm


def is_compiling() -> bool:
    """True while lucid.compile traces a function in this thread (optimizers skip their per-step ``mx.eval``
    then)."""
    return gm.state.compiling


_VALUE_ERROR = (
    "lucid.compile: the function read a tensor's value (.item(), bool(), float(), .tolist(), .numpy(), printing, or "
    "Python control flow on a tensor) while being compiled. A compiled function cannot branch on values: compute "
    "both branches and choose with lucid.where, move the check outside the compiled function, or compile a "
    "smaller function. (MLX said: {})")


def _stateful(objects) -> tuple[list, list, list]:
    """(state tensors, parameters whose .grad is state, optimizers) of the given modules/optimizers/tensors."""
    from .nn.modules.module import Module
    from .optim.optimizer import Optimizer
    tensors, params, optimizers, seen, seen_p = [], [], [], set(), set()

    def add(t, is_param=False):
        if id(t) not in seen:
            seen.add(id(t))
            tensors.append(t)
        if is_param and id(t) not in seen_p:
            seen_p.add(id(t))
            params.append(t)

    for obj in objects:
        if isinstance(obj, Module):
            for p in obj.parameters():
                add(p, True)
            for b in obj.buffers():
                add(b)
        elif isinstance(obj, Optimizer):
            optimizers.append(obj)
            for group in obj.param_groups:
                for p in group["params"]:
                    add(p, True)
            for s in obj.state.values():
                for v in s.values():
                    if isinstance(v, Tensor):
                        add(v)
        elif isinstance(obj, Tensor):
            add(obj)
    return tensors, params, optimizers


def _discover(fn) -> list:
    """Modules and optimizers that ``fn`` reaches through its closure and the globals it names."""
    from .nn.modules.module import Module
    from .optim.optimizer import Optimizer
    found = []
    candidates = [c.cell_contents for c in (getattr(fn, "__closure__", None) or ()) if _filled(c)]
    code = getattr(fn, "__code__", None)
    if code is not None:
        g = getattr(fn, "__globals__", {})
        candidates += [g[name] for name in code.co_names if name in g]
    self_obj = getattr(fn, "__self__", None)
    if self_obj is not None:
        candidates.append(self_obj)
    for c in candidates:
        items = c if isinstance(c, (list, tuple)) else (c.values() if isinstance(c, dict) else (c,))
        for item in items:
            if isinstance(item, (Module, Optimizer)) and all(item is not f for f in found):
                found.append(item)
    return found


def _filled(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def _flatten(obj, arrays: list):
    """Replace Tensors in a nested structure by slots in ``arrays``; returns a rebuild recipe."""
    if isinstance(obj, Tensor):
        arrays.append(obj._st.data)
        return ("T", len(arrays) - 1)
    if isinstance(obj, mx.array):
        arrays.append(obj)
        return ("A", len(arrays) - 1)
    if isinstance(obj, (list, tuple)):
        return (type(obj), [_flatten(o, arrays) for o in obj])
    if isinstance(obj, dict):
        return (dict, {k: _flatten(v, arrays) for k, v in obj.items()})
    return ("C", obj)


def _rebuild(recipe, arrays):
    kind, v = recipe
    if kind == "T":
        return _wrap(arrays[v])
    if kind == "A":
        return arrays[v]
    if kind == "C":
        return v
    if kind is dict:
        return {k: _rebuild(r, arrays) for k, r in v.items()}
    return kind(_rebuild(r, arrays) for r in v)


def _hashable(recipe):
    kind, v = recipe
    if kind in ("T", "A"):
        return kind
    if kind == "C":
        try:
            hash(v)
            return ("C", v)
        except TypeError:
            return ("C", id(v))
    if kind is dict:
        return (dict, tuple((k, _hashable(r)) for k, r in v.items()))
    return (kind, tuple(_hashable(r) for r in v))


class _Compiled:
    def __init__(self, fn, state):
        self.fn = fn
        self.state = state
        self.cache: dict = {}
        self._cached = None
        functools.update_wrapper(self, fn)

    def _state_lists(self):
        """(tensors, params, optimizers, modules): rebuilt when optimizer state appears (the eager first calls);
        reused by compiled calls, which is most of the per-call saving."""
        from .nn.modules.module import Module
        cached = self._cached
        if cached is not None and all(len(o.state) == n for o, n in zip(cached[2], cached[4])):
            return cached
        objects = list(self.state) if self.state is not None else _discover(self.fn)
        tensors, params, optimizers = _stateful(objects)
        modules = [m for o in objects if isinstance(o, Module) for m in o.modules()]
        self._cached = (tensors, params, optimizers, modules, [len(o.state) for o in optimizers])
        return self._cached

    def __call__(self, *args, **kwargs):
        tensors, params, optimizers, modules, _ = self._state_lists()
        arg_arrays: list = []
        arg_recipe = _flatten((args, kwargs), arg_arrays)
        modes = tuple(m.training for m in modules)
        hypers = tuple((i, k, _hashable(("C", v))) for o in optimizers for i, g in enumerate(o.param_groups)
                       for k, v in g.items() if k not in ("params", "lr"))
        has_grad = tuple(p._grad is not None for p in params)
        key = (_hashable(arg_recipe), tuple(a.shape for a in arg_arrays), tuple(a.dtype for a in arg_arrays),
               modes, hypers, has_grad, tuple(id(t) for t in tensors),
               tuple(tuple(sorted(s)) for o in optimizers for s in o.state.values()))
        entry = self.cache.get(key)
        if entry is None:  # a new configuration: run eagerly once (creates optimizer state, lazy modules)
            self.cache[key] = "seen"
            self._cached = None  # the eager call may add parameters or state
            return self.fn(*args, **kwargs)
        if entry == "seen":
            entry = self.cache[key] = self._trace(tensors, params, optimizers, arg_recipe)
        return entry(tensors, params, optimizers, arg_arrays)

    def _trace(self, tensors, params, optimizers, arg_recipe):
        """Build the compiled step for one configuration."""
        fn = self.fn
        n_t = len(tensors)
        grad_in = [p for p in params if p._grad is not None]
        n_g = len(grad_in)
        groups = [g for o in optimizers for g in o.param_groups]
        layout: dict = {}  # filled while tracing: which params hold a grad afterwards, the output recipe

        def pure(*flat):
            t_in, g_in = flat[:n_t], flat[n_t:n_t + n_g]
            rng, lrs, a_in = flat[n_t + n_g], flat[n_t + n_g + 1:n_t + n_g + 1 + len(groups)], \
                flat[n_t + n_g + 1 + len(groups):]
            for t, a in zip(tensors, t_in):
                t._st.data = a
            for p in params:
                p._grad = None
            for p, a in zip(grad_in, g_in):
                p._grad = _wrap(a)
            _random._key[0] = rng
            for g, lr in zip(groups, lrs):
                g["lr"] = lr
            args, kwargs = _rebuild(arg_recipe, list(a_in))
            out = fn(*args, **kwargs)
            out_arrays: list = []
            layout["out"] = _flatten(out, out_arrays)
            layout["grads"] = [p for p in params if p._grad is not None]
            return ([t._st.data for t in tensors] + [p._grad._st.data for p in layout["grads"]] + [_random._key[0]]
                    + out_arrays)

        compiled = _threads.compiled_on_main_thread(pure)  # (in other threads: pure, run eagerly)

        def run(tensors, params, optimizers, arg_arrays):
            before = [t._st.data for t in tensors]
            grads_before = [p._grad for p in params]
            key_before = _random._key[0]
            lrs = [g["lr"] for g in groups]
            flat = (before + [p._grad._st.data for p in grad_in] + [key_before]
                    + [mx.array(lr, dtype=mx.float32) for lr in lrs] + arg_arrays)
            gm.state.compiling = True
            try:
                outs = compiled(*flat)
            except ValueError as e:
                if "eval" in str(e):
                    raise RuntimeError(_VALUE_ERROR.format(e)) from None
                raise
            finally:
                gm.state.compiling = False
                for t, a in zip(tensors, before):  # undo what a trace wrote (its values are placeholders)
                    t._st.data = a
                for p, g in zip(params, grads_before):
                    p._grad = g
                for g, lr in zip(groups, lrs):
                    g["lr"] = lr
                _random._key[0] = key_before
            for t, a in zip(tensors, outs[:n_t]):
                if t._st.data is not a:
                    t._st.data = a
                    t._st.version += 1
            n_go = len(layout["grads"])
            for p in params:
                p._grad = None
            for p, a in zip(layout["grads"], outs[n_t:n_t + n_go]):
                p._grad = _wrap(a)
            _random._key[0] = outs[n_t + n_go]
            for o in optimizers:
                o._scalars = {}  # step counters now live in arrays the optimizer has not seen
            result = outs[n_t + n_go + 1:]
            _threads.evaluate(outs)  # the one evaluation point per step, as in eager mode (the returned loss included)
            return _rebuild(layout["out"], result)

        def run_holding_rng(*args):  # a step reads and replaces the global key: no other thread draws meanwhile
            with _random.lock:
                return run(*args)

        return run_holding_rng


def compile(fn=None, *, state=None, fullgraph: bool = False, dynamic=None, backend=None, mode=None,
            options=None, disable: bool = False):
    """Compile a training step or an inference function into one MLX graph (``torch.compile``'s signature).

    ``state``: the modules, optimizers and tensors whose values persist between calls; by default they are found
    in ``fn``'s closure and the globals it uses. Inputs may change shape (a new trace is made per shape, e.g. for
    the last partial batch). Modules and optimizers are looked up again whenever a call runs eagerly; give a
    module new parameters after that and it needs a new ``lucid.compile``. The function must not read tensor
    values (``.item()``, ``if loss > 0``): that is a clear error when tracing. Values computed inside and stored outside the function (``self.last = x``) are not
    updated by compiled calls; return them instead. Compiled calls return plain tensors (no ``grad_fn``: the
    backward already ran inside the graph).
    """
    if fn is None:
        return lambda f: compile(f, state=state, disable=disable)
    if disable:
        return fn
    return _Compiled(fn, state)
