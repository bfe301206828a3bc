"""Storages, as PyTorch exposes them, on lucid's memory model: ``Tensor.untyped_storage()``, ``Tensor.storage()``
(``UntypedStorage``, ``TypedStorage``), ``Tensor.data_ptr()``, ``Tensor.storage_offset()``, ``Tensor.is_shared()``,
``Tensor.set_()`` and ``lucid.is_storage``.

**What a storage is here.** A lucid tensor's memory is a storage box holding one MLX array (``lucid._views``). A
tensor that is no view owns its box, and ``detach()``, ``.data``, ``Parameter(t)``, a module's ``state_dict()``
values and ``set_(t)`` share it: writes through any of them are seen by all. A view (``x[1]``, ``x.t()``,
``x.view(-1)``, ``x.diagonal()``, ``as_strided``) reads and writes its root's box, the tensor it was (ultimately)
taken of. That box is the tensor's storage: its elements are the root's values in row-major order (lucid lays
every tensor out contiguously), so a view's storage offset is the root position of the view's first element,
found when asked by taking the same view of the root's positions (an ``arange``). An empty view reports offset 0.

**Addresses.** MLX gives no stable address to an array that in-place writes replace, so each storage gets a
made-up one the first time it is asked for, from a counter that keeps the address ranges of different storages
apart (an empty storage's address is 0, as PyTorch's is). ``data_ptr()`` is that address plus the storage offset
times the element size: two tensors' ``data_ptr()`` are equal exactly when they share a storage and start at the
same element, which is what code comparing them checks.

**What lucid does not model.** A storage cannot grow (``set_`` past its end raises PyTorch's out-of-bounds error
where PyTorch would enlarge the storage); it is never in shared memory (``is_shared()`` is False, and there is no
``share_memory_``: lucid has no multiprocessing that could share it); its bytes are not reinterpreted as another
dtype (``set_`` of an ``UntypedStorage`` of other elements raises).

**set_.** The tensor becomes an alias of the place it is given (as ``detach()`` of a view is one): it reads and
writes that memory, has no view history (``_base`` is None) and keeps its own version counter, bumped by ``set_``
as PyTorch bumps it. A write through it also bumps the counter of the storage it writes into, so tensors saved for
backward from that storage notice the write (PyTorch would compute with the new values silently).
"""
from __future__ import annotations

__all__ = ["UntypedStorage", "TypedStorage", "is_storage"]

import itertools
import threading
import warnings

import mlx.core as mx

from .. import _grad_mode as gm
from .. import _creation, _legacy, _threads, _views
from .._surface import attach
from .._tensor import Size, Tensor, _wrap
from ._core import defop
from .strided import as_strided


# ---------------------------------------------------------------------------------------------------- addresses
_PAGE = 4096
_next_address = itertools.count(1 << 40, _PAGE)  # the first address handed out; the counter moves in pages
_address_lock = threading.Lock()


