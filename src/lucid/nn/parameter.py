"""Parameter and Buffer: Tensor subclasses that ``Module.__setattr__`` registers.

A ``Parameter`` is a leaf that shares its data's storage (no copy: MLX arrays are immutable, so sharing the
``Storage`` box is what makes ``Parameter(t)`` see later in-place writes to ``t`` and the other way round).
Ops return plain Tensors; only the leaf itself is a Parameter. Unlike Tensor, the subclasses have a ``__dict__``
so that, as in PyTorch, code may tag parameters with attributes (``p._no_weight_decay = True``).
"""
from __future__ import annotations

import copy

import mlx.core as mx

from .._tensor import Tensor, _wrap


def _share(cls, data) -> Tensor:
    """A new ``cls`` leaf sharing ``data``'s storage (``data`` None means an empty float tensor)."""
    if data is None:
        data = _wrap(mx.zeros((0,), mx.float32))
    elif not isinstance(data, Tensor):
        data = Tensor(data)
    t = object.__new__(cls)
    t._st = data._st
    t._rg = False
    t._fn = None
    t._nr = 0
    t._grad = None
    t._accum = None
    t._extra = None
    return t


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it as a Module attribute adds it to ``parameters()``."""

    def __new__(cls, data=None, requires_grad: bool = True):
        p = _share(cls, data)
        if requires_grad:
            p._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
        return p

    def __init__(self, data=None, requires_grad: bool = True):
        pass  # all the work is in __new__ (Tensor.__init__ would build a fresh storage)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(_wrap(self._st.data), self._rg)  # the array is immutable: sharing it is a copy
        result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        # the values travel as a Tensor (which keeps the dtype); attributes code set on the parameter come along
        return (type(self), (_wrap(self._st.data), self._rg), dict(self.__dict__) or None)


class Buffer(Tensor):
    """A Tensor that is a module buffer: assigning it as a Module attribute registers it with
    ``register_buffer(name, value, persistent)``."""

    def __new__(cls, data=None, *, persistent: bool = True):
        b = _share(cls, data)
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent: bool = True):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(_wrap(self._st.data), persistent=self.persistent)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (type(self), (_wrap(self._st.data),), dict(self.__dict__))  # the state holds ``persistent``


__all__ = ["Parameter", "Buffer"]
