"""``lucid.save`` / ``lucid.load``: state_dicts and other nested containers of tensors, in the safetensors format.

A safetensors file is an 8-byte little-endian header length, a JSON header
``{name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {str: str}}`` padded with
spaces to a multiple of 8 bytes, then the tensors' raw little-endian bytes, back to back. Loading parses JSON and
copies bytes: no pickle, nothing from the file is executed.

Nested objects (an optimizer's ``{"state": {0: {...}}, "param_groups": [...]}``) are flattened: each tensor is
stored under its path (``state.0.exp_avg``), and the rest of the structure - dicts (with their key types), lists,
tuples, numbers, strings, bools, None and references to the tensor names - goes as JSON into the metadata entry
``lucid.structure``, from which ``load`` rebuilds the same object. A flat ``{str: Tensor}`` dict (a module's
state_dict) is stored with its keys as the tensor names, so the file is a standard one that the ``safetensors``
package (and PyTorch through it) reads; files written by other tools load as ``{name: Tensor}``.
"""
from __future__ import annotations

import errno
import json
import math
import os
import secrets
import stat
from collections import OrderedDict
from pathlib import Path

import mlx.core as mx
import numpy as np

from ._checks import flush as flush_checks
from ._tensor import Tensor, _wrap
from ._threads import to_numpy

# safetensors dtype name -> (lucid/MLX dtype, little-endian numpy dtype of the stored bytes)
_DTYPES = {
    "F64": (mx.float64, np.dtype("<f8")), "F32": (mx.float32, np.dtype("<f4")), "F16": (mx.float16, np.dtype("<f2")),
    "BF16": (mx.bfloat16, np.dtype("<u2")), "C64": (mx.complex64, np.dtype("<c8")),
    "I64": (mx.int64, np.dtype("<i8")), "I32": (mx.int32, np.dtype("<i4")), "I16": (mx.int16, np.dtype("<i2")),
    "I8": (mx.int8, np.dtype("i1")), "U64": (mx.uint64, np.dtype("<u8")), "U32": (mx.uint32, np.dtype("<u4")),
    "U16": (mx.uint16, np.dtype("<u2")), "U8": (mx.uint8, np.dtype("u1")), "BOOL": (mx.bool_, np.dtype("u1")),
}
_NAME_OF_MLX = {mx_dtype: name for name, (mx_dtype, _) in _DTYPES.items()}
_NAME_OF_NUMPY = {np.dtype(np.bool_): "BOOL", **{np_dtype.newbyteorder("="): name for name, (_, np_dtype)
                                                 in _DTYPES.items() if name not in ("BF16", "BOOL")}}
_STRUCTURE = "lucid.structure"
_MAX_HEADER = 100_000_000  # the safetensors library's own limit
_MAX_DIMS = 64  # numpy's limit


# ---------------------------------------------------------------------------------------------------- saving
class _Flattener:
    """Walks an object, collecting its arrays under path-like names and returning the JSON structure."""

    def __init__(self):
        self.arrays: dict[str, np.ndarray | mx.array] = {}

    def add(self, path: tuple, array) -> str:
        name = ".".join(path) if path else "tensor"
        base, n = name, 1
        while name in self.arrays or name == "__metadata__":
            name, n = f"{base}#{n}", n + 1
        self.arrays[name] = array
        return name

    def encode(self, obj, path: tuple = ()):
        if isinstance(obj, Tensor):
            return {"T": self.add(path, obj.mlx)}
        if isinstance(obj, mx.array):
            return {"M": self.add(path, obj)}
        if isinstance(obj, (np.ndarray, np.generic)) and not isinstance(obj, (np.str_, np.bytes_)):
            arr = np.asarray(obj)
            if arr.dtype.newbyteorder("=") not in _NAME_OF_NUMPY:
                raise TypeError(f"lucid.save can't store a numpy array of dtype {arr.dtype} (at {_where(path)})")
            return {"N" if isinstance(obj, np.ndarray) else "S": self.add(path, arr)}
        if obj is None or isinstance(obj, (bool, int, str)):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"F": repr(obj)}
        if isinstance(obj, dict):
            items = [[self.key(k, path), self.encode(v, path + (str(k),))] for k, v in obj.items()]
            return {"OD" if isinstance(obj, OrderedDict) else "D": items}
        if isinstance(obj, (list, tuple)):
            items = [self.encode(v, path + (str(i),)) for i, v in enumerate(obj)]
            return {"U" if isinstance(obj, tuple) else "L": items}
        raise TypeError(f"lucid.save can't store an object of type {type(obj).__name__} (at {_where(path)}): it "
                        "stores Tensors, numpy and MLX arrays, and dicts, lists and tuples of them with numbers, "
                        "strings, bools and None. For a Module or an Optimizer, save its state_dict().")

    def key(self, key, path: tuple):
        if key is None or isinstance(key, (bool, int, str)):
            return key
        if isinstance(key, float):
            return self.encode(key)
        raise TypeError(f"lucid.save can't store a dict key of type {type(key).__name__} (at {_where(path)}): "
                        "keys must be str, int, float, bool or None")


