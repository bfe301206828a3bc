"""``lucid.compile``: run a whole PyTorch-style step as one ``mx.compile``d MLX graph.

The step is ordinary lucid code — forward through modules, loss, ``backward()``, ``optimizer.step()``,
``zero_grad()``. lucid traces it once with MLX's compiler: every MLX call that lucid's ops, engine and optimizers
make is recorded, and later calls replay the compiled graph with no Python tape at all.

What persists between calls is passed through the compiled function as state: the parameters and buffers of the
modules, the parameters' ``.grad``, the optimizers' state tensors and learning rates, and lucid's random key (so
dropout draws new masks every call). The modules and optimizers are found by walking from the function to what its
code names (closure, globals, attributes of objects it reaches; see ``_guards``), or given with ``state=[...]``.

A trace bakes in everything Python-side, so each call first builds a key of it: input shapes and dtypes, Python
constants among the arguments, which parameters hold a gradient, optimizer options other than the learning rate,
and the Python values the step can read (module attributes such as ``training``, closure variables, globals,
``cfg.flag``; ``_guards`` says exactly which). A new key is a new configuration: its first call runs eagerly
(creating optimizer state, lazy modules), the next one traces. At most ``cache_size_limit`` configurations are
kept per compiled function; past it new configurations run eagerly, with one warning naming what changed.
"""
from __future__ import annotations

import functools
import warnings

import mlx.core as mx

from . import _checks, _guards, _random, _threads
from ._tensor import Tensor, _wrap
from . import _grad_mode as gm


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
            return ("C", type(v), v)  # the type too: 1, 1.0 and True are equal keys but trace differently
        except TypeError:
            return ("C", id(v))
    if kind is dict:
        return (dict, tuple((k, _hashable(r)) for k, r in v.items()))
    return (kind, tuple(_hashable(r) for r in v))


cache_size_limit = 8  # configurations per compiled function (torch._dynamo.config.cache_size_limit); see compile()


class _Compiled:
    def __init__(self, fn, state):
        self.fn = fn
        self.state = state
        self.cache: dict = {}  # configuration key -> "seen" (ran eagerly once) or the compiled step
        self._cached = None
        self._last_key = None  # the configuration added last, to say what changed when the limit is hit
        self._warned = False
        functools.update_wrapper(self, fn)

    def _state_lists(self):
        """(tensors, params, optimizers, guards): rebuilt when optimizer state appears or after an eager call;
        reused by compiled calls, which is most of the per-call saving."""
        from .nn.modules.module import Module
        cached = self._cached
        if cached is not None and all(len(o.state) == n for o, n in zip(cached[2], cached[4])):
            return cached
        given = list(self.state) if self.state is not None else None
        guards = _guards.discover(self.fn, [o for o in given or () if isinstance(o, Module)])
        tensors, params, optimizers = _stateful(given if given is not None else guards.found)
        self._cached = (tensors, params, optimizers, guards, [len(o.state) for o in optimizers])
        return self._cached

    def _key(self, arg_recipe, arg_arrays, tensors, params, optimizers, guards) -> tuple:
        """Everything Python-side that a trace baked in; equal keys replay the same trace."""
        hypers = tuple((i, k, _hashable(("C", v))) for o in optimizers for i, g in enumerate(o.param_groups)
                       for k, v in g.items() if k not in ("params", "lr"))
        return (_hashable(arg_recipe), tuple(a.shape for a in arg_arrays), tuple(a.dtype for a in arg_arrays),
                hypers, tuple(p._grad is not None for p in params), tuple(id(t) for t in tensors),
                tuple(tuple(sorted(s)) for o in optimizers for s in o.state.values()), guards.values())

    def __call__(self, *args, **kwargs):
        tensors, params, optimizers, guards, _ = self._state_lists()
        arg_arrays: list = []
        arg_recipe = _flatten((args, kwargs), arg_arrays)
        key = self._key(arg_recipe, arg_arrays, tensors, params, optimizers, guards)
        entry = self.cache.get(key)
        if entry is None:  # a new configuration: run eagerly once (creates optimizer state, lazy modules)
            if len(self.cache) >= cache_size_limit:
                self._warn_limit(key, guards)
            else:
                self.cache[key] = "seen"
                self._last_key = key
            self._cached = None  # the eager call may add parameters or state
            return self.fn(*args, **kwargs)
        if entry == "seen":
            entry = self.cache[key] = self._trace(tensors, params, optimizers, arg_recipe)
        return entry(tensors, params, optimizers, arg_arrays)

    def _warn_limit(self, key, guards) -> None:
        if self._warned:
            return
        self._warned = True
        old = self._last_key
        parts = ("argument values", "input shapes", "input dtypes", "optimizer options",
                 "which parameters hold a .grad", "the state tensors", "the optimizer state")
        what = [] if old is None else \
            [p for p, a, b in zip(parts, old, key) if a != b] + guards.changed(old[-1], key[-1])
        warnings.warn(
            f"lucid.compile: {getattr(self.fn, '__qualname__', self.fn)!s} was traced for {cache_size_limit} "
            f"configurations (lucid._compile.cache_size_limit); calls with a new configuration now run eagerly. "
            f"The last change: {'; '.join(what) or 'unknown'}. A Python number that changes every call (an epoch, "
            "a schedule) retraces each time: pass it as a tensor argument when it is only used in arithmetic.",
            UserWarning, stacklevel=3)

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
            with _checks.collect() as checks:  # index bounds checks: their flags and indices become outputs
                out = fn(*args, **kwargs)
            out_arrays: list = []
            layout["out"] = _flatten(out, out_arrays)
            layout["grads"] = [p for p in params if p._grad is not None]
            layout["checks"] = checks
            return ([t._st.data for t in tensors] + [p._grad._st.data for p in layout["grads"]] + [_random._key[0]]
                    + [c.flag for c in checks] + [c.flag if c.index is None else c.index for c in checks]
                    + out_arrays)

        compiled = _threads.compiled_on_main_thread(pure)  # (in other threads: pure, run eagerly)

        def run(tensors, params, optimizers, arg_arrays):
            _checks.flush()  # checks pending from before this call raise first
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
            checks = layout["checks"]
            n_go, n_c = len(layout["grads"]), len(checks)
            _threads.evaluate(outs)  # the one evaluation point per step, as in eager mode (the returned loss included)
            if n_c:  # an index out of range: raise before the step's results replace anything
                start = n_t + n_go + 1
                _checks.raise_failed(checks, outs[start:start + n_c], outs[start + n_c:start + 2 * n_c])
            for t, a in zip(tensors, outs[:n_t]):
                if t._st.data is not a:
                    t._st.data = a
                    t._st.version += 1
            for p in params:
                p._grad = None
            for p, a in zip(layout["grads"], outs[n_t:n_t + n_go]):
                p._grad = _wrap(a)
            _random._key[0] = outs[n_t + n_go]
            for o in optimizers:
                o._scalars = {}  # step counters now live in arrays the optimizer has not seen
            result = outs[n_t + n_go + 1 + 2 * n_c:]
            return _rebuild(layout["out"], result)

        def run_holding_rng(*args):  # a step reads and replaces the global key: no other thread draws meanwhile
            with _random.lock:
                return run(*args)

        return run_holding_rng


