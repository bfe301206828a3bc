"""How an op is declared: ``defop`` — the forward (an MLX function) and its derivative side by side.

    exp = defop("exp", mx.exp, vjp=lambda g, ans, x: g * ans, save="ans")

gives the function ``exp(x)``, the backward node class ``ExpBackward0`` and its VJP. A VJP receives the output's
gradient ``g``, the output ``ans`` (when ``save`` includes it) and the op's own arguments (Tensors stay Tensors),
and is written with lucid ops, so with ``create_graph=True`` it is recorded and second derivatives come for free.
VJPs return gradients of any broadcastable shape or dtype: the engine sums them back to each input's shape and
casts to its dtype, in one place. ``vjp`` is one function (one tensor input), a tuple with one entry per
positional argument (None where there is no derivative), or ``vjp_all=f`` returning all of them at once.

There is no separate forward-mode (JVP) rule per op: forward-mode products are computed exactly by
differentiating a VJP (``lucid.autograd.functional.jvp``), which every op supports because its VJP is itself
made of lucid ops. One rule per op serves reverse mode, forward mode and every higher order.

``save`` says what backward needs, which decides what is kept, version-checked and freed:
  "args"  the input tensors (default), "ans" the output, "both", or None (only shapes: add, sum, reshape ...);
  {i: (j, ...)}  as "args", but argument i's value is needed only for the gradients of arguments j, so it is
          version-checked only when one of those requires grad (PyTorch's mm saves mat2 only when mat1 requires
          grad: a Linear on data survives optimizer.step() between two backwards); an argument not listed (a bias)
          is never checked. ``SAVES_INDEX`` (``{}``) checks none: the indexing ops, whose PyTorch nodes save only
          their index tensors.
Only nodes that save something raise the "backward through the graph a second time" error, as in PyTorch.

One statement declares everything about an op's public face, too:

    sin = defop("sin", mx.sin, vjp=lambda g, ans, x: g * cos(x), raw=True,
                sig=UNARY, doc="Sine of each element (radians).", method=True, inplace=True)

``sig`` is what ``help()`` and ``inspect.signature`` show (the op function takes ``*args, **kwargs``: no per-call
argument binding; ``UNARY`` and ``BINARY`` are the family signatures), ``doc`` the line saying what it computes,
``method`` the Tensor method name(s) (True: the op's own name; a string or a tuple of names for aliases), ``inplace``
the in-place method ``<method>_`` for each method name (True, or a function that wraps the op first, such as
elementwise's ``all_or_nothing``). An op written as a plain function (a composite, or the public front of several
declared overloads) gets the same keywords from ``declare``, as a decorator: ``@declare(method=True,
inplace=True)``; its own signature and docstring are kept unless given. The methods are attached by
``lucid._surface.attach``, the one place that adds to the Tensor's surface.
"""
from __future__ import annotations

import functools
import inspect
import mmap
import re
import warnings

import mlx.core as mx

from .. import _cpu_route, _meta
from .._params import with_params
from .._dtype import _category, broadcast_shapes, dtype_name
from .._surface import attach
from .._tensor import Storage, Tensor, _wrap
from .. import _grad_mode as gm
from ..autograd.graph import (FREED_MESSAGE, AccumulateGrad, Dropped, Meta, Node, _version_error, accumulator,  # noqa: F401
                              node_recorded, read_dropped, watch as _watch)  # (_version_error: ops.reduce, decomp_grads)
from .autocast_policy import POLICY

