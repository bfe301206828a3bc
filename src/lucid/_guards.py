"""The Python values a ``lucid.compile`` trace depends on, read again before every call.

A trace records MLX calls only: every Python value the step's code looked at (``if use_skip:``, ``lr * epoch``,
``self.p``) is baked into it. ``lucid.compile`` therefore makes the values a step can read part of its cache key,
and a changed value selects (or makes) another trace. What is read:

- every module reached (and its submodules): each simple value in its ``__dict__`` (``training``, ``p``,
  ``use_skip``...), whole, because lucid's own ``forward`` methods read them;
- the closure cells of the step and of the user functions it reaches;
- the names its code (and the code of those user functions) uses, looked up in their globals, in the Python
  modules, plain objects (``cfg.flag``), classes and dicts (``cfg["flag"]``) reached that way. Reached means
  through those names, one attribute at a time, starting from the step; "user functions" are Python functions
  defined outside lucid, the standard library and site-packages (helpers, ``forward`` of your own modules,
  methods of your own objects).

A "simple" value is None, a bool, a number, a str or bytes, an enum member, or a tuple/frozenset of them; it is
compared by type and value. Other values are guarded only by being non-simple (``mask = None`` becoming a tensor
retraces; one tensor replaced by another does not: tensors must be arguments, parameters or buffers).

Discovery runs when a call runs eagerly (a new configuration), never on compiled calls; the per-call work is one
dict lookup per guarded name and one pass over each module's ``__dict__``.
"""
from __future__ import annotations

import enum
import functools
import os
import sysconfig
import types
from collections import deque
from operator import is_

from ._tensor import Tensor

_ATOMS = frozenset({type(None), bool, int, float, complex, str, bytes})
_OTHER = "<not a simple value>"  # what a guarded location holding anything else contributes to the key
_MISSING = object()
_MAX_VISITS = 2000  # the walk stops here: discovery must stay cheap even for objects that reach everything

_LIBRARY_DIRS = tuple(sorted({os.path.dirname(os.path.abspath(__file__)) + os.sep} | {
    os.path.abspath(p) + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")
    if (p := sysconfig.get_paths().get(k))}))


def simple(v) -> bool:
    """An immutable Python value a trace can have branched on or baked in."""
    t = type(v)
    if t in _ATOMS:
        return True
    if t is tuple or t is frozenset:
        return all(simple(x) for x in v)
    return isinstance(v, enum.Enum)


def _value(v):
    return (type(v), v) if simple(v) else _OTHER


def _user_function(v) -> bool:
    return isinstance(v, types.FunctionType) and not v.__code__.co_filename.startswith(_LIBRARY_DIRS)


def _code_names(code, names: set, keys: set) -> None:
    """Attribute and global names (``co_names``) and string constants (dict keys) of ``code`` and nested code."""
    names.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, str):
            keys.add(c)
        elif isinstance(c, types.CodeType):
            _code_names(c, names, keys)


class Guards:
    """Where the guarded values live: closure cells, (mapping, name) entries and whole module ``__dict__``s, each
    with a label for messages. ``values()`` is the hot path; ``labels`` lines up with its result."""
    __slots__ = ("cells", "entries", "dicts", "snapshots", "labels", "found")

    def __init__(self, cells, entries, dicts, found):
        self.cells = [c for _, c in cells]
        self.entries = [(d, k) for _, d, k in entries]
        self.dicts = [d for _, d in dicts]
        self.snapshots: list = [None] * len(self.dicts)  # per dict: (keys, values, its guarded values)
        self.labels = [lab for lab, _ in cells] + [lab for lab, _, _ in entries] + [lab for lab, _ in dicts]
        self.found = found  # the Modules and Optimizers reached, in the order first reached

    def values(self) -> tuple:
        out = []
        for c in self.cells:
            try:
                out.append(_value(c.cell_contents))
            except ValueError:  # an empty cell (a variable not assigned yet)
                out.append(_OTHER)
        for d, k in self.entries:
            out.append(_value(d.get(k, _MISSING)))
        # A module's __dict__ is mostly containers that never change: when it holds the same key and value objects
        # as last time (identity, checked in C by map), its simple values are the same; only then is a scan skipped.
        snapshots = self.snapshots
        for i, d in enumerate(self.dicts):
            s = snapshots[i]
            if s is None or len(d) != len(s[0]) or not all(map(is_, d, s[0])) or \
                    not all(map(is_, d.values(), s[1])):
                s = snapshots[i] = (tuple(d), tuple(d.values()),
                                    tuple(x for k, v in d.items() if simple(v) for x in (k, type(v), v)))
            out.append(s[2])
        return tuple(out)

    def changed(self, old: tuple, new: tuple) -> list[str]:
        """The guarded values that differ between two results of ``values()`` (for messages; not a hot path)."""
        if len(old) != len(new) or len(new) != len(self.labels):
            return ["the set of Python values the function reads"]
        n_single = len(self.cells) + len(self.entries)
        out = []
        for i, (label, a, b) in enumerate(zip(self.labels, old, new)):
            if a == b:
                continue
            if i < n_single:
                out.append(f"{label}: {_show(a)} -> {_show(b)}")
                continue
            da = {a[j]: a[j + 1:j + 3] for j in range(0, len(a), 3)}
            db = {b[j]: b[j + 1:j + 3] for j in range(0, len(b), 3)}
            out += [f"{label}.{k}: {_show(da.get(k, _OTHER))} -> {_show(db.get(k, _OTHER))}"
                    for k in {**da, **db} if da.get(k) != db.get(k)]
        return out


