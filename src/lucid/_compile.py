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
import operator
import warnings

import mlx.core as mx

from . import _checks, _guards, _random, _threads
from ._dtype import can_require_grad
from ._tensor import Tensor, _wrap
from . import _grad_mode as gm
from .autograd import engine
from .autograd.anomaly import _state as _anomaly
from .autograd.graph import FREED_MESSAGE, Node, _version_error, edge_of, watch
from .nn.modules import _global_hooks
from .ops._core import OpNode
from .nn.modules.module import Module


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


def _flatten(obj, arrays: list, keep_tensors: bool = False):
    """Replace Tensors in a nested structure by slots in ``arrays`` (their MLX arrays, or the Tensors themselves
    with ``keep_tensors``); returns a rebuild recipe."""
    if isinstance(obj, Tensor):
        arrays.append(obj if keep_tensors else obj._st.data)
        return ("T", len(arrays) - 1)
    if isinstance(obj, mx.array):
        arrays.append(obj)
        return ("A", len(arrays) - 1)
    if isinstance(obj, (list, tuple)):
        return (type(obj), [_flatten(o, arrays, keep_tensors) for o in obj])
    if isinstance(obj, dict):
        return (dict, {k: _flatten(v, arrays, keep_tensors) for k, v in obj.items()})
    return ("C", obj)


def _rebuild(recipe, arrays, tensors=None):
    """The structure ``_flatten`` took apart: its Tensors are ``tensors[i]`` when given, else new wrappers."""
    kind, v = recipe
    if kind == "T":
        return _wrap(arrays[v]) if tensors is None else tensors[v]
    if kind == "A":
        return arrays[v]
    if kind == "C":
        return v
    if kind is dict:
        return {k: _rebuild(r, arrays, tensors) for k, r in v.items()}
    return kind(_rebuild(r, arrays, tensors) for r in v)


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
    """Compile a module into one tape node per call, or a training step or inference function into one MLX graph
    (``torch.compile``'s signature).

    ``lucid.compile(model)`` (an ``nn.Module``, no ``state``) returns an ``OptimizedModule``: each call records
    one node, ``CompiledFunctionBackward``, whose forward and backward are ``mx.compile``d traces of the model, so
    an ordinary eager loop (``loss = f(cmodel(x)); loss.backward(); optimizer.step()``) gets the model's
    gradients in ``.grad`` without a Python tape entry per op. The backward is lucid's own (traced), so the
    gradients are eager mode's within float rounding; buffers (BatchNorm's running statistics) are updated as in
    eager mode; dropout draws from lucid's generator (the backward replays the forward's key). Calls run the
    eager model instead under module hooks, anomaly detection, autocast, inference mode, another trace, a
    checkpoint, when the forward wrote in place into an input or a parameter (seen on the first call of each
    configuration), and when the forward cannot be traced (it reads a value); ``backward(create_graph=True)``
    runs the eager model again for a differentiable gradient. ``fullgraph=True`` raises where a trace fails
    instead. A configuration is keyed like a step's (below), plus which inputs require grad and grad mode; its
    first call runs eagerly, the second traces. See docs/api/compile.md.

    A function (or ``state=[...]``) is compiled as a whole step:
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

    :param fn: an ``nn.Module`` (compiled into one tape node per call), or a training step or inference function
        (compiled into one MLX graph); omitted, ``lucid.compile(...)`` returns a decorator.
    :param state: the modules, optimizers and tensors a compiled function reads and updates (default: found from
        ``fn``).
    :param fullgraph: raise where a trace fails instead of running eagerly.
    :param dynamic: accepted for ``torch.compile``'s signature (a new trace is made per input shape).
    :param backend: accepted for ``torch.compile``'s signature (``torch.compile(model, backend="eager")`` under
        ``lucid run`` runs the module's own calls).
    :param mode: accepted for ``torch.compile``'s signature (MLX picks its kernels).
    :param options: accepted for ``torch.compile``'s signature.
    :param disable: return ``fn`` unchanged.
    :returns: an ``OptimizedModule`` for a module, else the compiled function.

    >>> import lucid
    >>> model = lucid.compile(lucid.nn.Linear(3, 1))
    >>> model(lucid.ones(2, 3)).shape
    lucid.Size([2, 1])
    """
    if fn is None:
        return lambda f: compile(f, state=state, fullgraph=fullgraph, disable=disable)
    if disable:
        return fn
    if isinstance(fn, Module) and state is None:
        return OptimizedModule(fn, fullgraph=fullgraph)
    return _Compiled(fn, state)


