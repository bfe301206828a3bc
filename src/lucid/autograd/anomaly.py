"""Anomaly detection: ``detect_anomaly()`` / ``set_detect_anomaly(True)``.

While it is on, every recorded node remembers the stack of the forward call that made it, and the engine checks
each gradient a node's backward returns: a NaN raises an error that names the node and shows that stack. The checks
evaluate arrays, so this is a debugging mode (slow), off by default.
"""
from __future__ import annotations

import traceback
import weakref

import mlx.core as mx

from .graph import set_anomaly_observer

_state = {"enabled": False, "check_nan": True}
_traces: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _set(new: dict) -> None:
    """Change the mode; the op recorder then calls ``record_trace`` for each node while it is on."""
    _state.update(new)
    set_anomaly_observer(record_trace if _state["enabled"] else None)


def is_anomaly_enabled() -> bool:
    return _state["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    return _state["check_nan"]


class set_detect_anomaly:
    """``set_detect_anomaly(mode, check_nan=True)``: switch anomaly detection on or off (also a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = dict(_state)
        _set({"enabled": bool(mode), "check_nan": bool(check_nan)})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(self.prev)
        return False


class detect_anomaly:
    """Context manager and decorator that turns anomaly detection on inside it."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev = dict(_state)
        _set({"enabled": True, "check_nan": self.check_nan})
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return func(*args, **kwargs)
        return wrapper


def record_trace(node) -> None:
    """Called by op recording while anomaly mode is on: remember where the forward op was called."""
    _traces[node] = "".join(traceback.format_stack()[:-3])  # less this, node_recorded and the op


def check_gradients(node, grads) -> None:
    """Raise if a gradient produced by ``node``'s backward contains NaN (evaluates the gradients)."""
    if not _state["check_nan"]:
        return
    for i, g in enumerate(grads):
        if g is not None and mx.issubdtype(g._st.data.dtype, mx.inexact) and bool(mx.any(mx.isnan(g._st.data))):
            trace = _traces.get(node)
            where = ("\nTraceback of the forward call that created this node:\n" + trace) if trace else (
                "\n(No forward trace: the node was recorded while anomaly detection was off.)")
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.{where}")
