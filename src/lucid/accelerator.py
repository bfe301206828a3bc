"""lucid.accelerator: PyTorch's ``torch.accelerator``, MLX's GPU (Metal on Apple Silicon, CUDA on an mlx[cuda]
build) when there is one. Without one, the calls that need it raise PyTorch's RuntimeError."""
from __future__ import annotations

import mlx.core as _mx

from ._dtype import device as _device
from ._dtype import gpu_available as _gpu_available


def is_available() -> bool:
    """Whether MLX has a GPU here."""
    return _gpu_available()


def device_count() -> int:
    """1 where MLX has a GPU (it drives one per process), else 0."""
    return 1 if _gpu_available() else 0


def _require() -> None:
    if not _gpu_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_accelerator(check_available: bool = False):
    """``device("mps")`` or ``device("cuda")``, both lucid's GPU device; None without a GPU.

    :param check_available: accepted (the GPU this returns is always available)."""
    if not _gpu_available():
        return None
    return _device("mps" if _mx.metal.is_available() else "cuda")


def current_device_index() -> int:
    """0, the index of MLX's GPU."""
    _require()
    return 0


def set_device_index(device) -> None:
    """Accepted where MLX has a GPU (it drives one per process).

    :param device: the device or its index."""
    _require()


set_device_idx = set_device_index
current_device_idx = current_device_index


def synchronize(device=None) -> None:
    """Wait for MLX's queued work (a point where the user asked to wait: timing code).

    :param device: accepted; MLX waits for all of its streams."""
    _require()
    _mx.synchronize()