_state = gm.state
_NO_KWARGS: dict = {}  # never mutated
# save= for the indexing ops (x[idx], x[idx] = v, gather, scatter, ...): PyTorch's node saves the index tensors, so a
# second backward through it without retain_graph raises; no argument's value is read, so no version is checked
SAVES_INDEX: dict = {}  # never mutated
_new = object.__new__
_Storage = Storage  # no __init__: calling the class is cheaper than object.__new__(Storage)
_meta_used = _meta.used  # [True] once a meta tensor was made: only then do the ops look for meta operands
# Complex gradients follow PyTorch's convention: the gradient of a real loss L with respect to z is dL/d(conj z), so a
# holomorphic op's input gradient is g * conj(f'(z)). These ops' VJPs are written as for real inputs (g * f'(z), or
# g @ B.T for a product); for a complex gradient the node runs them as conj(vjp(conj(g))), which is exactly that.
# Ops whose VJPs already follow the convention (abs, real, imag, conj, angle, the transforms) are not listed; linear
# ops with real coefficients (sums, reshapes, indexing) need nothing.
HOLOMORPHIC = frozenset({
    "add", "sub", "rsub", "mul", "div", "neg", "pow", "reciprocal", "square", "sqrt", "rsqrt", "exp", "log",
    "log2", "log10", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh", "prod", "dot", "mv", "mm",
    "bmm", "addmm", "addmv", "addr", "baddbmm"})


def _conj(x):
    """The conjugate of a complex gradient: an MLX array in the raw backward, else a Tensor (differentiable)."""
    return mx.conj(x) if isinstance(x, mx.array) else x.conj()


def leaf_edge(t) -> tuple:
    """The edge into a leaf that requires grad: its AccumulateGrad node, shared while one is alive."""
    ref = t._accum
    fn = ref() if ref is not None else None
    return (fn if fn is not None else accumulator(t), 0)