# ------------------------------------------------------------------------------------------ a module as one node
def _saved_slots(outs: list, known: set) -> list:
    """Where the tape behind ``outs`` keeps values its backward may read, in an order fixed by the tape's shape:
    the storages of the declared ops' Tensor arguments and saved results, and MLX arrays among their arguments
    (GELU's Phi(x)). Storages in ``known`` (the module's state and the call's arguments) are inputs anyway."""
    slots, seen = [], set(known)
    stack = [t._fn for t in reversed(outs) if t._fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, OpNode) and node.args is not None:
            for i, a in enumerate(node.args):
                if isinstance(a, Tensor):
                    if id(a._st) not in seen:
                        seen.add(id(a._st))
                        slots.append(a._st)
                elif isinstance(a, mx.array):
                    slots.append((node, i))
            if node.save_ans and node.out_st is not None and id(node.out_st) not in seen:
                seen.add(id(node.out_st))
                slots.append(node.out_st)
        stack.extend(e[0] for e in reversed(node.next) if e is not None)
    return slots


def _read(slot):
    return slot[0].args[slot[1]] if type(slot) is tuple else slot.data


def _write(slot, value) -> None:
    if type(slot) is tuple:
        node, i = slot
        node.args = node.args[:i] + (value,) + node.args[i + 1:]
    else:
        slot.data = value


class CompiledFunctionBackward(Node):
    """The one tape node of a compiled module's call (the name PyTorch's compiled modules give theirs). It keeps
    the arrays its forward ran on (parameters, buffers, the random key, the inputs); its backward is the
    configuration's compiled backward, run on those arrays and the output gradients."""

    __slots__ = ("next", "num_outputs", "plan", "saved", "diff", "versions", "metas", "inputs")
    raw = True  # the backward takes and returns MLX arrays (engine.py's raw walk)

    def __init__(self, plan, edges, saved, diff, inputs, metas):
        self._hooks = None
        self.next = edges
        self.plan = plan
        self.saved = saved  # the forward's flat arrays; None once released
        self.diff = diff  # the Tensors differentiated (parameters that require grad, then such inputs)
        self.versions = [t._st.version for t in diff]
        self.inputs = inputs  # the argument Tensors as given (for the eager backward under create_graph)
        self.metas = metas  # (shape, dtype) of each differentiable output
        self.num_outputs = len(metas)

    def output_meta(self, nr):
        return self.metas[nr]

    def release(self) -> None:
        self.saved = None
        self.inputs = None

    def _unpack(self) -> list:
        if self.saved is None:
            raise RuntimeError(FREED_MESSAGE)
        for t, v in zip(self.diff, self.versions):  # what the forward read must not have been written since
            if t._st.version != v:
                _version_error(t, t._st.version, v)
        return self.saved

    def apply_raw(self, grads: list, needed=None) -> list:
        return self.plan.backward(self, self._unpack(), grads)

    def apply(self, grads: list, needed=None) -> list:
        if gm.state.grad:  # create_graph: the gradients must be differentiable, so they come from the eager module
            return self.plan.eager_backward(self, grads, create_graph=True)
        arrays = self.apply_raw([None if g is None else g._st.data for g in grads], needed)
        return [None if a is None else _wrap(a) for a in arrays]


