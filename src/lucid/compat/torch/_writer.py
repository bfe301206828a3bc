"""``torch.save``'s own file format, written from lucid's objects, so that real PyTorch opens the checkpoint with
``torch.load(weights_only=True)``.

The file is a zip archive ``<name>/...`` (``<name>``: the file's name without its extension, ``archive`` for a
file object) of stored (uncompressed) records, as PyTorch 2.13 writes it:

- ``data.pkl``: the object, pickled with protocol 2. Each tensor is the call
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())``, each Parameter
  ``torch._utils._rebuild_parameter(tensor, requires_grad, OrderedDict())``, each storage the persistent id
  ``('storage', torch.FloatStorage, key, 'cpu', numel)``; dtypes, ``Size`` and ``device`` are PyTorch's globals.
  uint16, uint32 and uint64 tensors, which have no storage class, are ``_rebuild_tensor_v3(..., dtype)`` calls on
  a ``torch.storage.UntypedStorage`` of bytes, as PyTorch writes them;
- ``.format_version`` (``1``), ``.storage_alignment`` (``64``), ``byteorder`` (``little``);
- ``data/<key>``: each storage's raw little-endian bytes, its first byte at a multiple of 64 bytes from the start of
  the archive (PyTorch pads each record's local header with an ``FB`` extra field to get there, so it can map the
  file and view a storage in place);
- ``version`` (``3``) and ``.data/serialization_id`` (40 random digits).

Each tensor is saved as a contiguous storage of its own (lucid's views are not strided windows of one buffer), but
tensors sharing lucid's storage (a tensor, its ``detach()`` and ``.data``, a Parameter made from it) share one
record, as they share memory in PyTorch. (Equal MLX arrays are not enough: lucid may back separate tensors, such as
an optimizer's ``step`` counters, with one immutable array.)
"""
from __future__ import annotations

import collections
import io
import math
import os
import pickle
import secrets
import struct
import zipfile

import mlx.core as mx

import lucid
from lucid import Size, Tensor
from lucid._checks import flush as flush_checks
from lucid._dtype import device as Device
from lucid.nn import Parameter
from lucid.serialization import _NAME_OF_MLX, _to_bytes, write_file

from ._rebuild import _DTYPE_NAMES, _STORAGE_DTYPES

_ALIGNMENT = 64
_STORAGE_OF_CODE = {code: name for name, code in _STORAGE_DTYPES.items()}


class _Global:
    """A PyTorch global (``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``...) named in the pickle
    without importing PyTorch: the pickler writes it as ``GLOBAL module name``."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle takes only a callable as a reduce function; this one is only ever written
        raise TypeError(f"{self.module}.{self.name} stands for PyTorch's global in a checkpoint being written")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = _Global("torch._utils", "_rebuild_tensor_v3")  # a dtype without a storage class of its own
_UNTYPED_STORAGE = _Global("torch.storage", "UntypedStorage")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_PARAMETER_WITH_STATE = _Global("torch._utils", "_rebuild_parameter_with_state")
_SIZE, _DEVICE = _Global("torch", "Size"), _Global("torch", "device")
# uint16/32/64 have storage classes in lucid's reader (older files) but PyTorch writes them as byte storages
_UNTYPED_CODES = ("U16", "U32", "U64")
_STORAGE_TYPES = {code: _Global("torch", name) for code, name in _STORAGE_OF_CODE.items() if code not in _UNTYPED_CODES}
_DTYPES = {getattr(lucid, name): _Global("torch", name) for name in _DTYPE_NAMES}


class _Storage:
    """One record of the archive: a tensor's elements, flat."""

    __slots__ = ("key", "array", "code")

    def __init__(self, key: str, array, code: str):
        self.key, self.array, self.code = key, array, code


