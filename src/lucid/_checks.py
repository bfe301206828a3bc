"""Index bounds: checked at once when the values are on the host, made safe and checked later when they are not.

MLX must never see an out-of-range index: a read returns garbage and a write can corrupt memory or kill the process.
But MLX is lazy. An index tensor computed on the device (``argmax``, ``randint``, arithmetic, a slice of a batch)
has no values yet, and reading them for a check would force an evaluation in the middle of the forward pass (a sync
per indexing op). So every op that consumes indices passes them through ``checked_index``:

- indices whose values are already on the host — Python ints, lists, numpy arrays, a tensor made from such data or
  already evaluated (printed, ``.item()``, ``.numpy()``) — are checked at once, and PyTorch's error is raised from
  the user's line;
- other indices are replaced, for MLX, by a safe array (out-of-range entries become 0, so nothing is read or
  written out of bounds), and a lazy flag "was any entry out of range" is registered with the op's name and the
  user's line that called it. The next point where lucid computes values anyway — ``.item()``, ``.tolist()``,
  ``.numpy()``, printing, ``backward()`` and ``optimizer.step()`` (before they change anything), ``lucid.save``,
  a ``lucid.compile``d call — evaluates the pending flags too, and raises PyTorch's error naming the op and that
  line. A write with such an index (``x[i] = v``, ``scatter_``, ``index_add_``, ...) is all or nothing: if one
  index is out of range, the tensor keeps its old values.

The pending flags are per thread. A trace (``lucid.compile``) collects the flags of the ops it records with
``collect()`` and returns them from the compiled function, so compiled steps are checked too.
"""
from __future__ import annotations

import os
import sys
import threading
import weakref

import mlx.core as mx
import numpy as np

from . import _threads

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_MAX_PENDING = 512  # a loop that never looks at a value still gets its checks (and frees their arrays) this often


class _State(threading.local):
    def __init__(self):
        self.pending: list = []  # Checks not yet evaluated
        self.scope: list | None = None  # the Checks of a trace in progress (see collect)
        self.watch: list | None = None  # the flags of a write op in progress (see watch)


_state = _State()
enabled = [True]  # bench/ measures the cost by turning the checks off; nothing else should


class Check:
    """One deferred bounds check: ``flag`` (a lazy bool array) says whether ``index`` had an entry outside
    ``[lo, size)`` (ignoring ``ignore``); ``error(value)`` builds PyTorch's exception for the first such entry."""

    __slots__ = ("flag", "index", "lo", "size", "ignore", "error", "op", "site")

    def __init__(self, flag, index, lo, size, ignore, error, op, site):
        self.flag, self.index, self.lo, self.size, self.ignore = flag, index, lo, size, ignore
        self.error, self.op, self.site = error, op, site

    def exception(self, index=None) -> Exception:
        """The error, for the index's values (``index``: its evaluated array, when it was traced)."""
        bad = None
        if self.index is not None:  # (a value check made by check_later has no index)
            host = _threads.to_numpy(self.index if index is None else index, copy=None)
            bad = first_outside(host, self.lo, self.size, self.ignore)
        exc = self.error(bad)
        file, line = self.site
        exc.args = (f"{exc.args[0] if exc.args else ''} (in {self.op}, called at {file}, line {line}; MLX is lazy, "
                    "so lucid found this when the values were computed)",)
        return exc


# ---------------------------------------------------------------------------------------------------- host values
_known: dict = {}  # id(array) -> weakref of MLX arrays whose values are on the host


def mark_known(arr: mx.array) -> mx.array:
    """Record that ``arr`` holds computed values (made from host data, or evaluated): its indices can be checked
    at once, for free."""
    key = id(arr)
    _known[key] = weakref.ref(arr, lambda r: _known.get(key) is r and _known.pop(key, None))
    return arr


def is_known(arr: mx.array) -> bool:
    r = _known.get(id(arr))
    return r is not None and r() is arr


def first_outside(host: np.ndarray, lo: int, hi: int, ignore=None):
    """The first value of ``host`` outside ``[lo, hi)`` (values equal to ``ignore`` excepted), or None."""
    if host.size == 0 or (host.min() >= lo and host.max() < hi):  # the common case, fast (ignore only excuses)
        return None
    out = (host < lo) | (host >= hi)
    if ignore is not None:
        out &= host != ignore
    if not out.any():
        return None
    return int(host.reshape(-1)[np.argmax(out.reshape(-1))])


