"""Anomaly detection: ``detect_anomaly()`` / ``set_detect_anomaly(True)``.

While it is on, every recorded node remembers the stack of the forward call that made it, and the engine checks
each gradient a node's backward returns: a NaN raises an error that names the node and shows that stack. The checks
evaluate arrays, so this is a debugging mode (slow), off by default.
"""
from __future__ import annotations

import os
import sys
import traceback
import warnings
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
    """Whether anomaly detection is on (``detect_anomaly``/``set_detect_anomaly``)."""
    return _state["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also raises when a backward node returns NaN."""
    return _state["check_nan"]


class set_detect_anomaly:
    """``set_detect_anomaly(mode, check_nan=True)``: switch anomaly detection on or off (also a context manager,
    restoring the previous setting on exit).

    :param mode: True to record each op's creation traceback and check backward outputs.
    :param check_nan: raise when a backward node returns NaN (``RuntimeError: Function 'XBackward0' returned nan
        values in its 0th output.``).
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = dict(_state)
        _set({"enabled": bool(mode), "check_nan": bool(check_nan)})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(self.prev)
        return False


class detect_anomaly:
    """Context manager and decorator that turns anomaly detection on inside it: a backward error names the forward
    line that made the failing node, and (with ``check_nan``) a NaN produced in backward raises at its node.

    :param check_nan: raise when a backward node returns NaN.

    >>> import lucid, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with lucid.autograd.detect_anomaly():
    ...         lucid.autograd.is_anomaly_enabled()
    True
    """

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

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
            with self:
                return func(*args, **kwargs)
        return wrapper


_RECORDERS = (os.path.dirname(__file__), os.path.join(os.path.dirname(os.path.dirname(__file__)), "ops", "_core.py"))
_running: list = [None]  # the node whose backward is running (anomaly mode only): the parent of nodes it records


def record_trace(node) -> None:
    """Called by op recording while anomaly mode is on: remember where the forward op was called, and which node's
    backward was running then (a node recorded by a backward, for double backward)."""
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_RECORDERS):  # the recorder's own frames (an op, Function.apply)
        frames.pop()
    _traces[node] = ("".join(traceback.format_list(frames)), _running[0])


def apply_checked(node, grads, needed):
    """The engine's ``node.apply`` while anomaly mode is on: NaN checks, and on any error a report of where the
    failing node (and the nodes whose backward recorded it) came from."""
    prev = _running[0]
    _running[0] = node
    try:
        out = node.apply(grads, needed)
        check_gradients(node, out)
        return out
    except Exception:
        report_error(node)
        raise
    finally:
        _running[0] = prev


def check_gradients(node, grads) -> None:
    """Raise if a gradient produced by ``node``'s backward contains NaN (evaluates the gradients)."""
    if not _state["check_nan"]:
        return
    for i, g in enumerate(grads):
        if g is not None and mx.issubdtype(g._st.data.dtype, mx.inexact) and bool(mx.any(mx.isnan(g._st.data))):
            trace = _traces.get(node, (None,))[0]
            where = ("\nTraceback of the forward call that created this node:\n" + trace) if trace else (
                "\n(No forward trace: the node was recorded while anomaly detection was off.)")
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.{where}")


def report_error(node) -> None:
    """A node's backward raised while anomaly mode is on: say which node and where its forward op was called, then
    the same for each node whose backward recorded it (warnings, as PyTorch's; printed to stderr when warnings are
    errors, so the original error still propagates)."""
    entry = _traces.get(node)
    if entry is None:
        _warn(f"Error detected in {node.name()}. No forward pass information available. Enable detect anomaly during "
              "forward pass for more information.")
        return
    _warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{entry[0]}")
    parent = entry[1]
    while parent is not None and parent in _traces:
        trace, grandparent = _traces[parent]
        _warn(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward call that induced the "
              f"previous calculation:\n{trace}")
        parent = grandparent


def _warn(msg: str) -> None:
    try:
        warnings.warn(msg, UserWarning, stacklevel=5)
    except Warning:
        print(msg, file=sys.stderr)
