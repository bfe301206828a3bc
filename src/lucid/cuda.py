"""lucid.cuda: PyTorch's ``torch.cuda`` on lucid. ``is_available()`` is True only where MLX itself runs on CUDA (an
``mlx[cuda]`` build on Linux); there, ``"cuda"`` is lucid's GPU device. Elsewhere the calls PyTorch answers without
a GPU answer the same way (``device_count() == 0``, ``empty_cache()`` does nothing) and the ones that need a GPU
raise PyTorch's AssertionError. Seeding seeds lucid's one generator, which every device's random ops draw from.
(``torch.cuda.amp`` is ``lucid.compat.torch``'s: ``lucid.amp`` is lucid's mixed precision.)"""
from __future__ import annotations

import mlx.core as _mx

from ._dtype import cuda_available as _cuda_available
from ._dtype import require_cuda as _require
from ._random import manual_seed as _manual_seed
from ._random import seed as _seed
from ._unsupported import unsupported as _unsupported

__all__ = ["is_available", "is_initialized", "init", "device_count", "current_device", "set_device", "get_device_name",
           "get_device_capability", "is_bf16_supported", "is_tf32_supported", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "Stream", "Event", "stream", "current_stream", "CUDAGraph", "graph",
           "get_device_properties"]

def is_available() -> bool:
    """Whether MLX runs on CUDA here (an ``mlx[cuda]`` build with an NVIDIA GPU)."""
    return _cuda_available()


def is_initialized() -> bool:
    """True where CUDA is available (MLX initialises it on import)."""
    return _cuda_available()


def init() -> None:
    """Nothing to do where CUDA is available (MLX initialised it); PyTorch's AssertionError elsewhere."""
    _require()


def device_count() -> int:
    """1 on an MLX CUDA build (MLX drives one GPU per process), else 0."""
    return 1 if _cuda_available() else 0


def current_device() -> int:
    """0, the index of MLX's GPU."""
    _require()
    return 0


def set_device(device) -> None:
    """Accepted where CUDA is available (MLX drives one GPU per process).

    :param device: the device or its index."""
    _require()


def get_device_name(device=None) -> str:
    """The GPU's name, as MLX reports it.

    :param device: the device or its index (MLX has one)."""
    _require()
    return _mx.device_info().get("device_name", "CUDA GPU")


def get_device_capability(device=None) -> tuple:
    """``(0, 0)``: MLX does not report the compute capability.

    :param device: the device or its index (MLX has one)."""
    _require()
    return (0, 0)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True where CUDA is available (MLX's CUDA kernels take bfloat16).

    :param including_emulation: accepted; MLX emulates nothing."""
    return _cuda_available()


def is_tf32_supported() -> bool:
    """False: MLX has no TF32 mode (its float32 matmuls are float32)."""
    return False


def manual_seed(seed: int) -> None:
    """Seed lucid's generator (the one every lucid random op draws from, on every device).

    :param seed: the seed, an integer in [-2**63, 2**64)."""
    _manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """``manual_seed``: lucid has one generator for all devices.

    :param seed: the seed, an integer in [-2**63, 2**64)."""
    _manual_seed(seed)


def seed() -> None:
    """Seed lucid's generator from the operating system's entropy."""
    _seed()


def seed_all() -> None:
    """``seed``: lucid has one generator for all devices."""
    _seed()


def synchronize(device=None) -> None:
    """Wait for MLX's queued work (a point where the user asked to wait: timing code).

    :param device: accepted; MLX waits for all of its streams."""
    _mx.synchronize()


def empty_cache() -> None:
    """Free MLX's cache of unused buffers."""
    _mx.clear_cache()


def memory_allocated(device=None) -> int:
    """Bytes MLX holds in live arrays on the GPU; 0 without CUDA.

    :param device: accepted (MLX has one GPU)."""
    return _mx.get_active_memory() if _cuda_available() else 0


def max_memory_allocated(device=None) -> int:
    """The peak of ``memory_allocated`` since the start or ``reset_peak_memory_stats``; 0 without CUDA.

    :param device: accepted (MLX has one GPU)."""
    return _mx.get_peak_memory() if _cuda_available() else 0


def memory_reserved(device=None) -> int:
    """Bytes MLX holds on the GPU, live and cached; 0 without CUDA.

    :param device: accepted (MLX has one GPU)."""
    return _mx.get_active_memory() + _mx.get_cache_memory() if _cuda_available() else 0


def reset_peak_memory_stats(device=None) -> None:
    """Start ``max_memory_allocated`` afresh.

    :param device: accepted (MLX has one GPU)."""
    _mx.reset_peak_memory()


_NO_STREAMS = "MLX schedules its own streams; lucid does not expose CUDA streams, events or graphs"
Stream = _unsupported("lucid.cuda.Stream", _NO_STREAMS)
Event = _unsupported("lucid.cuda.Event", _NO_STREAMS)
stream = _unsupported("lucid.cuda.stream", _NO_STREAMS)
current_stream = _unsupported("lucid.cuda.current_stream", _NO_STREAMS)
CUDAGraph = _unsupported("lucid.cuda.CUDAGraph", _NO_STREAMS)
graph = _unsupported("lucid.cuda.graph", _NO_STREAMS)
get_device_properties = _unsupported("lucid.cuda.get_device_properties", "MLX does not report CUDA device properties")
