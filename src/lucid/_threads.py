"""lucid from any thread, as PyTorch allows.

MLX 0.32 gives every thread its own default stream that only that thread can evaluate on: an array built lazily
in one thread and evaluated in another fails with "There is no Stream(cpu, 0) in current thread". lucid's lazy
arrays cross threads all the time (a model built in the main thread and trained in a worker, the global random
key), so lucid makes one stream per device that every thread may use (``mx.new_thread_unsafe_stream``) and makes
it each thread's default the first time the thread uses lucid (``adopt_thread``; ``threading.local`` runs
``__init__`` once per thread, so the main thread's ops pay nothing).

"Thread unsafe" means two threads must not evaluate on such a stream at the same moment (MLX's command encoder
and the status of a shared lazy array are unguarded). lucid's evaluation points (``.item()``, ``.numpy()``,
printing, ``optimizer.step()``, ...) go through ``evaluate``, which holds one lock for the evaluation: graph
building stays concurrent, evaluations take turns.
"""
from __future__ import annotations

import threading

import mlx.core as mx
import numpy as np

# one stream per available device type, shared by all threads
_SHARED_STREAMS = [mx.new_thread_unsafe_stream(d) for d in (mx.cpu, mx.gpu) if mx.is_available(d)]

_EVAL_LOCK = threading.Lock()


def _prepare_for_errors() -> None:
    """Throw and catch one C++ exception in this thread. libstdc++ (loaded with MLX, after the process started)
    keeps each thread's exception state in thread-local storage that glibc allocates at the thread's first throw;
    if that first throw is MLX's std::bad_alloc under an address-space limit (``ulimit -v``), that allocation fails
    too and glibc ends the process ("cannot allocate memory for thread-local data: ABORT"). Allocated now, while
    memory is there, it lets MLX's out-of-memory error reach Python as an exception."""
    try:
        mx.reshape(mx.zeros((2,)), (3,))  # checked by MLX's C++ before anything is built
    except ValueError:
        pass


class _ThreadSetup(threading.local):
    def __init__(self):
        for s in _SHARED_STREAMS:
            mx.set_default_stream(s)
        _prepare_for_errors()
        self.adopted = True


_setup = _ThreadSetup()  # the importing thread is set up here, every other thread on its first adopt_thread()


def adopt_thread() -> None:
    """Make the calling thread build its ops on the shared streams (free after its first call)."""
    _setup.adopted  # noqa: B018  (the attribute read runs __init__ in a thread that has not been set up)


def evaluate(arrays, wait: bool = True) -> None:
    """``mx.eval(arrays)``, one thread at a time (see the module docstring). ``wait=False``: ``mx.async_eval``, which
    schedules the computation and returns (a later evaluation or read waits for it)."""
    with _EVAL_LOCK:
        (mx.eval if wait else mx.async_eval)(arrays)


def synchronize() -> None:
    """Wait until everything scheduled on the shared streams (``evaluate(..., wait=False)``) has run."""
    with _EVAL_LOCK:
        for s in _SHARED_STREAMS:
            mx.synchronize(s)


# Reading values evaluates: under the lock too.
def item(a: mx.array):
    with _EVAL_LOCK:
        return a.item()


def tolist(a: mx.array):
    with _EVAL_LOCK:
        return a.tolist()


def to_numpy(a: mx.array, dtype=None, copy: bool | None = True) -> np.ndarray:
    """``copy=None``: copy only if needed. ``np.asarray`` says that in numpy 1.x too, where ``np.array`` refuses
    ``copy=None``."""
    with _EVAL_LOCK:
        return np.asarray(a, dtype=dtype) if copy is None else np.array(a, dtype=dtype, copy=copy)


def compiled_on_main_thread(fn):
    """``mx.compile(fn)`` when called from the main thread, ``fn`` itself (the same ops, run eagerly) from any
    other. MLX keeps one compile cache per thread, and its entries hold Python objects: a worker thread's cache is
    freed as the thread ends, and if that happens while the interpreter shuts down, MLX 0.32 aborts the process
    ("terminate called without an active exception"). Worker threads therefore never fill a compile cache."""
    compiled = mx.compile(fn)
    main = threading.main_thread()

    def call(*args, **kwargs):
        return (compiled if threading.current_thread() is main else fn)(*args, **kwargs)

    call.__wrapped__ = fn
    call.__doc__ = fn.__doc__
    return call