class _ModulePlan:
    """One configuration of a compiled module (input shapes and dtypes, which tensors require grad, the guarded
    Python values): its compiled forward and its compiled backward.

    Both are traces of the module's own forward, run by lucid on MLX tracers. The forward records lucid's tape
    (when the call records) and returns, besides the outputs, the values that tape saved (``_saved_slots``). The
    backward runs the same forward, puts those saved values back where its own tape keeps them, and runs lucid's
    backward walk (``autograd.grad``), so the gradients are those of lucid's own VJPs, as in eager mode, and
    ``mx.compile`` drops the forward computations nothing reads any more (MLX keeps no intermediate values between
    two compiled calls: without the saved values the backward would compute the forward again)."""

    def __init__(self, model, params, buffers, recipe, arg_objs, record, fullgraph):
        self.model = model
        self.state = params + buffers
        self.buffers = buffers
        self.recipe = recipe
        self.n_args = len(arg_objs)
        self.diff_params = [i for i, p in enumerate(params) if p._rg] if record else []
        self.diff_args = [i for i, a in enumerate(arg_objs) if isinstance(a, Tensor) and a._rg] if record else []
        self.record = record
        self.fullgraph = fullgraph
        self.layout: dict = {}  # filled by the forward trace: the output recipe, differentiable outputs, checks
        self.forward = _threads.compiled_on_main_thread(self._forward)
        self.backward_fns: dict = {}  # which outputs have a gradient -> the compiled backward for them
        self.traced = False  # the forward has been traced once (a failure after that is not a tracing problem)
        self.backward_failed = False
        self.reuses_forward = False  # the backward's trace read the forward's saved values (set when it traces)

    # ------------------------------------------------------------------------------------------- traced code
    def _run(self, flat, record: bool):
        """Install ``flat`` (state arrays, key, argument arrays) and call the module; (output, checks, diff, the
        storages of the state and the arguments)."""
        n_s = len(self.state)
        for t, a in zip(self.state, flat[:n_s]):
            t._st.data = a
        _random._key[0] = flat[n_s]
        arrays = list(flat[n_s + 1:n_s + 1 + self.n_args])
        wrapped = [_wrap(a, rg=record and i in self.diff_args) for i, a in enumerate(arrays)]
        args, kwargs = _rebuild(self.recipe, arrays, wrapped)
        gm.state.grad = record
        with _checks.collect() as checks:
            out = self.model(*args, **kwargs)
        known = {id(t._st) for t in self.state} | {id(w._st) for w in wrapped}
        return out, checks, [self.state[i] for i in self.diff_params] + [wrapped[i] for i in self.diff_args], known

    def _forward(self, *flat):
        out, checks, _, known = self._run(flat, self.record)
        objs: list = []
        layout = self.layout
        layout["out"] = _flatten(out, objs, True)
        layout["diff_out"] = [i for i, o in enumerate(objs) if isinstance(o, Tensor) and (  # (as eager: an output
            o._rg if self.record else can_require_grad(o._st.data.dtype))]  # that depends on no input needs none)
        layout["checks"] = checks
        # the values the tape saved (recorded inside this trace): outputs too, so the backward reads them instead of
        # computing the forward again
        residuals = [_read(s) for s in _saved_slots([objs[i] for i in layout["diff_out"]], known)] \
            if self.record else []
        layout["residuals"] = [(r.shape, r.dtype) for r in residuals]
        return ([o._st.data if isinstance(o, Tensor) else o for o in objs] + [b._st.data for b in self.buffers]
                + [_random._key[0]] + [c.flag for c in checks]
                + [c.flag if c.index is None else c.index for c in checks] + residuals)

    def _backward(self, mask, *flat):
        """The gradients of the differentiated tensors from those of the outputs ``mask`` marks (the others got
        none); a tensor none of them reaches gets zeros here and None from ``backward`` (as eager's .grad)."""
        layout = self.layout
        n_cot, n_res = sum(mask), len(layout["residuals"])
        n_in = len(flat) - n_cot - n_res
        out, _, diff, known = self._run(flat[:n_in], True)
        objs: list = []
        _flatten(out, objs, True)
        outs = [objs[i] for i, m in zip(layout["diff_out"], mask) if m]
        slots = _saved_slots([objs[i] for i in layout["diff_out"]], known)
        residuals = flat[n_in:n_in + n_res]
        undo = []
        # the same code ran on the same configuration, so its tape saved the same values in the same order; should
        # it not have (shapes differ), the backward computes the forward again, which is slower but as right
        self.reuses_forward = [(_read(s).shape, _read(s).dtype) for s in slots] == layout["residuals"]
        if self.reuses_forward:
            undo = [(s, s.data) for s in slots if type(s) is not tuple]  # (the nodes are this trace's own)
            for s, r in zip(slots, residuals):
                _write(s, r)
        try:
            with _checks.collect():  # (the forward's trace returned its index checks; these would repeat them)
                grads = engine.grad(outs, diff, [_wrap(c) for c in flat[n_in + n_res:]], allow_unused=True)
            layout.setdefault("unreached", {})[mask] = [g is None for g in grads]
        finally:
            for st, old in reversed(undo):  # a saved constant (a module's tensor attribute) gets its value back
                st.data = old
        return [mx.zeros_like(d._st.data) if g is None else g._st.data for g, d in zip(grads, diff)]

    def _traced(self, fn, flat):
        """Call a compiled function of this plan; whatever a trace writes into the module, the key or the grad
        mode is undone (its values are placeholders)."""
        before = [(t._st, t._st.data, t._st.version) for t in self.state]
        key, grad = _random._key[0], gm.state.grad
        gm.state.compiling = True
        try:
            return fn(*flat)
        except ValueError as e:
            if "eval" in str(e):
                raise RuntimeError(_VALUE_ERROR.format(e)) from None
            raise
        finally:
            gm.state.compiling = False
            gm.state.grad = grad
            _random._key[0] = key
            for st, data, version in before:
                st.data, st.version = data, version

    # ------------------------------------------------------------------------------------------- calls
    def call(self, arg_objs):
        layout = self.layout
        arrays = [a._st.data if isinstance(a, Tensor) else a for a in arg_objs]
        with _random.lock:  # the call reads and replaces the global key: no other thread draws meanwhile
            flat = [t._st.data for t in self.state] + [_random._key[0]] + arrays
            outs = self._traced(self.forward, flat)
            self.traced = True
            n_r = len(layout["residuals"])
            n_o = len(outs) - len(self.buffers) - 1 - 2 * len(layout["checks"]) - n_r
            _random._key[0] = outs[n_o + len(self.buffers)]
        for b, a in zip(self.buffers, outs[n_o:n_o + len(self.buffers)]):  # BatchNorm's running statistics
            if b._st.data is not a:
                b._st.data = a
                b._st.version += 1
        checks = layout["checks"]
        if checks:  # index checks raise at the next evaluation, as the eager ops' do
            start = n_o + len(self.buffers) + 1
            for c, f, i in zip(checks, outs[start:], outs[start + len(checks):]):
                _checks._register(_checks.Check(f, None if c.index is None else i, c.lo, c.size, c.ignore,
                                                c.error, c.op, c.site))
        tensors = [_wrap(a) for a in outs[:n_o]]
        diff = [self.state[i] for i in self.diff_params] + [arg_objs[i] for i in self.diff_args]
        if diff:
            metas = [(outs[i].shape, outs[i].dtype) for i in layout["diff_out"]]
            node = CompiledFunctionBackward(self, [edge_of(t) for t in diff], flat + outs[len(outs) - n_r:], diff,
                                            arg_objs, metas)
            for nr, i in enumerate(layout["diff_out"]):
                t = tensors[i]
                t._fn, t._nr, t._rg = node, nr, True
        return _rebuild(layout["out"], outs, tensors)

    def backward(self, node, saved, grads):
        mask = tuple(g is not None for g in grads)
        if not self.backward_failed:
            fn = self.backward_fns.get(mask)
            if fn is None:
                fn = self.backward_fns[mask] = _threads.compiled_on_main_thread(
                    lambda *flat: self._backward(mask, *flat))
            try:
                res = self._traced(fn, saved + [g for g in grads if g is not None])
                return [None if unreached else r for r, unreached in zip(res, self.layout["unreached"][mask])]
            except Exception as e:
                if self.fullgraph:
                    raise
                self.backward_failed = True  # this configuration's backward runs eagerly from now on
                _warn_eager(self.model, "backward", e)
        res = self.eager_backward(node, [None if g is None else _wrap(g) for g in grads], create_graph=False)
        return [None if g is None else g._st.data for g in res]

    def eager_backward(self, node, grads, create_graph: bool) -> list:
        """The gradients by running the module eagerly again on the forward's values (the same random key and
        buffers), through lucid's tape: differentiable under ``create_graph``."""
        saved = node._unpack()
        n_p = len(self.state) - len(self.buffers)
        after = [(b._st, b._st.data, b._st.version) for b in self.buffers]
        with _random.lock:
            key = _random._key[0]
            _random._key[0] = saved[len(self.state)]
            try:
                for b, a in zip(self.buffers, saved[n_p:len(self.state)]):
                    b._st.data = a
                args, kwargs = _rebuild(self.recipe, node.inputs, node.inputs)
                with gm.enable_grad():
                    out = self.model(*args, **kwargs)
                    objs: list = []
                    _flatten(out, objs, True)
                    kept = [(objs[i], g) for i, g in zip(self.layout["diff_out"], grads) if g is not None]
                    res = engine.grad([o for o, _ in kept], node.diff, [g for _, g in kept],
                                      create_graph=create_graph, allow_unused=True)
            finally:
                _random._key[0] = key
                for st, data, version in after:
                    st.data, st.version = data, version
        return list(res)


