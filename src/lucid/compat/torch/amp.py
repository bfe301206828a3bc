"""torch.amp: lucid's mixed precision (``lucid.amp``), with PyTorch's rule for a device type that is not there.

``torch.amp.autocast`` and ``torch.autocast`` are ``lucid.amp.autocast``: inside them the ops on PyTorch's lists run
in bfloat16/float16 as in PyTorch, and ``GradScaler`` is lucid's dynamic loss scaler. As in PyTorch, a ``"cuda"``
autocast or scaler on a machine without CUDA (``torch.cuda.is_available()`` is True only on an MLX CUDA build) warns
and disables itself: ``"CUDA is not available or torch_xla is imported. Disabling autocast."`` and
``"torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."``, so a program written for a GPU
runs in full precision on a Mac's or Linux's CPU, as it would under PyTorch there."""
from __future__ import annotations

import warnings

from lucid import amp as _amp

from lucid.cuda import is_available as _cuda_is_available
from lucid.amp import custom_bwd, custom_fwd, get_autocast_dtype, is_autocast_enabled  # noqa: F401

__all__ = ["autocast", "GradScaler", "custom_bwd", "custom_fwd", "get_autocast_dtype", "is_autocast_enabled",
           "is_autocast_available"]


def _cuda_missing() -> bool:
    return not _cuda_is_available()


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` can run on ``device_type`` (``"cpu"``, ``"mps"``, and ``"cuda"`` where CUDA is)."""
    if device_type == "cuda":
        return not _cuda_missing()
    return device_type in ("cpu", "mps", "gpu")


class autocast(_amp.autocast):
    __doc__ = _amp.autocast.__doc__

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        if enabled and device_type == "cuda" and _cuda_missing():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            enabled = False
        super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    __doc__ = _amp.GradScaler.__doc__

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        if enabled and device == "cuda" and _cuda_missing():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            enabled = False
        super().__init__(device, init_scale, growth_factor, backoff_factor, growth_interval, enabled)
