"""``lucid.autocast``: mixed precision by op, with PyTorch's API and op lists (``lucid.ops.autocast_policy``).

Inside ``with lucid.autocast("cpu", dtype=lucid.bfloat16):`` the ops on the lower-precision list (matmul, linear,
convolutions, attention, ...) cast their floating inputs to bfloat16, the ops on the float32 list (losses, ...)
to float32, and the "promote" ops to the widest input dtype. The casts are ordinary differentiable ops
(``ToCopyBackward0``), so parameters stay float32 and their gradients come back float32.

How it reaches the ops: entering sets ``grad_mode.state.autocast`` (thread-local, like grad mode) to a ``Casting``;
a declared op on a list checks that attribute as it dispatches and calls ``Casting.apply``; a composite function
on a list, as it starts, hands itself and its arguments to ``Casting.call``, which casts them and runs the body
with autocast off (PyTorch's autocast does not reach the ops inside an op it wrapped). Ops on no list never look.
A call with ``out=`` is not autocast, as in PyTorch. The backward walk runs
with autocast off, so backward ops run in the dtypes their forward ops chose.

Device types: ``"cpu"`` uses PyTorch's CPU lists; ``"cuda"``, ``"mps"`` and ``"gpu"`` (lucid's name for MLX's GPU)
use the lists PyTorch shares between CUDA and MPS. MLX arrays live in unified memory, so the autocast in force
applies to every op of the thread, whichever device runs it; the innermost enabled autocast decides.
"""
from __future__ import annotations

import copy
import threading
import warnings

import mlx.core as mx

from .._dtype import device as _device, gpu_available
from .._tensor import Tensor
from ..autograd import grad_mode as gm
from ..ops.autocast_policy import CPU, FP32, GPU, LOWER, POLICY
from ..ops.elementwise import cast as _cast

_LOW = (mx.bfloat16, mx.float16)
_ELIGIBLE = (mx.float32, mx.float16, mx.bfloat16)  # float64 and integers never autocast, as in PyTorch
_NAMES = {"cpu": "CPU", "gpu": "GPU"}


class _Settings(threading.local):
    """Per thread: which device types have autocast on, their low dtypes, the nesting depth and the cast cache."""

    def __init__(self):
        self.enabled = {"cpu": False, "gpu": False}
        self.dtype = {"cpu": mx.bfloat16, "gpu": mx.float16}  # PyTorch's defaults for CPU and CUDA/MPS
        self.depth = 0
        self.cache: dict = {}


_settings = _Settings()


def _kind(device_type) -> str:
    """lucid's device kind ("cpu" or "gpu") for an autocast device type, with PyTorch's errors."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    return _device(device_type).type


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread (no argument: CUDA's, i.e. lucid's GPU, as in
    PyTorch).

    :param device_type: "cpu", "cuda", "mps" or "gpu" (None: CUDA's, as PyTorch).
    """
    return _settings.enabled["gpu" if device_type is None else _kind(device_type)]


def get_autocast_dtype(device_type: str):
    """The low dtype autocast uses for ``device_type``: bfloat16 for CPU, float16 for CUDA/MPS unless set.

    :param device_type: "cpu", "cuda", "mps" or "gpu".

    >>> import lucid
    >>> lucid.amp.get_autocast_dtype("cpu")
    mlx.core.bfloat16
    """
    return _settings.dtype[_kind(device_type)]


