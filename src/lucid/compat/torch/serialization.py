"""``torch.save`` / ``torch.load`` on lucid.

Saving writes PyTorch's own zip format (``_writer.py``), so real PyTorch opens the file with
``torch.load(weights_only=True)`` when it holds tensors, state_dicts, optimizer state and containers of them with
numbers, strings, bools and None. Anything else (a whole module, an ``argparse.Namespace`` in a checkpoint) is
pickled by its own ``__reduce__``, as PyTorch's ``torch.save`` does, and loads with ``weights_only=False`` or with its
classes allowed (``add_safe_globals``, ``safe_globals``). ``lucid.save`` stays safetensors.

Loading reads three kinds of file:
- PyTorch's zip checkpoints (``.pt``/``.pth`` from ``torch.save``, PyTorch's or this one): a zip holding
  ``<name>/data.pkl`` (the object's pickle) and ``<name>/data/<key>`` (each storage's raw bytes;
  ``<name>/byteorder`` says their byte order). Tensors appear in the pickle as
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)`` calls, and each storage
  as a persistent id ``('storage', torch.FloatStorage, key, location, numel)``. By default (``weights_only=True``)
  lucid's own interpreter of the pickle (``_unpickler.py``, PyTorch's rules) resolves only an allow-list of
  globals - containers and those rebuild functions, mapped to lucid's own (``_rebuild.py``) - and the user's safe
  globals, and builds only instances of allow-listed types, so a checkpoint's pickle can never run code or change
  lucid's classes and tables. A storage's record is read only when the zip directory says it holds exactly its
  ``numel`` elements; a tensor is a view of its storage (stride-0 dimensions stay broadcasts);
- safetensors (what ``lucid.save`` writes): parsed, nothing executed;
- the marked pickles that lucid's earlier ``torch.save`` wrote for other objects, with ``weights_only=False`` only.
"""
from __future__ import annotations

import io
import os
import pickle
import zipfile
import zlib

import numpy as np

import lucid
from lucid.serialization import _DTYPES, _to_mlx

from ._rebuild import ALLOWED, BLOCKED_MODULES, Storage, StorageType, describe, is_int
from ._unpickler import WeightsOnlyUnpickler
from ._writer import save_zip

_PICKLE_MARKER = b"lucid.compat.torch pickle v1\n"

# what the user marked safe, as given (a global, or a (global, "module.qualname") pair): PyTorch's set
_marked_safe_globals: set = set()


def add_safe_globals(safe_globals: list) -> None:
    """Mark globals (functions or classes, or ``(global, "module.qualname")`` pairs naming them as the checkpoint
    does) as safe for ``weights_only`` loads: they may then be called, instantiated and have state set."""
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals.union(set(safe_globals))


def get_safe_globals() -> list:
    """The globals the user marked safe for ``weights_only`` loads."""
    return list(_marked_safe_globals)


def clear_safe_globals() -> None:
    """Forget every global the user marked safe for ``weights_only`` loads."""
    global _marked_safe_globals
    _marked_safe_globals = set()


class safe_globals:
    """Context manager: the given globals are safe for ``weights_only`` loads inside the block, and are removed from
    the safe set again at its end (``with torch.serialization.safe_globals([MyModel]): torch.load(f)``)."""

    def __init__(self, safe_globals: list):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):
        _remove_safe_globals(self.safe_globals)


def _remove_safe_globals(safe_globals: list) -> None:
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals - set(safe_globals)


