"""float64 on a GPU default device: the work runs on the CPU stream.

What MLX 0.32 does (its source and docs): every GPU backend, Metal and CUDA alike, refuses float64 when the graph is
built. An op placed on a GPU stream with a float64 input or output raises ``ValueError("float64 is not supported on
the GPU")`` at the call, before anything is computed (``mlx/array.cpp``); the CPU backend has float64. The LAPACK
factorizations (``qr``, ``svd``, ``inv``, ``cholesky``, ``eigh``, ``eig``, ``lu``, ``solve``, ``pinv`` ...) have no
GPU kernel on any backend (MLX refuses a GPU stream for them), so ``lucid.linalg`` runs them on the CPU stream on
every device. Both devices read the same memory (unified memory on Apple silicon, managed memory on CUDA), so a CPU
op takes a GPU result as input and the reverse; MLX orders the two streams.

So on a GPU default, float64 tensors and their ops, forward and backward, run on the CPU stream, transparently:

- a declared op (``ops/_core.py``) builds its forward on the default device and, only if MLX refuses float64 there,
  builds it again inside ``on_cpu()`` (``refused``): nothing is paid when MLX does not refuse, so nothing changes on a
  CPU default nor for float32 work on the GPU;
- the entry points that make float64 values outside a declared op ask ``gpu_default()`` first (one call into MLX,
  ~0.1 us), then enter ``on_cpu()`` for float64: the factories, a backward walk through a graph that
  holds float64 (autograd/engine.py), ``gradcheck`` (``routed``), in-place writes (``Tensor._inplace``), an optimizer
  step over float64 parameters, and the ops that compute on their inputs' arrays themselves (``float64_args``).
  ``build`` retries a single pure MLX call (a cast) the way a declared op does.

``on_cpu()`` makes the CPU MLX's default device for its duration. MLX's default device is one per process (its
streams are per thread), so the scope is counted across threads: the first entry switches, the last exit switches
back. While one thread is inside, float32 ops of other threads also land on the CPU: correct, only slower.
"""
from __future__ import annotations

import contextlib
import functools
import threading

import mlx.core as mx

REFUSAL = "float64 is not supported on the GPU"  # MLX's message (mlx/array.cpp), the same for Metal and CUDA


def gpu_default() -> bool:
    """Whether MLX's default device is a GPU, which has no float64."""
    return mx.default_device().type == mx.gpu


def refused(e: ValueError) -> bool:
    """Whether MLX raised ``e`` because it was asked for float64 on a GPU stream."""
    return str(e) == REFUSAL


class _OnCpu:
    """``with on_cpu():`` MLX builds the ops on the CPU stream (see the module docstring). Reentrant, any thread."""

    __slots__ = ()
    _lock = threading.Lock()
    _depth = 0
    _saved = None  # the default device to restore when the last scope ends

    def __enter__(self):
        cls = _OnCpu
        with cls._lock:
            if cls._depth == 0:
                cls._saved = mx.default_device()
                mx.set_default_device(mx.cpu)
            cls._depth += 1
        return self

    def __exit__(self, *exc):
        cls = _OnCpu
        with cls._lock:
            cls._depth -= 1
            if cls._depth == 0:
                mx.set_default_device(cls._saved)
                cls._saved = None
        return False


_ON_CPU = _OnCpu()
_AS_IS = contextlib.nullcontext()


def on_cpu() -> _OnCpu:
    return _ON_CPU


def for_dtype(dtype) -> _OnCpu | contextlib.nullcontext:
    """``with for_dtype(d):``: inside ``on_cpu()`` when ``d`` is float64 and the default device is a GPU."""
    return _ON_CPU if dtype == mx.float64 and gpu_default() else _AS_IS


def build(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` built on the default device, or again on the CPU stream if MLX refused float64 there
    (``fn`` must have no effect besides its result: it may run twice)."""
    try:
        return fn(*args, **kwargs)
    except ValueError as e:
        if not refused(e):
            raise
    with _ON_CPU:
        return fn(*args, **kwargs)


def _float64(x) -> bool:
    d = getattr(x, "dtype", None)
    if isinstance(d, mx.Dtype):  # a Tensor or an MLX array
        return d == mx.float64
    if isinstance(x, (list, tuple)):
        return any(_float64(y) for y in x)
    return isinstance(x, mx.Dtype) and x == mx.float64  # a dtype= argument


def float64_args(fn):
    """``fn`` run inside ``on_cpu()`` when the default device is a GPU and an argument is float64 (a Tensor, an array,
    a sequence of them, or a dtype). For the ops that compute on their inputs' MLX arrays themselves, outside a
    declared op (sort's order, the pieces of split, the two outputs of var_mean ...), so that their effects happen
    once. On a CPU default: one device query."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if gpu_default() and (_float64(args) or any(_float64(v) for v in kwargs.values())):
            with _ON_CPU:
                return fn(*args, **kwargs)
        return fn(*args, **kwargs)

    return call


def routed(fn):
    """``fn`` run inside ``on_cpu()`` when the default device is a GPU (for entry points whose work is float64
    throughout, such as ``gradcheck``); on a CPU default it is called as it is."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if gpu_default():
            with _ON_CPU:
                return fn(*args, **kwargs)
        return fn(*args, **kwargs)

    return call
