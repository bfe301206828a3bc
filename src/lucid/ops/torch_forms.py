"""More of PyTorch's top-level forms: ``adaptive_max_pool1d`` and ``max_pool1d_with_indices`` (both return
``(values, indices)``), the ATen dropouts (``dropout_``, ``alpha_dropout_``, ``feature_dropout``,
``feature_alpha_dropout`` and their in-place forms, all ``(input, p, train)``), the factories ``asarray``,
``frombuffer``, ``empty_strided`` (and ``Tensor.new_empty_strided``).

lucid tensors are always laid out contiguously (MLX arrays have no user-visible strides), so ``empty_strided``
checks its strides' length and makes a contiguous tensor, as ``empty`` (zeros: MLX has no uninitialised memory).
``frombuffer`` copies the buffer (MLX arrays own their memory): later writes to the buffer are not seen.
"""
from __future__ import annotations

__all__ = ["adaptive_max_pool1d", "max_pool1d_with_indices", "dropout_", "alpha_dropout_", "feature_dropout", "feature_dropout_", "feature_alpha_dropout",
           "feature_alpha_dropout_", "asarray", "frombuffer", "empty_strided"]

import warnings

import numpy as np

from .. import _creation
from .._dtype import dtype_name, to_numpy_dtype
from .._surface import attach
from .._tensor import Tensor
from . import nn_basic as _nn
from . import pool as _pool
from .shape import _size_arg


# ---------------------------------------------------------------------------------------------------- pooling
def adaptive_max_pool1d(input, output_size) -> tuple:
    """ATen's adaptive_max_pool1d: ``(values, indices)`` (``nn.functional.adaptive_max_pool1d`` with
    ``return_indices=True``)."""
    return _pool.adaptive_max_pool1d(input, output_size, return_indices=True)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False) -> tuple:
    """``(values, indices)`` of ``nn.functional.max_pool1d``."""
    return _pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


# ---------------------------------------------------------------------------------------------------- dropouts
def dropout_(input, p: float, train: bool) -> Tensor:
    """ATen's in-place dropout: ``input`` overwritten by ``dropout(input, p, train)``."""
    return _nn.dropout(input, p, train, inplace=True)


def alpha_dropout_(input, p: float, train: bool) -> Tensor:
    """ATen's in-place alpha dropout."""
    return _nn.alpha_dropout(input, p, train, inplace=True)


def _feature(input, p, train, inplace, alpha):
    _nn._check_p(p)
    return _nn._dropout(input, p, train, inplace, _nn._channels(input), alpha=alpha)


def feature_dropout(input, p: float, train: bool) -> Tensor:
    """Dropout of whole channels of (N, C, *) ``input`` (each (sample, channel) kept or zeroed together)."""
    return _feature(input, p, train, False, False)


def feature_dropout_(input, p: float, train: bool) -> Tensor:
    """In-place ``feature_dropout``."""
    return _feature(input, p, train, True, False)


def feature_alpha_dropout(input, p: float, train: bool) -> Tensor:
    """Alpha dropout of whole channels of (N, C, *) ``input``."""
    return _feature(input, p, train, False, True)


def feature_alpha_dropout_(input, p: float, train: bool) -> Tensor:
    """In-place ``feature_alpha_dropout``."""
    return _feature(input, p, train, True, True)


# ---------------------------------------------------------------------------------------------------- factories
def asarray(obj, *, dtype=None, device=None, copy: bool | None = None, requires_grad: bool | None = None) -> Tensor:
    """``obj`` as a tensor: a Tensor of the asked dtype is returned as it is (unless ``copy=True``), others are
    converted (``copy=False`` refuses a conversion that must copy a Tensor, as PyTorch's). Without
    ``requires_grad`` a Tensor's own flag is kept, with PyTorch's warning."""
    if isinstance(obj, Tensor):
        if requires_grad is None and obj.requires_grad:
            warnings.warn("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of "
                          "False. Pass requires_grad=False explicitly to get the old behavior and silence this "
                          "warning.", UserWarning, stacklevel=2)
        same = dtype is None or dtype == obj.dtype
        if not same and copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_SCALAR.get(dtype_name(obj.dtype), obj.dtype)}' into "
                             f"dtype '{_SCALAR.get(dtype_name(dtype), dtype)}'.")
        out = obj if same else obj.to(dtype)
        if copy:
            out = out.clone()
        if requires_grad is not None and not requires_grad and out.requires_grad:
            out = out.detach()
        elif requires_grad and not out.requires_grad:
            out = out.detach().requires_grad_(True) if out is obj else out.requires_grad_(True)
        return out
    return _creation.tensor(obj, dtype=dtype, device=device, requires_grad=bool(requires_grad))


_SCALAR = {"float64": "Double", "float32": "Float", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
           "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
           "complex64": "ComplexFloat"}


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """A 1-D tensor of ``count`` elements of ``dtype`` read from an object with the buffer protocol, starting
    ``offset`` bytes in (``count=-1``: up to the end). The bytes are copied."""
    view = memoryview(buffer).cast("B")
    length = view.nbytes
    size = np.dtype(to_numpy_dtype(dtype)).itemsize
    if length == 0 and count == -1 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must not "
                         f"be greater than actual buffer length ({length} bytes)")
    host = np.frombuffer(view, dtype=to_numpy_dtype(dtype), count=count, offset=offset)
    return _creation.tensor(host, dtype=dtype, requires_grad=requires_grad)


def _check_strides(size: tuple, stride) -> None:
    if len(tuple(stride)) != len(size):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(tuple(stride))})")


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` (zeros). lucid's tensors are contiguous, so ``stride`` is checked but not kept."""
    size = _size_arg(tuple(size) if not isinstance(size, int) else (size,))
    _check_strides(size, stride)
    return _creation.empty(size, dtype=dtype, device=device, requires_grad=requires_grad)


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                       pin_memory: bool = False) -> Tensor:
    """``empty_strided`` with this tensor's dtype and device unless given."""
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


attach("new_empty_strided", _new_empty_strided)
attach("name", property(lambda self: None, doc="PyTorch's read-only ``Tensor.name``: None (no tensor carries a name)."))
