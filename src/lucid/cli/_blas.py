"""A fast BLAS for the ``lucid`` command on Linux.

The ``mlx[cpu]`` wheel bundles the reference BLAS (matmuls 30-40x slower than OpenBLAS). MLX binds its BLAS
symbols when ``mlx.core`` loads, and ``lucid`` imports ``mlx.core`` before any of ``lucid.cli`` runs, so the
command cannot load OpenBLAS in-process in time. Instead, when Debian's OpenBLAS is installed
(``apt-get install libopenblas0-pthread``) and not yet in the process, the command re-executes itself once with
``LD_PRELOAD`` set to it. ``LUCID_OPENBLAS=0`` turns this off; in your own scripts, run
``LD_PRELOAD=/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0 python train.py``.
"""
from __future__ import annotations

import os
import platform
import re
import sys

_TRIED = "_LUCID_OPENBLAS_REEXEC"


def openblas_path() -> str | None:
    """Debian's OpenBLAS shared library, if installed."""
    if not sys.platform.startswith("linux"):
        return None
    libdir = f"/usr/lib/{platform.machine()}-linux-gnu"
    for path in (f"{libdir}/openblas-pthread/libopenblas.so.0", f"{libdir}/libopenblas.so.0"):
        if os.path.exists(path):
            return path
    return None


def _loaded_libraries() -> str:
    try:
        with open("/proc/self/maps") as f:
            return f.read()
    except OSError:
        return ""


def blas_in_use() -> str:
    """Which BLAS MLX's CPU matmuls call in this process, in words."""
    if sys.platform == "darwin":
        return "Accelerate (macOS CPU; on the GPU MLX uses its own Metal kernels)"
    match = re.search(r"(/\S*/libopenblas[^/\s]*\.so[.\d]*)", _loaded_libraries())  # not numpy's libscipy_openblas
    if match:
        return f"OpenBLAS ({match.group(1)})"
    return ("reference BLAS bundled with mlx[cpu] (slow matmuls: apt-get install libopenblas0-pthread, and the "
            "lucid command loads it)")


def reexec_with_openblas(argv: list[str]) -> None:
    """Replace this process by ``python -m lucid argv...`` with OpenBLAS preloaded, when that helps; else return."""
    path = openblas_path()
    if path is None or os.environ.get("LUCID_OPENBLAS") == "0" or os.environ.get(_TRIED):
        return
    if "libopenblas" in _loaded_libraries():
        return
    env = dict(os.environ)
    env[_TRIED] = "1"
    env["LD_PRELOAD"] = path + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, "-m", "lucid", *argv], env)
    except OSError:
        return  # carry on with the bundled BLAS