class _Pickler(pickle._Pickler):
    """Protocol-2 pickler that writes lucid's tensors as PyTorch's rebuild calls and their data as persistent
    storages. The pure-Python pickler, because it lets a type (``_Global``) be written as a bare ``GLOBAL``."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.storages: dict[int, tuple[object, _Storage]] = {}  # id(lucid storage) -> (it, kept alive; record)

    def _save_global_name(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = _save_global_name

    def persistent_id(self, obj):
        if not isinstance(obj, _Storage):
            return None
        if obj.code in _UNTYPED_CODES:
            return ("storage", _UNTYPED_STORAGE, obj.key, "cpu", int(obj.array.nbytes))
        return ("storage", _STORAGE_TYPES[obj.code], obj.key, "cpu", int(obj.array.size))

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, mx.Dtype) and obj in _DTYPES:
            obj = _DTYPES[obj]  # a dtype is the bare global (torch.float32), as PyTorch pickles it
        super().save(obj, save_persistent_id)

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, Size):
            return _SIZE, (tuple(obj),)
        if isinstance(obj, Device):
            return _DEVICE, (str(obj),)
        return NotImplemented

    def _reduce_tensor(self, t: Tensor):
        if isinstance(t, Parameter):
            # PyTorch's Parameter.__reduce_ex__: the data as a plain tensor, then the flag and (empty) hooks, then
            # the attributes code set on it (``p.no_decay = True``) if there are any
            args = (t.detach(), t.requires_grad, collections.OrderedDict())
            state = dict(t.__dict__)
            return (_REBUILD_PARAMETER_WITH_STATE, (*args, state)) if state else (_REBUILD_PARAMETER, args)
        array = t.mlx
        if array.dtype not in _NAME_OF_MLX:
            raise TypeError(f"torch.save can't store a tensor of dtype {t.dtype}")
        st = t._storage  # tensors share memory when they share lucid's storage (equal MLX arrays may be separate tensors)
        if id(st) not in self.storages:
            self.storages[id(st)] = (st, _Storage(str(len(self.storages)), array, _NAME_OF_MLX[array.dtype]))
        storage = self.storages[id(st)][1]
        shape = tuple(int(s) for s in array.shape)
        stride = tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))
        hooks = collections.OrderedDict()
        if storage.code in _UNTYPED_CODES:
            return _REBUILD_TENSOR_V3, (storage, 0, shape, stride, t.requires_grad, hooks, _DTYPES[array.dtype])
        return _REBUILD_TENSOR, (storage, 0, shape, stride, t.requires_grad, hooks)


def _record(archive: zipfile.ZipFile, out, start: int, name: str, data: bytes) -> None:
    """Store one record with its data aligned to 64 bytes from the archive's start (``start``)."""
    info = zipfile.ZipInfo(name)  # 1980-01-01, stored: PyTorch's records carry no date and are never compressed
    header = 30 + len(name.encode("utf-8")) + 4  # the local header, up to the padding
    if len(data) * 1.05 > zipfile.ZIP64_LIMIT:
        header += 20  # zipfile's zip64 extra field, written after ours
    pad = -(out.tell() - start + header) % _ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    archive.writestr(info, data)


def _write_archive(out, archive_name: str, data_pkl: bytes, storages: list[_Storage]) -> None:
    start = out.tell()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        records = [("data.pkl", data_pkl), (".format_version", b"1"),
                   (".storage_alignment", str(_ALIGNMENT).encode()), ("byteorder", b"little")]
        for name, data in records:
            _record(archive, out, start, f"{archive_name}/{name}", data)
        for storage in storages:
            _record(archive, out, start, f"{archive_name}/data/{storage.key}", _to_bytes(storage.array, storage.code))
        serialization_id = f"{secrets.randbits(64):020d}{secrets.randbits(64):020d}"
        for name, data in (("version", b"3\n"), (".data/serialization_id", serialization_id.encode())):
            _record(archive, out, start, f"{archive_name}/{name}", data)


def save_zip(obj, f) -> None:
    """Write ``obj`` to ``f`` (a path or a binary file object) in PyTorch's zip format."""
    buffer = io.BytesIO()
    pickler = _Pickler(buffer)
    pickler.dump(obj)  # before the file is touched: an object that can't be pickled leaves it as it was
    storages = [record for _, record in pickler.storages.values()]
    flush_checks([s.array for s in storages])  # (and the pending index checks)
    if hasattr(f, "write"):
        archive_name = "archive"
    else:
        archive_name = os.path.splitext(os.path.basename(os.fsdecode(os.fspath(f))))[0]

    def write(out):
        seekable = getattr(out, "seekable", lambda: False)()
        target = out if seekable else io.BytesIO()  # the alignment needs positions: a pipe gets the whole archive
        _write_archive(target, archive_name, buffer.getvalue(), storages)
        if not seekable:
            out.write(target.getvalue())

    write_file(f, write)
