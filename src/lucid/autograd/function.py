"""Custom differentiable functions: subclass ``Function`` with static ``forward(ctx, ...)`` and
``backward(ctx, *grad_outputs)``, call ``MyFn.apply(...)``.

The ``ctx`` is the backward node itself (as in PyTorch): it keeps saved tensors, flags and whatever attributes
``forward`` sets. Its class is ``<MyFn>Backward``. ``backward`` runs with grad mode equal to ``create_graph``, so
a backward written with lucid ops is differentiable again. Returned gradients go through the engine's one
conforming step: summed back over broadcast dimensions and cast to the input's dtype; a shape that cannot be
summed back is an error.
"""
from __future__ import annotations

import functools
import inspect
import threading
import warnings
import weakref
from typing import NamedTuple

import mlx.core as mx

from .._dtype import can_require_grad
from .._tensor import Tensor, _wrap
from .._views import info_of, into_base
from .. import _grad_mode as gm
from .engine import _conform
from .graph import (FREED_MESSAGE, Dropped, Node, _version_error, edge_of, node_recorded, read_dropped, running_tasks,
                    watch)


class FunctionCtx(Node):
    """The node (and ``ctx``) of one ``Function.apply`` call. Attributes set by ``forward`` live in ``__dict__``."""

    _fn_class = None  # the Function subclass
    _non_diff_nrs = ()  # output slots marked non-differentiable (set per call only when there are any)
    _materialize_non_diff_grads = True  # PyTorch's ctx flag: False leaves those slots' gradients None
    runs_on_undefined = True  # backward runs even when no output got a gradient (zeros, or None unmaterialized)
    _checkpointed = False  # saved tensors dropped by a non-reentrant checkpoint (set per call only then)
    _unpacked_by = None  # checkpointed: weakref to the backward walk that read the recomputed values

    def __init__(self):
        self._hooks = None
        self.next = []
        self.num_outputs = 0
        self._saved = ()  # tensors given to save_for_backward
        self._saved_versions = ()
        self._released = False
        self._non_diff = set()  # ids of outputs marked non-differentiable
        self._dirty = set()  # ids of inputs marked dirty
        self._materialize = True
        self._out_meta = []  # per output: (shape, dtype), or None for an output that is not a Tensor
        self.needs_input_grad = ()

    # -------------------------------------------------------------------------------------- used by forward
    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._saved = tensors
        self._saved_versions = tuple(None if t is None else t._st.version for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        if self._checkpointed:
            if any(type(t) is Dropped for t in self._saved):  # outside backward: recompute, read, drop again
                return read_dropped(self, lambda: self.saved_tensors)
            self._unpack_recomputed()
        for t, v in zip(self._saved, self._saved_versions):
            if t is not None and t._st.version != v:
                _version_error(t, t._st.version, v)
        return tuple(self._saved)

    def _unpack_recomputed(self) -> None:
        """PyTorch clears a recomputed value when it is unpacked: a backward may read a checkpointed Function's
        saved tensors once."""
        tasks = running_tasks()
        if not tasks:
            return
        prev = self._unpacked_by
        if prev is not None and prev() is tasks[-1]:
            raise RuntimeError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. If "
                "you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise please open an "
                "issue with details on your use case.")
        self._unpacked_by = weakref.ref(tasks[-1])

    @property
    def saved_variables(self) -> tuple:
        """The old name of ``saved_tensors`` (deprecated, as in PyTorch)."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_diff.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors) -> None:
        self._dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = bool(value)

    # -------------------------------------------------------------------------------------- used by the engine
    def output_meta(self, nr):
        return self._out_meta[nr]

    def release(self) -> None:
        self._released = True
        self._saved = ()

    def apply(self, grads: list, needed=None) -> list:
        cls = self._fn_class
        if self._materialize:  # outputs that are not Tensors get None, as in PyTorch
            skip = () if self._materialize_non_diff_grads else self._non_diff_nrs
            grads = [_wrap(mx.zeros(*m)) if g is None and m is not None and nr not in skip else g
                     for nr, (g, m) in enumerate(zip(grads, self._out_meta))]
        result = cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self.next)
        if len(result) < n or any(r is not None for r in result[n:]):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected {n}, "
                               f"got {len(result)})")
        out = []
        for i, (r, e) in enumerate(zip(result, self.next)):
            if r is not None and not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            if r is not None and self._input_is_tensor[i] is False:
                raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
            out.append(None if e is None else r)  # a gradient for an input that needs none is ignored
        return out


class _FunctionMeta(type):
    """Gives each Function subclass its own node class ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (FunctionCtx,), {"_fn_class": cls})