class OpNode(Node):
    """The backward node of one call of a declared op (single output). Built by the op function, which has
    already collected the edges while unwrapping the arguments (one pass over them, on the hot path)."""

    __slots__ = ("next", "args", "kwargs", "out_st", "out_v", "versions", "meta")
    vjps: tuple = ()
    vjp_all = None
    save_args = True
    save_ans = False
    save_needs = None  # {arg index: indices of the args whose gradients need its value}, or None: all args
    op_name = ""
    holomorphic = False  # (HOLOMORPHIC)

    def __init__(self, edges: list, args: tuple, kwargs: dict, out_st, versions):
        self._hooks = None
        self.next = edges
        self.args = args
        self.kwargs = kwargs
        self.out_st = out_st  # the output's storage: its shape/dtype (and value, if saved) until released
        self.out_v = 0
        self.versions = versions  # None when every saved input was at version 0
        self.meta = None

    def output_meta(self, nr):
        m = self.meta
        if m is None:  # read once: every consumer's backward asks, and release() keeps it
            d = self.out_st.data
            m = self.meta = (d.shape, d.dtype)
        return m

    def rebind_output(self, st) -> None:
        """After an in-place op, this node's output lives in the written tensor's storage at its new version."""
        self.out_st = st
        self.out_v = st.version
        self.meta = None

    def release(self) -> None:
        if self.out_st is not None:
            if self.meta is None:
                d = self.out_st.data
                self.meta = (d.shape, d.dtype)
            self.out_st = None
        if self.save_args or self.save_ans:
            self.args = None
        elif self.args is not None:
            self.args = tuple(Meta(a) if isinstance(a, Tensor) else a for a in self.args)

    def _unpack(self):
        """The saved arguments and output array (None when not saved), checked against in-place writes since."""
        args = self.args
        if args is None:
            raise RuntimeError(FREED_MESSAGE)
        if self.save_args:
            self._check_versions(args)
        if self.save_ans:
            st = self.out_st
            if st.version != self.out_v:
                _version_error(self, st.version, self.out_v)
            return args, st.data
        return args, None

    def apply(self, grads: list, needed=None) -> list:
        args, ans = self._unpack()
        if ans is not None:
            ans = _wrap(ans, self, True)
        g = grads[0]
        kw = self.kwargs
        nxt = self.next
        if self.vjp_all is not None:
            res = list(self.vjp_all(g, ans, *args, **kw))
            if len(res) != len(nxt):
                raise RuntimeError(f"the vjp_all of '{self.op_name}' returned {len(res)} gradients for {len(nxt)} "
                                   "positional arguments (give None for the ones without a gradient)")
            for i, e in enumerate(nxt):
                if e is None or (needed is not None and e[0] not in needed):
                    res[i] = None
            return res
        return self._run_vjps(g, ans, args, needed, False)

    def _run_vjps(self, g, ans, args: tuple, needed, raw: bool) -> list:
        """Each needed input's VJP (None for the others); in a raw walk Tensor results become their arrays."""
        vjps = self.vjps
        kw = self.kwargs
        res = []
        for i, e in enumerate(self.next):
            if e is None or (needed is not None and e[0] not in needed):
                res.append(None)
                continue
            f = vjps[i] if i < len(vjps) else None
            if f is None:
                raise RuntimeError(f"the derivative for '{self.op_name}' with respect to argument {i} is not "
                                   "implemented")
            if self.holomorphic and g.dtype == mx.complex64:  # PyTorch's convention (HOLOMORPHIC)
                r = _conj(f(_conj(g), ans, *args, **kw))
            else:
                r = f(g, ans, *args, **kw)
            res.append(r._storage.data if raw and isinstance(r, Tensor) else r)
        return res

    def apply_raw(self, grads: list, needed=None) -> list:
        """``apply`` on MLX arrays, for a walk that records nothing (engine.py): the gradients come and go as arrays
        and the VJP gets the saved values as arrays. Only ops declared ``raw`` (their VJPs compute on arrays as
        written: operators and lucid ops, which return arrays for array arguments while ``grad`` is None) get it.
        The walk sets ``grad`` to None around these calls (once for a run of raw nodes, not once per node)."""
        args, ans = self._unpack()
        n = len(args)
        if n == 1:
            a = args[0]
            args = (a._storage.data if isinstance(a, Tensor) else a,)
        elif n == 2:
            a, b = args
            args = (a._storage.data if isinstance(a, Tensor) else a, b._storage.data if isinstance(b, Tensor) else b)
        else:
            args = tuple([a._storage.data if isinstance(a, Tensor) else a for a in args])
        return self._run_vjps(grads[0], ans, args, needed, True)

    def _tensor_input_grads(self, grads: list) -> list:
        args = self.args
        return grads if args is None else [g for g, a in zip(grads, args) if isinstance(a, (Tensor, Meta))]

    def _check_versions(self, args):
        vs = self.versions
        needs = self.save_needs
        nxt = self.next
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                if needs is not None:  # (a loop, not any(<generator>): this runs for every node of every walk)
                    for j in needs.get(i, ()):
                        if nxt[j] is not None:
                            break
                    else:
                        continue  # no gradient that is computed reads this argument's value
                expected = vs[i] if vs is not None else 0
                if a._storage.version != expected:
                    _version_error(a, a._storage.version, expected)
                if a._node is None:  # saved with a grad_fn (its edge is not a leaf's), now without: detach_()
                    e = self.next[i]
                    if e is not None and type(e[0]) is not AccumulateGrad:
                        raise RuntimeError(
                            "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
                            "This is not supported, please use out-of-place `.detach()` instead")

    # PyTorch exposes saved values as grad_fn._saved_<name>
    @property
    def _saved_self(self):
        return self._saved(0)

    @property
    def _saved_other(self):
        return self._saved(1)

    @property
    def _saved_result(self):
        if self.out_st is None:
            if self.args is not None and self.save_ans:  # not freed: dropped by a non-reentrant checkpoint
                return read_dropped(self, lambda: self._saved_result)
            raise RuntimeError(FREED_MESSAGE)
        # the output itself, as PyTorch unpacks it: same storage and version counter, and this node as grad_fn
        t = _wrap(self.out_st.data, self, True)
        t._storage = self.out_st
        return t

    def _saved(self, i):
        if self.args is None or not (self.save_args or self.save_ans):
            raise RuntimeError(FREED_MESSAGE)
        a = self.args[i]
        if type(a) is Dropped:
            return read_dropped(self, lambda: self._saved(i))
        return a


