"""``torch.save`` / ``torch.load`` on lucid.

Saving: what lucid's safe format holds (tensors, state_dicts, optimizer state, nested dicts/lists/tuples of them
with numbers, strings, bools and None) goes to a safetensors file through ``lucid.save``. Anything else (a whole
module, an ``argparse.Namespace`` in a checkpoint) is pickled, after a marker line, and loads only with
``weights_only=False``, as PyTorch (since 2.6) refuses such files by default.

Loading reads three kinds of file:
- safetensors (what ``torch.save`` here and ``lucid.save`` write): parsed, nothing executed;
- PyTorch's zip checkpoints (``.pt``/``.pth`` from ``torch.save``): a zip holding ``<name>/data.pkl`` (the object's
  pickle) and ``<name>/data/<key>`` (each storage's raw bytes; ``<name>/byteorder`` says their byte order). Tensors
  appear in the pickle as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
  calls, and each storage as a persistent id ``('storage', torch.FloatStorage, key, location, numel)``. The
  unpickler here resolves only an allow-list of globals - containers and those rebuild functions, mapped to lucid's
  own - as PyTorch's ``weights_only=True`` unpickler does, so a checkpoint's pickle can never run code;
- the pickles written above, with ``weights_only=False`` only.
"""
from __future__ import annotations

import collections
import io
import math
import os
import pickle
import zipfile

import numpy as np

import lucid
from lucid import Tensor
from lucid._tensor import _wrap
from lucid.nn import Parameter
from lucid.serialization import _DTYPES, _to_mlx

_PICKLE_MARKER = b"lucid.compat.torch pickle v1\n"

# PyTorch's storage classes -> the safetensors dtype name lucid's loader knows (which gives the bytes' numpy dtype)
_STORAGE_DTYPES = {"DoubleStorage": "F64", "FloatStorage": "F32", "HalfStorage": "F16", "BFloat16Storage": "BF16",
                   "LongStorage": "I64", "IntStorage": "I32", "ShortStorage": "I16", "CharStorage": "I8",
                   "ByteStorage": "U8", "BoolStorage": "BOOL", "ComplexFloatStorage": "C64",
                   "UInt16Storage": "U16", "UInt32Storage": "U32", "UInt64Storage": "U64"}
_DTYPE_NAMES = {"float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
                "complex64", "uint16", "uint32", "uint64"}
_safe_globals: dict[tuple[str, str], object] = {}


def add_safe_globals(safe_globals: list) -> None:
    """Allow more globals in ``weights_only`` loads of PyTorch checkpoints (PyTorch's function of the same name)."""
    for g in safe_globals:
        obj, name = g if isinstance(g, tuple) else (g, f"{g.__module__}.{g.__qualname__}")
        module, _, qualname = name.rpartition(".")
        _safe_globals[(module, qualname)] = obj


def get_safe_globals() -> list:
    return list(_safe_globals.values())


