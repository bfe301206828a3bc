"""lucid's ops, one module per family. Each op is declared once with ``defop`` (see ``_core.py``)."""
from . import _core, activation, conv, decomp, elementwise, embedding_bag, fft, index, linalg, loss, nn_basic, norm, pool, reduce, sampling, scan, sets, shape, stats, tensor_api  # noqa: F401  (importing attaches the Tensor methods)
