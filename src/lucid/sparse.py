"""lucid.sparse: sparse COO tensors (PyTorch's ``torch.sparse_coo`` layout) built on gathers and segment sums.

MLX has no sparse array type, so a :class:`SparseTensor` is its own small class, not a Tensor subclass: it holds
``indices`` (an int64 Tensor of shape ``(sparse_dim, nnz)``), ``values`` (a Tensor of shape ``(nnz, *dense_dims)``)
and the ``size``. Every operation on it is made of lucid's declared ops (``index_select``, ``index_add``, products
and sums), so gradients reach the dense operands and ``values`` through the ordinary autograd graph: a values
Tensor that requires grad receives a dense gradient of shape ``(nnz, ...)`` (PyTorch would give a leaf sparse
tensor a sparse ``.grad``). Indices are checked against ``size`` (lucid's index checks) before MLX sees them, so an
index out of range raises PyTorch's ``check_invariants`` error instead of reading outside an array.

Data-dependent shapes make these evaluate their inputs, as in PyTorch: ``coalesce()``, ``Tensor.to_sparse()``,
``sparse_coo_tensor`` without ``size``, ``check_invariants=True`` and ``sum`` over some of the sparse dims.
"""
from __future__ import annotations

import math

import mlx.core as mx
import numpy as np

from . import _tensor, _threads
from ._checks import checked_index, is_known, mark_known
from ._creation import tensor, zeros
from ._surface import attach
from ._tensor import Size, Tensor, _wrap
from .ops.index import index_add, index_select
from .ops.sets import unique
from .ops.shape import cat, stack

__all__ = ["layout", "strided", "sparse_coo", "SparseTensor", "sparse_coo_tensor", "mm", "spmm", "sum",
           "check_sparse_tensor_invariants"]


class layout:
    """A tensor's memory layout: ``lucid.strided`` (every Tensor) or ``lucid.sparse_coo`` (a SparseTensor)."""

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):  # the module-level singleton when unpickled
        return self._name


strided = layout("strided")
sparse_coo = layout("sparse_coo")

_check_invariants = [False]  # PyTorch's default: construction does not read the indices


class check_sparse_tensor_invariants:
    """Context manager (and ``enable()``/``disable()``/``is_enabled()``) making ``sparse_coo_tensor`` check its
    indices against the size by default."""

    def __init__(self, enable: bool = True):
        self.state = enable

    @staticmethod
    def is_enabled() -> bool:
        return _check_invariants[0]

    @staticmethod
    def enable() -> None:
        _check_invariants[0] = True

    @staticmethod
    def disable() -> None:
        _check_invariants[0] = False

    def __enter__(self):
        self.saved = _check_invariants[0]
        _check_invariants[0] = self.state

    def __exit__(self, *exc):
        _check_invariants[0] = self.saved


def _index_error(dim: int, size: int):
    """PyTorch's invariant error for a bad index ``bad`` along sparse dim ``dim`` (of ``size``)."""
    def error(bad: int) -> RuntimeError:
        if bad < 0:
            return RuntimeError(f"found negative index {bad} for dim {dim}")
        return RuntimeError(f"size is inconsistent with indices: for dim {dim}, size is {size} but found index {bad}")
    return error


