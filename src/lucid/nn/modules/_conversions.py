"""``Module``'s dtype and device conversions (``to``, ``float``, ``double``, ``half``, ``bfloat16``, ``type``, ``cpu``,
``cuda``): each applies a Tensor conversion to every parameter and buffer through the module's ``_apply``. A mixin
of ``Module`` (kept apart so that module.py stays short)."""
from __future__ import annotations

import mlx.core as mx

from ... import _dtype
from ..._tensor import Tensor


class _Conversions:
    def to(self, *args, **kwargs) -> "Module":
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)``: floating and complex parameters and
        buffers take the dtype; integer buffers keep theirs."""
        device, dtype, _, copy, _ = _dtype.parse_to(args, kwargs)
        if copy is not None:  # (PyTorch's _parse_to: a module's tensors are converted in place)
            raise RuntimeError(".to() does not accept copy argument")
        if dtype is not None and not (_dtype.is_floating(dtype) or _dtype.is_complex(dtype)):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype=lucid.{_dtype.dtype_name(dtype)}")
        if device is not None:
            _dtype.check_device(device, dtype or mx.float32)

        def convert(t: Tensor) -> Tensor:
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                return t.to(dtype)
            return t

        return self._apply(convert)

    def _cast_floating(self, dtype) -> "Module":
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> "Module":
        return self._cast_floating(mx.float32)

    def double(self) -> "Module":
        return self._cast_floating(mx.float64)

    def half(self) -> "Module":
        return self._cast_floating(mx.float16)

    def bfloat16(self) -> "Module":
        return self._cast_floating(mx.bfloat16)

    def type(self, dst_type) -> "Module":
        return self._apply(lambda t: t.to(dst_type))

    def cpu(self) -> "Module":
        """``self``: MLX's memory needs no copy (``Tensor.cpu()`` of every parameter and buffer is itself)."""
        return self

    def cuda(self, device=None) -> "Module":
        """``Tensor.cuda(device)`` of every parameter and buffer, as PyTorch: ``self`` where MLX runs on CUDA,
        PyTorch's AssertionError elsewhere (a module without tensors has nothing to move and returns ``self``).

        :param device: the CUDA device (``"cuda"``, ``"cuda:0"``, ``0``); None: the current one."""
        return self._apply(lambda t: t.cuda(device))
