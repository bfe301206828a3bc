"""Parameter and Buffer: Tensor subclasses that ``Module.__setattr__`` registers.

A ``Parameter`` is a leaf that shares its data's storage (no copy: MLX arrays are immutable, so sharing the
``Storage`` box is what makes ``Parameter(t)`` see later in-place writes to ``t`` and the other way round).
Ops return plain Tensors; only the leaf itself is a Parameter. Unlike Tensor, the subclasses have a ``__dict__``
so that, as in PyTorch, code may tag parameters with attributes (``p._no_weight_decay = True``).
"""
from __future__ import annotations

import copy

import mlx.core as mx

from .._dtype import get_default_dtype
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


_UNINITIALIZED_SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                        "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
                        "Call `forward` to initialize the parameters before accessing their attributes.")


class UninitializedTensorMixin:
    """A parameter or buffer of a lazy module before its first call: no shape yet (reading it raises PyTorch's
    error). ``materialize(shape)`` gives it its shape in place and turns it into ``cls_to_become``, so modules and
    optimizers that already hold the object keep it."""

    cls_to_become = None

    @property
    def shape(self):
        raise RuntimeError(_UNINITIALIZED_SHAPE)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Allocate the data (uninitialised: lucid's empty) with ``shape`` and become a plain parameter/buffer."""
        if dtype is None:
            dtype = self._st.data.dtype
        if isinstance(shape, int):
            shape = (shape,)
        self.data = _wrap(mx.zeros(tuple(shape), dtype))
        self.__class__ = self.cls_to_become

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__


def _empty_of(dtype):
    return _wrap(mx.zeros((0,), dtype if dtype is not None else get_default_dtype()))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is set by its lazy module's first call (``materialize``); it then is a Parameter."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return Parameter.__new__(cls, _empty_of(dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self._rg, None, self._st.data.dtype)
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        return (type(self), (self._rg, None, self._st.data.dtype))


class UninitializedBuffer(UninitializedTensorMixin, Buffer):
    """A buffer whose shape is set by its lazy module's first call; it then is a Buffer (lucid's buffers are
    Buffers; PyTorch's become plain Tensors, which behave the same in a module)."""

    cls_to_become = Buffer

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True):
        b = Buffer.__new__(cls, _empty_of(dtype), persistent=persistent)
        if requires_grad:
            b.requires_grad_(True)
        return b

    def __init__(self, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True):
        pass

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self._rg, None, self._st.data.dtype, self.persistent)
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        return (type(self), (self._rg, None, self._st.data.dtype, self.persistent))


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)


__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]
