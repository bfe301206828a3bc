"""``Variable``: PyTorch's legacy name from before tensors carried autograd. ``Variable(t)`` is a tensor that
shares ``t``'s data, cut off from its graph, with ``requires_grad`` as asked; every Tensor is an instance."""
from __future__ import annotations

from .._tensor import Tensor
from .graph import queue_callback


class _ExecutionEngine:
    """``Variable._execution_engine``: PyTorch's handle on its engine, kept for ``queue_callback``."""

    queue_callback = staticmethod(queue_callback)


class _VariableMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor)

    def __call__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if data is None:
            return Tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)``: see the module docstring."""

    _execution_engine = _ExecutionEngine()
