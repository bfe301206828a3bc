"""The tensors lucid evaluates later, in one go: written in place under no_grad, or the loss of the last
``backward()``; and the read path that evaluates them (with the pending index checks) when a value is looked at.
``lucid._tensor`` re-exports these names."""
from __future__ import annotations

import threading
import weakref

import mlx.core as mx

from . import _checks, _threads
from . import _grad_mode as gm


# Tensors whose values the optimizer's single ``mx.eval`` per step should compute too: tensors written in place under
# no_grad (BatchNorm's running stats, counters, hand-written updates: MLX is lazy, so each write chains onto the last
# and the chains must not grow) and the one-element roots of ``backward()`` (the loss: reading it after ``step()`` is
# then free). Weak references: nothing is kept alive for this. (keyed by id: a WeakSet would compare tensors with
# their __eq__.) One registry per thread: a thread's optimizer step evaluates that thread's writes only.
#
# Without an optimizer nothing would ever evaluate the writes (``p -= lr * p.grad`` under no_grad, never read):
# the chains, and every step's graph that they hold, would grow without bound. So the writes are also evaluated
# (one evaluation for all, not waited for) when a backward() starts while writes made before MAX_PENDING_STEPS
# earlier backward() calls are still pending (a training loop without an optimizer: at most two steps' graphs ever
# pend), and after MAX_PENDING_WRITES writes (a loop of writes alone). Reading a value (``.item()``, printing)
# evaluates them with it, and an optimizer step evaluates them every step, so neither fires in ordinary training.
MAX_PENDING_WRITES = 1000
MAX_PENDING_STEPS = 1


class _Pending(threading.local):
    def __init__(self):
        self.refs: dict = {}  # id(tensor) -> weakref
        self.writes = 0  # in-place writes registered since the last evaluation
        self.age = 0  # backward() calls started since the first of them


_pending = _Pending()


def evaluate_later(t: "Tensor", write: bool = False) -> None:
    """Have the next optimizer step (or ``evaluate_pending``) evaluate ``t`` together with the parameters. The
    entry leaves the registry when ``t`` dies, so code that calls backward() without ever stepping an optimizer
    keeps nothing. ``write``: ``t`` was just written in place under no_grad."""
    p = _pending
    refs, key = p.refs, id(t)
    refs[key] = weakref.ref(t, lambda r: refs.get(key) is r and refs.pop(key))
    if write:
        p.writes += 1
        if p.writes >= MAX_PENDING_WRITES and not _tracing():
            evaluate_pending()


def take_pending_evals() -> list:
    """The arrays registered with ``evaluate_later`` in this thread since the last call (for one ``mx.eval``)."""
    p = _pending
    refs, p.refs = p.refs, {}  # a fresh dict: a weakref callback from another thread pops from the old one
    p.writes = p.age = 0
    tensors = [r() for r in list(refs.values())]
    return [t._storage.data for t in tensors if t is not None]


def evaluate_pending() -> None:
    """Start evaluating this thread's registered tensors now (one evaluation, not waited for: the chains are cut
    and the loop goes on building the next step while MLX computes)."""
    _threads.evaluate(take_pending_evals(), wait=False)


def backward_starting() -> None:
    """Called by backward(): evaluate in-place writes that have been pending since before the previous backward()
    (see the registry's comment)."""
    p = _pending
    if p.writes:
        p.age += 1
        if p.age > MAX_PENDING_STEPS and not _tracing():
            evaluate_pending()


def _with_pending(a: mx.array) -> mx.array:
    """``a``, about to be read: evaluated in one go with this thread's pending tensors (so that a loop which reads
    a value each step, ``loss.item()``, never needs another evaluation for its writes) and its pending index checks
    (which raise here if one failed: lucid._checks)."""
    if (_pending.refs or _checks._state.pending) and not _tracing():
        _checks.flush([a] + take_pending_evals())
    return a


def _tracing() -> bool:
    """Inside lucid.compile or lucid.func the arrays are MLX tracers, which cannot be evaluated."""
    state = gm.state
    return state.compiling or state.mlx_transform_depth > 0
