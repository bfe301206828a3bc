"""The benchmark environment: a fast BLAS loaded before MLX, and a description of what ran.

Importing this module (every bench entry point does, before ``import mlx.core``) imports lucid first, which loads
Debian's OpenBLAS on Linux before MLX binds its BLAS calls (``lucid/_blas.py``: the ``mlx[cpu]`` wheel otherwise
uses its bundled reference BLAS, 30-40x slower matmuls). Install it with ``apt-get install libopenblas0-pthread``.
If MLX was imported earlier in the process (a test session), ``blas_in_use`` says so honestly.

It also sets ``OMP_WAIT_POLICY=PASSIVE`` (unless already set) before PyTorch can load: PyTorch's OpenMP threads
otherwise spin for a while after each op, and on a small machine they steal the cores from the MLX/OpenBLAS
threads of the implementation timed next (and OpenBLAS's spinning threads from PyTorch's): a 10x slowdown of the
PyTorch MLP step in one process with MLX, and noise in every other column.
"""
from __future__ import annotations

import datetime
import os
import platform
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import lucid  # noqa: E402  (first: it loads the fast BLAS before mlx.core)
import mlx.core as mx  # noqa: E402

blas_in_use = lucid._blas.describe

# ``--torch-device`` (run.py): where the PyTorch implementations run (``cuda`` on an NVIDIA machine, ``mps`` on a Mac)
torch_device = "cpu"


def on_torch_device(root, obj):
    """``obj`` (a module or tensor) moved to ``torch_device`` when ``root`` is torch; lucid's stay as they are."""
    return obj if root is lucid or torch_device == "cpu" else obj.to(torch_device)


def torch_sync(root) -> None:
    """Wait for PyTorch's queued GPU work (a CUDA step returns before its kernels end; ``.item()`` waits itself)."""
    if root is not lucid and torch_device.startswith("cuda"):
        root.cuda.synchronize()


def matmul_gflops(n: int = 512, repeats: int = 5) -> float:
    """float32 n x n matmul throughput: shows at a glance whether a real BLAS ran."""
    a = mx.random.normal((n, n))
    b = mx.random.normal((n, n))
    mx.eval(a, b, a @ b)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        mx.eval(a @ b)
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best / 1e9


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> str:
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
        return f", {kib / 2 ** 20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        return ""


def describe() -> dict:
    """What ran where: the lines every report starts with."""
    try:
        import torch
        torch_version = f"{torch.__version__} ({torch.get_num_threads()} threads), device {torch_device}"
    except ImportError:
        torch_version = "not installed"
    return {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "machine": f"{platform.system()} {platform.machine()}, {_cpu_model()}, {os.cpu_count()} CPUs{_memory_gib()}",
        "python": platform.python_version(),
        "mlx": f"{mx.__version__}, device {mx.default_device()}",
        "lucid": lucid.__version__,
        "torch": torch_version,
        "blas": f"{blas_in_use()}; float32 matmul 512x512: {matmul_gflops():.1f} GFLOP/s",
        "compiler": "g++ on PATH (mx.compile fuses on CPU)" if _on_path("g++")
                    else "no g++ on PATH: mx.compile cannot fuse on CPU",
    }


def _on_path(name: str) -> bool:
    import shutil
    return shutil.which(name) is not None
