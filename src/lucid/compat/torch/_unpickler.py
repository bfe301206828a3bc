"""The weights-only unpickler: PyTorch's restricted pickle interpreter (``torch/_weights_only_unpickler.py``) for
lucid. It is an interpreter of its own rather than ``pickle.Unpickler`` with a restricted ``find_class``, because
plain pickle's ``BUILD`` sets attributes on whatever object is on its stack, a class included: a checkpoint could
set ``Tensor.__neg__``, retype an allow-listed storage type or patch ``collections.Counter`` for the whole process.
Here, as in PyTorch:

- only the opcodes of protocol 2 (what ``torch.save`` writes) run; any other is refused;
- ``GLOBAL`` resolves through the allow-list only, and ``REDUCE``/``NEWOBJ`` call only what it holds;
- ``BUILD`` sets state on an *instance* of Tensor, Parameter, OrderedDict or an allow-listed type - never on a
  class, and (lucid's addition) never a dunder attribute such as ``__class__``;
- ``SETITEM(S)`` fills only dicts, OrderedDicts and Counters, ``APPEND(S)`` only lists.

A malformed stream (truncated, stack or memo underflow, an opcode given the wrong kind of object) raises
``pickle.UnpicklingError`` naming the byte where it went wrong, never an internal IndexError or AttributeError.
"""
from __future__ import annotations

import _compat_pickle
import collections
import pickle
import struct

from lucid import Tensor
from lucid.nn import Parameter

from ._rebuild import describe, set_tensor_state

_BUILD_MESSAGE = "Can only build Tensor, Parameter, OrderedDict or types allowlisted via `add_safe_globals`"


def _build_target(obj) -> str:
    if isinstance(obj, type):  # a class on the stack: what plain pickle would patch
        return f"the class {obj.__module__}.{obj.__qualname__} itself (only instances are built)"
    return str(type(obj))


def _check_attributes(state, what: str) -> None:
    if not isinstance(state, dict):
        raise pickle.UnpicklingError(f"a BUILD's {what} must be a dict, not {type(state).__name__}")
    for key in state:
        if not isinstance(key, str):
            raise pickle.UnpicklingError(f"a BUILD's {what} has the non-string key {describe(key)}")
        if key.startswith("__") and key.endswith("__"):
            raise pickle.UnpicklingError(f"a BUILD may not set the dunder attribute {key!r:.40}")