class Function(metaclass=_FunctionMeta):
    """Base class for custom autograd functions (PyTorch's ``torch.autograd.Function``).

    Example::

        class Cube(lucid.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3 * x ** 2          # lucid ops: differentiable again

        y = Cube.apply(x)
    """

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use new-style "
                           "autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    # under lucid.func.vmap: True vmaps forward and backward per sample; else the ``vmap`` staticmethod is the rule
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """The rule under ``lucid.func.vmap`` (PyTorch's): ``info.batch_size``, ``info.randomness``; ``in_dims`` has
        one batch dim (or None) per argument of ``forward``; returns ``(output, out_dims)``. Override it, or set
        ``generate_vmap_rule = True`` (a Function under vmap needs ``setup_context`` and one of the two)."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap staticmethod "
                                  "or set generate_vmap_rule=True.")

    @staticmethod
    def jvp(ctx, *tangents):
        """Optional forward-mode rule: the output tangents from one tangent per forward input (None for
        non-tensor inputs). Used by the forward-mode transforms of ``lucid.func`` (``jvp``, ``jacfwd``)."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        setup = _has_setup_context(cls)
        if setup:  # setup_context sees every input of forward, defaults included (PyTorch binds them too)
            args, kwargs = _bind_defaults(cls, args, kwargs)
        ctx = cls._backward_cls()
        is_tensor = [isinstance(a, Tensor) for a in args]
        ctx._input_is_tensor = is_tensor
        ctx.needs_input_grad = tuple(t and a.requires_grad for t, a in zip(is_tensor, args))
        record = gm.state.grad and any(ctx.needs_input_grad)
        if not record and gm.state.mlx_transform_depth:
            return _apply_in_mlx_transform(cls, args, kwargs)
        with gm.no_grad():
            if setup:
                raw = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, raw)
            else:
                raw = cls.forward(ctx, *args, **kwargs)
        outputs = raw if isinstance(raw, tuple) else (raw,)
        if record:
            ctx.next = [edge_of(a) if t else None for t, a in zip(is_tensor, args)]
            if watch["on"]:  # anomaly mode remembers where the forward was called; a checkpoint collects ctx
                node_recorded(ctx)
        ids_in = {id(a) for a, t in zip(args, is_tensor) if t}
        if ctx._dirty:
            _check_dirty(ctx, ids_in, outputs, record)
        wrapped = []
        for nr, o in enumerate(outputs):
            if not isinstance(o, Tensor):  # passed through; its gradient slot is always None
                ctx._out_meta.append(None)
                wrapped.append(o)
                continue
            ctx._out_meta.append((o._st.data.shape, o._st.data.dtype))
            as_is = id(o) in ids_in and id(o) not in ctx._dirty
            if as_is:  # an input returned as is: a new alias, as PyTorch does
                out = _wrap(o._st.data)
                out._st = o._st
            else:  # a new tensor, or an input forward modified in place (mark_dirty): it becomes the output
                out = o
            view = as_is or (id(o) not in ctx._dirty and o._extra is not None and o._extra.view_of is not None)
            if record and id(o) not in ctx._non_diff and can_require_grad(o.dtype):
                out._fn, out._nr, out._rg = ctx, nr, True
                if out is o and id(o) in ctx._dirty:
                    _record_write_through(out)
            elif record and id(o) in ctx._non_diff:
                ctx._non_diff_nrs += (nr,)
            # writing into such a view in place would bypass this Function's backward: Tensor._inplace refuses it
            if view and (not record or id(o) not in ctx._non_diff):
                out._ex().fn_view = (cls.__name__, nr) if out._fn is ctx else True
            wrapped.append(out)
        if not record:
            return tuple(wrapped) if isinstance(raw, tuple) else wrapped[0]
        ctx.num_outputs = len(ctx._out_meta)
        ctx._saved_versions = tuple(None if t is None else t._st.version for t in ctx._saved)
        return tuple(wrapped) if isinstance(raw, tuple) else wrapped[0]