class SparseTensor:
    """A sparse COO tensor: ``values[k]`` sits at ``indices[:, k]``; repeated indices add up (until ``coalesce``).
    Made by :func:`sparse_coo_tensor` or ``Tensor.to_sparse()``."""

    layout = sparse_coo
    is_sparse = True

    def __init__(self, indices: Tensor, values: Tensor, size: tuple, coalesced: bool):
        self._idx, self._vals, self._size, self._coalesced = indices, values, tuple(size), coalesced
        self._rows = None  # the indices checked against the size, one array per sparse dim (made once)

    # ------------------------------------------------------------------------------------------- the description
    @property
    def shape(self):
        return Size(self._size)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self._size[dim]

    def dim(self) -> int:
        return len(self._size)

    ndim = property(dim)

    @property
    def dtype(self):
        return self._vals.dtype

    @property
    def device(self):
        return self._vals.device

    @property
    def requires_grad(self) -> bool:
        return self._vals.requires_grad

    def sparse_dim(self) -> int:
        return self._idx.shape[0]

    def dense_dim(self) -> int:
        return len(self._size) - self.sparse_dim()

    def _nnz(self) -> int:
        return self._idx.shape[1]

    def is_coalesced(self) -> bool:
        return self._coalesced

    def _indices(self) -> Tensor:
        return self._idx

    def _values(self) -> Tensor:
        return self._vals

    def indices(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._idx

    def values(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._vals

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={self._idx!r},\n       values={self._vals!r},\n       size={self._size}, "
                f"nnz={self._nnz()}, layout={sparse_coo!r})")

    def __len__(self) -> int:
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    # ------------------------------------------------------------------------------------------------ the index
    def _checked(self) -> list:
        """The indices, one array per sparse dim, checked against the size (an index outside it is PyTorch's
        invariant error, raised now or at the next evaluation); indices already computed are checked once."""
        if self._rows is not None:
            return self._rows
        idx = self._idx._storage.data
        known = is_known(idx)
        rows = [checked_index(mark_known(idx[d]) if known else idx[d], n, _index_error(d, n), "sparse_coo_tensor")
                for d, n in enumerate(self._size[:self.sparse_dim()])]
        if known:  # checked now (else each use registers its own deferred check, which raises once)
            self._rows = rows
        return rows

    def _linear(self) -> Tensor:
        """Each entry's position in the sparse dims read row-major."""
        lin = mx.zeros((self._nnz(),), mx.int64)
        for row, n in zip(self._checked(), self._size):
            lin = lin * n + row
        return _wrap(lin)

    def _flat_shape(self) -> tuple:
        return (math.prod(self._size[:self.sparse_dim()]),) + self._size[self.sparse_dim():]

    # ---------------------------------------------------------------------------------------------- conversions
    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        """The dense Tensor: each value added at its index (repeated indices add up)."""
        vals = self._vals if dtype is None else self._vals.to(dtype)
        flat = zeros(*self._flat_shape(), dtype=vals.dtype)
        return index_add(flat, 0, self._linear(), vals).reshape(self._size)

    def to_sparse(self, sparse_dim: int | None = None) -> "SparseTensor":
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(f"to_sparse: conversion from Sparse to Sparse with sparse_dim argument != "
                               f"self.sparse_dim() is not supported")
        return self

    def coalesce(self) -> "SparseTensor":
        """The same tensor with its indices sorted and each repeated index's values summed into one entry.
        The number of entries depends on the indices' values, so this evaluates them."""
        if self._coalesced:
            return self
        uniq, inverse = unique(self._linear(), sorted=True, return_inverse=True)
        vals = index_add(zeros(uniq.shape[0], *self._size[self.sparse_dim():], dtype=self.dtype), 0, inverse,
                         self._vals)
        rows, rest = [], uniq._storage.data
        for n in reversed(self._size[:self.sparse_dim()]):  # the linear position read back, last dim first
            rows.append(rest % n)
            rest = rest // n
        idx = mx.stack(rows[::-1]) if rows else mx.zeros((0, uniq.shape[0]), mx.int64)
        return SparseTensor(_wrap(idx), vals, self._size, True)

    def _with_values(self, values: Tensor) -> "SparseTensor":
        return SparseTensor(self._idx, values, self._size, self._coalesced)

    def to(self, *args, **kwargs) -> "SparseTensor":
        """The values moved or cast as ``Tensor.to`` does (the indices stay int64)."""
        return self._with_values(self._vals.to(*args, **kwargs))

    def cpu(self) -> "SparseTensor":
        return self._with_values(self._vals.cpu())

    def float(self) -> "SparseTensor":
        return self._with_values(self._vals.float())

    def double(self) -> "SparseTensor":
        return self._with_values(self._vals.double())

    def clone(self) -> "SparseTensor":
        return self._with_values(self._vals.clone())

    def __getstate__(self) -> dict:  # the checked index arrays are remade after unpickling
        return {**self.__dict__, "_rows": None}

    def detach(self) -> "SparseTensor":
        return self._with_values(self._vals.detach())

    def requires_grad_(self, requires_grad: bool = True) -> "SparseTensor":
        self._vals.requires_grad_(requires_grad)
        return self

    def zero_(self) -> "SparseTensor":
        """In place: no entries left (PyTorch's sparse ``zero_``; how ``zero_grad(set_to_none=False)`` clears a sparse
        gradient)."""
        self._idx = _wrap(mx.zeros((self.sparse_dim(), 0), mx.int64))
        self._vals = self._vals.detach()[:0]
        self._coalesced, self._rows = True, None
        return self

    # ----------------------------------------------------------------------------------------------- arithmetic
    def __matmul__(self, other) -> Tensor:
        if isinstance(other, Tensor) and other.ndim == 1:  # a matrix-vector product: the vector as one column
            return mm(self, other.reshape(-1, 1)).reshape(-1)
        return mm(self, other)

    def __rmatmul__(self, other) -> Tensor:
        """``dense @ sparse``: ``(sparse.t() @ dense.t()).t()`` (a vector is a row)."""
        if isinstance(other, Tensor) and other.ndim == 1:
            return mm(self.t(), other.reshape(-1, 1)).reshape(-1)
        _matrix_check("mm", other)
        return mm(self.t(), other.t()).t()

    def t(self) -> "SparseTensor":
        """The transpose of a sparse matrix (its two index rows swapped; no longer sorted, so not coalesced)."""
        if self.sparse_dim() != 2 or self.dense_dim():
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but self is "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense")
        return SparseTensor(stack([self._idx[1], self._idx[0]]), self._vals, self._size[::-1], False)

    def mm(self, mat2) -> Tensor:
        return mm(self, mat2)

    matmul = __matmul__

    def __add__(self, other):
        if isinstance(other, SparseTensor):
            return _add_sparse(self, other)
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")

    add = __add__

    def __radd__(self, other) -> Tensor:
        return _add_to_dense(other, self)

    def __neg__(self) -> "SparseTensor":
        return self._with_values(-self._vals)

    def __mul__(self, other) -> "SparseTensor":
        if isinstance(other, (SparseTensor, Tensor)) and not (isinstance(other, Tensor) and other.ndim == 0):
            raise TypeError("lucid.sparse multiplies a sparse tensor only by a scalar (a number or a 0-d Tensor)")
        return self._with_values(self._vals * other)

    __rmul__ = __mul__

    def sum(self, dim=None, keepdim: bool = False, dtype=None):
        if keepdim:
            raise RuntimeError("sum of a sparse tensor does not support keepdim=True")
        return sum(self, dim, dtype=dtype)

    def __lucid_binary__(self, name: str, a, b):
        """Called by a declared binary op ``name`` on ``(a, b)`` when MLX cannot read this operand (``dense + s``):
        the result of ``dense + sparse`` and ``dense - sparse`` (dense), ``add(sparse, x)`` as ``sparse + x``, and
        a TypeError naming what is supported for the other ops."""
        if name == "add" and a is self:
            return self + b
        if name in ("add", "sub") and b is self:
            return _add_to_dense(a, self if name == "add" else -self)
        raise TypeError(f"{name}: lucid.sparse supports a dense Tensor with a sparse one only in dense + sparse, "
                        f"dense - sparse and the products (lucid.sparse.mm); convert it with to_dense()")


