"""``select`` and the in-place shape methods (``transpose_``, ``t_``, ``squeeze_``, ``unsqueeze_``, ``swapdims_``,
``swapaxes_``): the tensor keeps its identity and takes the new shape. Each is the out-of-place view op run through
``Tensor._inplace`` with the op that undoes it, so version counting, the leaf and inference-tensor checks and
recording follow the rules of every other in-place op; a view keeps writing through to its base and the views taken
before keep their shape (``lucid._views.shape_changed``)."""
from __future__ import annotations

from .._tensor import Tensor
from ._core import methods
from .shape import reshape, squeeze, t, transpose, unsqueeze, wrap_dim


def select(input, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along ``dim``, with that dim removed (a view): ``x.select(1, 0)`` is ``x[:, 0]``."""
    d = wrap_dim(dim, input.ndim)
    return input[(slice(None),) * d + (index,)]


def _transpose_(self, dim0: int, dim1: int) -> Tensor:
    """In-place ``transpose``: ``self`` takes the shape with ``dim0`` and ``dim1`` swapped."""
    return self._inplace(lambda x: transpose(x, dim0, dim1), inverse=lambda v: transpose(v, dim0, dim1))


def _t_(self) -> Tensor:
    """In-place ``t``: a matrix is transposed in place."""
    return self._inplace(t, inverse=t)


def _squeeze_(self, dim=None) -> Tensor:
    """In-place ``squeeze``: size-1 dimensions (or ``dim``) removed."""
    shape = self.shape
    return self._inplace(lambda x: squeeze(x, dim), inverse=lambda v: reshape(v, shape))


def _unsqueeze_(self, dim: int) -> Tensor:
    """In-place ``unsqueeze``: a size-1 dimension inserted at ``dim``."""
    d = wrap_dim(dim, self.ndim + 1)
    return self._inplace(lambda x: unsqueeze(x, d), inverse=lambda v: squeeze(v, d))


methods(select, transpose_=_transpose_, t_=_t_, squeeze_=_squeeze_, unsqueeze_=_unsqueeze_, swapdims_=_transpose_,
        swapaxes_=_transpose_)