class WeightsOnlyUnpickler:
    """Reads one pickle (``data``) of a checkpoint. ``find_global(module, name)`` returns an allow-listed object or
    raises; ``allowed`` is everything the allow-list holds (what REDUCE/NEWOBJ may call and whose instances BUILD
    may fill); ``persistent_load(pid)`` returns a storage."""

    def __init__(self, data: bytes, source: str, find_global, allowed, persistent_load, encoding: str = "utf-8"):
        self.data, self.source, self.find_global, self.persistent_load = data, source, find_global, persistent_load
        self.encoding = encoding
        self.callable = {id(obj): obj for obj in allowed}  # identity, as `in`/== could run a file object's __eq__
        self.buildable = {id(t): t for t in (*allowed, Tensor, Parameter, collections.OrderedDict)
                          if isinstance(t, type)}

    def load(self):
        self.pos, self.stack, self.metastack, self.memo = 0, [], [], {}
        while True:
            at = self.pos
            try:
                op = self._read(1)[0]
                if op == pickle.STOP[0]:
                    return self._pop()
                handler = self._OPS.get(op)
                if handler is None:
                    raise pickle.UnpicklingError(f"Unsupported operand {op}")
                handler(self)
            except pickle.UnpicklingError as e:
                raise self._error(str(e), at) from None
            except Exception as e:  # the wrong kind of object for an opcode, an unhashable key, a bad argument...
                if type(e) is RuntimeError:
                    raise  # a storage record's own error (PyTorch's type for it, naming the file), or MLX's
                raise self._error(f"{type(e).__name__}: {e}", at) from e

    # --------------------------------------------------------------------------------------------- reading
    def _error(self, message: str, at: int) -> pickle.UnpicklingError:
        return pickle.UnpicklingError(f"Weights only load failed: {self.source}: {message} (the pickle's opcode at "
                                      f"byte {at})")

    def _read(self, n: int) -> bytes:
        chunk = self.data[self.pos:self.pos + n]
        if len(chunk) < n:
            raise pickle.UnpicklingError("the pickle is truncated")
        self.pos += n
        return chunk

    def _line(self) -> str:
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise pickle.UnpicklingError("the pickle is truncated in a GLOBAL's name")
        line, self.pos = self.data[self.pos:end], end + 1
        return line.decode("utf-8")

    def _pop(self):
        if not self.stack:
            raise pickle.UnpicklingError("the pickle's stack is empty")
        return self.stack.pop()

    def _top(self):
        if not self.stack:
            raise pickle.UnpicklingError("the pickle's stack is empty")
        return self.stack[-1]

    def _push(self, value):
        self.stack.append(value)  # after the value is computed: _pop_mark swaps self.stack

    def _mark(self):
        self.metastack.append(self.stack)
        self.stack = []

    def _pop_mark(self) -> list:
        if not self.metastack:
            raise pickle.UnpicklingError("the pickle has no MARK here")
        items, self.stack = self.stack, self.metastack.pop()
        return items

    def _unpack(self, fmt: str):
        return struct.unpack(fmt, self._read(struct.calcsize(fmt)))[0]

    # ---------------------------------------------------------------------------------- the risky opcodes
    def _global(self):
        module, name = self._line(), self._line()
        if (module, name) in _compat_pickle.NAME_MAPPING:  # Python 2 names, as pickle's fix_imports maps them
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        self.stack.append(self.find_global(module, name))

    def _allowed_callable(self, func, what: str):
        if id(func) not in self.callable:
            raise pickle.UnpicklingError(f"Trying to {what} for unrecognized function {describe(func)}")
        return func

    def _reduce(self):
        args = self._pop()
        func = self._allowed_callable(self._top(), "call reduce")
        if type(args) is not tuple:
            raise pickle.UnpicklingError(f"REDUCE's arguments must be a tuple, not {type(args).__name__}")
        self.stack[-1] = func(*args)

    def _newobj(self):
        args = self._pop()
        cls = self._top()
        if id(cls) not in self.callable or not isinstance(cls, type):
            raise pickle.UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted via "
                                         f"`add_safe_globals` but got {describe(cls)}")
        if type(args) is not tuple:
            raise pickle.UnpicklingError(f"NEWOBJ's arguments must be a tuple, not {type(args).__name__}")
        # a lucid Tensor is whole only once constructed (PyTorch's Tensor.__new__ is its legacy constructor)
        self.stack[-1] = cls(*args) if issubclass(cls, Tensor) else cls.__new__(cls, *args)

    def _build(self):
        state = self._pop()
        inst = self._top()
        if id(type(inst)) not in self.buildable:
            raise pickle.UnpicklingError(f"{_BUILD_MESSAGE}, but got {_build_target(inst)}")
        if isinstance(inst, Tensor):
            set_tensor_state(inst, state)
        elif type(inst) is not collections.OrderedDict and getattr(type(inst), "__setstate__", None) is not None:
            inst.__setstate__(state)  # the allow-listed class's own rule
        else:  # plain pickle's load_build, attribute by attribute
            slots = None
            if type(state) is tuple and len(state) == 2:
                state, slots = state
            if state:
                _check_attributes(state, "state")
                inst.__dict__.update(state)
            if slots:
                _check_attributes(slots, "slot state")
                for key, value in slots.items():
                    setattr(inst, key, value)

    def _setitem(self):
        value = self._pop()
        self._setitems([self._pop(), value], "SETITEM")

    def _setitems(self, items: list, opcode: str):
        target = self._top()
        if type(target) not in (dict, collections.OrderedDict, collections.Counter):
            raise pickle.UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                                         f"but got {type(target)}")
        if len(items) % 2:
            raise pickle.UnpicklingError(f"{opcode} got an odd number of items")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _appends(self, items: list, opcode: str):
        target = self._top()
        if type(target) is not list:
            raise pickle.UnpicklingError(f"Can only {opcode} to lists, but got {type(target)}")
        target.extend(items)

    def _persid(self):
        pid = self._pop()
        if type(pid) is not tuple or not pid or type(pid[0]) is not str or pid[0] != "storage":
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got {describe(pid)}")
        self.stack.append(self.persistent_load(pid))

    # ------------------------------------------------------------------------------------ data and the memo
    def _text(self, raw: bytes, encoding: str) -> str:
        try:
            return raw.decode(encoding, "surrogatepass" if encoding == "utf-8" else "strict")
        except UnicodeDecodeError as e:
            raise pickle.UnpicklingError(f"a string is not valid {encoding} ({e.reason})") from None

    def _memo_get(self, index: int):
        if index not in self.memo:
            raise pickle.UnpicklingError(f"the pickle reads memo entry {index}, which was never stored")
        self.stack.append(self.memo[index])

    def _tuple(self, n: int):
        if len(self.stack) < n:
            raise pickle.UnpicklingError("the pickle's stack is too short for a tuple")
        self.stack[len(self.stack) - n:] = [tuple(self.stack[len(self.stack) - n:])]

    def _short_binstring(self):
        raw = self._read(self._read(1)[0])
        self.stack.append(raw if self.encoding == "bytes" else self._text(raw, self.encoding))

    _OPS = {
        pickle.PROTO[0]: lambda self: self._read(1),
        pickle.GLOBAL[0]: _global,
        pickle.REDUCE[0]: _reduce,
        pickle.NEWOBJ[0]: _newobj,
        pickle.BUILD[0]: _build,
        pickle.SETITEM[0]: _setitem,
        pickle.SETITEMS[0]: lambda self: self._setitems(self._pop_mark(), "SETITEMS"),
        pickle.APPEND[0]: lambda self: self._appends([self._pop()], "append"),
        pickle.APPENDS[0]: lambda self: self._appends(self._pop_mark(), "extend"),
        pickle.BINPERSID[0]: _persid,
        pickle.MARK[0]: _mark,
        pickle.TUPLE[0]: lambda self: self._push(tuple(self._pop_mark())),
        pickle.TUPLE1[0]: lambda self: self._tuple(1),
        pickle.TUPLE2[0]: lambda self: self._tuple(2),
        pickle.TUPLE3[0]: lambda self: self._tuple(3),
        pickle.NONE[0]: lambda self: self.stack.append(None),
        pickle.NEWFALSE[0]: lambda self: self.stack.append(False),
        pickle.NEWTRUE[0]: lambda self: self.stack.append(True),
        pickle.EMPTY_TUPLE[0]: lambda self: self.stack.append(()),
        pickle.EMPTY_LIST[0]: lambda self: self.stack.append([]),
        pickle.EMPTY_DICT[0]: lambda self: self.stack.append({}),
        pickle.EMPTY_SET[0]: lambda self: self.stack.append(set()),
        pickle.BININT[0]: lambda self: self.stack.append(self._unpack("<i")),
        pickle.BININT1[0]: lambda self: self.stack.append(self._read(1)[0]),
        pickle.BININT2[0]: lambda self: self.stack.append(self._unpack("<H")),
        pickle.LONG1[0]: lambda self: self.stack.append(int.from_bytes(self._read(self._read(1)[0]), "little",
                                                                        signed=True)),
        pickle.BINFLOAT[0]: lambda self: self.stack.append(self._unpack(">d")),
        pickle.BINUNICODE[0]: lambda self: self.stack.append(self._text(self._read(self._unpack("<I")), "utf-8")),
        pickle.SHORT_BINSTRING[0]: _short_binstring,
        pickle.BINGET[0]: lambda self: self._memo_get(self._read(1)[0]),
        pickle.LONG_BINGET[0]: lambda self: self._memo_get(self._unpack("<I")),
        pickle.BINPUT[0]: lambda self: self.memo.__setitem__(self._read(1)[0], self._top()),
        pickle.LONG_BINPUT[0]: lambda self: self.memo.__setitem__(self._unpack("<I"), self._top()),
    }
