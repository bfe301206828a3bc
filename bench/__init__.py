"""lucid's benchmark suite: ``python -m bench`` (see ``bench/run.py``) and ``python bench/overhead.py``.

Importing the package loads Debian's OpenBLAS before MLX (``bench/env.py``), so every entry point measures with a
real BLAS on Linux.
"""
from . import env  # noqa: F401  (first: the BLAS must be loaded before mlx.core)
