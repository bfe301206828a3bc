"""``select`` and the in-place shape methods (``transpose_``, ``t_``, ``squeeze_``, ``unsqueeze_``, ``swapdims_``,
``swapaxes_``, ``resize_``, ``resize_as_``): the tensor keeps its identity and takes the new shape. Each is the out-of-place view op run through
``Tensor._inplace`` with the op that undoes it, so version counting, the leaf and inference-tensor checks and
recording follow the rules of every other in-place op; a view keeps writing through to its base and the views taken
before keep their shape (``lucid._views.shape_changed``)."""
from __future__ import annotations

import math

import mlx.core as mx

from .._dtype import check_new_shape
from .._tensor import Tensor
from ..autograd import grad_mode as gm
from ._core import attach, declare
from .shape import _size_arg, reshape, squeeze, t, transpose, unsqueeze, wrap_dim


@declare(method=True)
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


def _resize_(self, *sizes, memory_format=None) -> Tensor:
    """PyTorch's ``resize_``: the tensor takes the shape ``sizes`` and keeps its leading elements in flat order;
    elements beyond the old ones are zeros (PyTorch leaves them uninitialized). Not differentiable: a tensor that
    requires grad is refused, as in PyTorch (inside inference mode, which records nothing, it is allowed). With the
    number of elements unchanged it is a shape change like ``view_`` would be (a view stays one); otherwise the
    tensor gets new memory of its own, as ``out=`` resizing does."""
    shape = check_new_shape(_size_arg(sizes), self.dtype)
    if self._rg and not gm.state.inference:
        raise RuntimeError("cannot resize variables that require grad")
    old = self.shape
    if tuple(old) == shape:
        self._check_inplace(False)
        return self
    n, m = math.prod(shape), self.numel()
    if n == m:
        return self._inplace(lambda x: reshape(x, shape), inverse=lambda v: reshape(v, old))
    self._check_inplace(False)
    flat = self._st.data.reshape(-1)
    flat = flat[:n] if n < m else mx.concatenate([flat, mx.zeros((n - m,), flat.dtype)])
    return self._renew(flat.reshape(shape))


def _resize_as_(self, other, memory_format=None) -> Tensor:
    """``resize_(other.shape)``: this tensor takes ``other``'s shape in place."""
    return _resize_(self, other.shape)


for _name, _fn in (("resize_", _resize_), ("resize_as_", _resize_as_), ("transpose_", _transpose_), ("t_", _t_),
                   ("squeeze_", _squeeze_), ("unsqueeze_", _unsqueeze_), ("swapdims_", _transpose_),
                   ("swapaxes_", _transpose_)):
    attach(_name, _fn)
