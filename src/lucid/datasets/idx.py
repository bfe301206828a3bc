"""Readers for the IDX format of MNIST-style data sets (MNIST, Fashion-MNIST, KMNIST, EMNIST), which users
download themselves; lucid never downloads anything.

An IDX file is: two zero bytes, a type code byte, a byte with the number of dimensions n, n big-endian uint32
sizes, then the values in C order, big-endian. Files may be gzip-compressed (recognised by their content).
"""
from __future__ import annotations

import gzip
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from .._creation import from_numpy
from .._tensor import Tensor

# type code -> big-endian numpy dtype
_IDX_DTYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
               0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
_GZIP_MAGIC = b"\x1f\x8b"


def _read_bytes(source, name: str) -> bytes:
    raw = source.read() if hasattr(source, "read") else Path(source).read_bytes()
    if not raw.startswith(_GZIP_MAGIC):
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise ValueError(f"{name}: corrupt or truncated gzip data ({e})") from e


def parse_idx(raw: bytes, name: str = "<bytes>") -> np.ndarray:
    """The array stored in the IDX bytes ``raw`` (native byte order); ``name`` appears in error messages."""
    if len(raw) < 4:
        raise ValueError(f"{name}: not an IDX file: {len(raw)} bytes, shorter than the 4-byte magic number")
    zero, code, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0:
        raise ValueError(f"{name}: not an IDX file: bad magic number 0x{raw[:4].hex()} (the first two bytes "
                         "must be zero)")
    if code not in _IDX_DTYPES:
        raise ValueError(f"{name}: unknown IDX data type code 0x{code:02x} (expected one of "
                         f"{', '.join(f'0x{c:02x}' for c in _IDX_DTYPES)})")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"{name}: truncated IDX header: {ndim} dimensions need {header} bytes, the file has "
                         f"{len(raw)}")
    shape = struct.unpack(f">{ndim}I", raw[4:header])
    dtype = _IDX_DTYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    actual = len(raw) - header
    if actual < expected:
        raise ValueError(f"{name}: truncated IDX data: shape {list(shape)} of {dtype.name} needs {expected} bytes, "
                         f"the file has {actual}")
    if actual > expected:
        raise ValueError(f"{name}: corrupt IDX file: {actual - expected} bytes after the data of shape "
                         f"{list(shape)}")
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def read_idx(path) -> Tensor:
    """The tensor stored in an IDX file (a path or a binary file object; gzip or raw). dtypes: 0x08 uint8,
    0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64. Malformed files raise ValueError."""
    name = str(getattr(path, "name", "<file>")) if hasattr(path, "read") else os.fspath(path)
    return from_numpy(parse_idx(_read_bytes(path, name), name))


_MNIST_FILES = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
                False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def _find(root: Path, stem: str) -> Path:
    """``stem`` under ``root`` or torchvision's ``root/<Name>/raw`` layout, raw or gzipped (``.gz`` or
    ``-idx3-ubyte`` spelled with a dot, as some mirrors do)."""
    names = [stem, stem + ".gz", stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"]
    folders = [root, root / "raw", *sorted(p / "raw" for p in root.glob("*") if (p / "raw").is_dir())]
    for folder in folders:
        for n in names:
            if (folder / n).is_file():
                return folder / n
    raise FileNotFoundError(f"no {stem}[.gz] under {root} (looked in {', '.join(str(f) for f in folders)}); "
                            "download the MNIST-format files (e.g. MNIST or Fashion-MNIST) and pass their folder")


def load_mnist(root, train: bool = True) -> tuple[Tensor, Tensor]:
    """``(images, labels)`` from MNIST-format files in ``root``: images uint8 (N, 28, 28) (whatever size the files
    hold), labels int64 (N,). Reads ``train-*`` (``train=True``) or ``t10k-*`` files, gzipped or raw; works for
    MNIST, Fashion-MNIST and KMNIST, which share the file names."""
    root = Path(root)
    images_path, labels_path = (_find(root, stem) for stem in _MNIST_FILES[bool(train)])
    images, labels = read_idx(images_path), read_idx(labels_path)
    if images.ndim != 3 or labels.ndim != 1:
        raise ValueError(f"expected images of 3 dimensions and labels of 1, got shapes {list(images.shape)} "
                         f"({images_path.name}) and {list(labels.shape)} ({labels_path.name})")
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"{images_path.name} has {images.shape[0]} images but {labels_path.name} has "
                         f"{labels.shape[0]} labels")
    return images, labels.long()