def _where(path: tuple) -> str:
    return repr(".".join(path)) if path else "the top level"


def _is_flat_state_dict(obj) -> bool:
    return (isinstance(obj, dict) and "__metadata__" not in obj
            and all(isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items()))


def _stored_dtype(array) -> str:
    if isinstance(array, mx.array):
        if array.dtype not in _NAME_OF_MLX:
            raise TypeError(f"lucid.save can't store dtype {array.dtype}")
        return _NAME_OF_MLX[array.dtype]
    return _NAME_OF_NUMPY[array.dtype.newbyteorder("=")]


def _to_bytes(array, dtype_name: str) -> bytes:
    if isinstance(array, mx.array):
        array = to_numpy(mx.view(array, mx.uint16) if array.dtype == mx.bfloat16 else array, copy=None)
    return np.ascontiguousarray(array).astype(_DTYPES[dtype_name][1], copy=False).tobytes()


def save(obj, f) -> None:
    """Write ``obj`` (a state_dict, or nested dicts/lists/tuples of tensors, numbers, strings, bools and None) to
    ``f``, a path or a binary file object, in the safetensors format. A path is written through a temporary file
    in the same folder and renamed into place, so an interrupted save never leaves a truncated checkpoint; a
    symlink is written through to its target, and a file replaced keeps its permission bits. A read-only file
    raises PermissionError (as PyTorch's save does) and is left as it is."""
    flat = _Flattener()
    structure = flat.encode(obj)
    flush_checks([a for a in flat.arrays.values() if isinstance(a, mx.array)])  # (and the pending index checks)
    header, offset, dtypes = {}, 0, []
    for name, array in flat.arrays.items():
        dtype = _stored_dtype(array)
        nbytes = int(array.size) * _DTYPES[dtype][1].itemsize
        header[name] = {"dtype": dtype, "shape": [int(s) for s in array.shape],
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
        dtypes.append(dtype)
    metadata = {"format": "pt" if _is_flat_state_dict(obj) else "lucid",
                _STRUCTURE: json.dumps(structure, separators=(",", ":"), allow_nan=False)}
    text = json.dumps({"__metadata__": metadata, **header}, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)

    def write(out):
        out.write(len(text).to_bytes(8, "little"))
        out.write(text)
        for array, dtype in zip(flat.arrays.values(), dtypes):
            out.write(_to_bytes(array, dtype))

    write_file(f, write)


def write_file(f, write) -> None:
    """Call ``write(out)`` on ``f`` itself (a binary file object) or on a file that replaces the path ``f`` whole
    (``torch.save``'s zip format uses it too)."""
    if hasattr(f, "write"):
        write(f)
        return
    path, old = _save_target(f)
    # the temporary file starts private (0o600) when it replaces an existing file, and gets that file's mode and
    # owner before it takes its place; a new file gets open()'s default, 0o666 less the umask
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if old else 0o666)
    try:
        with open(fd, "wb") as out:
            write(out)
            if old:
                os.fchmod(out.fileno(), stat.S_IMODE(old.st_mode))
                if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                    try:
                        os.fchown(out.fileno(), old.st_uid, old.st_gid)
                    except PermissionError:  # only root may give a file away: the new file is then the caller's
                        pass
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _save_target(f) -> tuple[str, os.stat_result | None]:
    """The file a save to the path ``f`` replaces, and its stat (None for a new file). A symlink is followed (the
    link stays; its target gets the new contents, as ``open(f, "wb")`` would write through it). Raises what PyTorch
    raises for a path it can't write, before anything is created."""
    if not isinstance(f, (str, bytes, os.PathLike)):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    name = os.fsdecode(os.fspath(f))
    if not name:
        raise RuntimeError("lucid.save: invalid file name: ''")
    path = os.path.realpath(name)
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    if os.path.isdir(path):
        raise RuntimeError(f"lucid.save: can't write {name!r}: Is a directory")
    try:
        old = os.stat(path)
    except FileNotFoundError:
        return path, None
    # a read-only file is not replaced. root passes every access check, so for root "read-only" means what it
    # means to the file's owner: no write permission bit at all (chmod a-w, as `chmod 444` leaves it)
    if not os.access(path, os.W_OK) or not old.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
    return path, old