class InplaceFunction(Function):
    """PyTorch's base for custom functions with an ``inplace`` flag: ``forward`` may modify an input in place
    (and must then ``ctx.mark_dirty`` it).

    :param inplace: stored as ``self.inplace`` for the subclass to read.
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


def _check_dirty(ctx, ids_in: set, outputs: tuple, record: bool) -> None:
    """PyTorch's rules for ``ctx.mark_dirty``: every tensor marked must be returned (its new value is the output),
    marking a tensor that is no input is pointless (warned), and a view modified in place can only be the Function's
    one differentiable output (its base's history is rewritten through this Function, which has one slot for it)."""
    dirty = ctx._dirty
    ids_out = {id(o) for o in outputs if isinstance(o, Tensor)}
    if not dirty <= ids_out:
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. The "
                           "inputs that are modified inplace must all be outputs of the Function.")
    if not dirty <= ids_in:
        warnings.warn("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an input, there is "
                      "no need to pass it to mark_dirty().", UserWarning, stacklevel=3)
    if record:
        diff = [o for o in outputs if isinstance(o, Tensor) and id(o) not in ctx._non_diff and can_require_grad(o.dtype)]
        if len(diff) > 1 and any(id(o) in dirty and o._extra is not None and o._extra.view_of is not None
                                 for o in diff):
            raise RuntimeError(
                "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
                "return more than one Tensor. This is not supported by the current autograd engine. You should either "
                "make sure the input is not a view (using .clone() for example) or make your Function only return one "
                "Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single "
                "Tensor and a second one that does the other operations).")


def _record_write_through(out: Tensor) -> None:
    """``out``, an input that forward modified in place, is a view: forward's write reached its base unrecorded
    (forward runs under no_grad), so record it now, as PyTorch's CopySlices does: the base's history then goes
    through this Function (the value is already there, and the version was bumped by forward)."""
    view = info_of(out)
    if view is not None and view.grad:
        view.base._inplace(lambda b: into_base(view, b, out), via_view=True, bump=False)


# lucid.func runs user code inside MLX's transforms (mx.grad, mx.vjp, mx.jvp, mx.vmap); there a Function must
# hand MLX its own backward (and jvp) rather than let MLX differentiate the forward's MLX calls. (The depth is
# per thread: gm.state.)


class in_mlx_transform:
    """Context manager used by ``lucid.func`` around user code that runs inside an MLX transform; ``vmap`` (the
    vmap's ``randomness``) marks a vmap, under which a Function needs a vmap rule."""

    def __init__(self, vmap: str | None = None):
        self.vmap = vmap

    def __enter__(self):
        gm.state.mlx_transform_depth += 1
        if self.vmap is not None:
            _vmapping.levels = _vmap_levels() + (self.vmap,)

    def __exit__(self, *exc):
        gm.state.mlx_transform_depth -= 1
        if self.vmap is not None:
            _vmapping.levels = _vmap_levels()[:-1]
        return False


_vmapping = threading.local()  # .levels: the randomness of each lucid.func.vmap running in this thread


def _vmap_levels() -> tuple:
    return getattr(_vmapping, "levels", ())


def vmapping() -> bool:
    """Whether this thread runs user code inside a ``lucid.func.vmap`` (ops then avoid MLX primitives that have no
    batching rule, such as ``as_strided``)."""
    return bool(getattr(_vmapping, "levels", ()))


class VmapInfo(NamedTuple):
    """What a Function's ``vmap`` staticmethod is told about the vmap: its batch size and randomness."""
    batch_size: int
    randomness: str


def _run_forward(cls, args, kwargs, arrays, positions):
    """Run ``cls.forward`` on ``args`` with the Tensors at ``positions`` replaced by ``arrays``; (ctx, outputs)."""
    args = list(args)
    for i, a in zip(positions, arrays):
        args[i] = _wrap(a)
    ctx = cls._backward_cls()
    ctx._input_is_tensor = [isinstance(a, Tensor) for a in args]
    ctx.needs_input_grad = tuple(ctx._input_is_tensor)
    with gm.no_grad():
        if _has_setup_context(cls):
            raw = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, tuple(args), raw)
        else:
            raw = cls.forward(ctx, *args, **kwargs)
    return ctx, raw


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _overrides(cls, name: str) -> bool:
    return name in {k for c in cls.__mro__ if c is not Function for k in vars(c)}


