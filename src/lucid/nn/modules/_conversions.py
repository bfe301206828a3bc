"""``Module``'s dtype and device conversions (``to``, ``to_empty``, ``float``, ``double``, ``half``, ``bfloat16``,
``type``, ``cpu``, ``cuda``): each applies a Tensor conversion to every parameter and buffer through the module's
``_apply``; and the replica that DataParallel makes. A mixin of ``Module`` (kept apart so that module.py stays
short)."""
from __future__ import annotations

import mlx.core as mx

from ... import _creation, _dtype
from ..._tensor import Tensor


class _Conversions:
    def to(self, *args, **kwargs) -> "Module":
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)``: floating and complex parameters and
        buffers take the dtype; integer buffers keep theirs. Parameters and buffers move to or from the meta device
        (a meta module cannot move to a real device this way: ``to_empty`` gives it memory)."""
        device, dtype, _, copy, _ = _dtype.parse_to(args, kwargs)
        if copy is not None:  # (PyTorch's _parse_to: a module's tensors are converted in place)
            raise RuntimeError(".to() does not accept copy argument")
        if device is not None:
            device = _dtype.check_device(device, dtype or mx.float32)
        if dtype is not None and not (_dtype.is_floating(dtype) or _dtype.is_complex(dtype)):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype=lucid.{_dtype.dtype_name(dtype)}")

        def convert(t: Tensor) -> Tensor:
            d = dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) else None
            if device is None or (device.type == "meta") == t.is_meta:
                return t if d is None else t.to(d)
            try:
                return t.to(device=device, dtype=d)
            except NotImplementedError as e:
                raise NotImplementedError(f"{e} Please use lucid.nn.Module.to_empty() instead of lucid.nn.Module.to() "
                                          "when moving module from meta to a different device.") from None

        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True) -> "Module":
        """Give every parameter and buffer new, uninitialized storage on ``device`` (lucid fills it with zeros) of
        the same shape and dtype: how a module built on the meta device gets memory (then initialize it, or load a
        state dict). Parameters keep their identity.

        :param device: where the new storage lives (``"cpu"``, ``"gpu"``, or ``"meta"`` to drop the values).
        :param recurse: also the submodules' parameters and buffers (False: this module's own only)."""
        return self._apply(lambda t: _creation.empty_like(t, device=device), recurse=recurse)

    def _replicate_for_data_parallel(self) -> "Module":
        """A shallow replica, as PyTorch's DataParallel makes one per device: it shares the attributes, has copies
        of the buffer and submodule dicts, and no parameters of its own (the replicating code sets each one,
        typically as a view of the original's, so gradients flow back to the original)."""
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        replica._is_replica = True
        return replica

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
        """``Tensor.cpu()`` of every parameter and buffer: each is itself (MLX's memory needs no copy), and a meta
        one raises, as in PyTorch (``to_empty`` gives a meta module memory)."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None) -> "Module":
        """``Tensor.cuda(device)`` of every parameter and buffer, as PyTorch: ``self`` where MLX runs on CUDA,
        PyTorch's AssertionError elsewhere (a module without tensors has nothing to move and returns ``self``).

        :param device: the CUDA device (``"cuda"``, ``"cuda:0"``, ``0``); None: the current one."""
        return self._apply(lambda t: t.cuda(device))
