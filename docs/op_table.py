"""mkdocs hook: fills docs/ops.md with every public function of lucid's op namespaces and every Tensor method, read
from the functions themselves when the docs are built (their signatures and first docstring lines), so the list
never goes stale. "declared op": declared with ``defop`` (``lucid/ops/_core.py``): differentiable, with its own
backward node."""
from __future__ import annotations

import importlib
import inspect

NAMESPACES = ["lucid", "lucid.nn.functional", "lucid.linalg", "lucid.fft", "lucid.special"]
MARKER = "<!-- op table -->"


def _public_functions(module):
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in sorted(names):
        f = getattr(module, name)
        if callable(f) and not inspect.isclass(f) and not inspect.ismodule(f):
            yield name, f


def _row(name: str, f) -> str:
    try:
        sig = str(inspect.signature(f)).split(" -> ")[0]
    except (TypeError, ValueError):
        sig = "(...)"
    doc = (inspect.getdoc(f) or "").split("\n\n")[0].replace("\n", " ").replace("|", "\\|")
    grad = "yes" if hasattr(f, "node_class") else ""
    return f"| `{name}{sig.replace('|', chr(92) + '|')}` | {grad} | {doc} |"


def op_table() -> str:
    out = []
    for ns in NAMESPACES:
        try:
            module = importlib.import_module(ns)
        except ImportError:  # lucid.special, until it exists
            continue
        rows = [_row(name, f) for name, f in _public_functions(module)]
        out += [f"## `{ns}`", "", f"{len(rows)} functions.", "",
                "| function | declared op | what it computes |", "|---|---|---|", *rows, ""]
    from lucid import Tensor
    rows = [_row(name, f) for name, f in sorted(vars(Tensor).items())
            if not name.startswith("_") and inspect.isfunction(f)]
    out += ["## Tensor methods", "", f"{len(rows)} methods (properties such as `shape` and `grad` are on the "
            "[Tensors](api/tensors.md) page).", "", "| method | declared op | what it computes |", "|---|---|---|",
            *rows, ""]
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri == "ops.md":
        return markdown.replace(MARKER, op_table())
    return markdown
