"""help() and Shift-Tab: every public function and Tensor method shows its real signature and says what it does,
including the ops that ``defop`` generates (whose function takes ``*args, **kwargs``)."""
import importlib
import inspect
from pathlib import Path

import pytest

import lucid

NAMESPACES = ["lucid", "lucid.nn.functional", "lucid.linalg", "lucid.fft", "lucid.special"]


def _public_callables():
    for name in NAMESPACES:
        try:
            mod = importlib.import_module(name)
        except ImportError:  # lucid.special does not exist (yet)
            continue
        for attr in getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]:
            f = getattr(mod, attr)
            if callable(f) and not inspect.isclass(f) and not inspect.ismodule(f):
                yield f"{name}.{attr}", f
    for attr in dir(lucid.Tensor):
        f = getattr(lucid.Tensor, attr)
        if not attr.startswith("_") and inspect.isfunction(f):
            yield f"Tensor.{attr}", f


def _is_bare(sig: inspect.Signature) -> bool:
    """``(*args, **kwargs)`` (or ``(self, *args, **kwargs)``): what a generated op shows without a signature."""
    kinds = [p.kind for p in sig.parameters.values()]
    return kinds[-2:] == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD] and len(kinds) <= 3


def test_every_public_callable_has_a_signature_and_a_docstring():
    seen, bare, undocumented = 0, [], []
    for name, f in _public_callables():
        seen += 1
        if _is_bare(inspect.signature(f)):
            bare.append(name)
        if not (f.__doc__ or "").strip():
            undocumented.append(name)
    assert seen > 600
    assert bare == [], f"shown as (*args, **kwargs): {bare}"
    assert undocumented == [], f"no docstring: {undocumented}"


@pytest.mark.parametrize("fn, expected", [
    # PyTorch's documented signatures (torch's own functions are builtins without an inspectable signature)
    (lucid.sin, "(input, *, out=None)"),
    (lucid.exp, "(input, *, out=None)"),
    (lucid.mul, "(input, other, *, out=None)"),
    (lucid.eq, "(input, other, *, out=None)"),
    (lucid.atan2, "(input, other, *, out=None)"),
    (lucid.complex, "(real, imag, *, out=None)"),
    (lucid.add, "(input, other, *, alpha=1, out=None)"),
    (lucid.sum, "(input, dim=None, keepdim=False, *, dtype=None, out=None)"),
    (lucid.mean, "(input, dim=None, keepdim=False, *, dtype=None, out=None)"),
    (lucid.matmul, "(input, other, *, out=None)"),
    (lucid.cat, "(tensors, dim=0, *, out=None)"),
    (lucid.nn.functional.linear, "(input, weight, bias=None)"),
    (lucid.nn.functional.conv2d, "(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)"),
    (lucid.Tensor.sin_, "(self)"),
    (lucid.Tensor.add_, "(self, other, *, alpha=1)"),
])
def test_signatures_are_pytorchs(fn, expected):
    sig = inspect.signature(fn)
    plain = sig.replace(parameters=[p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()],
                        return_annotation=inspect.Signature.empty)
    assert str(plain) == expected


def test_help_of_a_generated_op_says_what_it_computes():
    text = pydoc_text(lucid.sin)
    assert "sin(input, *, out=None)" in text and "Sine" in text
    assert "Sine" in pydoc_text(lucid.Tensor.sin)
    assert "In-place version of ``sin``" in pydoc_text(lucid.Tensor.sin_)


def pydoc_text(obj) -> str:
    import pydoc
    return pydoc.render_doc(obj, renderer=pydoc.plaintext)


def test_package_is_typed():
    """PEP 561: the py.typed marker ships with the package, so type checkers read lucid's annotations."""
    assert (Path(lucid.__file__).parent / "py.typed").is_file()
    root = Path(__file__).parent.parent
    assert "py.typed" in (root / "pyproject.toml").read_text()