def save(obj, f, pickle_module=None, pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Write ``obj`` to ``f`` (a path or a binary file object): safetensors when it can hold ``obj``, else a
    pickle that ``load`` reads only with ``weights_only=False``."""
    try:
        lucid.save(obj, f)  # raises TypeError, before writing anything, for what it can't store
        return
    except TypeError:
        pass
    data = _PICKLE_MARKER + pickle.dumps(obj, protocol=max(pickle_protocol, 2))
    if hasattr(f, "write"):
        f.write(data)
    else:
        with open(f, "wb") as out:
            out.write(data)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read what ``save`` (or ``lucid.save``, or PyTorch's ``torch.save``) wrote. ``weights_only`` defaults to
    True, as in PyTorch: only tensors and containers come back and no code from the file runs. ``map_location``
    and ``mmap`` are accepted: MLX memory is unified, so tensors load onto lucid's default device."""
    weights_only = True if weights_only is None else weights_only
    if hasattr(f, "read"):
        raw, source = f.read(), str(getattr(f, "name", "<file object>"))
    else:
        with open(f, "rb") as fh:
            raw, source = fh.read(), os.fspath(f)
    if raw.startswith(b"PK\x03\x04"):
        return _load_torch_zip(raw, source, weights_only)
    if raw.startswith(_PICKLE_MARKER):
        if weights_only:
            raise pickle.UnpicklingError(
                f"Weights only load failed: {source} holds pickled Python objects (saved by torch.save from an "
                "object that is not only tensors and containers). Loading it runs code from the file: re-run "
                "torch.load with weights_only=False only if you trust where the file came from.")
        return pickle.loads(raw[len(_PICKLE_MARKER):])
    if raw[:1] == b"\x80":
        raise pickle.UnpicklingError(
            f"{source} is a bare pickle (PyTorch's legacy pre-1.6 format, or pickle.dump): lucid does not unpickle "
            "it, as unpickling can run arbitrary code. Re-save it in PyTorch with torch.save (zip format) or "
            "safetensors.")
    buffer = io.BytesIO(raw)
    buffer.name = source  # lucid.load's errors name the file
    return lucid.load(buffer)


# ---------------------------------------------------------------------------------------------------- PyTorch zips
class _StorageType:
    """What ``torch.FloatStorage`` etc. unpickle to: the dtype of a storage's bytes."""

    def __init__(self, name: str):
        self.name, self.dtype = name, _STORAGE_DTYPES[name]


class _Storage:
    """One storage's bytes, as a flat numpy array (native byte order) and its safetensors dtype name."""

    def __init__(self, array: np.ndarray, dtype: str):
        self.array, self.dtype = array, dtype


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """A lucid tensor from a view (offset, size, stride in elements) of a storage; every index is checked first."""
    if not (isinstance(storage, _Storage) and _is_int(storage_offset) and isinstance(size, tuple)
            and isinstance(stride, tuple) and len(size) == len(stride)
            and all(_is_int(s) and s >= 0 for s in size) and all(_is_int(s) and s >= 0 for s in stride)):
        raise pickle.UnpicklingError("corrupt checkpoint: a tensor's storage, size or stride is malformed")
    n = storage.array.size
    last = storage_offset + sum((s - 1) * st for s, st in zip(size, stride)) if math.prod(size) else storage_offset - 1
    if storage_offset < 0 or last >= n:
        raise pickle.UnpicklingError(f"corrupt checkpoint: a tensor of size {list(size)}, stride {list(stride)} at "
                                     f"offset {storage_offset} reaches past its storage of {n} elements")
    if any(s >= 2**31 for s in size):
        raise pickle.UnpicklingError(f"checkpoint tensor of size {list(size)}: MLX dimensions are at most 2**31 - 1")
    item = storage.array.itemsize
    view = np.lib.stride_tricks.as_strided(storage.array[storage_offset:], shape=size,
                                           strides=[st * item for st in stride], writeable=False)
    tensor = _wrap(_to_mlx(storage.dtype, view.copy()))  # (ascontiguousarray would make a 0-d array 1-d)
    if requires_grad is True:
        tensor.requires_grad_(True)
    return tensor


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    return Parameter(data, requires_grad=bool(requires_grad))


def _rebuild_from_type_v2(func, new_type, args, state):
    """Tensor subclasses (PyTorch pickles a Parameter this way in some versions): rebuild, then re-wrap."""
    tensor = func(*args)
    if new_type is Parameter and not isinstance(tensor, Parameter):
        return Parameter(tensor, requires_grad=tensor.requires_grad)
    return tensor


def _device(name, index=None):
    return lucid.device("cpu")  # unified memory: a checkpoint's device names where it was saved, not where it goes


_ALLOWED = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "complex"): complex,
    ("builtins", "bytearray"): bytearray, ("builtins", "slice"): slice,
    ("_codecs", "encode"): lambda text, encoding="utf-8": text.encode(encoding),  # how protocol 2 writes bytes
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch.nn.parameter", "Parameter"): Parameter,
    ("torch", "Tensor"): Tensor,
    ("torch", "Size"): tuple,
    ("torch", "device"): _device,
    ("torch.serialization", "_get_layout"): lambda name: name,
    **{("torch", name): _StorageType(name) for name in _STORAGE_DTYPES},
    **{("torch", name): getattr(lucid, name) for name in _DTYPE_NAMES},
}


