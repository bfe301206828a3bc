"""CosineSimilarity and PairwiseDistance: nn.functional's distances as layers."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module


class CosineSimilarity(Module):
    """The cosine similarity of ``x1`` and ``x2`` along ``dim``.

    :param dim: the dimension of the vectors.
    :param eps: a lower bound on the norms (no division by zero).
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The p-norm distance between the rows of ``x1`` and ``x2`` (``eps`` added to the difference).

    :param p: the norm's order.
    :param eps: added to the difference (no zero norm).
    :param keepdim: keep the reduced dimension.
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = ["CosineSimilarity", "PairwiseDistance"]
