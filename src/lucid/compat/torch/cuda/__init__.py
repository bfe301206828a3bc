"""torch.cuda: ``lucid.cuda`` (the same functions: available only where MLX runs on CUDA), and ``torch.cuda.amp``,
PyTorch's deprecated spelling of ``torch.amp`` on ``"cuda"``, which stays PyTorch's face's own: without CUDA its
autocast and GradScaler warn and disable themselves, as PyTorch's do."""
from lucid.cuda import *  # noqa: F401,F403
from lucid.cuda import __all__ as _lucid_all

from . import amp  # noqa: F401

__all__ = [*_lucid_all, "amp"]
