"""What the globals of a PyTorch checkpoint's pickle stand for in lucid: the allow-list (``ALLOWED``) of PyTorch's
``weights_only`` unpickler mapped to lucid's objects - containers, dtypes, storage types and the functions that
rebuild tensors from storages - and the state a legacy pickle may ``BUILD`` into a Tensor.

Every function here takes its arguments from the file, so each checks them before MLX sees an index or a size:
a tensor's view must lie inside its storage, and its size must fit MLX and the machine's memory."""
from __future__ import annotations

import collections
import math
import pickle
import types
from typing import NamedTuple

import mlx.core as mx

import lucid
from lucid import Tensor
from lucid._dtype import check_new_shape
from lucid._tensor import _wrap
from lucid.nn import Parameter
from lucid.serialization import _MAX_DIMS, _NAME_OF_MLX

# PyTorch's storage classes -> the safetensors dtype name lucid's loader knows (which gives the bytes' numpy dtype)
_STORAGE_DTYPES = {"DoubleStorage": "F64", "FloatStorage": "F32", "HalfStorage": "F16", "BFloat16Storage": "BF16",
                   "LongStorage": "I64", "IntStorage": "I32", "ShortStorage": "I16", "CharStorage": "I8",
                   "ByteStorage": "U8", "BoolStorage": "BOOL", "ComplexFloatStorage": "C64",
                   "UInt16Storage": "U16", "UInt32Storage": "U32", "UInt64Storage": "U64"}
_DTYPE_NAMES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
                "complex64", "uint16", "uint32", "uint64")


class StorageType(NamedTuple):
    """What ``torch.FloatStorage`` etc. unpickle to: the dtype of a storage's bytes. Immutable (a file can't
    retype the storages of the checkpoints loaded after it)."""

    name: str
    dtype: str


# PyTorch's byte storage, whose tensors give their dtype to _rebuild_tensor_v3 (uint16, uint32, uint64)
_UNTYPED = StorageType("UntypedStorage", "U8")


class Storage:
    """One storage of a checkpoint: its elements as a flat MLX array, its element count and dtype name."""

    __slots__ = ("array", "numel", "dtype")

    def __init__(self, array: mx.array, numel: int, dtype: str):
        self.array, self.numel, self.dtype = array, numel, dtype


def describe(obj) -> str:
    """A file's object in an error message, without the repr of anything large (a tensor's would compute it)."""
    if isinstance(obj, (str, bytes, int, float, type(None))):
        return repr(obj)[:60]
    name = getattr(obj, "__qualname__", None)  # functions and classes
    return name if isinstance(name, str) else f"a {type(obj).__name__}"


def is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """A lucid tensor viewing a storage at an offset with a size and stride (in elements), as PyTorch's
    ``as_strided``: no copy is made, and dimensions of stride 0 stay broadcasts (a 16-byte storage expanded to
    (8192, 8192) stays 16 bytes). Every index is checked first."""
    if not (isinstance(storage, Storage) and is_int(storage_offset) and type(size) is tuple
            and type(stride) is tuple and len(size) == len(stride) <= _MAX_DIMS
            and all(is_int(s) and s >= 0 for s in size) and all(is_int(s) and s >= 0 for s in stride)):
        raise pickle.UnpicklingError("corrupt checkpoint: a tensor's storage, size or stride is malformed")
    # as a factory would: a stride-0 view costs nothing, but the first op that computes from it makes all of it
    check_new_shape(size, storage.array.dtype)
    numel, n = math.prod(size), storage.numel
    last = storage_offset + sum((s - 1) * st for s, st in zip(size, stride)) if numel else storage_offset - 1
    if storage_offset < 0 or last >= n:
        raise pickle.UnpicklingError(f"corrupt checkpoint: a tensor of size {list(size)}, stride {list(stride)} at "
                                     f"offset {storage_offset} reaches past its storage of {n} elements")
    if numel == 0:
        array = mx.zeros(size, dtype=storage.array.dtype)
    else:  # the strided dimensions as a view of the storage, then the stride-0 ones broadcast over it
        base = [s if st else 1 for s, st in zip(size, stride)]
        array = mx.as_strided(storage.array, base, [st if s > 1 else 0 for s, st in zip(base, stride)],
                              storage_offset)
        if base != list(size):
            array = mx.broadcast_to(array, size)
    tensor = _wrap(array)
    if requires_grad is True:
        tensor.requires_grad_(True)
    return tensor


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """A tensor of ``dtype`` viewing an untyped (byte) storage - how PyTorch saves the dtypes that have no storage
    class of their own (uint16, uint32, uint64). Offset and strides count elements of ``dtype``."""
    if not (isinstance(storage, Storage) and storage.dtype == _UNTYPED.dtype and isinstance(dtype, mx.Dtype)
            and dtype in _NAME_OF_MLX):
        raise pickle.UnpicklingError(f"corrupt checkpoint: _rebuild_tensor_v3 of {describe(storage)} as "
                                     f"{describe(dtype)}")
    itemsize = dtype.size
    if storage.numel % itemsize:
        raise pickle.UnpicklingError(f"corrupt checkpoint: a storage of {storage.numel} bytes read as {dtype}, "
                                     f"whose elements are {itemsize} bytes")
    typed = Storage(mx.view(storage.array, dtype), storage.numel // itemsize, _NAME_OF_MLX[dtype])
    return _rebuild_tensor_v2(typed, storage_offset, size, stride, requires_grad, backward_hooks)


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    """PyTorch's ``_rebuild_parameter`` and ``_rebuild_parameter_with_state``: ``state`` holds the attributes code
    set on the parameter (``p.no_decay = True``), as ``torch._utils._get_obj_state`` wrote them (a dict, or a
    (dict, slots) pair). Only plain attribute names are set: never a dunder, never anything but a string key."""
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"corrupt checkpoint: a Parameter's data is a {type(data).__name__}")
    param = Parameter(data, requires_grad=bool(requires_grad))
    if state is None:
        return param
    if type(state) is tuple and len(state) == 2 and state[1] in (None, {}):
        state = state[0]
    if type(state) not in (dict, collections.OrderedDict) or not all(
            type(k) is str and not k.startswith("__") for k in state):
        raise pickle.UnpicklingError(f"corrupt checkpoint: a Parameter's state must be a dict of attribute names, "
                                     f"not {describe(state)}")
    param.__dict__.update(state)
    return param