# ---------------------------------------------------------------------------------------------------- loading
def _check(condition: bool, source: str, message: str) -> None:
    if not condition:
        raise ValueError(f"{source}: {message}")


def _foreign_hint(raw: bytes) -> str:
    if raw[:2] == b"PK" or raw[:1] == b"\x80":
        return (" (this looks like a PyTorch torch.save checkpoint, which is pickle-based: lucid.load reads only "
                "safetensors files; lucid.compat.torch.load reads torch.save's zip checkpoints without running "
                "their pickle)")
    return ""


def _is_count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _parse(raw: bytes, source: str) -> tuple[dict[str, tuple[str, np.ndarray]], dict[str, str]]:
    """Validate the file's layout; returns {name: (dtype name, little-endian numpy array)} and the metadata."""
    _check(len(raw) >= 8, source, f"not a safetensors file: {len(raw)} bytes, too short to hold the 8-byte header "
                                  "length (empty or truncated file)")
    header_len = int.from_bytes(raw[:8], "little")
    _check(header_len <= len(raw) - 8, source, f"header length {header_len} is larger than the rest of the file "
                                               f"({len(raw) - 8} bytes): truncated or not a safetensors file"
                                               + _foreign_hint(raw))
    _check(header_len <= _MAX_HEADER, source, f"header length {header_len} exceeds the {_MAX_HEADER}-byte limit")
    header = _json(raw[8:8 + header_len], source, "safetensors header", _foreign_hint(raw))
    _check(isinstance(header, dict), source, "corrupt safetensors header: not a JSON object")
    metadata = header.pop("__metadata__", None)
    metadata = {} if metadata is None else metadata
    _check(isinstance(metadata, dict) and all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in metadata.items()),
           source, "corrupt safetensors header: __metadata__ must map strings to strings")
    data = memoryview(raw)[8 + header_len:]
    entries, spans = {}, []
    for name, info in header.items():
        where = f"tensor {name!r}"
        _check(isinstance(info, dict) and {"dtype", "shape", "data_offsets"} <= info.keys(), source,
               f"corrupt safetensors header: {where} needs dtype, shape and data_offsets")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        _check(isinstance(dtype, str) and dtype in _DTYPES, source, f"{where} has unknown dtype {dtype!r:.40} "
                                                                    f"(lucid reads {', '.join(_DTYPES)})")
        # MLX holds sizes as 32-bit ints: a larger one (even in an empty tensor) is refused before anything is made
        _check(isinstance(shape, list) and len(shape) <= _MAX_DIMS and all(_is_count(s) and s < 2**31 for s in shape),
               source, f"{where} has an invalid shape {shape!r:.80}")
        _check(isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(o) for o in offsets)
               and offsets[0] <= offsets[1], source, f"{where} has invalid data_offsets {offsets!r:.80}")
        begin, end = offsets
        _check(end <= len(data), source, f"{where} has data_offsets [{begin}, {end}] out of range: the data section "
                                         f"has {len(data)} bytes (truncated file?)")
        np_dtype = _DTYPES[dtype][1]
        count = math.prod(shape)
        _check(end - begin == count * np_dtype.itemsize, source,
               f"{where}: size mismatch: shape {shape} of {dtype} needs {count * np_dtype.itemsize} bytes, "
               f"data_offsets [{begin}, {end}] hold {end - begin}")
        entries[name] = (dtype, np.frombuffer(data, dtype=np_dtype, count=count, offset=begin).reshape(shape))
        spans.append((begin, end, name))
    # as the safetensors format requires: the tensors' bytes tile the data section, without overlaps or gaps
    position = 0
    for begin, end, name in sorted(spans):
        _check(begin == position, source, f"tensor {name!r} has data_offsets [{begin}, {end}]: "
                                          + ("it overlaps another tensor's bytes" if begin < position else
                                             f"{begin - position} bytes before it belong to no tensor")
                                          + " (corrupt file)")
        position = end
    _check(position == len(data), source, f"{len(data) - position} bytes after the last tensor's data "
                                          "(corrupt file)")
    return entries, metadata