def _inference_error():
    raise RuntimeError(
        "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
        "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
        "it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


# ---------------------------------------------------------------------------------------------------- help()
def _unary(input, *, out=None): ...  # noqa: A002,E704  (PyTorch's parameter names)
def _binary(input, other, *, out=None): ...  # noqa: A002,E704


UNARY = inspect.signature(_unary)
BINARY = inspect.signature(_binary)


def declare(fn=None, *, doc: str | None = None, sig: inspect.Signature | None = None, method=None, inplace=None):
    """Give the op function ``fn`` its public face, once, at import (see the module docstring): ``sig`` and ``doc``
    (what help() shows; the function itself is unchanged: no wrapper, no cost per call), the Tensor method(s)
    ``method`` and their in-place forms ``inplace``. Returns ``fn``; without ``fn``, a decorator."""
    if fn is None:
        return functools.partial(declare, doc=doc, sig=sig, method=method, inplace=inplace)
    if sig is not None:
        fn.__signature__ = sig
    if doc is not None:
        fn.__doc__ = doc
    fn.__doc__ = with_params(fn.__doc__, fn)  # the arguments every op means the same by (lucid/_params.py)
    names = () if not method else (fn.__name__,) if method is True else (method,) if isinstance(method, str) \
        else method
    for n in names:
        attach(n, fn)
    if inplace:
        write = fn if inplace is True else inplace(fn)
        for n in names or (fn.__name__,):
            attach(n + "_", inplace_method(n + "_", write))
            inplace_declared[n + "_"] = fn
    return fn


# the in-place methods PyTorch lets write into a tensor whose elements share memory (an expanded one; fill_ and zero_
# are attached by hand): any other refuses it (Tensor._inplace)
OVERLAP_OK = frozenset({"index_put_", "masked_fill_", "index_fill_", "tril_", "triu_"})


def inplace_method(name: str, fn):
    """The Tensor method ``name`` (``sin_``, ``add_``): ``fn`` computed from the old value and written into
    ``self`` in place (version bumped, views written through). Its signature is ``fn``'s, with ``self`` first."""

    overlap_ok = name in OVERLAP_OK

    def method(self, *args, **kwargs):
        return self._inplace(lambda old: fn(old, *args, **kwargs), overlap_ok=overlap_ok)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place version of ``{fn.__name__}``: ``self`` is overwritten with the result."
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return method
    if params and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        params[0] = params[0].replace(name="self")
        method.__signature__ = inspect.Signature([p for p in params if p.name != "out"])
    return method


def node_name_for(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_")) + "Backward0"


# Every differentiable op declared with defop, in declaration order (tests/test_opinfo.py and test_engine_reference.py
# run each; several ops may share a name: PyTorch's overloads, such as div with and without rounding_mode), and every
# op declared differentiable=False (tests/test_opinfo.py compares their forwards with PyTorch's)
declared: list = []
declared_nondiff: list = []
inplace_declared: dict = {}  # {in-place method name: the op it writes} (tests/test_opinfo.py compares the two)


def defop(name: str, fwd, vjp=None, *, vjp_all=None, save: str | dict | None = "args", node: str | None = None,
          differentiable: bool = True, raw: bool = False, sig: inspect.Signature | None = None,
          doc: str | None = None, method=None, inplace=None):
    """Declare an op (see the module docstring). Returns the op function. ``differentiable=False``: its outputs
    never require grad (comparisons, argmax); ``sig``, ``doc``, ``method``, ``inplace``: as ``declare``'s.

    ``raw=True`` is a promise about the VJPs: given MLX arrays (the gradient, the saved values) while grad mode is
    None, they return the same arrays they return as Tensors' data when given Tensors. The fast backward walk
    (autograd/engine.py) then runs them on arrays, with no Tensor or node made per backward op; the reference walk
    (autograd/reference.py) always runs them on Tensors. A VJP keeps the promise when it calls declared ops by name
    (``mul(g, y)``: a declared op given only arrays while grad mode is None returns an array) and no Python
    operator between operands of different dtypes (``g * y`` on arrays follows MLX's promotion, not PyTorch's).
    ``vjp_all`` ops are never raw. tests/test_engine_reference.py checks every raw op both ways."""
    if not differentiable:
        op = _make_nondiff(name, fwd)
        declared_nondiff.append(op)
        return declare(op, sig=sig, doc=doc, method=method, inplace=inplace)
    vjps = vjp if isinstance(vjp, tuple) else (vjp,)
    cls = type(node or node_name_for(name), (OpNode,), {
        "__slots__": (), "vjps": vjps, "vjp_all": staticmethod(vjp_all) if vjp_all else None,
        "save_args": isinstance(save, dict) or save in ("args", "both"), "save_ans": save in ("ans", "both"),
        "save_needs": save if isinstance(save, dict) else None, "op_name": name, "raw": raw and vjp_all is None,
        "holomorphic": name in HOLOMORPHIC, "__module__": __name__,
    })

    save_args = cls.save_args
    saves_values = save_args and save is not SAVES_INDEX  # inference tensors may not be saved; indexing saves none
    autocast_policy = POLICY.get(name)  # None for most ops: then autocast costs them one comparison

    def op(*args, **kwargs):
        if kwargs and "out" in kwargs:  # rare: checked only when keywords are given at all
            return call_with_out(op, args, kwargs)
        if autocast_policy is not None and _state.autocast is not None:  # lucid.autocast casts the inputs
            args, kwargs = _state.autocast.apply(autocast_policy, args, kwargs)
        # One or two positional arguments (nearly every call) are unwrapped without a loop or a list (in CPython
        # 3.11 a comprehension is a function call of its own); more go through the general ``record``.
        n = len(args)
        if n == 1:
            a = args[0]
            b = None
            ta = isinstance(a, Tensor)
            tb = False
        elif n == 2:
            a, b = args
            ta = isinstance(a, Tensor)
            tb = isinstance(b, Tensor)
        else:
            return record(args, kwargs)
        grad = _state.grad
        ea = eb = None
        if grad:  # the edges of the inputs that require grad
            if ta and a._requires_grad:
                fn = a._node
                ea = (fn, a._output_nr) if fn is not None else leaf_edge(a)
            if tb and b._requires_grad:
                fn = b._node
                eb = (fn, b._output_nr) if fn is not None else leaf_edge(b)
        elif grad is None and not ta and not tb:  # the raw backward (engine.py) calling this op on arrays
            return fwd(*args, **kwargs)
        try:  # (free until MLX raises)
            ad = a._storage.data if ta else a
            if n == 1:
                d = fwd(ad, **kwargs) if kwargs else fwd(ad)
            else:
                bd = b._storage.data if tb else b
                d = fwd(ad, bd, **kwargs) if kwargs else fwd(ad, bd)
        except ValueError as e:
            # an operand MLX cannot read may answer the op itself (lucid.sparse: `dense + sparse`); checked only here
            if n == 2 and (hasattr(a, "__lucid_binary__") or hasattr(b, "__lucid_binary__")):
                return (a if hasattr(a, "__lucid_binary__") else b).__lucid_binary__(name, a, b)
            d = _again_on_cpu(name, e, fwd, args, kwargs)
        except MemoryError as e:
            _out_of_memory(name, e)
        if _meta_used[0] and (ta and _meta.is_meta(a._storage.data) or tb and _meta.is_meta(b._storage.data)):
            d = _meta.like(d)  # a meta operand: the result is meta (its lazy graph is dropped unevaluated)
        st = _Storage()
        st.data = d
        st.version = 0
        st.views = None
        out = _new(Tensor)
        out._storage = st
        out._output_nr = 0
        out._grad = out._accum = out._extra = None
        if ea is None and eb is None:
            out._requires_grad = False
            out._node = None
            if not grad and _state.inference:
                out._ex().inference = True
            return out
        versions = None
        if save_args and (ta and a._storage.version or tb and b._storage.version):  # rare: an input was written in place
            versions = [x._storage.version if isinstance(x, Tensor) else 0 for x in args]
        if saves_values and (ta and a._extra is not None and a._extra.inference
                             or tb and b._extra is not None and b._extra.inference):
            _inference_error()
        node = _new(cls)  # OpNode.__init__, inlined: a Python-level __init__ frame costs as much as the node itself
        node._hooks = node.meta = None
        node.next = (ea,) if n == 1 else (ea, eb)  # (a tuple: 16 bytes less than a list per node)
        node.args = args
        node.kwargs = kwargs or _NO_KWARGS  # a shared {}: one object less per node
        node.out_st = st
        node.out_v = 0
        node.versions = versions
        out._requires_grad = True
        out._node = node
        if _watch["on"]:  # anomaly mode or a non-reentrant checkpoint is watching
            node_recorded(node)
        return out

    def record(args, kwargs):
        """The op on any number of arguments: one pass over them unwraps Tensors and collects the edges."""
        grad = _state.grad
        if grad is None and not any(isinstance(a, Tensor) for a in args):  # a raw backward calling on arrays
            return fwd(*args, **kwargs)
        st = _Storage()
        st.version = 0
        st.views = None
        out = _new(Tensor)
        out._storage = st
        out._output_nr = 0
        out._grad = out._accum = out._extra = None
        out._requires_grad = False
        out._node = None
        if not grad:  # no recording: unwrap, call MLX, wrap
            try:  # (free until MLX raises)
                st.data = fwd(*[a._storage.data if isinstance(a, Tensor) else a for a in args], **kwargs)
            except ValueError as e:
                st.data = _again_on_cpu(name, e, fwd, args, kwargs)
            except MemoryError as e:
                _out_of_memory(name, e)
            if _meta_used[0] and _meta.any_meta(args):
                st.data = _meta.like(st.data)
            if _state.inference:
                out._ex().inference = True
            return out
        arrays = []
        edges = []
        rg = inference = False
        versions = None
        for a in args:
            if isinstance(a, Tensor):
                ast = a._storage
                arrays.append(ast.data)
                if ast.version and save_args and versions is None:  # rare: an input was written in place
                    versions = [x._storage.version if isinstance(x, Tensor) else 0 for x in args]
                if a._extra is not None and a._extra.inference and saves_values:
                    inference = True
                if a._requires_grad:
                    rg = True
                    fn = a._node
                    edges.append((fn, a._output_nr) if fn is not None else leaf_edge(a))
                    continue
            else:
                arrays.append(a)
            edges.append(None)
        if inference and rg:
            _inference_error()
        try:
            st.data = fwd(*arrays, **kwargs)
        except ValueError as e:
            st.data = _again_on_cpu(name, e, fwd, args, kwargs)
        except MemoryError as e:
            _out_of_memory(name, e)
        if _meta_used[0] and _meta.any_meta(args):
            st.data = _meta.like(st.data)
        if rg:
            out._requires_grad = True
            out._node = cls(edges, args, kwargs or _NO_KWARGS, st, versions)
            if _watch["on"]:
                node_recorded(out._node)
        return out

    op.__name__ = op.__qualname__ = name
    op.node_class = cls
    declared.append(op)
    return declare(op, sig=sig, doc=doc, method=method, inplace=inplace)


# ---------------------------------------------------------------------------------------------------- out=
def accepts_out(fn):
    """``fn`` taking PyTorch's ``out=`` keyword (declared ops take it already; this wraps plain functions)."""
    if hasattr(fn, "node_class") or getattr(fn, "_takes_out", False):
        return fn
    done = getattr(fn, "_with_out", None)  # one wrapper per function: lucid.X is lucid.special.X
    if done is not None and done.__wrapped__ is fn:  # (not one that functools.wraps copied from another function)
        return done

    @functools.wraps(fn)
    def with_out(*args, **kwargs):
        if "out" in kwargs:
            return call_with_out(fn, args, kwargs)
        return fn(*args, **kwargs)

    with_out._takes_out = True
    params = list(inspect.signature(fn).parameters.values())
    if "out" not in (p.name for p in params):  # help() shows the keyword too (before a **kwargs)
        at = len(params) - bool(params and params[-1].kind is inspect.Parameter.VAR_KEYWORD)
        params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
        with_out.__signature__ = inspect.Signature(params, return_annotation=inspect.signature(fn).return_annotation)
    fn._with_out = with_out
    return with_out


def expect_tensor(fn: str, name: str, position: int, value) -> None:
    """PyTorch's TypeError for a non-Tensor where a layer's op needs one (a numpy array or list given to a module
    would otherwise fail deep inside MLX with a message naming neither)."""
    if not isinstance(value, Tensor):
        t = type(value)
        what = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {what}")


def call_with_out(fn, args: tuple, kwargs: dict):
    """``fn(*args, **kwargs, out=t)``: compute the result, then write it into ``t`` as an in-place op (version
    bumped, views of ``t``'s base written through). As in PyTorch, out= is not differentiable: with grad mode on,
    an argument or ``t`` requiring grad is an error; ``t`` of another shape is resized (with PyTorch's warning
    unless it is empty); a result that ``t``'s dtype cannot hold (float into int) is an error. ``lucid.autocast``
    does not reach the call."""
    kwargs = dict(kwargs)
    out = kwargs.pop("out")
    if out is None:
        return fn(*args, **kwargs)
    name = fn.__name__
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _state.grad:
        flat = [b for a in list(args) + list(kwargs.values()) for b in (a if isinstance(a, (list, tuple)) else (a,))]
        if out._requires_grad or any(isinstance(a, Tensor) and a._requires_grad for a in flat):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
    with gm.no_grad():
        casting, _state.autocast = _state.autocast, None  # a call with out= is not autocast, as in PyTorch
        try:
            result = fn(*args, **kwargs)
        finally:
            _state.autocast = casting
        r, o = result._storage.data, out._storage.data
        if _category(r.dtype) > _category(o.dtype):
            raise RuntimeError(f"result type {dtype_name(r.dtype)} can't be cast to the desired output type "
                               f"{dtype_name(o.dtype)}")
        if r.shape == o.shape:
            return out._inplace(lambda old: _wrap(r.astype(o.dtype)))
        if o.size:
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(o.shape)}, "
                          f"which does not match the required output shape {list(r.shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=3)
        out._check_inplace(False)
        return out._renew(r.astype(o.dtype))


def _again_on_cpu(name: str, e: ValueError, fwd, args: tuple, kwargs: dict):
    """The forward of op ``name`` after it raised ``e``: if MLX refused float64 on a GPU default device, the forward
    built again on the CPU stream (lucid._cpu_route: the only cost of routing, paid only then); any other MLX error
    becomes PyTorch's (``_mlx_error``)."""
    if not _cpu_route.refused(e):
        wrapped = _wrapped_ints(e, args)
        if wrapped is None:
            _mlx_error(name, e, args)
        return fwd(*[a._storage.data if isinstance(a, Tensor) else a for a in wrapped], **kwargs)
    with _cpu_route.on_cpu():
        try:
            return fwd(*[a._storage.data if isinstance(a, Tensor) else a for a in args], **kwargs)
        except ValueError as again:
            _mlx_error(name, again, args)


_OVERFLOW = re.compile(r"Converting -?\d+ to \w+ would result in overflow")


def _wrapped_ints(e: ValueError, args: tuple):
    """``args`` with each Python int that MLX refused to convert to an integer tensor's dtype (``uint8_t & -16``)
    wrapped into that dtype, as PyTorch casts a scalar operand (``& -16`` is ``& 240``); None for another error."""
    if not _OVERFLOW.match(str(e)):
        return None
    dt = next((a.dtype for a in args if isinstance(a, (Tensor, mx.array)) and mx.issubdtype(a.dtype, mx.integer)),
              None)
    if dt is None:
        return None
    bits = 8 * dt.size
    signed = mx.issubdtype(dt, mx.signedinteger)

    def wrap(v: int) -> int:
        v %= 1 << bits
        return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v
    return tuple(wrap(a) if type(a) is int else a for a in args)


def _mlx_error(name: str, e: ValueError, args: tuple):
    """Re-raise an MLX ValueError from op ``name`` as PyTorch's RuntimeError, with lucid's explanation first and
    MLX's text as its cause: shape and broadcast mismatches are RuntimeErrors in PyTorch, and ported code catches
    those. A ValueError that lucid itself raised (PyTorch's type for a bad argument value) passes unchanged; MLX
    prefixes its messages with the name of its function in brackets."""
    msg = str(e)
    if not msg.startswith("["):
        raise e
    tensors = [a for a in args if isinstance(a, (Tensor, mx.array))]
    if msg.startswith("[broadcast_shapes]"):
        try:
            broadcast_shapes(*(tuple(t.shape) for t in tensors))
        except RuntimeError as explained:
            raise explained from e
    inputs = ", ".join(f"[{', '.join(map(str, t.shape))}] {dtype_name(t.dtype)}" for t in tensors)
    raise RuntimeError(f"{name}: invalid arguments for the inputs ({inputs}); MLX said: {msg}") from e


# Address space set aside (mapped, never touched: it costs no memory) and given back when MLX first runs out of
# memory in an op. The arrays freed while that error unwinds run MLX's ~ArrayDesc, which allocates (it frees deep
# graphs iteratively) and may not throw: were the heap still full there, C++ would end the process. Under an
# address-space cap (ulimit -v) this turns that abort into the RuntimeError below, as PyTorch raises one. A
# destructor whose allocation is the first to fail, before any op saw the error, still ends the process: MLX's
# destructors are noexcept and nothing in Python runs before it.
_headroom = [mmap.mmap(-1, 64 << 20)]


class OutOfMemoryError(RuntimeError):
    """An allocation failed (PyTorch's ``torch.OutOfMemoryError``, a RuntimeError)."""


def _out_of_memory(name: str, e: MemoryError):
    """MLX could not allocate in op ``name``: PyTorch's OutOfMemoryError, with the headroom above given back."""
    for m in _headroom:
        m.close()
    _headroom.clear()
    raise OutOfMemoryError(f"{name}: out of memory (MLX: {e}). Free tensors or graphs that are no longer needed, or "
                       "evaluate the ones that are (a lazy graph keeps every op it is made of).") from None


def _make_nondiff(name, fwd):
    """An op whose outputs never require grad (comparisons, argmax, integer results)."""

    def op(*args, **kwargs):
        if kwargs and "out" in kwargs:
            return call_with_out(op, args, kwargs)
        if _state.grad is None and not any(isinstance(a, Tensor) for a in args):  # the raw backward, on arrays
            return fwd(*args, **kwargs)
        try:
            out = _wrap(fwd(*[a._storage.data if isinstance(a, Tensor) else a for a in args], **kwargs))
        except ValueError as e:
            out = _wrap(_again_on_cpu(name, e, fwd, args, kwargs))
        except MemoryError as e:
            _out_of_memory(name, e)
        if _meta_used[0] and _meta.any_meta(args):
            out._storage.data = _meta.like(out._storage.data)
        if _state.inference:
            out._ex().inference = True
        return out

    op.__name__ = op.__qualname__ = name
    return op


def data(x):
    """The MLX array of a Tensor, or the value itself (Python scalars, arrays)."""
    return x._storage.data if isinstance(x, Tensor) else x


def as_tensor(x) -> Tensor:
    """Wrap a Python scalar or array so that ops that need a Tensor can take it."""
    return x if isinstance(x, Tensor) else _wrap(mx.array(x))