def _add_to_dense(dense, sparse: SparseTensor) -> Tensor:
    """``dense + sparse``: a dense Tensor, each value added at its index (PyTorch requires equal sizes)."""
    if not isinstance(dense, Tensor):
        raise TypeError(f"unsupported operand type(s) for +: '{type(dense).__name__}' and 'SparseTensor'")
    if tuple(dense.shape) != sparse._size:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(dense.shape)} while other has size {list(sparse._size)} (FYI: dense-sparse "
                           f"addition does not currently support broadcasting)")
    vals = sparse._vals.to(dense.dtype) if sparse.dtype != dense.dtype else sparse._vals
    return index_add(dense.reshape(sparse._flat_shape()), 0, sparse._linear(), vals).reshape(sparse._size)


def _add_sparse(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    if a._size != b._size:
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {list(a._size)} != "
                           f"{list(b._size)}")
    if a.sparse_dim() != b.sparse_dim():
        raise RuntimeError(f"add: expected 'self' and 'other' to have same sparse dimensions, but got "
                           f"{a.sparse_dim()} and {b.sparse_dim()}")
    return SparseTensor(cat([a._idx, b._idx], 1), cat([a._vals, b._vals]), a._size, False).coalesce()


# ---------------------------------------------------------------------------------------------------- creation
def _host_check(indices: Tensor, size: tuple) -> None:
    """``check_invariants``: every index read now, PyTorch's error for the first bad one (dim by dim)."""
    host = _threads.to_numpy(indices._storage.data, copy=None)
    for d in range(host.shape[0]):
        row = host[d]
        if row.size and row.min() < 0:
            raise _index_error(d, size[d])(int(row.min()))
        if row.size and row.max() >= size[d]:
            raise _index_error(d, size[d])(int(row.max()))


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory: bool = False,
                      requires_grad: bool = False, check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> SparseTensor:
    """A sparse COO tensor with ``values[k]`` at ``indices[:, k]`` (indices: ``(sparse_dim, nnz)`` integers;
    values: ``(nnz, *dense_dims)``). Without ``size`` the sparse sizes are the largest indices plus one.
    ``requires_grad=True`` makes ``values`` (detached from its graph) a leaf that receives the gradient."""
    idx = indices if isinstance(indices, Tensor) else tensor(indices)
    vals = values if isinstance(values, Tensor) else tensor(values)
    if dtype is not None:
        vals = vals.to(dtype)
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    idx = idx.detach().to(mx.int64)  # PyTorch converts any numeric indices to int64
    sparse_dim, nnz = idx.shape
    if vals.ndim == 0 or vals.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
                           f"values: {vals.shape[0] if vals.ndim else 1}")
    dense = tuple(vals.shape[1:])
    if size is None:  # the smallest size holding every index
        host = _threads.to_numpy(idx._storage.data, copy=None)
        if host.size and host.min() < 0:
            d = int(host.min(axis=1).argmin())
            raise _index_error(d, 0)(int(host[d].min()))
        size = tuple(int(host[d].max()) + 1 if nnz else 0 for d in range(sparse_dim)) + dense
    else:
        size = tuple(int(s) for s in size)
        if len(size) != sparse_dim + len(dense):
            raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim ({len(dense)}), "
                               f"but got {len(size)}")
        if size[sparse_dim:] != dense:
            raise RuntimeError(f"values has incorrect size, expected {[nnz, *size[sparse_dim:]]}, got "
                               f"{list(vals.shape)}")
        if any(s < 0 for s in size):
            raise RuntimeError(f"size {list(size)} has a negative dimension")
        if check_invariants or (check_invariants is None and _check_invariants[0]):
            _host_check(idx, size)
    if requires_grad:
        vals = vals.detach().requires_grad_()
    return SparseTensor(idx, vals, size, bool(is_coalesced))


