"""Dropout layers: random zeroing in training mode (elements, or whole channels), the identity in eval mode."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module


class _DropoutNd(Module):
    _fn = None

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p) while training.

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    :param inplace: write the result into the input, as PyTorch's in-place ops do.

    >>> import lucid
    >>> drop = lucid.nn.Dropout(0.5).eval()
    >>> drop(lucid.ones(3))
    Tensor([1., 1., 1.])
    """
    _fn = staticmethod(F.dropout)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) with probability ``p`` while training.

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) with probability ``p`` while training.

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability ``p`` while training.

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Dropout for selu networks: dropped elements take selu's negative saturation value and an affine map keeps
    mean 0 and variance 1.

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels.

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    :param inplace: write the result into the input, as PyTorch's in-place ops do.
    """
    _fn = staticmethod(F.feature_alpha_dropout)


__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
