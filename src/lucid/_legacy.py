"""PyTorch's legacy typed constructors (``FloatTensor``, ``LongTensor``, ...), kept so that old code ports.

``lucid.FloatTensor(2, 3)`` makes a (2, 3) tensor (zeros: MLX has no uninitialised memory), ``FloatTensor([1, 2])``
makes one from data, ``FloatTensor(t)`` returns an alias of a float32 ``t``. ``isinstance(t, lucid.FloatTensor)``
checks the dtype, and ``t.type(lucid.FloatTensor)`` casts, as in PyTorch. The objects made are plain Tensors.
"""
from __future__ import annotations

from numbers import Integral

import mlx.core as mx

from . import _dtype
from ._creation import tensor, zeros
from ._tensor import Tensor, _wrap


class _LegacyMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args, device=None):
        if not args:
            return zeros(0, dtype=cls.dtype)
        if all(isinstance(a, Integral) and not isinstance(a, bool) for a in args):
            return zeros(*args, dtype=cls.dtype)  # the shape form
        if len(args) == 1 and isinstance(args[0], Tensor):
            t = args[0]
            if t.dtype != cls.dtype:
                raise TypeError(f"expected {cls.__name__} ({_dtype.dtype_name(cls.dtype)}) but got a tensor of dtype "
                                f"{_dtype.dtype_name(t.dtype)}")
            alias = _wrap(t._storage.data)
            alias._storage = t._storage  # PyTorch's FloatTensor(t) shares t's data
            return alias
        if len(args) == 1 and (isinstance(args[0], (list, tuple)) or hasattr(args[0], "__array__")):
            return tensor(args[0], dtype=cls.dtype)
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")

    def __repr__(cls):
        return f"<class 'lucid.{cls.__name__}'>"


def _legacy(name: str, dtype) -> type:
    return _LegacyMeta(name, (), {"dtype": dtype, "__doc__": f"Legacy constructor for {_dtype.dtype_name(dtype)} "
                                                               "tensors (see lucid._legacy)."})


FloatTensor = _legacy("FloatTensor", mx.float32)
DoubleTensor = _legacy("DoubleTensor", mx.float64)
HalfTensor = _legacy("HalfTensor", mx.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", mx.bfloat16)
ByteTensor = _legacy("ByteTensor", mx.uint8)
CharTensor = _legacy("CharTensor", mx.int8)
ShortTensor = _legacy("ShortTensor", mx.int16)
IntTensor = _legacy("IntTensor", mx.int32)
LongTensor = _legacy("LongTensor", mx.int64)
BoolTensor = _legacy("BoolTensor", mx.bool_)

_TYPE_NAMES = {cls.dtype: cls.__name__ for cls in (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor,
                                                   CharTensor, ShortTensor, IntTensor, LongTensor, BoolTensor)}
_TYPE_NAMES[mx.complex64] = "ComplexFloatTensor"


def type_name(dtype) -> str:
    """PyTorch's name of the tensor type of ``dtype`` ("torch.FloatTensor"): what ``Tensor.type()`` returns and
    PyTorch's messages quote."""
    return "torch." + _TYPE_NAMES.get(dtype, "Tensor")


def dtype_of(name: str):
    """The dtype of a type name as ``Tensor.type`` takes it ("torch.FloatTensor", "lucid.FloatTensor")."""
    for dtype, short in _TYPE_NAMES.items():
        if name in (short, "torch." + short, "lucid." + short):
            return dtype
    raise ValueError(f"invalid type: '{name}'")


__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
           "IntTensor", "LongTensor", "BoolTensor"]
