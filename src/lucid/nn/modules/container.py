"""Containers (Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict) and Identity, as in PyTorch:
children are registered under their index ("0", "1", ...) or key, which is what state_dict keys are made of."""
from __future__ import annotations

import operator
from collections import OrderedDict, abc
from itertools import chain, islice
from typing import Any, Iterable, Iterator

from ... import _dtype
from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent


class Identity(Module):
    """Returns its input; takes and ignores any constructor arguments (a placeholder layer)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


def _abs_index(idx, size: int) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size if size else idx


def _renumber(container: Module) -> None:
    """Keys "0".."n-1" again after a deletion, so that indices and state_dict keys stay contiguous."""
    container._modules = OrderedDict((str(i), m) for i, m in enumerate(container._modules.values()))


class Sequential(Module):
    """Modules called in order, each on the previous one's output. ``Sequential(a, b)`` names them "0", "1";
    ``Sequential(OrderedDict(name=module, ...))`` keeps the given names."""

    def __init__(self, *args: Module):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return next(islice(self._modules.values(), _abs_index(idx, len(self)), None))

    def __setitem__(self, idx: int, module: Module) -> None:
        key = next(islice(self._modules.keys(), _abs_index(idx, len(self)), None))
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, next(islice(self._modules.keys(), _abs_index(idx, len(self)), None)))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        out = Sequential()
        for layer in chain(self, other):
            out.append(layer)
        return out

    def __iadd__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return self.extend(list(other))

    def __mul__(self, other: int) -> "Sequential":
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        out = Sequential()
        for _ in range(other):
            for layer in self:
                out.append(layer)
        return out

    __rmul__ = __mul__

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> "Sequential":
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key: int) -> Module:
        v = self[key]
        del self[key]
        return v

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered as "0", "1", ... (no forward of its own).

    :param modules: an iterable of modules to append.

    >>> import lucid
    >>> layers = lucid.nn.ModuleList([lucid.nn.Linear(2, 2) for _ in range(3)])
    >>> len(layers), len(list(layers.parameters()))
    (3, 6)
    """

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(idx, len(self)))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_abs_index(idx, len(self))), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_abs_index(idx, len(self))))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        out = ModuleList()
        for i, module in enumerate(chain(self, other)):
            out.add_module(str(i), module)
        return out

    def insert(self, index: int, module: Module) -> None:
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        if not isinstance(modules, abc.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def pop(self, key: int) -> Module:
        v = self[key]
        del self[key]
        return v

    def __repr__(self) -> str:
        """Runs of identical children print once, as "(0-2): 3 x Linear(...)" (PyTorch >= 2.1)."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        blocks = []  # [start, end, repr]
        for i, r in enumerate(reprs):
            if blocks and blocks[-1][2] == r:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = []
        for start, end, r in blocks:
            head = f"({start})" if start == end else f"({start}-{end}): {end - start + 1} x"
            lines.append(_addindent(f"{head}: {r}" if start == end else f"{head} {r}", 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys.

    :param modules: a mapping, or an iterable of (name, module) pairs.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        if not isinstance(modules, abc.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got " +
                            type(modules).__name__)
        if isinstance(modules, (abc.Mapping, ModuleDict)):  # a ModuleDict is no Mapping, but updates by its items
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, abc.Iterable):
                raise TypeError("ModuleDict update sequence element #" + str(j) + " should be Iterable; is" +
                                type(m).__name__)
            if len(m) != 2:
                raise ValueError("ModuleDict update sequence element #" + str(j) + " has length " + str(len(m)) +
                                 "; 2 is required")
            self[m[0]] = m[1]


def _param_line(key, p) -> str:
    if isinstance(p, Tensor):
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        size = "x".join(str(s) for s in p.shape)
        return f"  ({key}): {kind} containing: [lucid.{_dtype.dtype_name(p.dtype)} of size {size}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """A list of Parameters, registered as "0", "1", ...; plain Tensors are wrapped in Parameter.

    :param values: an iterable of Parameters (or Tensors, wrapped).
    """

    def __init__(self, values: Iterable[Any] | None = None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(_abs_index(idx, len(self))))

    def __setitem__(self, idx: int, param: Any) -> None:
        idx = _abs_index(idx, len(self))
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> "ParameterList":
        return self.extend(parameters)

    def append(self, value: Any) -> "ParameterList":
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        if not isinstance(values, abc.Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got " +
                            type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of Parameters, registered under their (string) keys; plain Tensors are wrapped in
    Parameter. As in PyTorch, a plain (unordered) Mapping is added in sorted key order.

    :param parameters: a mapping, or an iterable of (name, parameter) pairs.
    """

    def __init__(self, parameters: Any = None):
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        attr = self._key_to_attr(key)
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def copy(self) -> "ParameterDict":
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        k = next(reversed(self._keys))
        return k, self.pop(k)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> "ParameterDict":
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        if not isinstance(parameters, abc.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got " +
                            type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, abc.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, abc.Iterable):
                    raise TypeError("ParameterDict update sequence element #" + str(j) + " should be Iterable; is" +
                                    type(p).__name__)
                if len(p) != 2:
                    raise ValueError("ParameterDict update sequence element #" + str(j) + " has length " +
                                     str(len(p)) + "; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: "ParameterDict") -> "ParameterDict":
        out = self.copy()
        out.update(other)
        return out

    def __ior__(self, other: "ParameterDict") -> "ParameterDict":
        self.update(other)
        return self


__all__ = ["Identity", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