def _address(box) -> int:
    """The made-up address of a storage box (its first byte): given once, kept while the box lives. Each box gets
    its byte count rounded up to pages, plus a page, so that no offset into one box reaches another's address."""
    try:
        return box.address
    except AttributeError:
        pass
    with _address_lock:
        try:
            return box.address
        except AttributeError:
            address = next(_next_address)
            for _ in range(-(-box.data.nbytes // _PAGE)):
                next(_next_address)
            box.address = address
    return address


def _root_box(t: Tensor):
    """The storage box ``t`` reads and writes: its root's for a view, its own otherwise."""
    info = _views.info_of(t)
    return t._storage if info is None else info.root


def _storage_offset(self) -> int:
    """The position of this tensor's first element in its storage, in elements (0 for a tensor that is no view)."""
    info = _views.info_of(self)
    if info is None or self.numel() == 0:
        return 0
    root = info.root.data
    with gm.no_grad():
        positions = _views.derive(mx.arange(root.size, dtype=mx.int64).reshape(root.shape), info.steps, _wrap)
    return int(_threads.to_numpy(positions._storage.data.reshape(-1)[:1])[0])


def _data_ptr(self) -> int:
    """The address of this tensor's first element: equal for two tensors exactly when they share a storage and
    start at the same element (addresses are made up: see ``lucid.ops.storage``); 0 for an empty storage."""
    box = _root_box(self)
    if box.data.nbytes == 0:
        return 0
    return _address(box) + _storage_offset(self) * box.data.itemsize


# ---------------------------------------------------------------------------------------------------- storages
class UntypedStorage:
    """The bytes of a tensor's storage (``Tensor.untyped_storage()``), or ``size`` new zero bytes. Two of them
    compare equal exactly when they are the same storage, as PyTorch's (which hands out one object per storage)
    do.

    :param size: the number of bytes of a new storage.
    :param device: accepted for PyTorch's signature (lucid's default device).
    """

    __slots__ = ("_box", "device")

    def __init__(self, size: int = 0, *, device=None):
        t = _creation.zeros(size, dtype=mx.uint8)
        self._box, self.device = t._storage, t.device

    @classmethod
    def _of(cls, box, device) -> "UntypedStorage":
        s = object.__new__(cls)
        s._box, s.device = box, device
        return s

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and other._box is self._box

    def __hash__(self):
        return id(self._box)

    def data_ptr(self) -> int:
        """The address of the first byte (0 for an empty storage)."""
        return 0 if self.nbytes() == 0 else _address(self._box)

    def nbytes(self) -> int:
        return self._box.data.nbytes

    def size(self) -> int:
        """The size in bytes."""
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    def is_shared(self) -> bool:
        """False: no lucid storage lives in memory shared between processes."""
        return False

    def tolist(self) -> list:
        """The bytes, as ints."""
        return _threads.to_numpy(self._box.data).reshape(-1).view("uint8").tolist()

    def __getitem__(self, i: int) -> int:
        return _item(self.tolist(), i, self.nbytes())

    def __repr__(self) -> str:
        return _show(self.tolist(), f"{_face()}UntypedStorage(device={self.device}) of size {self.nbytes()}")


class TypedStorage:
    """A tensor's storage read as elements of its dtype (``Tensor.storage()``), or a new one: ``size`` zeros, or the
    values of a sequence. Deprecated in PyTorch, with its warning, in favour of ``UntypedStorage``.

    :param data: the number of elements of a new storage, or a sequence of its values.
    :param dtype: the element type (default: the default dtype).
    :param device: accepted for PyTorch's signature (lucid's default device).
    """

    __slots__ = ("_untyped_storage", "dtype")

    def __init__(self, data=0, *, dtype=None, device=None):
        _warn_typed()
        t = _creation.zeros(data, dtype=dtype) if isinstance(data, int) else _creation.tensor(data, dtype=dtype)
        self._untyped_storage, self.dtype = UntypedStorage._of(t._storage, t.device), t.dtype

    @classmethod
    def _of(cls, untyped: UntypedStorage, dtype) -> "TypedStorage":
        s = object.__new__(cls)
        s._untyped_storage, s.dtype = untyped, dtype
        return s

    @property
    def device(self):
        return self._untyped_storage.device

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def element_size(self) -> int:
        return self._untyped_storage._box.data.itemsize

    def size(self) -> int:
        """The size in elements."""
        return self.nbytes() // self.element_size()

    def __len__(self) -> int:
        return self.size()

    def is_shared(self) -> bool:
        return False

    def tolist(self) -> list:
        return _threads.to_numpy(self._untyped_storage._box.data).reshape(-1).tolist()

    def __getitem__(self, i: int):
        return _item(self.tolist(), i, self.size())

    def __repr__(self) -> str:
        return _show(self.tolist(), f"{_face()}TypedStorage(dtype={self.dtype}, device={self.device}) of size "
                                    f"{self.size()}")


def _item(values: list, i: int, n: int):
    if not -n <= i < n:
        raise IndexError(f"index {i} out of range for storage of size {n}")
    return values[i]


def _face() -> str:
    """Where the storage classes live under the name the program uses (``torch.storage.`` under ``lucid run``)."""
    return "torch.storage." if Size.face == "torch" else "lucid."


def _show(values: list, what: str) -> str:
    return "".join(f" {v}\n" for v in values) + f"[{what}]"


def is_storage(obj) -> bool:
    """True if ``obj`` is a storage (``UntypedStorage`` or ``TypedStorage``)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


_typed_warned = [False]


def _warn_typed() -> None:
    """PyTorch's deprecation warning for TypedStorage, once per process as PyTorch gives it."""
    if not _typed_warned[0]:
        _typed_warned[0] = True
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                      "only storage class. This should only matter to you if you are using storages directly.  To "
                      "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=3)


def _untyped_storage(self) -> UntypedStorage:
    """This tensor's storage as bytes: the root's for a view (see ``lucid.ops.storage``)."""
    return UntypedStorage._of(_root_box(self), self.device)


def _storage(self) -> TypedStorage:
    """This tensor's storage as elements of its dtype (deprecated in PyTorch: ``untyped_storage()``)."""
    _warn_typed()
    return TypedStorage._of(_untyped_storage(self), self.dtype)


# ---------------------------------------------------------------------------------------------------- set_
# C++'s names of the element types, as PyTorch's set_ errors quote them
_CPP_NAMES = {mx.float64: "double", mx.float32: "float", mx.float16: "c10::Half", mx.bfloat16: "c10::BFloat16",
              mx.int64: "long int", mx.int32: "int", mx.int16: "short int", mx.int8: "signed char",
              mx.uint8: "unsigned char", mx.uint16: "short unsigned int", mx.uint32: "unsigned int",
              mx.uint64: "long unsigned int", mx.bool_: "bool", mx.complex64: "c10::complex<float>"}


def _no_derivative(*_):
    raise RuntimeError("derivative for set_ is not implemented")


# the grad_fn of a tensor set_ gives a value that requires grad: PyTorch's NotImplemented node (backward raises)
_set_node = defop("set_", lambda old, source, value: value, vjp=(_no_derivative, _no_derivative), save=None,
                  node="NotImplemented")


def _contiguous(size) -> tuple:
    stride, n = [], 1
    for s in reversed(size):
        stride.append(n)
        n *= max(s, 1)
    return tuple(reversed(stride))


def _on_box(box) -> Tensor:
    """A tensor that is no view, sharing the root box ``box`` (as ``detach()`` of its owner would)."""
    t = _wrap(box.data)
    t._storage = box
    return t


def _target(self, source, storage_offset, size, stride) -> Tensor:
    """A tensor without history on the memory ``set_``'s arguments name (sharing it), after PyTorch's checks."""
    if source is None:
        return _wrap(mx.zeros((0,), self.dtype))
    if isinstance(source, Tensor):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_CPP_NAMES.get(source.dtype, source.dtype)} to a "
                               f"tensor of type {_CPP_NAMES.get(self.dtype, self.dtype)}")
        if size is None:
            return source.detach()
        box = _root_box(source)
    elif isinstance(source, (TypedStorage, UntypedStorage)):
        box = source._box if isinstance(source, UntypedStorage) else source._untyped_storage._box
        if box.data.dtype != self.dtype:
            if isinstance(source, TypedStorage):
                raise RuntimeError(f"Expected a Storage of type {_CPP_NAMES.get(self.dtype, self.dtype)} or an "
                                   f"UntypedStorage, but got type {_legacy.type_name(box.data.dtype)[6:-6]} for "
                                   "argument 1 'storage'")
            raise RuntimeError(f"set_: lucid does not read a storage of {box.data.dtype} elements as "
                               f"{self.dtype} (its bytes keep the dtype they were made with)")
        if size is None:
            size = (box.data.size,)
    else:
        raise TypeError(f"set_() received an invalid combination of arguments - got ({type(source).__name__}), but "
                        "expected one of: (), (Storage source), (Storage source, int storage_offset, tuple of ints "
                        "size, tuple of ints stride = None), (Tensor source), (Tensor source, int storage_offset, "
                        "tuple of ints size, tuple of ints stride = None)")
    size = tuple(size)
    stride = _contiguous(size) if stride is None else tuple(stride)
    if len(stride) != len(size):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
    root = _on_box(box)
    if size == tuple(box.data.shape) and stride == _contiguous(size) and storage_offset == 0:
        return root  # the whole storage in its own layout: no view
    with gm.no_grad():
        return as_strided(root, size, stride, storage_offset)


