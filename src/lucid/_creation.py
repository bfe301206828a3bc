"""Making tensors: ``tensor`` from data, the factories (zeros, ones, arange, rand, ...) and their ``*_like`` forms.

dtype inference follows PyTorch: Python floats give float32, ints int64, bools bool; numpy arrays and MLX arrays
keep their dtype (a float64 numpy array stays float64, which ``mx.array`` alone would silently narrow).
"""
from __future__ import annotations

import builtins
import functools
import inspect
import math
from numbers import Number

import mlx.core as mx
import numpy as np

from . import _cpu_route, _dtype, _meta
from ._threads import adopt_thread
from ._random import manual_seed, next_key, seed  # noqa: F401  (manual_seed and seed are re-exported by lucid)
from ._tensor import Tensor, _to_array, _wrap
from . import _grad_mode as gm


def _finish(arr: mx.array, requires_grad: bool) -> Tensor:
    t = _wrap(arr)
    if gm.state.inference:
        t._ex().inference = True
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return t


def tensor(data, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (nested lists, numbers, numpy or MLX arrays, Tensors)."""
    return _finish(_to_array(data, dtype, device), requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor``, but a Tensor of the right dtype is returned as it is."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == dtype):
        return data
    return tensor(data, dtype, device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor with the numpy array's dtype and values (MLX copies: later numpy writes are not seen)."""
    return _finish(_to_array(np.asarray(ndarray)), False)


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor with the values of an object that supports DLPack (``__dlpack__``): a numpy array, a PyTorch
    tensor, an MLX array, a lucid tensor. The values are copied (MLX arrays are immutable, so later writes to the
    source are not seen, where PyTorch's ``from_dlpack`` shares memory)."""
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError("from_dlpack() expects an object with __dlpack__ (a numpy array, a PyTorch tensor, ...), "
                        f"not {type(ext_tensor).__name__}")
    try:
        arr = np.from_dlpack(ext_tensor)  # keeps float64, which MLX's from_dlpack reads as float32
    except (BufferError, TypeError, RuntimeError, ValueError):  # a dtype numpy lacks (bfloat16), or not on the CPU
        return _finish(mx.from_dlpack(ext_tensor, copy=True), False)
    return from_numpy(arr)


def from_mlx(array: mx.array, requires_grad: bool = False) -> Tensor:
    """Wrap an MLX array without copying."""
    return _finish(array, requires_grad)


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(builtins.int(s) for s in size)


def size_keyword(fn):
    """``fn(*size, ...)`` that also takes its size as the keyword ``size=`` (a sequence), as PyTorch's factories do
    (``torch.ones(size=(2, 3))``); its signature stays ``fn``'s."""
    lead = sum(p.kind == p.POSITIONAL_OR_KEYWORD for p in inspect.signature(fn).parameters.values())  # a method's self

    @functools.wraps(fn)
    def factory(*args, **kwargs):
        if "size" in kwargs:
            if len(args) > lead:
                raise TypeError(f"{fn.__name__.lstrip('_')}() got multiple values for argument 'size'")
            args = (*args, kwargs.pop("size"))
        return fn(*args, **kwargs)
    return factory


def _factory(make, size, dtype, device, requires_grad, default=None):
    """``make(shape, dtype)`` after the checks every factory shares: the device, and a shape MLX can allocate
    (no negative dims, not more than the machine's memory: see ``_dtype.check_new_shape``)."""
    adopt_thread()  # make() builds an op before anything reads the grad mode
    if dtype is None:
        dtype = _dtype.get_default_dtype() if default is None else default
    if device is not None:
        _dtype.check_device(device, dtype)
    shape = _dtype.check_new_shape(_shape(size), dtype)
    if _dtype.wants_meta(device):  # no values to make (nor random numbers to draw, as in PyTorch)
        return _finish(_meta.placeholder(shape, dtype), requires_grad)
    if dtype == mx.float64 and _cpu_route.gpu_default():  # (no context manager on the common path: it costs ~0.5 us)
        with _cpu_route.on_cpu():  # float64 on a GPU default: made on the CPU stream
            return _finish(make(shape, dtype), requires_grad)
    return _finish(make(shape, dtype), requires_grad)


@size_keyword
def zeros(*size, dtype=None, device=None, requires_grad: bool = False, out=None) -> Tensor:
    """A tensor of ``size`` filled with 0 (``size`` as separate ints or one sequence)."""
    return _factory(mx.zeros, size, dtype, device, requires_grad)


@size_keyword
def ones(*size, dtype=None, device=None, requires_grad: bool = False, out=None) -> Tensor:
    """A tensor of ``size`` filled with 1 (``size`` as separate ints or one sequence)."""
    return _factory(mx.ones, size, dtype, device, requires_grad)


@size_keyword
def empty(*size, dtype=None, device=None, requires_grad: bool = False, out=None, memory_format=None) -> Tensor:
    """MLX has no uninitialised memory: this is ``zeros`` (MLX has one layout: ``memory_format`` is accepted)."""
    return _factory(mx.zeros, size, dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (dtype inferred from it unless given)."""
    if dtype is None:
        dtype = mx.bool_ if isinstance(fill_value, bool) else (
            mx.int64 if isinstance(fill_value, builtins.int) else None)
    return _factory(lambda s, d: mx.full(s, fill_value, d), (size,) if isinstance(size, Number) else size, dtype,
                    device, requires_grad)


def eye(n: int, m: int | None = None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """The ``n`` x ``m`` identity matrix (``m`` defaults to ``n``)."""
    m = n if m is None else m
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    return _factory(lambda s, d: mx.eye(*s, dtype=d), (n, m), dtype, device, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive); int64 when all arguments are ints, else float32."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, builtins.int) or (isinstance(v, Tensor) and not v.is_floating_point())
                     for v in (start, end, step))
        dtype = mx.int64 if is_int else _dtype.get_default_dtype()
    start, end, step = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    np_dtype = np.float64 if _dtype.is_floating(dtype) else np.int64
    # the length is checked before numpy builds the values (np.arange(10**13) would try to allocate them)
    n = builtins.max(0, math.ceil((end - start) / step))
    return _factory(lambda s, d: mx.array(np.arange(start, end, step, dtype=np_dtype), dtype=d), (n,), dtype, device,
                    requires_grad)


def _check_steps(steps: int) -> int:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return steps


def linspace(start, end, steps: int, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included."""
    return _factory(lambda s, d: mx.array(np.linspace(start, end, *s), dtype=d), (_check_steps(steps),), dtype,
                    device, requires_grad)


def logspace(start, end, steps: int, base: float = 10.0, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` values ``base ** x`` for x evenly spaced from ``start`` to ``end``."""
    return _factory(lambda s, d: mx.array(np.logspace(start, end, *s, base=base), dtype=d), (_check_steps(steps),),
                    dtype, device, requires_grad)


# ---------------------------------------------------------------------------------------------------- random
def _key(generator) -> mx.array:
    """The key for one random op: from ``generator`` (a ``lucid.Generator``) if given, else lucid's global one."""
    return next_key() if generator is None else generator.next_key()


@size_keyword
def rand(*size, dtype=None, device=None, requires_grad: bool = False, generator=None) -> Tensor:
    """Uniform on [0, 1)."""
    # MLX's uniform sampler has no float64 kernel: draw float32 and cast
    return _factory(lambda s, d: mx.random.uniform(shape=s, dtype=mx.float32 if d == mx.float64 else d,
                                                   key=_key(generator)).astype(d), size, dtype, device, requires_grad)


@size_keyword
def randn(*size, dtype=None, device=None, requires_grad: bool = False, generator=None) -> Tensor:
    """Standard normal."""
    return _factory(lambda s, d: mx.random.normal(shape=s, dtype=d, key=_key(generator)), size, dtype, device,
                    requires_grad)


def randint(low=None, high=None, size=None, dtype=None, device=None, requires_grad: bool = False,
            generator=None) -> Tensor:
    """Integers in [low, high); ``randint(high, size)`` starts at 0."""
    if size is None:
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=...)
        low, high = 0, low
    elif low is None:  # randint(high=..., size=...)
        low = 0
    if low >= high:  # MLX would fill the tensor with ``low``
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return _factory(lambda s, d: mx.random.randint(low, high, shape=s, key=_key(generator)).astype(d), (tuple(size),),
                    dtype, device,
                    requires_grad, default=mx.int64)


def randperm(n: int, dtype=None, device=None, requires_grad: bool = False, generator=None) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64)."""
    return _factory(lambda s, d: mx.argsort(mx.random.uniform(shape=s, key=_key(generator))).astype(d), (n,), dtype,
                    device, requires_grad, default=mx.int64)


def normal(mean=0.0, std=1.0, size=None, dtype=None, device=None, requires_grad: bool = False,
           generator=None) -> Tensor:
    """Normal samples: ``normal(mean, std, size)`` with numbers, or elementwise with tensor mean/std."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._storage.data if isinstance(mean, Tensor) else mean
        s = std._storage.data if isinstance(std, Tensor) else std
        shape = _dtype.broadcast_shapes(*(a.shape for a in (m, s) if isinstance(a, mx.array)))
        dtypes = [a.dtype for a in (m, s) if isinstance(a, mx.array)]
        dt = dtypes[0]
        with _cpu_route.for_dtype(mx.float64 if mx.float64 in dtypes else dt):
            return _finish(mx.random.normal(shape=shape, dtype=dt, key=_key(generator)) * s + m, requires_grad)
    return _factory(lambda sh, d: mx.random.normal(shape=sh, dtype=d, loc=mean, scale=std, key=_key(generator)),
                    (tuple(size),), dtype,
                    device, requires_grad)


def like_device(input, device):
    """The device of a ``*_like`` or ``new_*`` result: ``device``, else ``input``'s (a meta tensor's is meta, inside
    ``with lucid.device("meta")`` too), as in PyTorch."""
    if device is None and (_meta.used[0] or _dtype.wants_meta(None)):
        return "meta" if getattr(input, "is_meta", False) else _dtype.array_device()
    return device


def zeros_like(input, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """Zeros of ``input``'s shape (and dtype, unless given)."""
    return zeros(input.shape, dtype=dtype or input.dtype, device=like_device(input, device),
                 requires_grad=requires_grad)


def ones_like(input, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """Ones of ``input``'s shape (and dtype, unless given)."""
    return ones(input.shape, dtype=dtype or input.dtype, device=like_device(input, device),
                requires_grad=requires_grad)


def empty_like(input, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """An uninitialized tensor of ``input``'s shape (lucid fills it with zeros)."""
    return zeros(input.shape, dtype=dtype or input.dtype, device=like_device(input, device),
                 requires_grad=requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """``fill_value`` in ``input``'s shape (and dtype, unless given)."""
    return full(input.shape, fill_value, dtype=dtype or input.dtype, device=like_device(input, device),
                requires_grad=requires_grad)


def rand_like(input, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """Uniform [0, 1) samples of ``input``'s shape."""
    return rand(input.shape, dtype=dtype or input.dtype, device=like_device(input, device),
                requires_grad=requires_grad)


def randn_like(input, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """Standard normal samples of ``input``'s shape."""
    return randn(input.shape, dtype=dtype or input.dtype, device=like_device(input, device),
                 requires_grad=requires_grad)


def randint_like(input, low, high=None, dtype=None, device=None, requires_grad: bool = False,
                 memory_format=None) -> Tensor:
    """Random integers in [low, high) of ``input``'s shape (``randint_like(input, high)`` takes low = 0)."""
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=like_device(input, device),
                   requires_grad=requires_grad)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """A 0-d tensor holding ``s``, of the default float dtype unless ``dtype`` is given (also for an int ``s``)."""
    return tensor(s, dtype=_dtype.get_default_dtype() if dtype is None else dtype, device=device,
                  requires_grad=requires_grad)


def _triangle_indices(name: str, row: int, col: int, offset: int, dtype, device) -> Tensor:
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype is not None and dtype != mx.int32 and dtype != mx.int64:
        raise RuntimeError(f"\"{name}\" not implemented for '{_dtype.dtype_name(dtype).capitalize()}'")
    keep = np.tril if name == "tril_indices" else np.triu
    rows, cols = np.nonzero(keep(np.ones((row, col), dtype=np.bool_), offset))  # row-major, as PyTorch orders them
    return tensor(np.stack([rows, cols]).astype(np.int64), dtype=dtype or mx.int64, device=device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The (2, N) coordinates of the lower triangle of a ``row`` x ``col`` matrix (on and below diagonal
    ``offset``), row by row."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The (2, N) coordinates of the upper triangle of a ``row`` x ``col`` matrix (on and above diagonal
    ``offset``), row by row."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device)


def _window(name: str, window_length: int, periodic: bool, dtype, device, requires_grad: bool, shape) -> Tensor:
    """A window from ``shape(n, N)``, the symmetric window of N = length - 1 points' denominator at positions n (a
    periodic window is the symmetric one of length + 1 without its last point), computed in float64."""
    dtype = _dtype.get_default_dtype() if dtype is None else dtype
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if not _dtype.is_floating(dtype):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {_dtype.dtype_name(dtype)}")
    if window_length <= 1:
        return ones(window_length, dtype=dtype, device=device, requires_grad=requires_grad)
    n_points = window_length + 1 if periodic else window_length
    values = shape(np.arange(window_length, dtype=np.float64), n_points - 1)
    return tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                requires_grad: bool = False) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / N)``."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 0.5 - 0.5 * np.cos(2 * np.pi * n / N))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The Hamming window ``alpha - beta cos(2 pi n / N)``."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: alpha - beta * np.cos(2 * np.pi * n / N))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)``."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 0.42 - 0.5 * np.cos(2 * np.pi * n / N) + 0.08 * np.cos(4 * np.pi * n / N))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window ``1 - |2 n / N - 1|``."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 1 - np.abs(2 * n / N - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None, layout=None,
                  device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - (2 n / N - 1)^2)) / I0(beta)``."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: np.i0(beta * np.sqrt(np.clip(1 - (2 * n / N - 1) ** 2, 0, None))) / np.i0(beta))