def _to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout=None, blocksize=None, dense_dim=None):
    """``Tensor.to_sparse()``: the nonzero entries (or, with ``sparse_dim``, the slices holding one) as a coalesced
    sparse COO tensor; the values stay connected to ``self`` for autograd. Evaluates ``self`` (the nonzeros' count
    is its output's size)."""
    if layout is not None and layout is not sparse_coo:
        raise RuntimeError(f"to_sparse: layout {layout!r} is not supported by lucid (only torch.sparse_coo)")
    sd = self.ndim if sparse_dim is None else sparse_dim
    if not 0 <= sd <= self.ndim:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{self.ndim}] range, but {sd} is given")
    if sd == 0:
        if self.ndim:
            raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0")
        return SparseTensor(_wrap(mx.zeros((0, 1), mx.int64)), self.reshape(1), (), True)  # a 0-d tensor: one value
    nonzero = self._storage.data != 0
    if sd < self.ndim:  # a slice is stored when any of its entries is nonzero
        nonzero = mx.any(nonzero, axis=tuple(range(sd, self.ndim)))
    where = np.stack(np.nonzero(_threads.to_numpy(nonzero, copy=None))).astype(np.int64)  # row-major: coalesced
    idx = _wrap(mx.array(where))
    vals = self[tuple(idx[d] for d in range(sd))]
    return SparseTensor(idx, vals, tuple(self.shape), True)