def _check_vmap_rule(cls) -> None:
    """PyTorch's rules for a Function under vmap: it needs setup_context, and either generate_vmap_rule=True
    (forward and backward are vmapped) or its own ``vmap`` staticmethod, not both."""
    if not _has_setup_context(cls):
        raise RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
                           "...), it must override the setup_context staticmethod. For more details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    own = _overrides(cls, "vmap")
    if cls.generate_vmap_rule and own:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and an "
                           "overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the overridden "
                           "vmap staticmethod to avoid ambiguity. For more details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    if not cls.generate_vmap_rule and not own:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                           "override and implement the vmap staticmethod or set generate_vmap_rule=True. For more "
                           "details, please see https://pytorch.org/docs/main/notes/extending.func.html")


def _apply_in_mlx_transform(cls, args, kwargs):
    """``Function.apply`` inside an MLX transform: an ``mx.custom_function`` whose VJP is ``cls.backward`` and
    whose JVP is ``cls.jvp``. Both re-run ``forward`` on the traced primals to rebuild ``ctx``, so what backward
    reads from ``ctx.saved_tensors`` is differentiable again (grad of grad). Under ``lucid.func.vmap`` its vmap
    rule is the Function's ``vmap`` staticmethod, or with ``generate_vmap_rule`` a custom function of the batched
    arrays whose forward, backward and jvp are the per-sample ones vmapped (so ``grad(vmap(F))`` still runs
    ``cls.backward``)."""
    levels = _vmap_levels()
    if levels:
        _check_vmap_rule(cls)
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    structure = []

    def forward(*arrays):
        _, raw = _run_forward(cls, args, kwargs, arrays, positions)
        structure[:] = [isinstance(raw, tuple)]
        return tuple(o._st.data for o in _as_tuple(raw))

    def vjp(primals, cotangents):
        ctx, _ = _run_forward(cls, args, kwargs, primals, positions)
        with gm.no_grad():
            grads = _as_tuple(cls.backward(ctx, *[_wrap(c) for c in cotangents]))
        out = []
        for k, (i, p) in enumerate(zip(positions, primals)):
            g = grads[i] if i < len(grads) else None
            # summed back over broadcast dims and cast, by the engine's own rule
            out.append(mx.zeros_like(p) if g is None else _conform(g, p.shape, p.dtype, ctx, k)._st.data)
        return tuple(out)

    def jvp(primals, tangents):
        ctx, _ = _run_forward(cls, args, kwargs, primals, positions)
        full = [None] * len(args)
        for i, t in zip(positions, tangents):
            full[i] = _wrap(t)
        with gm.no_grad():
            return tuple(o._st.data for o in _as_tuple(cls.jvp(ctx, *full)))

    has_jvp = _overrides(cls, "jvp")
    f = _custom(forward, vjp, jvp if has_jvp else None)
    if levels:
        if cls.generate_vmap_rule:
            @f.vmap
            def f_vmap(inputs, axes):
                inputs, axes = _as_tuple(inputs), _as_tuple(axes)
                outs = _batched(forward, vjp, jvp if has_jvp else None, axes)(*inputs)
                return outs, (0,) * len(outs)
        else:
            @f.vmap
            def f_vmap(inputs, axes):
                inputs, axes = _as_tuple(inputs), _as_tuple(axes)
                full = list(args)
                in_dims = [None] * len(args)
                for i, a, d in zip(positions, inputs, axes):
                    full[i], in_dims[i] = _wrap(a), d
                size = next(a.shape[d] for a, d in zip(inputs, axes) if d is not None)
                with gm.no_grad():
                    result = cls.vmap(VmapInfo(size, levels[-1]), tuple(in_dims), *full, **kwargs)
                if not isinstance(result, tuple) or len(result) != 2:
                    raise RuntimeError("Expected the vmap staticmethod to have two returns, an output and out_dims "
                                       "with pytree structure compatible with the output. Got "
                                       f"{type(result) if not isinstance(result, tuple) else len(result)} instead")
                out, dims = result
                outs, dims = _as_tuple(out), _as_tuple(dims)
                outs = tuple(o._st.data if d is not None else mx.broadcast_to(o._st.data[None], (size, *o.shape))
                             for o, d in zip(outs, dims))
                return outs, tuple(0 if d is None else d for d in dims)

    outs = f(*[args[i]._st.data for i in positions])
    wrapped = [_wrap(o) for o in _as_tuple(outs)]
    return tuple(wrapped) if structure and structure[0] else wrapped[0]