def _set_(self, source=None, storage_offset: int = 0, size=None, stride=None) -> Tensor:
    """Make this tensor use the memory of ``source`` (a Tensor: its storage, size and offset, or with
    ``storage_offset``/``size``/``stride`` another place in its storage; a storage: all of it as a 1-d tensor, or
    the place given) or, with no argument, a new empty storage. Afterwards writes through either are seen by both.
    As in PyTorch it is an in-place op: an error on a leaf that requires grad (outside ``no_grad``), and a tensor
    that requires grad afterwards has a grad_fn whose backward raises (there is no derivative for ``set_``).

    :param source: a Tensor or a storage of this tensor's dtype; None: a new empty storage.
    :param storage_offset: where in the storage the tensor starts, in elements.
    :param size: the tensor's new shape (default: ``source``'s shape, or the whole storage as 1-d).
    :param stride: the step in the storage along each dimension, in elements (default: row-major for ``size``).
    """
    target = _target(self, source, storage_offset, size, stride)
    self._check_inplace(False)
    src_rg = isinstance(source, Tensor) and source._requires_grad
    recorded = None
    if gm.state.grad and (self._requires_grad or src_rg):
        old = _wrap(self._storage.data, self._node, self._requires_grad, self._output_nr)
        recorded = _set_node(old, source if src_rg else old, target._storage.data)
    # self leaves its place (a view stops being one; the views taken of it keep its old memory), its version goes
    # up (saved tensors notice), and it becomes an alias of the target's place in the target's root storage
    _views.leave(self, _wrap)
    _views.new_memory(self, self._storage, _wrap)
    self._storage.version += 1
    info = _views.info_of(target)
    root, steps = (target._storage, ()) if info is None else (info.root, info.steps)
    _views.make_alias(self, root, steps, target._storage.data)
    if recorded is not None:
        _views.rebind_grad_fn(self, recorded._node, recorded._output_nr, True)
        recorded._node.rebind_output(self._storage)
    return self


attach("data_ptr", _data_ptr)
attach("storage_offset", _storage_offset)
attach("untyped_storage", _untyped_storage)
attach("storage", _storage)
attach("is_shared", lambda self: False, "False: no lucid storage lives in memory shared between processes.")
attach("set_", _set_)