def _show(v) -> str:
    return "(not a simple value)" if v == _OTHER else repr(v[1])


def discover(fn, modules=()) -> Guards:
    """Walk from ``fn`` to what its code can read (see the module docstring); ``modules`` are guarded as well."""
    from .nn.modules.module import Module
    from .optim.optimizer import Optimizer
    cells, containers, dicts, found = [], [], [], []
    names: set = set()
    keys: set = set()
    seen: set = set()
    todo: deque = deque([("", fn)])
    for m in modules:
        todo.append((type(m).__name__, m))

    def visit(label, v):
        if isinstance(v, types.FunctionType):
            if _user_function(v):
                _code_names(v.__code__, names, keys)
                containers.append(("", v.__globals__, names, True))
                for var, cell in zip(v.__code__.co_freevars, v.__closure__ or ()):
                    cells.append((var, cell))
                    try:
                        todo.append((var, cell.cell_contents))
                    except ValueError:  # not assigned yet
                        pass
        elif isinstance(v, types.MethodType):
            todo.extend([(label, v.__func__), (label.rpartition(".")[0] or "self", v.__self__)])
        elif isinstance(v, types.ModuleType):
            containers.append((label, v.__dict__, names, True))
        elif isinstance(v, functools.partial):
            todo.extend([(label, v.func), *((label, a) for a in v.args), *((label, a) for a in v.keywords.values())])
        elif isinstance(v, Module):
            found.append(v)
            for sub_name, sub in v.named_modules(prefix=label or type(v).__name__):
                if sub is not v and id(sub) in seen:
                    continue
                seen.add(id(sub))
                dicts.append((sub_name, sub.__dict__))  # guarded whole (lucid's forward methods read them)
                containers.append((sub_name, sub.__dict__, names, False))  # followed: self.cfg.flag
                containers.append((sub_name, type(sub).__dict__, names, True))
                todo.append((sub_name + ".forward", type(sub).forward))
        elif isinstance(v, Optimizer):
            found.append(v)  # its options are guarded through param_groups by lucid.compile
        elif isinstance(v, (list, tuple)):
            todo.extend((f"{label}[{i}]", x) for i, x in enumerate(v) if isinstance(x, (Module, Optimizer)))
        elif isinstance(v, dict):
            containers.append((label, v, keys, True))  # a config dict, read as cfg["flag"]
            todo.extend((f"{label}[{k!r}]", x) for k, x in v.items() if isinstance(x, (Module, Optimizer)))
        elif isinstance(v, type):
            containers.append((label, v.__dict__, names, True))  # a class used as a namespace: Config.USE_X
        elif hasattr(v, "__dict__") and not isinstance(v, Tensor):
            containers.append((label, vars(v), names, True))  # a plain object: cfg.flag, trainer.model
            containers.append((label, type(v).__dict__, names, True))  # its class: methods, class attributes
            todo.append((label + ".__call__", getattr(type(v), "__call__", None)))

    # a fixpoint: a function walked late can name attributes of an object reached early
    looked: set = set()
    visits = 0
    while todo and visits < _MAX_VISITS:
        while todo and visits < _MAX_VISITS:
            label, v = todo.popleft()
            if id(v) not in seen and not simple(v):
                seen.add(id(v))
                visits += 1
                visit(label, v)
        for prefix, mapping, wanted, _ in containers:
            for k in wanted:
                if (id(mapping), k) not in looked and k in mapping:
                    looked.add((id(mapping), k))
                    todo.append((f"{prefix}.{k}" if prefix else k, mapping[k]))
    entries = [(f"{prefix}[{k!r}]" if wanted is keys else (f"{prefix}.{k}" if prefix else k), mapping, k)
               for prefix, mapping, wanted, guard in containers if guard for k in wanted if k in mapping]
    return Guards(cells, _unique(entries), dicts, found)


def _unique(entries):
    seen, out = set(), []
    for label, mapping, k in entries:
        if (id(mapping), k) not in seen:
            seen.add((id(mapping), k))
            out.append((label, mapping, k))
    return out
