"""Embedding: a lookup table of vectors indexed by integers."""
from __future__ import annotations

from ... import _creation
from ..._tensor import Tensor
from ..._grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class Embedding(Module):
    """Rows of ``weight`` (num_embeddings, embedding_dim) ~ N(0, 1) at the integer indices of the input:
    (*) -> (*, embedding_dim).

    ``padding_idx``: that row starts at zero and gets no gradient. ``max_norm``: rows that are looked up and whose
    ``norm_type``-norm exceeds it are renormalized in place first. ``scale_grad_by_freq`` divides each row's
    gradient by the index's count in the batch. ``sparse`` is accepted; gradients are dense.

    :param num_embeddings: the number of rows (the index range).
    :param embedding_dim: the size of each row.
    :param padding_idx: a row that starts at zero and gets no gradient.
    :param max_norm: renormalize looked-up rows whose norm exceeds it (in place).
    :param norm_type: the norm's order for ``max_norm``.
    :param scale_grad_by_freq: divide each row's gradient by its index's count in the batch.
    :param sparse: accepted; gradients are dense.
    :param _weight: an initial weight (num_embeddings, embedding_dim) instead of N(0, 1).
    :param _freeze: make the weight not require grad (``Embedding.from_pretrained(freeze=True)``).

    >>> import lucid
    >>> lucid.nn.Embedding(10, 3)(lucid.tensor([[1, 2], [3, 4]])).shape
    lucid.Size([2, 2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings"
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(_creation.empty(num_embeddings, embedding_dim, dtype=dtype, device=device),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                "Shape of weight does not match num_embeddings and embedding_dim"
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "Embedding":
        """An Embedding whose weight is ``embeddings`` (2-D; shared, not copied), frozen unless ``freeze=False``.
        The ``padding_idx`` row is kept as given (not zeroed)."""
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Sums, means or maxima (``mode``) of bags of rows of ``weight`` (num_embeddings, embedding_dim) ~ N(0, 1):
    ``forward(input, offsets=None, per_sample_weights=None)`` -> (bags, embedding_dim), bags being the rows of a 2-D
    input or the runs of a 1-D input starting at ``offsets`` (see ``F.embedding_bag``).

    :param num_embeddings: the number of rows (the index range).
    :param embedding_dim: the size of each row.
    :param max_norm: renormalize looked-up rows whose norm exceeds it (in place).
    :param norm_type: the norm's order for ``max_norm``.
    :param scale_grad_by_freq: divide each row's gradient by its index's count in the batch.
    :param mode: 'sum', 'mean' or 'max' of each bag.
    :param sparse: accepted; gradients are dense.
    :param _weight: an initial weight (num_embeddings, embedding_dim) instead of N(0, 1).
    :param include_last_offset: ``offsets`` has one more entry, the end of the last bag.
    :param padding_idx: a row that is left out of the bags (and gets no gradient).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(_creation.empty(num_embeddings, embedding_dim, dtype=dtype, device=device))
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                "Shape of weight does not match num_embeddings and embedding_dim"
            self.weight = Parameter(_weight)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset

    reset_parameters = Embedding.reset_parameters
    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def forward(self, input: Tensor, offsets: Tensor | None = None, per_sample_weights: Tensor | None = None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> "EmbeddingBag":
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
                  include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag


__all__ = ["Embedding", "EmbeddingBag"]
