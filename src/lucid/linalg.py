"""lucid.linalg: PyTorch's torch.linalg names. Declared in ``lucid.ops.decomp`` (and ``lucid.ops.linalg``)."""
from .ops.decomp import *  # noqa: F401,F403
