"""PyTorch's autocast getters and setters outside a ``with autocast(...)`` region: ``set_autocast_enabled``,
``set_autocast_dtype``, ``is_autocast_cache_enabled``/``set_autocast_cache_enabled`` and the deprecated CPU
spellings (``is_autocast_cpu_enabled``, ``set_autocast_cpu_enabled``, ``get_autocast_cpu_dtype``,
``set_autocast_cpu_dtype``), each with PyTorch's DeprecationWarning.

They change the same per-thread settings ``autocast`` saves on entry and restores on exit, so a setting made
inside a region ends with it, as in PyTorch. Turning autocast on for a GPU device type on a machine without a GPU
sets the flag only (PyTorch's CUDA autocast does not reach CPU ops either).
"""
from __future__ import annotations

import warnings

import mlx.core as mx

from .._dtype import gpu_available
from ..autograd import grad_mode as gm
from ..ops.autocast_policy import CPU, GPU
from .autocast_mode import Casting, _kind, _settings, get_autocast_dtype, is_autocast_enabled

__all__ = ["set_autocast_enabled", "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype"]


def _refresh(kind: str) -> None:
    """Make the casting in force agree with the settings of ``kind`` after a setter changed them."""
    column = CPU if kind == "cpu" else GPU
    active = gm.state.autocast
    if _settings.enabled[kind] and (kind == "cpu" or gpu_available()):
        gm.state.autocast = Casting(column, _settings.dtype[kind],
                                    _settings.cache if is_autocast_cache_enabled() else None)
    elif active is not None and active.column == column:
        gm.state.autocast = None


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Turn autocast on or off for ``device_type`` in this thread (``set_autocast_enabled(enabled)``: CUDA's,
    i.e. lucid's GPU, as in PyTorch).

    :param device_type: "cpu", "cuda", "mps" or "gpu" (or, alone, the on/off flag for CUDA's).
    :param enabled: True to cast as ``autocast`` does, False not to.
    """
    if enabled is None:
        device_type, enabled = "cuda", device_type
    kind = _kind(device_type)
    _settings.enabled[kind] = bool(enabled)
    _refresh(kind)


def set_autocast_dtype(device_type: str, dtype) -> None:
    """The low dtype autocast uses for ``device_type`` from now on (in this thread).

    :param device_type: "cpu", "cuda", "mps" or "gpu".
    :param dtype: bfloat16 or float16.
    """
    if not isinstance(dtype, mx.Dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be lucid.dtype, not "
                        f"{type(dtype).__name__}")
    kind = _kind(device_type)
    _settings.dtype[kind] = dtype
    if _settings.enabled[kind]:
        _refresh(kind)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast regions keep the low-precision copies of float32 weights for reuse (default True)."""
    return getattr(_settings, "cache_enabled", True)


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Whether the autocast regions entered from now on (without ``cache_enabled=``) cache their weight casts.

    :param enabled: cache the casts of float32 weights within a region.
    """
    _settings.cache_enabled = bool(enabled)


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    """Deprecated: ``is_autocast_enabled("cpu")``."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled("cpu", enabled)``.

    :param enabled: True to cast on the CPU, False not to.
    """
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """Deprecated: ``get_autocast_dtype("cpu")``."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    """Deprecated: ``set_autocast_dtype("cpu", dtype)``.

    :param dtype: bfloat16 or float16.
    """
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)
