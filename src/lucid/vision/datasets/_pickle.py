"""Reading CIFAR's python pickles safely: plain data (dicts, lists, strings, numbers) and numpy arrays of plain
dtypes, nothing else. ``pickle.load`` would run whatever callable a file names; here ``find_class`` resolves only
the few names a pickled numpy array uses, each to a stand-in of this module's own that records its arguments, and
the arrays are made from those records with ``np.frombuffer`` after the load (object arrays are refused)."""
from __future__ import annotations

import io
import pickle

import numpy as np


class _Stub:
    """What a pickled ``ndarray``/``dtype`` becomes while loading: its constructor arguments and its state."""

    def __init__(self, kind: str, args: tuple):
        self.kind, self.args, self.state = kind, args, None

    def __setstate__(self, state):
        if self.state is not None:
            raise pickle.UnpicklingError("a numpy object's state was set twice")
        self.state = state


class _Factory:
    """A stand-in for one allowed global: calling it records a ``_Stub``; nothing can be set on it."""

    def __init__(self, kind: str):
        self._kind = kind

    def __call__(self, *args):
        if self._kind == "encode":  # _codecs.encode(text, "latin1"): how Python 3 pickles bytes at protocol 2
            if len(args) != 2 or not isinstance(args[0], str) or args[1] not in ("latin1", "latin-1"):
                raise pickle.UnpicklingError("_codecs.encode is allowed only as encode(str, 'latin1')")
            return args[0].encode("latin1")
        return _Stub(self._kind, args)

    def __setstate__(self, state):
        raise pickle.UnpicklingError("a pickle tried to set state on a global")


_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"): "array", ("numpy._core.multiarray", "_reconstruct"): "array",
    ("numpy.core.numeric", "_frombuffer"): "frombuffer", ("numpy._core.numeric", "_frombuffer"): "frombuffer",
    ("numpy", "ndarray"): "ndarray", ("numpy", "dtype"): "dtype", ("_codecs", "encode"): "encode",
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        kind = _ALLOWED.get((module, name))
        if kind is None:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}: a CIFAR file holds only plain data and "
                                         "numpy arrays")
        return _Factory(kind)

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent ids are not allowed")


def _dtype(stub) -> np.dtype:
    if not isinstance(stub, _Stub) or stub.kind != "dtype" or not stub.args or not isinstance(stub.args[0], str):
        raise pickle.UnpicklingError("an array's dtype is not a numpy dtype")
    dtype = np.dtype(stub.args[0])
    if dtype.kind not in "biuf":  # no object, void, string dtypes: numbers only
        raise pickle.UnpicklingError(f"refusing an array of dtype {dtype}")
    state = stub.state
    if isinstance(state, tuple) and len(state) > 1 and state[1] in ("<", ">", "|", "="):
        dtype = dtype.newbyteorder(state[1]) if state[1] != "|" else dtype
    return dtype


def _array(stub) -> np.ndarray:
    if stub.kind == "frombuffer":  # _frombuffer(buffer, dtype, shape, order)
        buf, dtype, shape, order = stub.args
        return np.frombuffer(bytes(buf), dtype=_dtype(dtype)).reshape(shape, order=order).copy()
    if stub.kind != "array" or not isinstance(stub.state, tuple) or len(stub.state) != 5:
        raise pickle.UnpicklingError("a numpy array without its (version, shape, dtype, fortran, data) state")
    _, shape, dtype, fortran, data = stub.state
    if isinstance(data, str):  # a Python 2 pickle read with encoding='latin1'
        data = data.encode("latin1")
    if not isinstance(data, (bytes, bytearray)):
        raise pickle.UnpicklingError("refusing an array whose data is not raw bytes (an object array)")
    dtype = _dtype(dtype)
    shape = tuple(int(s) for s in shape)
    if int(np.prod(shape, dtype=np.int64)) * dtype.itemsize != len(data):
        raise pickle.UnpicklingError(f"an array of shape {list(shape)} and dtype {dtype} with {len(data)} bytes")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C").copy()


def _resolve(obj):
    """``obj`` with each array stand-in replaced by its array (only containers the unpickler can build)."""
    if isinstance(obj, _Stub):
        return _array(obj)
    if isinstance(obj, dict):
        return {_resolve(k): _resolve(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_resolve(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_resolve(v) for v in obj)
    if isinstance(obj, _Factory):
        raise pickle.UnpicklingError("a pickle holds a bare global")
    return obj


def load_plain(path) -> object:
    """The plain data and numpy arrays pickled in the file ``path`` (Python 2 pickles read as latin1 text)."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return _resolve(_Unpickler(io.BytesIO(raw), encoding="latin1").load())
    except (EOFError, ValueError, TypeError, IndexError, KeyError, AttributeError) as e:
        raise pickle.UnpicklingError(f"{path}: not a readable pickle of plain data ({type(e).__name__}: {e})") from e