def _rebuild_from_type_v2(func, new_type, args, state):
    """Tensor subclasses (PyTorch pickles a Parameter this way in some versions): rebuild, then re-wrap. ``func``
    comes from the file, so only the rebuild functions are called."""
    if not any(func is f for f in _REBUILDERS) or type(args) is not tuple:
        raise pickle.UnpicklingError(f"corrupt checkpoint: _rebuild_from_type_v2 of {describe(func)}")
    tensor = func(*args)
    if new_type is Parameter and not isinstance(tensor, Parameter):
        return Parameter(tensor, requires_grad=tensor.requires_grad)
    return tensor


_REBUILDERS = (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter)


def set_tensor_state(tensor: Tensor, state) -> None:
    """``BUILD`` of a Tensor or Parameter: PyTorch's ``Tensor.__setstate__`` for legacy pickles - (storage, offset,
    size, stride) sets the data, (data, _, _, requires_grad, hooks) the data and flag, (requires_grad, _, hooks)
    the flag. Backward hooks are never restored (as in PyTorch)."""
    if type(state) is not tuple or len(state) not in (3, 4, 5):
        raise pickle.UnpicklingError(f"corrupt checkpoint: a Tensor state must be a tuple of 3, 4 or 5 items, "
                                     f"not {describe(state)}")
    if len(state) == 4:
        tensor.data = _rebuild_tensor_v2(*state, False, None)
        return
    if len(state) == 5:
        if not isinstance(state[0], Tensor):
            raise pickle.UnpicklingError("corrupt checkpoint: a Tensor state's data is not a tensor")
        tensor.data = state[0]
        state = (state[3], state[4], state[2])
    if not isinstance(state[0], bool):
        raise pickle.UnpicklingError(f"corrupt checkpoint: a Tensor state's requires_grad is {describe(state[0])}")
    tensor.requires_grad_(state[0])


def _device(name, index=None):
    return lucid.device("cpu")  # unified memory: a checkpoint's device names where it was saved, not where it goes


def _bytearray(*args):
    """``bytearray`` of the bytes pickle writes (``bytearray(_codecs.encode(text, 'latin1'))``), never
    ``bytearray(n)``, which would let a file of a few bytes allocate and zero n of them."""
    if args and not isinstance(args[0], (bytes, str)):
        raise pickle.UnpicklingError(f"bytearray of a {type(args[0]).__name__}: a checkpoint holds a bytearray's "
                                     "bytes")
    return bytearray(*args)


def _encode(text, encoding="utf-8"):
    return text.encode(encoding)  # how protocol 2 writes bytes: _codecs.encode(text, 'latin1')


# (module, name) -> lucid's object; read-only, so nothing can change what a name resolves to
ALLOWED = types.MappingProxyType({
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "complex"): complex,
    ("builtins", "bytearray"): _bytearray, ("builtins", "slice"): slice,
    ("_codecs", "encode"): _encode,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch.storage", "UntypedStorage"): _UNTYPED,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch.nn.parameter", "Parameter"): Parameter,
    ("torch", "Tensor"): Tensor,
    ("torch", "Size"): tuple,
    ("torch", "device"): _device,
    ("torch.serialization", "_get_layout"): lambda name: name,
    **{("torch", name): StorageType(name, dtype) for name, dtype in _STORAGE_DTYPES.items()},
    **{("torch", name): getattr(lucid, name) for name in _DTYPE_NAMES},
})
# modules a checkpoint may never name, even when the user allow-lists something of theirs (PyTorch's blocklist)
BLOCKED_MODULES = ("sys", "os", "posix", "nt")