def _json(text: bytes, source: str, what: str, hint: str = ""):
    """Parse JSON from the file; anything malformed (bad UTF-8 or syntax, a number too long for Python, nesting
    deeper than the interpreter's stack) is a ValueError naming the file."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:  # (UnicodeDecodeError and JSONDecodeError are ValueErrors)
        problem = "nested too deeply" if isinstance(e, RecursionError) else f"not valid JSON ({e})"
        raise ValueError(f"{source}: corrupt {what}: {problem}{hint}") from None


def _to_mlx(dtype: str, data: np.ndarray) -> mx.array:
    mx_dtype, np_dtype = _DTYPES[dtype]
    native = data.astype(np_dtype.newbyteorder("="), copy=False)
    if dtype == "BF16":
        return mx.view(mx.array(native, dtype=mx.uint16), mx.bfloat16)
    if dtype == "BOOL":
        return mx.array(native != 0)
    return mx.array(native, dtype=mx_dtype)


def _to_numpy(dtype: str, data: np.ndarray) -> np.ndarray:
    if dtype == "BOOL":
        return data != 0
    return data.astype(_DTYPES[dtype][1].newbyteorder("="))  # a writable native copy


class _Rebuilder:
    """Turns the JSON structure back into the saved object, fetching arrays by name."""

    def __init__(self, entries: dict, source: str):
        self.entries, self.source = entries, source

    def array(self, name, kind: str):
        _check(isinstance(name, str) and name in self.entries, self.source,
               f"the structure refers to tensor {name!r}, which is not in the file (corrupt file)")
        dtype, data = self.entries[name]
        if kind == "T":
            return _wrap(_to_mlx(dtype, data))
        if kind == "M":
            return _to_mlx(dtype, data)
        _check(dtype != "BF16", self.source, f"tensor {name!r}: numpy has no bfloat16")
        arr = _to_numpy(dtype, data)
        return arr if kind == "N" else arr[()]

    def decode(self, node):
        if not isinstance(node, dict):
            _check(node is None or isinstance(node, (bool, int, float, str)), self.source,
                   f"corrupt {_STRUCTURE} metadata: unexpected {type(node).__name__}")
            return node
        _check(len(node) == 1, self.source, f"corrupt {_STRUCTURE} metadata: bad node {node!r:.80}")
        (tag, value), = node.items()
        if tag in ("T", "M", "N", "S"):
            return self.array(value, tag)
        if tag == "F":
            _check(value in ("nan", "inf", "-inf"), self.source, f"corrupt {_STRUCTURE} metadata: float {value!r}")
            return float(value)
        _check(tag in ("D", "OD", "L", "U") and isinstance(value, list), self.source,
               f"corrupt {_STRUCTURE} metadata: unknown node {tag!r}")
        if tag in ("L", "U"):
            items = [self.decode(v) for v in value]
            return items if tag == "L" else tuple(items)
        _check(all(isinstance(kv, list) and len(kv) == 2 for kv in value), self.source,
               f"corrupt {_STRUCTURE} metadata: dict items must be [key, value] pairs")
        items = [(self.decode(k), self.decode(v)) for k, v in value]
        for key, _ in items:  # what save writes as keys (a list or dict here would be unhashable)
            _check(key is None or isinstance(key, (bool, int, float, str)), self.source,
                   f"corrupt {_STRUCTURE} metadata: a dict key is a {type(key).__name__}")
        return OrderedDict(items) if tag == "OD" else dict(items)


def load(f, map_location=None, *, weights_only: bool = True, mmap=None):
    """Read what ``lucid.save`` wrote (or any safetensors file) from ``f``, a path or a binary file object.

    Returns the saved object with the same structure, key types and dtypes; tensors are new leaves (requires_grad
    False). A safetensors file without lucid's structure metadata loads as ``{name: Tensor}``. Truncated, corrupt
    or foreign files raise ValueError naming the problem. ``map_location``, ``weights_only`` and ``mmap`` are
    accepted for PyTorch compatibility: MLX memory is unified and loading never runs code, so they change
    nothing."""
    if hasattr(f, "read"):
        raw, source = f.read(), str(getattr(f, "name", "<file object>"))
    else:
        raw, source = Path(f).read_bytes(), os.fspath(f)
    entries, metadata = _parse(raw, source)
    rebuild = _Rebuilder(entries, source)
    if _STRUCTURE not in metadata:
        return {name: rebuild.array(name, "T") for name in entries}
    structure = _json(metadata[_STRUCTURE], source, f"{_STRUCTURE} metadata")
    try:
        return rebuild.decode(structure)
    except RecursionError:  # JSON nested deeper than save can write (its own walk is recursive too)
        raise ValueError(f"{source}: corrupt {_STRUCTURE} metadata: nested too deeply") from None