# ---------------------------------------------------------------------------------------------------- the check
def checked_index(index: mx.array, size: int, error, op: str, *, negative: bool = False, ignore=None) -> mx.array:
    """``index`` ready for MLX along a dim of ``size``: checked now if its values are known (raising
    ``error(first bad value)``), else with out-of-range entries replaced by 0 and a deferred check registered.
    ``negative``: entries in ``[-size, 0)`` are valid (they count from the end, which MLX does too). Entries equal
    to ``ignore`` are neither checked nor changed (the caller masks them)."""
    return checked_index_seen(index, size, error, op, negative=negative, ignore=ignore)[0]


def checked_index_seen(index: mx.array, size: int, error, op: str, *, negative: bool = False,
                       ignore=None) -> tuple:
    """``(checked_index(...), seen)``: ``seen`` is True when the values were read and every entry lies in
    ``[lo, size)`` (none equals an ``ignore`` outside that range: nll_loss then needs no mask)."""
    if index.size == 0 or not enabled[0]:
        return index, False
    lo = -size if negative else 0
    if size == 0 or is_known(index):  # with size 0 every entry is out of range: reading it is the error path
        if index.ndim == 1 and index.size <= 64:  # a batch's targets: Python's min/max beat numpy's overhead
            values = _threads.tolist(index)
            if min(values) >= lo and max(values) < size:
                return index, True
        bad = first_outside(_threads.to_numpy(index, copy=None), lo, size, ignore)
        if bad is not None:
            raise error(bad)
        return index, False
    # one comparison: shifted to start at 0, a negative entry becomes huge as an unsigned number
    shifted = index + size if negative else index
    bad = shifted.astype(mx.uint64) >= (2 * size if negative else size)
    if ignore is not None and not (ignore < 0 and mx.issubdtype(index.dtype, mx.unsignedinteger)):
        bad = bad & (index != ignore)  # (a negative ignore, as -100, equals no unsigned entry: nothing to skip)
    _register(Check(mx.any(bad), index, lo, size, ignore, error, op, _user_site()))
    return mx.where(bad, 0, index), False


def check_later(flag: mx.array, error, op: str) -> None:
    """A deferred check of a condition on values other than indices: ``error(None)`` is raised at the next
    evaluation (as for indices) if the lazy bool ``flag`` turns out True."""
    if enabled[0]:
        _register(Check(flag, None, 0, 0, None, error, op, _user_site()))


def _register(check: Check) -> None:
    if _state.watch is not None:
        _state.watch.append(check.flag)
    scope = _state.scope
    if scope is not None:
        scope.append(check)
    else:
        pending = _state.pending
        pending.append(check)
        if len(pending) >= _MAX_PENDING:
            flush()


def _user_site() -> tuple:
    """(file, line) of the innermost caller outside lucid: the user's line that called the op."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else ("<unknown>", 0)


# ---------------------------------------------------------------------------------------------------- evaluation
def has_pending() -> bool:
    return bool(_state.pending)


def flush(arrays=()) -> None:
    """Evaluate ``arrays`` and every pending check in one ``mx.eval``; raise the first failed check's error (in
    program order). Does nothing while a trace collects checks (its values are placeholders)."""
    pending = _state.pending
    if not pending or _state.scope is not None:
        if arrays:
            _threads.evaluate(arrays)
        return
    _state.pending = []
    flags = [c.flag for c in pending]
    try:
        _threads.evaluate([arrays, flags])
    except RuntimeError:  # a check recorded inside a raw MLX transform (a placeholder array): skip those
        flags = [f if _evaluates(f) else mx.array(False) for f in flags]
        _threads.evaluate(arrays)
    for c, f in zip(pending, flags):
        if _threads.item(f):
            raise c.exception()


def _evaluates(a: mx.array) -> bool:
    try:
        _threads.evaluate(a)
        return True
    except RuntimeError:
        return False


class _Fresh:
    """``with _Fresh(field) as items:`` — the thread's state ``field`` is a fresh list for the duration."""

    def __init__(self, field: str):
        self.field = field

    def __enter__(self) -> list:
        self.outer = getattr(_state, self.field)
        items: list = []
        setattr(_state, self.field, items)
        return items

    def __exit__(self, *exc) -> None:
        setattr(_state, self.field, self.outer)


def watch() -> _Fresh:
    """``with watch() as flags:`` — the flags of the deferred checks made inside, so that a write op can keep its
    input unchanged when one of its indices turns out to be out of range (all or nothing)."""
    return _Fresh("watch")


def collect() -> _Fresh:
    """``with collect() as checks:`` — the checks of ops recorded inside (a trace) go to ``checks`` instead of the
    thread's pending list; the tracer returns their flags and raises with ``raise_failed``."""
    return _Fresh("scope")


def raise_failed(checks: list, flags: list, indices: list) -> None:
    """After a traced call: ``flags`` and ``indices`` are the evaluated flags and index arrays of ``checks``."""
    for c, f, idx in zip(checks, flags, indices):
        if _threads.item(f):
            raise c.exception(idx)
