"""Padding layers (``torch.nn`` names): ReflectionPad, ReplicationPad, CircularPad, ZeroPad and ConstantPad in 1, 2
and 3 spatial dims, each a thin wrapper of ``F.pad`` with the mode fixed. ``padding`` is an int (the same on every
side) or a tuple (left, right[, top, bottom[, front, back]]) of 2 * dims entries."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module


class _PadNd(Module):
    mode = "constant"
    dims = 1

    def __init__(self, padding, value: float = 0.0):
        super().__init__()
        n = 2 * self.dims
        self.padding = (padding,) * n if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != n:
            raise ValueError(f"{type(self).__name__} expects padding of {n} entries, but got {len(self.padding)}")
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        if self.mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"padding={self.padding}" + (f", value={self.value}" if type(self).__name__.startswith("Constant")
                                            else "")


def _layer(name: str, mode: str, dims: int, doc: str):
    cls = type(name, (_PadNd,), {"mode": mode, "dims": dims, "__doc__": doc, "__module__": __name__})
    if name.startswith("Constant"):
        def __init__(self, padding, value: float):
            _PadNd.__init__(self, padding, value)
    else:
        def __init__(self, padding):
            _PadNd.__init__(self, padding)
    cls.__init__ = __init__
    return cls


_KINDS = {"Reflection": ("reflect", "mirror the input at its edges, without repeating the edge"),
          "Replication": ("replicate", "repeat the edge values"),
          "Circular": ("circular", "wrap around"),
          "Zero": ("constant", "zeros"),
          "Constant": ("constant", "the constant ``value``")}
__all__ = []
for _kind, (_mode, _what) in _KINDS.items():
    for _d in (1, 2, 3):
        _name = f"{_kind}Pad{_d}d"
        _sides = ", ".join(("left, right", "top, bottom", "front, back")[:_d])
        _doc = (f"Pad the last {_d} dim(s) with {_what} (``F.pad`` mode '{_mode}').\n\n:param padding: an int (the "
                f"same on every side) or a {2 * _d}-tuple ({_sides}).\n"
                + (":param value: the fill value.\n" if _kind == "Constant" else ""))
        globals()[_name] = _layer(_name, _mode, _d, _doc)
        __all__.append(_name)
