"""``lucid.show_config()``: what lucid runs on (the ``lucid info`` command prints the same lines)."""
from __future__ import annotations

import platform
import shutil
import sys

import mlx.core as mx

from . import _blas

__version__ = "0.1.0"  # lucid.__version__ (keep in step with pyproject.toml)


def config() -> dict:
    """lucid, MLX and Python versions, the default device and whether it has float64, the BLAS MLX's CPU kernels
    call, and whether ``mx.compile`` can fuse CPU kernels (it needs a C++ compiler on Linux)."""
    device = mx.default_device()
    return {
        "lucid": __version__,
        "mlx": mx.__version__,
        "python": f"{platform.python_version()} ({sys.executable})",
        "platform": platform.platform(),
        "device": f"{device} (gpu available: {mx.is_available(mx.gpu)})",
        "float64": "yes (CPU device)" if device == mx.cpu else "yes, on the CPU stream (MLX's GPUs have none)",
        "BLAS": _blas.describe(),
        "compile": "MLX fuses compiled CPU graphs (g++ found)" if shutil.which("g++") or sys.platform == "darwin"
        else "no g++ on PATH: lucid.compile works but MLX cannot fuse CPU kernels",
    }


def show_config(file=None) -> None:
    """Print what lucid runs on, one ``key  value`` line each: versions, device, float64, BLAS, compile.

    On Linux the BLAS line says whether MLX's matmuls use a fast BLAS (OpenBLAS, loaded by ``import lucid``) or
    the slow reference one bundled with ``mlx[cpu]``, and how to get a fast one."""
    for key, value in config().items():
        print(f"{key:<9}  {value}", file=file or sys.stdout)
