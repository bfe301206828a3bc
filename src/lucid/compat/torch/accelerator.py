"""torch.accelerator: MLX's GPU (Metal on Apple Silicon, CUDA on an mlx[cuda] build), when there is one."""
from __future__ import annotations

import mlx.core as _mx

from lucid import device as _device


def is_available() -> bool:
    return _mx.is_available(_mx.gpu)


def device_count() -> int:
    return 1 if is_available() else 0


def current_accelerator(check_available: bool = False):
    """``device("mps")`` or ``device("cuda")``, both lucid's GPU device; None without a GPU."""
    if not is_available():
        return None
    return _device("mps" if _mx.metal.is_available() else "cuda")


def current_device_index() -> int:
    return 0


def set_device_index(device) -> None:
    return None


set_device_idx = set_device_index
current_device_idx = current_device_index


def synchronize(device=None) -> None:
    _mx.synchronize()
