"""How tensors and dtypes print while ``torch`` is lucid (``lucid run``): as PyTorch prints them.

``tensor([1., 2.])``, ``tensor([[1, 2]])``, ``tensor(3.5000, requires_grad=True)``,
``tensor([2.], grad_fn=<MulBackward0>)``, ``tensor([1, 2], dtype=torch.int32)``, ``tensor([], size=(0, 3))``, ``Parameter containing:\\ntensor(...)``; and
``str(torch.float32) == "torch.float32"``. The rules are PyTorch's printer's (``torch/_tensor_str.py``), restated:

- one formatter per tensor (for complex ones: one for the real parts, one for the imaginary parts) chooses, from
  the nonzero finite values, integer mode (every value a whole number: ``1.``), scientific mode (largest / smallest
  above 1000, largest above 1e8 or smallest below 1e-4: ``1.0000e+05``) or fixed mode (``precision`` decimals), and
  pads every element to the widest one;
- rows wrap at ``linewidth`` characters; above ``threshold`` elements each dim shows ``edgeitems`` at either end
  around ``...``;
- the dtype suffix appears unless the dtype is the default float dtype, its complex dtype, int64 or bool; then
  ``grad_fn=<...>`` or ``requires_grad=True``, on a new line when the line would pass ``linewidth``.

lucid's own face (``Tensor([1., 2.])``, ``mlx.core.float32``) is untouched outside ``lucid run``: ``install`` swaps
the printers in and ``uninstall`` swaps lucid's back (``lucid.compat._alias`` calls them with the alias).
"""
from __future__ import annotations

import math

import mlx.core as mx
import numpy as np

from .._dtype import dtype_name, get_default_dtype
from .._surface import attach
from .._tensor import Tensor

DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
PROFILES = {"default": DEFAULTS, "short": dict(DEFAULTS, precision=2, edgeitems=2),
            "full": dict(DEFAULTS, threshold=math.inf)}
OPTIONS = dict(DEFAULTS)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """torch.set_printoptions for the torch face (lucid's own options, numpy's, are set too by the caller)."""
    if profile is not None:
        OPTIONS.update(PROFILES[profile])
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            OPTIONS[k] = v
    OPTIONS["sci_mode"] = sci_mode


# ---------------------------------------------------------------------------------------------------- formatting
class _Formatter:
    """PyTorch's element formatter for the values ``values`` (a flat numpy array) of one tensor."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating, self.int_mode, self.sci_mode, self.width = floating, True, False, 1
        p = OPTIONS["precision"]
        if not floating:
            self.width = max([1] + [len(str(v)) for v in values.tolist()])
            return
        finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
        if finite.size == 0:
            return
        big, small = np.abs(finite).max(), np.abs(finite).min()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        forced = OPTIONS["sci_mode"]
        self.sci_mode = (big / small > 1000.0 or big > 1.0e8 or small < 1.0e-4) if forced is None else forced
        if self.sci_mode:
            self.width = max(len(f"{v:.{p}e}") for v in finite.tolist())
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in finite.tolist())
        else:
            self.width = max(len(f"{v:.{p}f}") for v in finite.tolist())

    def format(self, value) -> str:
        p = OPTIONS["precision"]
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{p}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{p}f}"
        return " " * (self.width - len(text)) + text


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements that are shown of a summarized array (edgeitems at each end of every dim)."""
    e = OPTIONS["edgeitems"]
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * e:
        a = np.concatenate([a[:e], a[-e:]]) if e else a[:0]
    return np.stack([_summarized(x) for x in a]) if a.ndim > 1 and a.shape[0] else a


def _element(value, real: _Formatter, imag: _Formatter | None) -> str:
    if imag is None:
        return real.format(value)
    re, im = real.format(value.real), (imag.format(value.imag) + "j").lstrip()
    return re + im if im[0] in "+-" else re + "+" + im


def _body(a: np.ndarray, indent: int, summarize: bool, real: _Formatter, imag) -> str:
    e = OPTIONS["edgeitems"]
    if a.ndim == 0:
        return _element(a.item(), real, imag)
    if a.ndim == 1:
        width = real.width + 2 + (imag.width + 1 if imag is not None else 0)
        per_line = max(1, math.floor((OPTIONS["linewidth"] - indent) / width))
        if summarize and not e:
            items = ["..."]
        elif summarize and a.shape[0] > 2 * e:
            items = [_element(v, real, imag) for v in a[:e].tolist()] + [" ..."] + \
                [_element(v, real, imag) for v in a[-e:].tolist()]
        else:
            items = [_element(v, real, imag) for v in a.tolist()]
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if summarize and a.shape[0] > 2 * e:
        rows = [_body(a[i], indent + 1, summarize, real, imag) for i in range(e)] + ["..."] + \
            [_body(a[i], indent + 1, summarize, real, imag) for i in range(a.shape[0] - e, a.shape[0])]
    else:
        rows = [_body(x, indent + 1, summarize, real, imag) for x in a]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def tensor_str(a: np.ndarray, indent: int) -> str:
    """PyTorch's text of the values ``a`` (the part inside ``tensor(...)``)."""
    if a.size == 0:
        return "[]"
    summarize = a.size > OPTIONS["threshold"]
    shown = _summarized(a) if summarize else a
    if np.iscomplexobj(a):
        real = _Formatter(shown.real.reshape(-1), True)
        return _body(a, indent, summarize, real, _Formatter(shown.imag.reshape(-1), True))
    floating = np.issubdtype(a.dtype, np.floating)
    return _body(a, indent, summarize, _Formatter(shown.reshape(-1), floating), None)


def _with_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > OPTIONS["linewidth"]:
            parts.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            parts.append(", " + s)
            last += len(s) + 2
    return "".join(parts) + ")"


def torch_dtype_str(d) -> str:
    return "torch." + dtype_name(d)


def tensor_repr(self: Tensor) -> str:
    """``repr(t)`` as PyTorch's (see the module docstring)."""
    prefix = "tensor("
    indent = len(prefix)
    default = get_default_dtype()
    if self.is_meta:  # no values: "...", the device and the size
        a = None
        suffixes = ["device='meta'", f"size={tuple(self.shape)}"] + (
            [f"dtype={torch_dtype_str(self.dtype)}"] if self.dtype != default else [])
        body = "..."
    else:
        a = self._to_numpy()
        suffixes = []
    if a is None:
        pass
    elif a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if self.dtype != default:
            suffixes.append(f"dtype={torch_dtype_str(self.dtype)}")
        body = "[]"
    else:
        if self.dtype not in (default, mx.complex64, mx.int64, mx.bool_):
            suffixes.append(f"dtype={torch_dtype_str(self.dtype)}")
        body = tensor_str(a, indent)
    if self._node is not None:
        suffixes.append(f"grad_fn=<{self._node.name()}>")
    elif self._requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent)


# ---------------------------------------------------------------------------------------------------- the faces
_LUCID = {"tensor": (Tensor.__repr__, Tensor.__str__), "dtype": (mx.Dtype.__repr__, mx.Dtype.__str__)}


def install() -> None:
    """PyTorch's face: tensors and dtypes print as PyTorch's."""
    attach("__repr__", tensor_repr)
    attach("__str__", tensor_repr)
    mx.Dtype.__repr__ = mx.Dtype.__str__ = torch_dtype_str


def uninstall() -> None:
    """lucid's own face back."""
    attach("__repr__", _LUCID["tensor"][0])
    attach("__str__", _LUCID["tensor"][1])
    mx.Dtype.__repr__, mx.Dtype.__str__ = _LUCID["dtype"]
