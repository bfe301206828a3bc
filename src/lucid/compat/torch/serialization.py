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
  calls, and each storage as a persistent id ``('storage', torch.FloatStorage, key, location, numel)``. By
  default (``weights_only=True``) lucid's own interpreter of the pickle (``_unpickler.py``, PyTorch's rules)
  resolves only an allow-list of globals - containers and those rebuild functions, mapped to lucid's own
  (``_rebuild.py``) - and builds only instances of allow-listed types, so a checkpoint's pickle can never run code
  or change lucid's classes and tables. A storage's record is read only when the zip directory says it holds
  exactly its ``numel`` elements; a tensor is a view of its storage (stride-0 dimensions stay broadcasts);
- the pickles written above, with ``weights_only=False`` only.
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

_PICKLE_MARKER = b"lucid.compat.torch pickle v1\n"

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
def _find_global(module: str, name: str, weights_only: bool):
    """What a checkpoint's global stands for: lucid's object from the allow-list (or the user's, with
    ``add_safe_globals``); with ``weights_only`` nothing else; without it, any non-PyTorch global (the user opted in
    to running the file's code). Refusals are bare messages: the caller names the file."""
    if weights_only and module in BLOCKED_MODULES:
        raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {module}.{name} whose module {module} is "
                                     "blocked.")
    found = ALLOWED.get((module, name), _safe_globals.get((module, name)))
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
            found = _find_global(module, name, weights_only=False)
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
    return WeightsOnlyUnpickler(data, source, lambda module, name: _find_global(module, name, True),
                                [*ALLOWED.values(), *_safe_globals.values()], persistent_load, encoding).load()