class Casting:
    """The autocast in force in a thread: which column of the policy table it reads, its low dtype, and the cache
    of low-precision copies of float32 leaves (weights used several times are cast once per autocast region)."""

    __slots__ = ("column", "dtype", "cache")

    def __init__(self, column: int, dtype, cache: dict | None):
        self.column = column
        self.dtype = dtype
        self.cache = cache

    def apply(self, policy: tuple, args: tuple, kwargs: dict) -> tuple:
        """``(args, kwargs)`` with their floating tensors (also inside lists: cat, stack) cast as ``policy`` says."""
        p = policy[self.column]
        if not p:
            return args, kwargs
        target = self.dtype if p == LOWER else mx.float32 if p == FP32 else _widest(args, kwargs)
        if target is None:
            return args, kwargs
        args = tuple([self._to(a, target) for a in args])
        if kwargs:
            kwargs = {k: self._to(v, target) for k, v in kwargs.items()}
        return args, kwargs

    def call(self, name: str, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` for composite op ``name``: its tensor arguments cast as the table says, then its
        body run with autocast off, as PyTorch runs an autocast-wrapped op below the autocast dispatch key (the ops
        inside a float32 loss stay float32; inside ``linear`` nothing is cast twice)."""
        args, kwargs = self.apply(POLICY[name], args, kwargs)
        state = gm.state
        state.autocast = None
        try:
            return fn(*args, **kwargs)
        finally:
            state.autocast = self

    def _to(self, a, target):
        if isinstance(a, Tensor):
            dt = a._st.data.dtype
            if dt == target or dt not in _ELIGIBLE:
                return a
            cache = self.cache
            if cache is not None and dt == mx.float32 and a._rg and a._fn is None and gm.state.grad:
                hit = cache.get(id(a))
                version = a._st.version
                if hit is not None and hit[0] is a and hit[1] == version and hit[2].dtype == target:
                    return hit[2]
                low = _cast(a, target)
                cache[id(a)] = (a, version, low)
                return low
            return _cast(a, target)
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            return type(a)(self._to(x, target) for x in a)
        return a


def _widest(args: tuple, kwargs: dict):
    """The promote policy's dtype: float32 if any floating input is float32 (or the low dtypes are mixed), else
    the one low dtype; None without floating inputs."""
    seen = set()
    for a in list(args) + list(kwargs.values()):
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(t, Tensor) and t._st.data.dtype in _ELIGIBLE:
                seen.add(t._st.data.dtype)
    if not seen:
        return None
    return seen.pop() if len(seen) == 1 else mx.float32


class autocast(gm._Mode):
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a context manager and decorator
    (nestable, thread-local) under which ops run in the precision PyTorch's autocast chooses for them (see the
    module docstring). ``dtype`` defaults to ``get_autocast_dtype(device_type)``: bfloat16 on CPU, float16 on
    CUDA/MPS. An unsupported dtype, or a GPU device type without a GPU, warns and disables autocast, as PyTorch
    does; a device type that is not a device raises.

    :param device_type: "cpu", or "cuda"/"mps"/"gpu" for lucid's GPU (PyTorch's CUDA/MPS op lists).
    :param dtype: the low precision, bfloat16 or float16; default ``get_autocast_dtype(device_type)``.
    :param enabled: False makes the region a no-op (and switches autocast off inside an enclosing one).
    :param cache_enabled: accepted for PyTorch's signature; casts of the same parameter are shared within a region.

    >>> import lucid
    >>> layer = lucid.nn.Linear(4, 2)
    >>> with lucid.autocast("cpu", dtype=lucid.bfloat16):
    ...     y = layer(lucid.ones(3, 4))
    >>> y.dtype, layer.weight.dtype
    (mlx.core.bfloat16, mlx.core.float32)
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        kind = _kind(device_type)
        if dtype is not None and not isinstance(dtype, mx.Dtype):
            raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be lucid.dtype, not "
                            f"{type(dtype).__name__}")
        self.device = device_type
        self.fast_dtype = _settings.dtype[kind] if dtype is None else dtype
        self._kind = kind
        self._enabled = bool(enabled)
        self._cache_enabled = (getattr(_settings, "cache_enabled", True) if cache_enabled is None
                               else bool(cache_enabled))
        if self._enabled and kind == "gpu" and not gpu_available():
            warnings.warn(f"{device_type.upper()} is not available (this MLX build has no GPU). Disabling autocast.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled and self.fast_dtype not in _LOW:
            name = _NAMES[kind]
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n{name} "
                          "Autocast only supports dtypes of lucid.bfloat16, lucid.float16 currently.", UserWarning,
                          stacklevel=2)
            self._enabled = False

    def __enter__(self):
        s, kind = _settings, self._kind
        self._stack = getattr(self, "_stack", [])  # a stack, so one instance can be reused and nested
        self._stack.append((s.enabled[kind], s.dtype[kind], gm.state.autocast))
        s.enabled[kind] = self._enabled
        s.dtype[kind] = self.fast_dtype
        s.depth += 1
        active = gm.state.autocast
        if self._enabled:
            gm.state.autocast = Casting(CPU if kind == "cpu" else GPU, self.fast_dtype,
                                        s.cache if self._cache_enabled else None)
        elif active is not None and active.column == (CPU if kind == "cpu" else GPU):
            gm.state.autocast = None  # autocast(kind, enabled=False) switches off the one in force for kind
        return self

    def __exit__(self, *exc):
        s, kind = _settings, self._kind
        s.enabled[kind], s.dtype[kind], gm.state.autocast = self._stack.pop()
        s.depth -= 1
        if s.depth == 0:
            s.cache.clear()  # the cast weights are released as the outermost region ends, as in PyTorch
        return False

    def clone(self):
        c = copy.copy(self)
        c._stack = []
        return c


# ------------------------------------------------------------------------------ custom autograd Functions under autocast
def _check_device_type(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def _cast_floats(value, dtype):
    """``value`` with its floating-point Tensors (also inside lists, tuples and dicts) cast to ``dtype``."""
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_floats(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_floats(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorator for a custom autograd Function's ``forward``, as PyTorch's: with ``cast_inputs``, inside an
    autocast region the floating-point inputs are cast to it and the forward runs with autocast off; without, the
    forward runs in the caller's autocast state, which ``custom_bwd`` restores for the backward.

    :param fwd: the ``forward(ctx, ...)`` staticmethod (omitted when used as ``@custom_fwd(device_type=...)``).
    :param device_type: the autocast device type this forward belongs to.
    :param cast_inputs: a floating dtype: cast the floating inputs to it and run the forward with autocast off.
    """
    _check_device_type(device_type)
    if fwd is None:
        return lambda f: custom_fwd(f, device_type=device_type, cast_inputs=cast_inputs)

    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        enabled = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = enabled and cast_inputs is None
        if cast_inputs is None or not enabled:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_floats(args, cast_inputs), **_cast_floats(kwargs, cast_inputs))
    decorate_fwd.__name__, decorate_fwd.__doc__, decorate_fwd.__wrapped__ = fwd.__name__, fwd.__doc__, fwd
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for a custom autograd Function's ``backward``: it runs in the autocast state its forward ran in.

    :param bwd: the ``backward(ctx, ...)`` staticmethod (omitted when used as ``@custom_bwd(device_type=...)``).
    :param device_type: the autocast device type, as given to ``custom_fwd``.
    """
    _check_device_type(device_type)
    if bwd is None:
        return lambda f: custom_bwd(f, device_type=device_type)

    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    decorate_bwd.__name__, decorate_bwd.__doc__, decorate_bwd.__wrapped__ = bwd.__name__, bwd.__doc__, bwd
    return decorate_bwd
