"""lucid's ops, one module per family. Each op is declared once with ``defop`` (see ``_core.py``)."""
from . import (  # noqa: F401  (importing attaches the Tensor methods)
    _core, activation, aten_forms, composites, conv, decomp, elementwise, embedding_bag, fft, histogram, index, linalg,
    loss, nn_basic, norm, numeric, pool, quantile, reduce, sampling, scan, scatter_reduce, sets, shape, shape_inplace,
    signal, stats, storage, strided, tensor_api, torch_forms)
