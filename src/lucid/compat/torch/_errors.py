"""PyTorch's top-level exception types and ``torch.GradScaler`` (``torch.amp.GradScaler``)."""
from lucid.amp import GradScaler  # noqa: F401
from lucid.ops._core import OutOfMemoryError  # noqa: F401  (what lucid raises when MLX cannot allocate)


class AcceleratorError(RuntimeError):
    """An error reported by an accelerator's runtime (PyTorch's ``torch.AcceleratorError``)."""


class FatalError(Exception):
    """PyTorch's ``torch.FatalError``: an unrecoverable internal error."""