class _CheckpointUnpickler(pickle.Unpickler):
    """Rebuilds a PyTorch checkpoint's object. With ``weights_only`` only the allow-list resolves (anything else,
    ``os.system`` included, is refused before it is called); without it, non-torch globals resolve normally
    (the user opted in to running the file's code)."""

    def __init__(self, file, storages, source: str, weights_only: bool):
        super().__init__(file)
        self.storages, self.source, self.weights_only = storages, source, weights_only

    def find_class(self, module: str, name: str):
        found = _ALLOWED.get((module, name), _safe_globals.get((module, name)))
        if found is not None:
            return found
        if module == "torch" or module.startswith("torch."):
            raise pickle.UnpicklingError(
                f"{self.source}: the checkpoint pickles PyTorch's {module}.{name}, which lucid can't rebuild (it "
                "reads tensors and containers of them; save model.state_dict() rather than the model)")
        if self.weights_only:
            raise pickle.UnpicklingError(
                f"Weights only load failed: {self.source} refers to the global {module}.{name}, which is not "
                "allowed: loading it could run arbitrary code. Re-run torch.load with weights_only=False only if "
                "you trust where the file came from (or allow the class with torch.serialization.add_safe_globals).")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType) and isinstance(pid[2], str)):
            raise pickle.UnpicklingError(f"{self.source}: unknown persistent id {pid!r:.80} (not a tensor storage)")
        return self.storages(pid[1], pid[2], pid[4])


def _load_torch_zip(raw: bytes, source: str, weights_only: bool):
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        names = archive.namelist()
    except zipfile.BadZipFile as e:
        raise ValueError(f"{source}: corrupt zip checkpoint ({e})") from None
    pickles = [n for n in names if n.endswith("data.pkl") and n.count("/") <= 1]
    if len(pickles) != 1:
        raise ValueError(f"{source}: a zip file but not a PyTorch checkpoint (no single <name>/data.pkl)")
    prefix = pickles[0][:-len("data.pkl")]
    order = archive.read(prefix + "byteorder").decode() if prefix + "byteorder" in names else "little"
    if order not in ("little", "big"):
        raise ValueError(f"{source}: unknown byteorder {order!r:.20}")
    loaded: dict[str, _Storage] = {}

    def storage(kind: _StorageType, key: str, numel) -> _Storage:
        if key not in loaded:  # views of one storage share it, as in PyTorch
            entry = f"{prefix}data/{key}"
            if entry not in names:
                raise ValueError(f"{source}: the pickle refers to storage {key!r:.40}, missing from the archive")
            data = archive.read(entry)
            np_dtype = _DTYPES[kind.dtype][1].newbyteorder("<" if order == "little" else ">")
            if len(data) % np_dtype.itemsize or (_is_int(numel) and numel * np_dtype.itemsize > len(data)):
                raise ValueError(f"{source}: storage {key!r:.40} holds {len(data)} bytes, not {numel} elements of "
                                 f"{kind.name}")
            array = np.frombuffer(data, dtype=np_dtype).astype(np_dtype.newbyteorder("="), copy=False)
            loaded[key] = _Storage(array, kind.dtype)
        if loaded[key].dtype != kind.dtype:
            raise ValueError(f"{source}: storage {key!r:.40} is read as two different dtypes")
        return loaded[key]

    unpickler = _CheckpointUnpickler(io.BytesIO(archive.read(pickles[0])), storage, source, weights_only)
    return unpickler.load()
