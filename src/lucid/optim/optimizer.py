"""Optimizer: parameter groups, per-parameter state, and the one evaluation point per step.

The built-in optimizers do their arithmetic on the MLX arrays behind the tensors, outside the autograd tape: each
update is a pure function of arrays (compiled with ``mx.compile``, so one step of one parameter is a few fused
kernels), and its results are written into the storage of the parameter and of its state tensors. MLX is lazy, so
nothing runs until the end of ``step()``, which evaluates every new parameter and state array with a single
``mx.eval``: memory stays flat over a training loop and there is no per-parameter synchronisation.

Learning rates and the other hyper-parameters are Python floats in ``param_groups`` (as in PyTorch); the step
counters live in the state as 0-d float32 tensors (as in PyTorch), with their Python value remembered beside them so
that bias corrections are computed in float64 Python arithmetic, exactly as PyTorch's default CPU path does.

Subclasses written the PyTorch way (override ``step`` and update parameters in place under ``lucid.no_grad()``)
work too. The built-ins instead implement one rule, as MLX's optimizers implement ``apply_single``:

    def _update(self, param, grad, state, hyper): ...

``param`` is the parameter (a Tensor), ``grad`` its gradient's MLX array (checked to have the parameter's shape and
dtype), ``state`` its state dict (None for an optimizer without state, e.g. SGD without momentum) and ``hyper`` the
param group's options by name (``hyper.lr``, ``hyper.betas``: ``Hyper``, read once per group and step). The rule
computes the new arrays (usually with one compiled kernel) and stages them with ``_assign(tensor, array,
self._staged)``; ``_init_state`` creates a parameter's state at its first step.
"""
from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import mlx.core as mx
import numpy as np

from .. import _cpu_route, _meta, _threads
from .._checks import flush as flush_checks, has_pending as has_pending_checks
from .._grad_mode import is_compiling
from .._dtype import dtype_name
from .._tensor import Tensor, _shape_str, _wrap, after_write, take_pending_evals
from .._grad_mode import enable_grad, no_grad
from ..autograd.graph import RemovableHandle, add_hook
from ._differentiable import differentiable_update

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook", "required"]


class _RequiredParameter:
    """Marks a hyper-parameter that every param group must give (no default)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(x) -> str:
    return "lucid.Tensor" if isinstance(x, Tensor) else type(x).__name__


def _float_arg(name: str, value) -> float:
    """A hyper-parameter given as a 1-element Tensor becomes a Python float (learning rates live in the groups as
    floats)."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"Tensor {name} must be 1-element")
        return float(value.item())
    return value


_LABELS = {"lr": "learning rate", "eps": "epsilon value", "weight_decay": "weight_decay value",
           "momentum": "momentum value", "alpha": "alpha value", "lr_decay": "lr_decay value",
           "initial_accumulator_value": "initial_accumulator_value value", "momentum_decay": "momentum_decay value"}


def _check_nonnegative(**values) -> None:
    """PyTorch's constructor checks: each option must be >= 0 (a NaN fails too)."""
    for name, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {_LABELS[name]}: {value}")


def _check_betas(betas) -> None:
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def _check_exclusive_flags(foreach, fused, differentiable) -> None:
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


