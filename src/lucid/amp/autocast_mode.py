"""``lucid.autocast``: mixed precision by op, with PyTorch's API and op lists (``lucid.ops.autocast_policy``).

Inside ``with lucid.autocast("cpu", dtype=lucid.bfloat16):`` the ops on the lower-precision list (matmul, linear,
convolutions, attention, ...) cast their floating inputs to bfloat16, the ops on the float32 list (losses, ...)
to float32, and the "promote" ops to the widest input dtype. The casts are ordinary differentiable ops
(``ToCopyBackward0``), so parameters stay float32 and their gradients come back float32.

How it reaches the ops: entering sets ``grad_mode.state.autocast`` (thread-local, like grad mode) to a ``Casting``;
a declared op on a list checks that attribute as it dispatches and calls ``Casting.apply``; a composite function
on a list calls ``Casting.cast`` with its name as it starts. Ops on no list never look. The backward walk runs
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
    PyTorch)."""
    return _settings.enabled["gpu" if device_type is None else _kind(device_type)]


def get_autocast_dtype(device_type: str):
    """The low dtype autocast uses for ``device_type``: bfloat16 for CPU, float16 for CUDA/MPS unless set."""
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

    def cast(self, name: str, *tensors) -> tuple:
        """The inputs of composite op ``name``, cast as the table says (a tuple, one entry per input)."""
        return self.apply(POLICY[name], tensors, {})[0]

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
    does; a device type that is not a device raises."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        kind = _kind(device_type)
        if dtype is not None and not isinstance(dtype, mx.Dtype):
            raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be lucid.dtype, not "
                            f"{type(dtype).__name__}")
        self.device = device_type
        self.fast_dtype = _settings.dtype[kind] if dtype is None else dtype
        self._kind = kind
        self._enabled = bool(enabled)
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)
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