def _custom(forward, vjp, jvp):
    """An ``mx.custom_function`` computing ``forward(*arrays) -> tuple`` with ``vjp(primals, cotangents) ->
    tuple`` (one per primal) and optionally ``jvp(primals, tangents) -> tuple`` (one per output) as its rules."""
    f = mx.custom_function(forward)

    @f.vjp
    def f_vjp(primals, cotangents, outputs):
        out = vjp(_as_tuple(primals), _as_tuple(cotangents))
        return out if len(out) != 1 else out[0]

    if jvp is not None:
        @f.jvp
        def f_jvp(primals, tangents):
            out = jvp(_as_tuple(primals), _as_tuple(tangents))
            return out if len(out) != 1 else out[0]
    return f


def _batched(forward, vjp, jvp, axes: tuple):
    """generate_vmap_rule: the custom function of the batched inputs (batch dim ``axes[k]`` of input k, None for
    an unbatched one) whose forward, vjp and jvp are the per-sample ones vmapped; outputs are batched along 0."""
    def b_forward(*inputs):
        return tuple(mx.vmap(forward, in_axes=axes)(*inputs))

    def b_vjp(primals, cotangents):
        n = len(primals)
        per = mx.vmap(lambda *a: vjp(a[:n], a[n:]), in_axes=tuple(axes) + (0,) * len(cotangents))
        grads = per(*primals, *cotangents)  # batch along 0: summed for an unbatched input, else moved back
        return tuple(g.sum(0) if d is None else mx.moveaxis(g, 0, d) for g, d in zip(grads, axes))

    def b_jvp(primals, tangents):
        n = len(primals)
        return tuple(mx.vmap(lambda *a: jvp(a[:n], a[n:]), in_axes=tuple(axes) * 2)(*primals, *tangents))

    return _custom(b_forward, b_vjp, None if jvp is None else b_jvp)


def _bind_defaults(cls, args: tuple, kwargs: dict) -> tuple:
    """``(args, kwargs)`` for ``cls.forward`` with its default arguments filled in (PyTorch's bind_default_args)."""
    sig = cls.__dict__.get("_forward_signature")
    if sig is None:
        sig = inspect.signature(cls.forward)
        cls._forward_signature = sig  # per class: binding on every apply must not re-inspect
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args, bound.kwargs


def _has_setup_context(cls) -> bool:
    return getattr(cls, "setup_context", None) is not None and "setup_context" in {
        k for c in cls.__mro__ if c is not Function for k in vars(c)}


class _DelayedError(Node):
    """Stands in the graph where a once_differentiable backward was differentiated: reaching it is an error."""

    def __init__(self, edges, metas):
        self._hooks = None
        self.next = edges
        self._metas = metas
        self.num_outputs = len(metas)

    def name(self):
        return "<Error>"

    def output_meta(self, nr):
        return self._metas[nr]

    def release(self):
        pass

    def apply(self, grads, needed=None):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


def once_differentiable(backward):
    """Decorate a ``backward`` that is not itself differentiable: it runs under no_grad, and a later attempt to
    differentiate through its result raises.

    :param backward: the ``backward(ctx, *grads)`` staticmethod of a custom ``Function``.
    :returns: the wrapped backward.
    """

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with gm.no_grad():
            result = backward(ctx, *grads)
        if not gm.state.grad:
            return result
        edges = [edge_of(g) for g in grads if isinstance(g, Tensor) and g.requires_grad]
        if not edges:
            return result
        results = result if isinstance(result, tuple) else (result,)
        metas = [(r._st.data.shape, r._st.data.dtype) for r in results if isinstance(r, Tensor)]
        err = _DelayedError(edges, metas)
        out, k = [], 0
        for r in results:
            if isinstance(r, Tensor):
                r = _wrap(r._st.data, err, True, k)
                k += 1
            out.append(r)
        return tuple(out) if isinstance(result, tuple) else out[0]

    return wrapper
