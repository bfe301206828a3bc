"""torch._VF: the namespace PyTorch's own Python code calls ATen's functions through (``torch._VF.lstm``). Its
public functions are torch's (``torch._VF.X`` is ``torch.X``); it adds ``_add_relu``, the fused add-and-relu that
PyTorch's graph passes emit."""
import sys

import lucid


def _add_relu(input, other, alpha=1):
    """``relu(input + alpha * other)``; ``other`` a tensor or a number, broadcast as ``add``'s. Differentiable
    (PyTorch's has no derivative)."""
    return lucid.relu(lucid.add(input, other, alpha=alpha))


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(f"module 'torch._VF' has no attribute '{name}'")
    return getattr(sys.modules["lucid.compat.torch"], name)