def compile(fn=None, *, state=None, fullgraph: bool = False, dynamic=None, backend=None, mode=None,
            options=None, disable: bool = False):
    """Compile a training step or an inference function into one MLX graph (``torch.compile``'s signature).

    ``state``: the modules, optimizers and tensors whose values persist between calls; by default they are found
    from ``fn``: its closure, the globals it names, and attributes of the objects reached that way
    (``trainer.model`` in a bound method), also when ``fn`` is a module. Inputs may change shape (a new trace is
    made per shape, e.g. for the last partial batch). Modules and optimizers are looked up again whenever a call
    runs eagerly; give a module new parameters after that and it needs a new ``lucid.compile``. The function must
    not read tensor values (``.item()``, ``if loss > 0``): that is a clear error when tracing. Values computed
    inside and stored outside the function (``self.last = x``) are not updated by compiled calls; return them
    instead. Compiled calls return plain tensors (no ``grad_fn``: the backward already ran inside the graph).

    Python values the step reads are guarded, as ``torch.compile`` does: when one changes, the call retraces
    instead of replaying a stale trace. Guarded: every simple attribute (None, bool, number, str, enum, tuples of
    them) of the modules used (``model.use_skip``, ``dropout.p``, ``training``), the step's closure variables,
    and the names its code uses looked up in its globals, in Python modules (``config.FLAG``), plain objects
    (``cfg.lr_scale``), classes and dicts (``cfg["clip"]``) it reaches, following into your own helper functions,
    methods and modules' ``forward`` (code outside lucid, the standard library and site-packages). Not guarded:
    values read inside other libraries' code, through ``getattr(obj, name)`` with a computed name, or from
    mutable containers' contents other than string-keyed dict entries; tensors other than arguments, parameters,
    buffers and optimizer state (they are baked in as constants); hooks registered after tracing. The rule for
    those: pass the value as an argument (a Python scalar retraces per value; a tensor does not), or make a new
    ``lucid.compile``. A value that changes every call (an epoch counter) retraces every call: after
    ``lucid._compile.cache_size_limit`` (8, as ``torch.compile``'s) configurations, new ones run eagerly with one
    ``UserWarning`` naming what changed; results stay right either way.
    """
    if fn is None:
        return lambda f: compile(f, state=state, disable=disable)
    if disable:
        return fn
    return _Compiled(fn, state)
