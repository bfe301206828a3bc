"""The API reference's groups, read from lucid's live namespaces, and how well each is documented.

As an mkdocs hook it replaces ``<!-- api: GROUP -->`` in a page with one mkdocstrings entry (heading, signature,
docstring) per public object of that group, so every public class and function has its entry and none goes stale.
tests/test_api_reference.py measures, per group, the share of public callables whose docstring documents every
argument (``:param name:``), and runs their examples (``>>>``) as doctests.

    python docs/reference.py        # print the coverage of each group, and what is undocumented
"""
from __future__ import annotations

import importlib
import inspect
import re
import sys

MARKER = re.compile(r"<!-- api: ([\w.]+) -->")


def _public(module_name: str, want=lambda name, obj: True) -> list:
    """(qualified name, object) of a module's public names (its ``__all__``, else its non-underscore names)."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    out = []
    for name in names:
        obj = getattr(module, name, None)
        if obj is None or inspect.ismodule(obj) or not callable(obj) or not want(name, obj):
            continue
        out.append((f"{module_name}.{name}", obj))
    return out


def _is_module_class(name, obj) -> bool:
    from lucid.nn import Module
    return inspect.isclass(obj) and issubclass(obj, Module)


def _tensor_methods() -> list:
    from lucid import Tensor
    out = []
    for name in sorted(dir(Tensor)):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(Tensor, name)
        if isinstance(attr, property) or callable(attr):
            out.append((f"lucid.Tensor.{name}", getattr(Tensor, name) if callable(attr) else attr))
    return out


def _optim() -> list:
    from lucid.optim import Optimizer
    from lucid.optim.lr_scheduler import LRScheduler
    opts = _public("lucid.optim", lambda n, o: inspect.isclass(o) and issubclass(o, Optimizer))
    scheds = _public("lucid.optim.lr_scheduler", lambda n, o: inspect.isclass(o) and issubclass(o, LRScheduler))
    return opts + scheds + _public("lucid.optim.swa_utils")


def _distributions() -> list:
    return _public("lucid.distributions") + _public("lucid.distributions.transforms")


# group -> the (qualified name, object) pairs it documents; the groups the issue tracker calls "used most"
GROUPS = {
    "tensor": _tensor_methods,
    "autograd": lambda: _public("lucid.autograd") + _public("lucid.autograd.functional"),
    "nn.layers": lambda: _public("lucid.nn", lambda n, o: _is_module_class(n, o) and not n.endswith("Loss")),
    "nn.losses": lambda: _public("lucid.nn", lambda n, o: _is_module_class(n, o) and n.endswith("Loss")),
    "nn.functional": lambda: _public("lucid.nn.functional", lambda n, o: not inspect.isclass(o)),
    "optim": _optim,
    "data": lambda: _public("lucid.utils.data"),
    "distributions": _distributions,
    "zoo": lambda: _public("lucid.models"),
    "compile": lambda: [("lucid.compile", importlib.import_module("lucid").compile)],
    "distributed": lambda: _public("lucid.distributed") + _public("lucid.nn.parallel"),
    "amp": lambda: _public("lucid.amp"),
}


# ---------------------------------------------------------------------------------------------------- coverage
def parameters(obj) -> list[str]:
    """The named arguments a caller passes (not self/cls, not *args/**kwargs)."""
    if isinstance(obj, property) or not (inspect.isclass(obj) or inspect.isroutine(obj)):
        return []  # a callable instance (``biject_to``) is documented by its class
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def documented(obj) -> bool:
    """A docstring, and in it ``:param name:`` for every argument."""
    doc = inspect.getdoc(obj) or ""
    if not doc:
        return False
    return all(re.search(rf":param {re.escape(p)}:", doc) for p in parameters(obj))


def coverage(group: str) -> tuple[int, int, list[str]]:
    """(documented, total, undocumented names) of a group."""
    items = GROUPS[group]()
    missing = [name for name, obj in items if not documented(obj)]
    return len(items) - len(missing), len(items), missing


# ---------------------------------------------------------------------------------------------------- the hook
def on_page_markdown(markdown: str, **kwargs) -> str:
    def entries(match) -> str:
        return "\n\n".join(f"::: {name}" for name, _ in GROUPS[match.group(1)]())
    return MARKER.sub(entries, markdown)


if __name__ == "__main__":
    sys.path.insert(0, "src")
    for g in GROUPS:
        done, total, missing = coverage(g)
        print(f"{g}: {done}/{total} = {100 * done / max(total, 1):.0f}%")
        if "-v" in sys.argv:
            print("   missing:", " ".join(missing))
