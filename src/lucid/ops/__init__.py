"""lucid's ops, one module per family. Each op is declared once with ``defop`` (see ``_core.py``)."""
from . import _core, elementwise, index, linalg, reduce, shape  # noqa: F401  (importing attaches the Tensor methods)