# hooks that run around the step of every optimizer (``register_optimizer_step_pre_hook``)
_global_step_pre_hooks: OrderedDict = OrderedDict()
_global_step_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)`` to run before the ``step`` of
    every optimizer (before each optimizer's own pre-hooks). Returns a handle whose ``remove()`` unregisters it."""
    return add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs) -> None`` to run after the ``step`` of every optimizer (after each
    optimizer's own post-hooks). Returns a handle whose ``remove()`` unregisters it."""
    return add_hook(_global_step_post_hooks, hook)


def _with_step_hooks(step, evaluates: bool = False):
    """Wrap a ``step`` method so that the optimizer's step pre/post hooks run around it (as PyTorch patches
    ``Optimizer.step``), and schedulers can tell that the optimizer has stepped. A ``step`` written the PyTorch way
    (in-place writes under no_grad) gets the end-of-step evaluation of what it wrote; the built-in one
    (``evaluates=True``) does its own."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if has_pending_checks():  # an index out of range in this step's forward: raise before anything changes
            flush_checks()
        if _global_step_pre_hooks or self._step_pre_hooks:  # the global hooks first, as in PyTorch
            for hook in (*_global_step_pre_hooks.values(), *self._step_pre_hooks.values()):
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), but got "
                                           f"{result}.")
                    args, kwargs = result
        if _cpu_route.gpu_default() and any(p.dtype == mx.float64 for g in self.param_groups for p in g["params"]):
            with _cpu_route.on_cpu():  # float64 parameters on a GPU default device: their update runs on the CPU
                out = step(self, *args, **kwargs)
        else:
            out = step(self, *args, **kwargs)
        if not evaluates and not is_compiling():
            _threads.evaluate(take_pending_evals())
        self._opt_called = True
        if self._step_post_hooks or _global_step_post_hooks:  # the optimizer's own hooks first, as in PyTorch
            for hook in (*self._step_post_hooks.values(), *_global_step_post_hooks.values()):
                hook(self, args, kwargs)
        return out

    wrapper._lucid_step_hooks = True
    return wrapper


def _add_ordered_hook(hooks: OrderedDict, hook, prepend: bool) -> RemovableHandle:
    handle = add_hook(hooks, hook)
    if prepend:
        hooks.move_to_end(handle._key, last=False)
    return handle


class _Staged:
    """What one ``step()`` will write, held back until every update of the step has been computed.

    The updates only build lazy MLX arrays, so computing all of them first costs nothing extra; storing them is the
    commit. A step that fails part-way (a gradient or state of the wrong shape, a bad option in a later group, a
    closure or an update rule raising) therefore leaves every parameter, state tensor and step count as it was."""

    __slots__ = ("stores", "others", "entries", "arrays")

    def __init__(self):
        self.stores: list = []  # (storage, new array) of plain tensors: parameters, state tensors, step counts
        self.others: list = []  # (tensor, new array) of views and `.data` aliases, written as in-place ops
        self.entries: list = []  # (dict, key, value): state created by this step
        self.arrays: list = []  # what the end of the step evaluates

    def commit(self) -> list:
        """Store everything staged; returns the arrays to evaluate. Nothing here can fail (``_assign`` checked)."""
        for mapping, key, value in self.entries:
            mapping[key] = value
        for st, arr in self.stores:
            st.data = arr
            after_write(st, True)
        arrays = self.arrays
        for t, arr in self.others:
            with no_grad():
                t._inplace(lambda _old, arr=arr: _wrap(arr))
            view_of = t._extra.view_of
            if view_of is not None:  # the write went through to the base
                arrays.append(view_of.root.data)
        return arrays


def _assign(t: Tensor, arr: mx.array, written: _Staged) -> None:
    """Stage ``arr`` as the new value of ``t`` (a parameter or a state tensor); the commit stores it, bumping the
    version as an in-place write does. A meta tensor (lucid._meta) stays meta: nothing is computed for it."""
    if _meta.used[0] and _meta.is_meta(t._storage.data):
        arr = _meta.like(arr)
    ex = t._extra
    if ex is not None and (ex.view_of is not None or ex.data_alias or ex.inference):
        # rare: a view writes through to its base, a `.data` alias keeps its version, an inference tensor refuses
        # the write (said now, not during the commit)
        with no_grad():
            t._check_inplace(False)
        written.others.append((t, arr))
    else:
        written.stores.append((t._storage, arr))
    written.arrays.append(arr)


def _new_state(state: dict, key, value, written: _Staged):
    """Stage a new state entry (``state[key] = value`` at the commit); returns ``value``."""
    written.entries.append((state, key, value))
    if type(value) is Tensor:
        written.arrays.append(value._storage.data)
    return value


def _head(x: mx.array, g: mx.array, weight_decay, decay, maximize: bool, wd_mode):
    """The common start of the update rules: negate the gradient to maximize, then weight decay, either coupled
    (``wd_mode="l2"``: g + weight_decay * x) or decoupled (``"decoupled"``: x * decay, decay = 1 - lr * weight_decay).
    Used inside the compiled kernels (``maximize`` and ``wd_mode`` are compile-time constants)."""
    if maximize:
        g = -g
    if wd_mode == "l2":
        g = g + weight_decay * x
    elif wd_mode == "decoupled":
        x = x * decay
    return x, g


def _wd_mode(weight_decay, decoupled: bool):
    return None if weight_decay == 0 else ("decoupled" if decoupled else "l2")


def _scalar_tensor(value: float) -> Tensor:
    """A 0-d float32 state tensor (PyTorch keeps ``step`` this way)."""
    return _wrap(mx.array(value, dtype=mx.float32))


def _zeros_like(p: Tensor) -> Tensor:
    return _full_like(p, 0.0)


def _state_zeros(state: dict, key: str, p: Tensor, written: _Staged) -> Tensor:
    """``state[key]``, created as zeros if an option that needs it was switched on after the state was made."""
    t = state.get(key)
    if t is None:
        t = _new_state(state, key, _zeros_like(p), written)
    return t


def _full_like(p: Tensor, value: float) -> Tensor:
    a = p._storage.data
    return _state_tensor(p, _cpu_route.build(mx.full, a.shape, value, dtype=a.dtype))  # (float64: on the CPU)


def _state_tensor(p: Tensor, arr: mx.array) -> Tensor:
    """A new state tensor of ``p`` holding ``arr``: for a meta parameter a meta one (``arr`` is never computed)."""
    return _wrap(_meta.like(arr) if _meta.used[0] and _meta.is_meta(p._storage.data) else arr)


class Hyper:
    """A param group's options by name, as the update rules read them (``hyper.lr``, ``hyper.betas``): taken once
    per group and step. An option given as a 1-element Tensor (PyTorch allows a Tensor learning rate or betas) is
    its 0-d array, which the rules compute with as with a float (``Optimizer._const`` takes arrays)."""

    def __init__(self, group: dict):
        for key, value in group.items():
            if type(value) is Tensor:
                value = _tensor_option(value)
            elif type(value) is tuple and Tensor in map(type, value):
                value = tuple(_tensor_option(v) if type(v) is Tensor else v for v in value)
            setattr(self, key, value)

    def __getattr__(self, name: str):
        # only reached for an option the group lacks: PyTorch's rules index the group dict, so it is a KeyError
        if name.startswith("__"):  # copy/pickle probing for protocol methods
            raise AttributeError(name)
        raise KeyError(name)


def _tensor_option(value: Tensor) -> mx.array:
    """An option given as a Tensor (PyTorch allows a Tensor learning rate): its 0-d array, which the update rules
    compute with as they do with a float (``_const`` takes arrays)."""
    if value.numel() != 1:
        raise TypeError(f"optimizer options must be numbers or 1-element Tensors, but got a Tensor of shape "
                        f"{_shape_str(value.shape)}")
    return value._storage.data.reshape(())


def _describe_state(state, p: Tensor) -> str:
    s = state.get(p) if state is not None else None
    shapes = [f"{k} {_shape_str(v.shape)}" for k, v in (s or {}).items() if isinstance(v, Tensor)]
    return ", ".join(shapes) or "none"


def _f32(x: float) -> float:
    """``x`` rounded to float32, as a 0-d float32 state tensor holds it (inside lucid.compile ``x`` may be a traced
    array: it is cast, never read)."""
    if type(x) is mx.array:
        return x.astype(mx.float32)
    return float(np.float32(x))


class Optimizer:
    """Base class of all optimizers (``torch.optim.Optimizer``).

    :param params: an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts (param groups) with a
        ``"params"`` entry and per-group options that override ``defaults``.
    :param defaults: the default value of each option.
    """

    # the parameter dtypes the update rules are exact for: elementwise rules with squares, square roots, signs or
    # maxima would be wrong on complex numbers (PyTorch applies them to the real and imaginary parts)
    _param_dtypes = frozenset((mx.float16, mx.bfloat16, mx.float32, mx.float64))
    _scalar_state = frozenset(("step", "mu_product"))  # the 0-d state tensors (the rest has the parameter's shape)

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self._step_pre_hooks: OrderedDict = OrderedDict()
        self._step_post_hooks: OrderedDict = OrderedDict()
        self._state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._state_dict_post_hooks: OrderedDict = OrderedDict()
        self._load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._load_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._opt_called = False
        self._scalars: dict = {}  # 0-d state tensor -> (its array, its Python value), see _scalar
        self._staged = None  # during step(): the _Staged writes of this step (the update rules add to it)
        self._state_unchecked = False  # True from load_state_dict to the next step, see _check_loaded_state
        self._consts: dict = {}  # (value, dtype) -> 0-d array, shared by the updates of one step
        cls = type(self)
        if not getattr(cls.step, "_lucid_step_hooks", False):
            cls.step = _with_step_hooks(cls.step)

        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            "got " + _typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        return "\n".join(lines) + "\n)"

    # ------------------------------------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options (missing options take the optimizer's defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)

        tensors, names = [], []
        for param in params:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names

        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        if len(tensors) != len(set(tensors)):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        seen: set = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current} to the optimizer")
        if not seen.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
        self._on_new_group(param_group)

    def _on_new_group(self, group: dict) -> None:
        """Hook for optimizers whose state is created eagerly (Adagrad)."""

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors: to None (default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                elif not isinstance(g, Tensor):  # a sparse gradient (assigned by hand): no entries left
                    g.zero_()
                else:
                    if g._node is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    st = g._storage
                    st.data = mx.zeros_like(st.data)
                    after_write(st, True)

    # ------------------------------------------------------------------------------------------------ step
    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the model (with grad enabled) and returns the
        loss, which ``step`` returns. A step that raises changes nothing (see ``_Staged``)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._consts = {}
        staged = self._staged = _Staged()
        try:
            for group in self.param_groups:
                self._step_group(group)
        finally:
            self._staged = None
        self._state_unchecked = False
        written = staged.commit()
        written += take_pending_evals()  # in-place writes under no_grad (BatchNorm's stats), the last loss
        if not is_compiling():  # (lucid.compile evaluates once per compiled step instead)
            _threads.evaluate(written)  # the one evaluation point: the new parameters and the new optimizer state
        return loss

    def _step_group(self, group: dict) -> None:
        """Stage the update of every parameter of ``group`` that has a gradient (parameters whose ``.grad`` is None
        are skipped, as in PyTorch), after checking that gradient against its parameter."""
        hyper = Hyper(group)
        update, ok = self._update, self._param_dtypes
        differentiable = group.get("differentiable", False)  # the step on the autograd tape (_differentiable.py)
        state = self.state if self._has_state(group) else None
        if state is not None and self._state_unchecked:
            self._check_loaded_state(group)
        p = None
        try:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if not isinstance(g, Tensor):  # a sparse COO gradient, assigned by hand
                    raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")
                x, ga = p._storage.data, g._storage.data
                dt = x.dtype
                if not (ga.shape == x.shape and ga.dtype == dt and dt in ok):
                    self._bad_grad(group, p, x, ga)
                if state is None:
                    if differentiable:
                        differentiable_update(self, p, None, hyper)
                    else:
                        update(p, ga, None, hyper)
                    continue
                s = state.get(p)
                if not s:  # first step of this parameter: its state is new, and stored only at the commit
                    s = _new_state(state, p, {}, self._staged)
                    self._init_state(p, s, group)
                if differentiable:
                    differentiable_update(self, p, s, hyper)
                else:
                    update(p, ga, s, hyper)
        except ValueError as e:
            if not str(e).startswith("["):  # not MLX's (a Python error: PyTorch raises the same)
                raise
            # the gradient was checked above, so MLX refused the shapes of the optimizer state
            raise RuntimeError(f"{type(self).__name__}.step(): {self._where(group, p)} (shape "
                               f"{_shape_str(p.shape)}) doesn't match its optimizer state "
                               f"({_describe_state(state, p)}): {e}") from None

    def _where(self, group: dict, p: Tensor) -> str:
        index = next(i for i, q in enumerate(group["params"]) if q is p)
        group_index = next(i for i, g in enumerate(self.param_groups) if g is group)
        return f"parameter {index} of param group {group_index}"

    def _bad_grad(self, group: dict, p: Tensor, x: mx.array, g: mx.array):
        """Raise the error for a gradient that doesn't fit its parameter (set by hand, or the parameter's ``.data``
        was replaced), or a parameter this optimizer can't update."""
        name, where = type(self).__name__, self._where(group, p)
        if x.dtype not in self._param_dtypes:
            kinds = "floating-point and complex" if mx.complex64 in self._param_dtypes else "real floating-point"
            raise RuntimeError(f"{name} can't update {where}: it has dtype {dtype_name(x.dtype)}, and lucid's {name} "
                               f"updates {kinds} parameters only")
        if g.shape != x.shape:
            raise RuntimeError(f"{name}.step(): the gradient of {where} has shape {_shape_str(g.shape)}, but the "
                               f"parameter has shape {_shape_str(x.shape)}")
        raise RuntimeError(f"{name}.step(): the gradient of {where} has dtype {dtype_name(g.dtype)}, but the "
                           f"parameter has dtype {dtype_name(x.dtype)}")

    def _check_loaded_state(self, group: dict) -> None:
        """After ``load_state_dict``, the first step checks that each loaded state tensor has its parameter's shape
        and dtype (MLX would broadcast a mismatched one silently). Once, so it costs nothing per step."""
        for p in group["params"]:
            s = self.state.get(p)
            if not s or p._grad is None:
                continue
            x = p._storage.data
            for key, value in s.items():
                if type(value) is not Tensor or key in self._scalar_state:
                    continue
                v = value._storage.data
                if v.shape != x.shape or v.dtype != x.dtype:
                    raise RuntimeError(
                        f"{type(self).__name__}.step(): the loaded state {key!r} of {self._where(group, p)} has "
                        f"shape {_shape_str(v.shape)} and dtype {dtype_name(v.dtype)}, but the parameter has shape "
                        f"{_shape_str(x.shape)} and dtype {dtype_name(x.dtype)} (was the state_dict saved from "
                        "another model?)")

    def _has_state(self, group: dict) -> bool:
        return True

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        """Create the state of one parameter (lazily, at its first step)."""

    def _update(self, param: Tensor, grad: mx.array, state: dict | None, hyper: "Hyper") -> None:
        """Update one parameter from its gradient array (checked to have the parameter's shape and dtype), its
        state and its group's options by name; stage the results with ``_assign(..., self._staged)``."""
        raise NotImplementedError

    # ------------------------------------------------------------------------------------------------ helpers
    def _const(self, value: float, dtype) -> mx.array:
        """A 0-d array holding ``value``, shared by all the updates of this step (kernels take their scalars as
        arrays, so a new learning rate does not recompile them)."""
        if type(value) is mx.array:  # traced by lucid.compile: the value is itself an array
            # mx.contiguous keeps mx.compile from fusing this 0-d computation (a power, a division) into the
            # elementwise update kernel, where it would be recomputed for every element (measured 6x slower)
            return mx.contiguous(value.astype(dtype))
        key = (value, dtype)
        arr = self._consts.get(key)
        if arr is None:
            arr = self._consts[key] = mx.array(value, dtype=dtype)
        return arr

    def _scalar(self, t: Tensor) -> float:
        """The Python value of a 0-d state tensor (a step count, NAdam's mu_product)."""
        arr = t._storage.data
        if is_compiling():  # inside lucid.compile the count is a traced array: compute with it, never read it
            return arr
        known = self._scalars.get(t)
        if known is not None and known[0] is arr:
            return known[1]
        # the state was loaded or set from outside since this optimizer last wrote it: read it, once
        return float(_threads.item(arr))

    def _set_scalar(self, t: Tensor, value: float, written: _Staged) -> None:
        # a count keeps float64 when it was given so (PyTorch updates it in place), else lucid's float32
        arr = self._const(value, mx.float64 if t._storage.data.dtype == mx.float64 else mx.float32)
        written.stores.append((t._storage, arr))  # a constant: nothing to evaluate
        # remembered now: if the step fails, ``t`` keeps its old array, which this entry then doesn't match
        self._scalars[t] = (arr, value)

    def _advance(self, step: Tensor, written: _Staged) -> float:
        """Count one more step in a ``state["step"]`` tensor; return the new count."""
        n = self._scalar(step) + 1.0
        self._set_scalar(step, n, written)
        return n

    # ------------------------------------------------------------------------------------------------ state dict
    def state_dict(self) -> dict:
        """The optimizer's state in PyTorch's layout: ``{"state": {index: {...}}, "param_groups": [{..., "params":
        [indices]}]}``, parameters numbered in group order. State tensors are returned as they are (not copied)."""
        for hook in tuple(self._state_dict_pre_hooks.values()):
            hook(self)
        index: dict[int, int] = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for hook in tuple(self._state_dict_post_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @_cpu_route.routed  # (its casts to the parameters' dtypes include float64)
    def load_state_dict(self, state_dict: dict) -> None:
        """Load a state from ``state_dict()`` (this optimizer's or a PyTorch one's layout). Group sizes must match;
        floating-point state is cast to its parameter's dtype (except ``step``), as in PyTorch."""
        state_dict = state_dict.copy()
        for hook in tuple(self._load_state_dict_pre_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast_state(param, v)
            else:
                state[k] = v

        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            for name, default in self.defaults.items():  # older state dicts may lack newer options
                saved.setdefault(name, default)
            new_groups.append(saved)
        self.state = state
        self.param_groups = new_groups
        self._scalars = {}
        self._state_unchecked = True
        for hook in tuple(self._load_state_dict_post_hooks.values()):
            hook(self)

    # ------------------------------------------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)`` runs before each ``step``."""
        return add_hook(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None`` runs after each ``step``."""
        return add_hook(self._step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer) -> None`` runs before ``state_dict`` builds the dict."""
        return _add_ordered_hook(self._state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> None | state_dict`` runs on the dict ``state_dict`` returns."""
        return _add_ordered_hook(self._state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> None | state_dict`` runs before ``load_state_dict`` loads."""
        return _add_ordered_hook(self._load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer) -> None`` runs after ``load_state_dict``."""
        return _add_ordered_hook(self._load_state_dict_post_hooks, hook, prepend)


def _cast_state(param: Tensor, value, key=None):
    """A copy of one parameter's loaded state: tensors become new lucid Tensors (sharing the immutable array) in the
    parameter's dtype when it is floating point; ``step`` keeps its own dtype."""
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    cast = key != "step" and param.is_floating_point()
    if isinstance(value, Tensor):
        arr = value._storage.data
        if cast and arr.dtype != param.dtype:
            arr = arr.astype(param.dtype)
        return _wrap(arr)
    if hasattr(value, "__array__") and not isinstance(value, (str, bytes)):  # numpy / MLX / PyTorch arrays
        return _wrap(mx.array(np.asarray(value), dtype=param.dtype if cast else None))
    if key == "step" and isinstance(value, (int, float)):  # old PyTorch checkpoints keep the step as a number
        return _wrap(mx.array(float(value), dtype=mx.float32))
    return value


Optimizer.step = _with_step_hooks(Optimizer.step, evaluates=True)