def _warn_eager(model, what: str, e: Exception) -> None:
    warnings.warn(f"lucid.compile: the {what} of {type(model).__name__} could not be traced ({type(e).__name__}: "
                  f"{str(e).splitlines()[0] if str(e) else ''}); this configuration runs the eager module's {what} "
                  "instead (same results, eager speed). fullgraph=True makes this an error.", UserWarning,
                  stacklevel=5)


class OptimizedModule(Module):
    """What ``lucid.compile(model)`` and ``torch.compile(model)`` return: calls ``_orig_mod`` as one tape node
    (see ``compile``); attributes it does not have itself are the model's. As PyTorch's, it holds the model as
    ``_orig_mod``, so its state_dict keys start with ``_orig_mod.``."""

    def __init__(self, mod: Module, *, fullgraph: bool = False, eager: bool = False):
        super().__init__()
        self._orig_mod = mod
        d = self.__dict__  # plain attributes, set past Module.__setattr__
        d["_fullgraph"] = fullgraph
        d["_eager"] = eager  # torch.compile(backend="eager"): the module's own calls, nothing compiled
        d["_plans"] = {}  # configuration key -> "seen" (ran eagerly once), "eager" (cannot be compiled) or a plan
        d["_found"] = None  # (params, buffers, modules, guards), found again after every eager call
        d["_warned"] = False

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)  # parameters, buffers, submodules (_orig_mod itself)
        except AttributeError:
            return getattr(super().__getattr__("_orig_mod"), name)

    def __getstate__(self):  # copy.deepcopy, pickling: the traces stay behind (a copy traces its own)
        state = self.__dict__.copy()
        state["_plans"], state["_found"] = {}, None
        return state

    def _state(self):
        """(parameters, buffers, modules, guards), found again when a module's parameters, buffers or submodules
        are no longer the same objects (an attribute replaced) and after every eager call."""
        found = self._found
        if found is not None:
            held = found[4]
            now = [v for m in found[2] for d in (m._parameters, m._buffers, m._modules) for v in d.values()]
            if len(now) == len(held) and all(map(operator.is_, now, held)):
                return found
        model = self._orig_mod
        modules = list(model.modules())
        found = self.__dict__["_found"] = (
            list(model.parameters()), list(model.buffers()), modules, _guards.discover(model, [model]),
            [v for m in modules for d in (m._parameters, m._buffers, m._modules) for v in d.values()])
        return found

    def forward(self, *args, **kwargs):
        model = self._orig_mod
        st = gm.state
        if (self._eager or st.compiling or st.mlx_transform_depth or st.inference or st.autocast is not None
                or watch["on"] or _global_hooks.state.active or _anomaly["enabled"]):
            return model(*args, **kwargs)  # inside another trace or transform, or a mode the plan does not cover
        params, buffers, modules, guards, _ = self._state()
        for m in modules:
            if m._forward_pre_hooks or m._forward_hooks or m._backward_hooks or m._backward_pre_hooks:
                return model(*args, **kwargs)  # module hooks see each call: the eager module runs them
        objs: list = []
        recipe = _flatten((args, kwargs), objs, True)
        record = st.grad and (any(p._rg for p in params) or any(type(o) is not mx.array and o._rg for o in objs))
        arrays = [o if type(o) is mx.array else o._st.data for o in objs]
        key = (_hashable(recipe), tuple(a.shape for a in arrays), tuple(a.dtype for a in arrays),
               tuple(o._rg for o in objs if type(o) is not mx.array), tuple(p._rg for p in params), record,
               tuple(id(t) for t in params), tuple(id(t) for t in buffers),
               tuple(t._st.data.dtype for t in params), guards.values())  # (model.double() retraces)
        plans = self._plans
        plan = plans.get(key)
        if plan is None:  # a new configuration: run eagerly once (lazy modules, optimizer state), watching writes
            if len(plans) >= cache_size_limit:
                self._warn_limit()
                return model(*args, **kwargs)
            versions = [t._st.version for t in params] + [o._st.version for o in objs if type(o) is not mx.array]
            out = model(*args, **kwargs)
            writes = versions != [t._st.version for t in params] + \
                [o._st.version for o in objs if type(o) is not mx.array]
            plans[key] = "eager" if writes else "seen"  # in-place writes to inputs or parameters stay eager
            self.__dict__["_found"] = None
            return out
        if plan == "eager":
            return model(*args, **kwargs)
        if plan == "seen":
            plan = plans[key] = _ModulePlan(model, params, buffers, recipe, objs, record, self._fullgraph)
        if plan.traced:
            return plan.call(objs)
        try:
            return plan.call(objs)
        except Exception as e:  # the forward cannot be traced (it reads a value, or uses what a trace cannot hold)
            if self._fullgraph:
                raise
            plans[key] = "eager"
            _warn_eager(model, "forward", e)
            return model(*args, **kwargs)

    def _warn_limit(self) -> None:
        if not self._warned:
            self.__dict__["_warned"] = True
            warnings.warn(f"lucid.compile: {type(self._orig_mod).__name__} was traced for {cache_size_limit} "
                          "configurations (lucid._compile.cache_size_limit); calls with a new configuration (input "
                          "shapes, dtypes, requires_grad, module attributes) now run eagerly.", UserWarning,
                          stacklevel=4)
