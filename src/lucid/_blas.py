"""A fast BLAS for MLX's CPU kernels on Linux, loaded by ``import lucid`` itself.

The ``mlx[cpu]`` wheel links the reference BLAS it bundles (float32 matmuls at 1-3 GFLOP/s, 30-40x slower than an
optimized one). ``libmlx.so`` looks its BLAS symbols (``cblas_sgemm``, ...) up in the process's global scope before
its own dependencies, so a BLAS loaded with ``RTLD_GLOBAL`` before ``mlx.core`` wins. Python loads extensions with
``RTLD_NOW``: the symbols are bound when ``mlx.core`` is imported, which is why this must happen first (``lucid``'s
``__init__`` imports this module before anything that imports MLX).

What is loaded: ``LUCID_BLAS=/path/to/libcblas.so`` (any optimized CBLAS: MKL, BLIS, ...), else Debian's OpenBLAS
(``apt-get install libopenblas0-pthread``); ``LUCID_BLAS=reference`` keeps the bundled one. When ``mlx.core`` was
imported before ``lucid``, nothing can be done in-process: a warning says so once, with the fix. macOS needs none of
this (MLX uses Accelerate there).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import sys
import warnings

ENV = "LUCID_BLAS"
INSTALL_HINT = ("apt-get install libopenblas0-pthread (Debian/Ubuntu) and `import lucid` loads it, or "
                f"{ENV}=/path/to/an/optimized/libcblas.so")
loaded: str | None = None  # the library this module loaded, if any


def openblas_path() -> str | None:
    """Debian's OpenBLAS (the pthread build first), or any ``libopenblas`` the dynamic linker knows of."""
    libdir = f"/usr/lib/{platform.machine()}-linux-gnu"
    for path in (f"{libdir}/openblas-pthread/libopenblas.so.0", f"{libdir}/openblas-openmp/libopenblas.so.0",
                 f"{libdir}/libopenblas.so.0"):
        if os.path.exists(path):
            return path
    return ctypes.util.find_library("openblas")  # ldconfig's cache: a name such as "libopenblas.so.0"


def load() -> None:
    """Put a fast CBLAS in the global symbol scope, before MLX binds its BLAS calls (called by ``import lucid``)."""
    global loaded
    choice = os.environ.get(ENV, "")
    if not sys.platform.startswith("linux") or choice == "reference":
        return
    path = choice or openblas_path()
    if path is None:
        return  # show_config() / `lucid info` say how to get one
    if "mlx.core" in sys.modules:
        if not _fast(provider()):
            warnings.warn(f"mlx.core was imported before lucid, so MLX's CPU matmuls use the slow reference BLAS "
                          f"bundled with mlx[cpu] although {path} is installed: import lucid before mlx, or run with "
                          f"LD_PRELOAD={path} ({ENV}=reference silences this)", RuntimeWarning, stacklevel=3)
        return
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        loaded = path
    except OSError as e:
        warnings.warn(f"lucid could not load the BLAS {path} ({e}); MLX keeps its bundled reference BLAS",
                      RuntimeWarning, stacklevel=3)


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p), ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


def _file_of(fn) -> str | None:
    """The shared library that holds the function ``fn`` (a ctypes function), by ``dladdr``."""
    libc = ctypes.CDLL(None)
    try:
        dladdr = libc.dladdr
    except AttributeError:  # glibc < 2.34 keeps it in libdl
        dladdr = ctypes.CDLL(ctypes.util.find_library("dl")).dladdr
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    if not dladdr(ctypes.cast(fn, ctypes.c_void_p), ctypes.byref(info)) or not info.dli_fname:
        return None
    return os.path.realpath(info.dli_fname.decode())


def _libmlx() -> str | None:
    """The path of the loaded ``libmlx.so``, from the process's memory map."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if line.rstrip().endswith("/libmlx.so"):
                    return line.split(None, 5)[5].strip()
    except OSError:
        pass
    return None


def provider() -> str | None:
    """The file whose ``cblas_sgemm`` MLX's matmuls call in this process (Linux): the dynamic linker binds
    ``libmlx.so``'s undefined symbols to the global scope's definition (the program, ``LD_PRELOAD``, libraries loaded
    with ``RTLD_GLOBAL``) and, failing that, to the one among libmlx's own dependencies (the bundled BLAS)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return _file_of(ctypes.CDLL(None).cblas_sgemm)
    except AttributeError:  # not in the global scope
        pass
    mlx = _libmlx()
    if mlx is None:  # mlx.core not imported yet: it will find its bundled BLAS
        return None
    try:
        return _file_of(ctypes.CDLL(mlx).cblas_sgemm)
    except (OSError, AttributeError):
        return None


def _fast(path: str | None) -> bool:
    """Whether ``path`` is an optimized BLAS rather than the reference one bundled with mlx[cpu]."""
    return path is not None and "mlx_cpu.libs" not in path and not os.path.basename(path).startswith("libblas")


def describe() -> str:
    """Which BLAS MLX's CPU kernels use in this process, in words, with how to get a fast one when it is slow."""
    if sys.platform == "darwin":
        return "Accelerate (macOS; on the GPU MLX uses its own Metal kernels)"
    path = provider()
    if _fast(path):
        name = "OpenBLAS" if "openblas" in path.lower() else "optimized CBLAS"
        try:
            get_config = ctypes.CDLL(path).openblas_get_config
            get_config.restype = ctypes.c_char_p
            name = get_config().decode()  # "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64"
        except (OSError, AttributeError):
            pass
        return f"{name} ({path})"
    if os.environ.get(ENV) == "reference":
        return f"reference BLAS bundled with mlx[cpu], as {ENV}=reference asks (slow matmuls)"
    installed = openblas_path()
    if installed and loaded is None:
        return (f"reference BLAS bundled with mlx[cpu] (slow matmuls): {installed} is installed, but mlx.core was "
                f"imported before lucid; import lucid first, or run with LD_PRELOAD={installed}")
    return f"reference BLAS bundled with mlx[cpu] (slow matmuls; for a fast one: {INSTALL_HINT})"