# ---------------------------------------------------------------------------------------------------- products
def _matrix_check(name: str, t) -> None:
    if t.ndim != 2:
        raise RuntimeError(f"{name}: matrices expected, got {t.ndim}D tensor")


def mm(mat1, mat2) -> Tensor:
    """``mat1 @ mat2`` for a sparse ``mat1`` (2 sparse dims) and a dense ``mat2``: each entry's value times its
    column's row of ``mat2``, summed into its row (a gather and a segment sum). Gradients reach ``mat2`` and the
    values. Two sparse operands give a sparse result (made through the dense product); two dense ones ``lucid.mm``."""
    if not isinstance(mat1, SparseTensor):
        if isinstance(mat2, SparseTensor):
            return mat2.__rmatmul__(mat1)
        from .ops.linalg import mm as dense_mm
        return dense_mm(mat1, mat2)
    if isinstance(mat2, SparseTensor):  # sparse x sparse is sparse, as in PyTorch
        return mm(mat1, mat2.to_dense()).to_sparse()
    _matrix_check("addmm", mat1)
    _matrix_check("addmm", mat2)
    if mat1.sparse_dim() != 2:
        raise RuntimeError(f"addmm: expected first two dims to be sparse (indices has size 2 at first dim), but "
                           f"got {mat1.sparse_dim()} sparse dims")
    if mat2.shape[0] != mat1._size[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {mat1._size[1]}, got {mat2.shape[0]}")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: {mat1.dtype} != {mat2.dtype}")
    m = mat1._size[0]
    rows, cols = (_wrap(r) for r in mat1._checked())
    terms = mat1._vals.reshape(-1, 1) * index_select(mat2, 0, cols)
    return index_add(zeros(m, mat2.shape[1], dtype=terms.dtype), 0, rows, terms)


spmm = mm


def sum(input, dim=None, dtype=None):  # noqa: A001
    """Sum of a sparse tensor's entries: over everything (a 0-d Tensor), or over ``dim`` (an int or a tuple): a
    dense Tensor when every sparse dim is summed, else a coalesced SparseTensor of the dims left."""
    if not isinstance(input, SparseTensor):
        return input.sum(dim, dtype=dtype) if dim is not None else input.sum(dtype=dtype)
    vals = input._vals if dtype is None else input._vals.to(dtype)
    if dim is None:
        return vals.sum()
    nd, sd = input.dim(), input.sparse_dim()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    wrapped = []
    for d in dims:
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
        wrapped.append(d % nd)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dim {wrapped[0]} appears multiple times in the list of dims")
    dense_axes = tuple(d - sd + 1 for d in wrapped if d >= sd)
    if dense_axes:
        vals = vals.sum(dense_axes)
    keep = [d for d in range(sd) if d not in wrapped]
    if not keep:
        return vals.sum(0)
    size = tuple(input._size[d] for d in keep) + tuple(input._size[d] for d in range(sd, nd) if d not in wrapped)
    if len(keep) == sd:
        return SparseTensor(input._idx, vals, size, input._coalesced)
    idx = stack([input._idx[d] for d in keep])
    return SparseTensor(idx, vals, size, False).coalesce()


def _to_sparse_coo(self: Tensor) -> SparseTensor:
    """``Tensor.to_sparse_coo()``: ``to_sparse()`` (every dim sparse)."""
    return _to_sparse(self)


def _dense_to_dense(self: Tensor, dtype=None, *, masked_grad=None) -> Tensor:
    """``Tensor.to_dense()``: a strided Tensor is already dense (itself, or cast to ``dtype``)."""
    return self if dtype is None else self.to(dtype)


attach("to_sparse", _to_sparse)
attach("to_sparse_coo", _to_sparse_coo)
attach("to_dense", _dense_to_dense)
attach("is_sparse", False)
_tensor.sparse_grad_types = (SparseTensor,)  # a dense tensor's .grad may be sparse (lucid._tensor's hook)
attach("layout", strided)