def _user_allowed_globals() -> dict[tuple[str, str], object]:
    """The marked globals by the (module, qualname) a pickle names them with (PyTorch's checks and messages)."""
    allowed = {}
    for g in _marked_safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                                 f"length: {len(g)}")
            if type(g[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                                f"{type(g[1])}")
            g, name = g
        else:
            name = f"{g.__module__}.{g.__qualname__}"
        module, _, qualname = name.rpartition(".")
        allowed[(module, qualname)] = g
    return allowed


def save(obj, f, pickle_module=None, pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Write ``obj`` to ``f`` (a path or a binary file object) in PyTorch's zip format: real PyTorch loads it. A
    path is replaced whole (through a temporary file), so an interrupted save never leaves half a checkpoint.
    The pickle is always protocol 2 (PyTorch's default, and what weights-only loaders read) with a byte-order
    record; ``pickle_module``, ``pickle_protocol`` and the private flags are accepted for PyTorch's signature."""
    save_zip(obj, f)


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
        return _load_torch_zip(raw, source, weights_only, pickle_load_args.get("encoding", "utf-8"))
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
def _find_global(module: str, name: str, weights_only: bool, user_allowed: dict):
    """What a checkpoint's global stands for: lucid's object from the allow-list (or the user's, with
    ``add_safe_globals``); with ``weights_only`` nothing else; without it, any non-PyTorch global (the user opted in
    to running the file's code). Refusals are bare messages: the caller names the file."""
    if weights_only and module in BLOCKED_MODULES:
        raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {module}.{name} whose module {module} is "
                                     "blocked.")
    found = ALLOWED.get((module, name), user_allowed.get((module, name)))
    if found is not None:
        return found
    if module == "torch" or module.startswith("torch."):
        raise pickle.UnpicklingError(
            f"the checkpoint pickles PyTorch's {module}.{name}, which lucid can't rebuild (it reads tensors and "
            "containers of them; save model.state_dict() rather than the model)")
    if weights_only:
        raise pickle.UnpicklingError(
            f"the checkpoint refers to the global {module}.{name}, which is not allowed: loading it could run "
            "arbitrary code. Re-run torch.load with weights_only=False only if you trust where the file came from "
            f"(or allow the class with torch.serialization.add_safe_globals([{name}])).")
    return None


class _TrustedUnpickler(pickle.Unpickler):
    """``weights_only=False``: plain pickle, PyTorch's names mapped to lucid's."""

    def __init__(self, file, source: str, persistent_load):
        super().__init__(file)
        self.source, self.persistent_load = source, persistent_load

    def find_class(self, module: str, name: str):
        try:
            found = _find_global(module, name, False, _user_allowed_globals())
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(f"{self.source}: {e}") from None
        return super().find_class(module, name) if found is None else found


def _read_record(archive: zipfile.ZipFile, name: str, source: str, limit: int | None = None) -> bytes:
    """One record, refused from the zip directory (before a byte is inflated) when it is larger than ``limit``."""
    size = archive.getinfo(name).file_size
    if limit is not None and size > limit:
        raise ValueError(f"{source}: corrupt zip checkpoint: {name} is {size} bytes, more than its {limit}")
    try:
        return archive.read(name)
    except (zipfile.BadZipFile, EOFError, OSError, NotImplementedError, zlib.error) as e:
        raise ValueError(f"{source}: corrupt zip checkpoint: {name} ({e})") from None


def _load_torch_zip(raw: bytes, source: str, weights_only: bool, encoding: str):
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        names = archive.namelist()
    except (zipfile.BadZipFile, EOFError, OSError, NotImplementedError, ValueError) as e:
        raise ValueError(f"{source}: corrupt zip checkpoint ({e})") from None
    pickles = [n for n in names if n.endswith("data.pkl") and n.count("/") <= 1]
    if len(pickles) != 1:
        raise ValueError(f"{source}: a zip file but not a PyTorch checkpoint (no single <name>/data.pkl)")
    prefix = pickles[0][:-len("data.pkl")]
    order = _read_record(archive, prefix + "byteorder", source, 16) if prefix + "byteorder" in names else b"little"
    if order not in (b"little", b"big"):
        raise ValueError(f"{source}: unknown byteorder {order!r:.20}")
    loaded: dict[str, Storage] = {}

    def persistent_load(pid) -> Storage:
        """A storage, read once (views of one storage share it, as in PyTorch) and only if its record holds
        exactly numel elements: the zip directory's size is checked before a byte is inflated."""
        if not (type(pid) is tuple and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], StorageType)
                and isinstance(pid[2], str) and is_int(pid[4]) and pid[4] >= 0):
            raise pickle.UnpicklingError(f"unknown persistent id {describe(pid)} (not a tensor storage)")
        kind, key, numel = pid[1], pid[2], pid[4]
        if order == b"big" and kind == ALLOWED[("torch.storage", "UntypedStorage")]:
            raise RuntimeError(f"{source}: a big-endian byte storage (of uint16/uint32/uint64 tensors): lucid reads "
                               "those from little-endian checkpoints only")
        if key not in loaded:
            entry = f"{prefix}data/{key}"
            if entry not in names:
                raise RuntimeError(f"{source}: the pickle refers to storage {key!r:.40}, missing from the archive")
            np_dtype = _DTYPES[kind.dtype][1].newbyteorder("<" if order == b"little" else ">")
            nbytes, size = numel * np_dtype.itemsize, archive.getinfo(entry).file_size
            if size != nbytes:
                raise RuntimeError(f"{source}: storage {key!r:.40}: record size ({size} bytes) does not match expected "
                                   f"size ({nbytes} bytes = {numel} elements * {np_dtype.itemsize} bytes/element) "
                                   f"for dtype {kind.name}")
            data = np.frombuffer(_read_record(archive, entry, source, nbytes), dtype=np_dtype)
            loaded[key] = Storage(_to_mlx(kind.dtype, data), numel, kind.dtype)
        if loaded[key].dtype != kind.dtype:
            raise pickle.UnpicklingError(f"storage {key!r:.40} is read as two different dtypes")
        return loaded[key]

    data = _read_record(archive, pickles[0], source)
    if not weights_only:
        return _TrustedUnpickler(io.BytesIO(data), source, persistent_load).load()
    user_allowed = _user_allowed_globals()
    return WeightsOnlyUnpickler(data, source, lambda module, name: _find_global(module, name, True, user_allowed),
                                [*ALLOWED.values(), *user_allowed.values()], persistent_load, encoding).load()
