"""torch.cuda on lucid. ``is_available()`` is True only where MLX itself runs on CUDA (an ``mlx[cuda]`` build on
Linux); there, ``"cuda"`` is lucid's GPU device. Elsewhere the calls PyTorch answers without a GPU answer the
same way (``device_count() == 0``, ``empty_cache()`` does nothing) and the ones that need a GPU raise PyTorch's
AssertionError. Seeding seeds lucid's one generator, which every device's random ops draw from."""
from __future__ import annotations

import mlx.core as _mx

from lucid import manual_seed as _manual_seed
from lucid import seed as _seed
from .._unsupported import unsupported as _unsupported
from . import amp  # noqa: F401


def is_available() -> bool:
    cuda = getattr(_mx, "cuda", None)
    return cuda is not None and cuda.is_available()


def _require(name: str) -> None:
    if not is_available():
        raise AssertionError(f"torch.cuda.{name}: CUDA is not available (lucid runs on MLX, and this MLX build has "
                             "no CUDA backend); check torch.cuda.is_available() first")


def is_initialized() -> bool:
    return is_available()


def init() -> None:
    _require("init")


def device_count() -> int:
    return 1 if is_available() else 0


def current_device() -> int:
    _require("current_device")
    return 0


def set_device(device) -> None:
    _require("set_device")


def get_device_name(device=None) -> str:
    _require("get_device_name")
    return _mx.device_info().get("device_name", "CUDA GPU")


def get_device_capability(device=None) -> tuple:
    _require("get_device_capability")
    return (0, 0)  # MLX does not report it


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return is_available()


def is_tf32_supported() -> bool:
    """False: MLX has no TF32 mode (its float32 matmuls are float32)."""
    return False


def manual_seed(seed: int) -> None:
    """Seed lucid's generator (the one every lucid random op draws from)."""
    _manual_seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
    _seed()


seed_all = seed


def synchronize(device=None) -> None:
    """Wait for MLX's queued work (a point where the user asked to wait: timing code)."""
    _mx.synchronize()


def empty_cache() -> None:
    _mx.clear_cache()


def memory_allocated(device=None) -> int:
    return _mx.get_active_memory() if is_available() else 0


def max_memory_allocated(device=None) -> int:
    return _mx.get_peak_memory() if is_available() else 0


def memory_reserved(device=None) -> int:
    return _mx.get_active_memory() + _mx.get_cache_memory() if is_available() else 0


def reset_peak_memory_stats(device=None) -> None:
    _mx.reset_peak_memory()


_NO_STREAMS = "MLX schedules its own streams; lucid does not expose CUDA streams, events or graphs"
Stream = _unsupported("torch.cuda.Stream", _NO_STREAMS)
Event = _unsupported("torch.cuda.Event", _NO_STREAMS)
stream = _unsupported("torch.cuda.stream", _NO_STREAMS)
current_stream = _unsupported("torch.cuda.current_stream", _NO_STREAMS)
CUDAGraph = _unsupported("torch.cuda.CUDAGraph", _NO_STREAMS)
graph = _unsupported("torch.cuda.graph", _NO_STREAMS)
get_device_properties = _unsupported("torch.cuda.get_device_properties", "MLX does not report CUDA device "
                                     "properties")
