"""Tensor methods and small functions that ported programs call: ``new_zeros/new_ones/new_full/new_empty/
new_tensor``, the in-place random fills (``normal_``, ``uniform_``, ``exponential_``, ``random_``, ``bernoulli_``,
``cauchy_``, ``log_normal_``, ``geometric_``), storage facts (``stride``, ``nbytes``, ``itemsize``, ``is_mps``,
``is_xpu``), and ``numel``, ``is_tensor``, ``is_floating_point``, ``set_printoptions``.

The random fills draw from lucid's generator (or the ``generator`` given) and replace the tensor's value in place:
as in PyTorch they are errors on a leaf that requires grad outside ``no_grad`` (``nn.init`` runs under it), and the
result does not depend on the old value (no gradient flows through it).
"""
from __future__ import annotations

__all__ = ["bernoulli", "multinomial", "numel", "is_tensor", "is_floating_point", "is_complex", "set_printoptions",
           "result_type", "broadcast_shapes"]

import inspect
import math

import mlx.core as mx
import numpy as np

from .. import _cpu_route
from .. import _checks, _creation, _dtype, _legacy, _meta, _threads
from .._surface import attach
from .._tensor import Size, Tensor, _wrap
from .elementwise import cast


# ---------------------------------------------------------------------------------------------------- new_*
def _like(self: Tensor, dtype, requires_grad: bool, device) -> dict:
    return dict(dtype=self.dtype if dtype is None else dtype, requires_grad=requires_grad,
                device=_creation.like_device(self, device))


@_creation.size_keyword
def _new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Zeros of ``size`` with this tensor's dtype (unless ``dtype`` is given)."""
    return _creation.zeros(*size, **_like(self, dtype, requires_grad, device))


def _new(self, *args, dtype=None, device=None):
    """The legacy constructor: ``x.new(2, 3)`` / ``x.new(size)`` is ``new_empty``, ``x.new(data)`` (a list, tuple or
    Tensor) ``new_tensor``, ``x.new()`` an empty tensor; all with this tensor's dtype."""
    if len(args) == 1 and isinstance(args[0], (list, Tensor)) or (args and type(args[0]) is tuple):
        return _new_tensor(self, args[0], dtype=dtype, device=device)
    return _new_empty(self, *(args or (0,)), dtype=dtype, device=device)


@_creation.size_keyword
def _new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Ones of ``size``, with this tensor's dtype unless ``dtype`` is given."""
    return _creation.ones(*size, **_like(self, dtype, requires_grad, device))


@_creation.size_keyword
def _new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """MLX has no uninitialised memory: zeros."""
    return _creation.zeros(*size, **_like(self, dtype, requires_grad, device))


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    """``fill_value`` in ``size``, with this tensor's dtype unless ``dtype`` is given."""
    return _creation.full(size, fill_value, **_like(self, dtype, requires_grad, device))


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A new leaf holding a copy of ``data``, with this tensor's dtype unless ``dtype`` is given."""
    if isinstance(data, Tensor):
        data = data.detach()
    return _creation.tensor(data, **_like(self, dtype, requires_grad, device))


# ---------------------------------------------------------------------------------------------------- random fills
def _uniform01(shape, dtype, generator) -> mx.array:
    """Uniform on [0, 1) in ``dtype`` (MLX's sampler has no float64 kernel: drawn in float32 and cast)."""
    draw_dtype = mx.float32 if dtype == mx.float64 or not _dtype.is_floating(dtype) else dtype
    return mx.random.uniform(shape=shape, dtype=draw_dtype, key=_creation._key(generator)).astype(
        dtype if _dtype.is_floating(dtype) else mx.float32)


@_cpu_route.float64_args
def _fill_random(self: Tensor, draw) -> Tensor:
    """Replace the value by ``draw(shape, dtype)`` (an MLX array), in place."""
    arr = self._storage.data
    value = _wrap(draw(arr.shape, arr.dtype).astype(arr.dtype))
    return self._inplace(lambda old: value)


def _float_fill(name: str, self: Tensor) -> None:
    if not _dtype.is_floating(self.dtype):
        raise RuntimeError(f"{name} expects a floating point tensor, but got {_dtype.dtype_name(self.dtype)}")


def _uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    """Fill with samples of U[from, to)."""
    from_ = kwargs.pop("from", from_)
    _float_fill("uniform_", self)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    return _fill_random(self, lambda s, d: _uniform01(s, d, generator) * (to - from_) + from_)


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples of N(mean, std²)."""
    _float_fill("normal_", self)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    draw_dtype = lambda d: mx.float32 if d == mx.float64 else d  # noqa: E731
    return _fill_random(self, lambda s, d: mx.random.normal(shape=s, dtype=draw_dtype(d),
                                                            key=_creation._key(generator)).astype(d) * std + mean)


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp of N(mean, std²) samples."""
    _float_fill("log_normal_", self)
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _fill_random(self, lambda s, d: mx.exp(mx.random.normal(shape=s, key=_creation._key(generator)).astype(d)
                                                  * std + mean))


def _exponential_(self, lambd=1.0, *, generator=None):
    """Fill with samples of Exp(lambd): -log(1 - U) / lambd."""
    _float_fill("exponential_", self)
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill_random(self, lambda s, d: -mx.log1p(-_uniform01(s, d, generator)) / lambd)


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with samples of Cauchy(median, sigma): median + sigma tan(pi (U - 1/2))."""
    _float_fill("cauchy_", self)
    if sigma <= 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return _fill_random(self, lambda s, d: median + sigma * mx.tan(math.pi * (_uniform01(s, d, generator) - 0.5)))


def _geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill_random(self, lambda s, d: mx.ceil(mx.log1p(-_uniform01(s, mx.float32, generator)) / math.log1p(-p)))


def _bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 (probability ``p``: a number or a tensor broadcastable to this one) or 0."""
    prob = p._storage.data if isinstance(p, Tensor) else p
    if not isinstance(prob, mx.array) and not 0 <= prob <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _fill_random(self, lambda s, d: _uniform01(s, mx.float32, generator) < prob)


def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
    """A new tensor of ``input``'s shape and dtype: 1 with probability ``input`` (or ``p`` when given), else 0.
    Its value is a draw: no gradient flows to ``input``."""
    out = _new_empty(input, *input.shape)
    return _bernoulli_(out, input.detach() if p is None else p, generator=generator)


def _random_bounds(dtype, from_, to) -> tuple:
    """[from, to) of ``random_``: PyTorch's defaults are [0, 2**mantissa] for floats and [0, max] for integers."""
    if to is None:
        if from_ is not None:  # random_(to)
            return 0, from_
        if dtype == mx.bool_:
            return 0, 2
        if _dtype.is_floating(dtype):
            return 0, 2 ** {mx.float16: 11, mx.bfloat16: 8, mx.float32: 24}.get(dtype, 53) + 1
        return 0, int(np.iinfo(_dtype.to_numpy_dtype(dtype)).max) + 1
    return (0 if from_ is None else from_), to


def _random_ints(shape, lo: int, hi: int, generator) -> mx.array:
    """Integers uniform on [lo, hi) as int64. MLX draws int32: a range up to 2**31 is drawn directly, a wider one
    from 64 random bits (three 31-bit draws) reduced modulo the range (the bias is below range / 2**62)."""
    key = _creation._key(generator)
    if hi - lo <= 2 ** 31:
        return mx.random.randint(0, hi - lo, shape=shape, key=key).astype(mx.int64) + lo
    a, b, c = mx.random.randint(0, 2 ** 31 - 1, shape=(3, *shape), key=key).astype(mx.uint64)
    u = (a << 33) ^ (b << 2) ^ c
    return (u % mx.array(np.uint64(hi - lo))).astype(mx.int64) + lo


def _random_(self, from_=None, to=None, *, generator=None):
    """Fill with integers drawn uniformly from [from, to) (``random_(to)``: [0, to); no bounds: [0, 2**mantissa]
    for floats, [0, max] for integers)."""
    lo, hi = _random_bounds(self.dtype, from_, to)
    if lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
    return _fill_random(self, lambda s, d: _random_ints(s, lo, hi, generator))


# ---------------------------------------------------------------------------------------------------- multinomial
def _bad_distribution(v) -> RuntimeError:
    return RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")


def multinomial(input, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Indices drawn from the categories of each row of ``input`` (non-negative weights, 1-d or 2-d), with
    probabilities proportional to the weights; without ``replacement`` each category at most once per row (the
    Gumbel top-k trick: the ``num_samples`` largest of log(w) + Gumbel noise; once the nonzero categories are used
    up, zero-weight ones follow, as in PyTorch). Invalid weights (negative, inf,
    nan, or an all-zero row) raise PyTorch's error at the next evaluation (MLX is lazy: lucid._checks)."""
    w = input._storage.data
    if w.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {w.ndim}")
    if not _dtype.is_floating(w.dtype):
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_dtype.dtype_name(w.dtype)}")
    if num_samples <= 0:
        raise RuntimeError(f"cannot sample n_sample <= 0 samples")
    n = w.shape[-1]
    if n == 0:
        raise RuntimeError("number of categories cannot exceed 2^24")
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    w2 = w.reshape(-1, n).astype(mx.float32)
    bad = mx.any(~mx.isfinite(w2) | (w2 < 0)) | mx.any(mx.sum(w2, axis=-1) <= 0)
    _checks.check_later(bad, _bad_distribution, "multinomial")
    logits = mx.log(mx.where(bad, 1.0, w2))  # safe values for MLX while the check is pending
    key = _creation._key(generator)
    if replacement:
        out = mx.random.categorical(logits, axis=-1, num_samples=num_samples, key=key)
    else:
        noisy = logits + mx.random.gumbel(shape=logits.shape, key=key)
        out = mx.argsort(-noisy, axis=-1)[:, :num_samples]
    out = out.astype(mx.int64)
    return _wrap(out.reshape(num_samples) if w.ndim == 1 else out)


# ---------------------------------------------------------------------------------------------------- storage facts
def _stride(self, dim: int | None = None):
    """Strides of a contiguous row-major layout, in elements (MLX tensors are always laid out that way here)."""
    shape = self.shape
    strides, n = [], 1
    for s in reversed(shape):
        strides.append(n)
        n *= max(s, 1)
    strides = tuple(reversed(strides))
    if dim is None:
        return strides
    if not -len(shape) <= dim < max(len(shape), 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(shape)}, {len(shape) - 1}], but "
                         f"got {dim})")
    return strides[dim] if shape else 1


def _type(self, dtype=None, non_blocking: bool = False, **kwargs):
    """PyTorch's type name (``'torch.FloatTensor'``) with no argument; with a dtype, a type name or a legacy class
    (``lucid.FloatTensor``), ``self`` cast to it (``self`` itself when it already has that dtype)."""
    from .elementwise import cast
    if dtype is None:
        return _legacy.type_name(self.dtype)
    dtype = _legacy.dtype_of(dtype) if isinstance(dtype, str) else getattr(dtype, "dtype", dtype)
    return self if dtype == self.dtype else cast(self, dtype)



attach("new_zeros", _new_zeros)
attach("new_ones", _new_ones)
attach("new_empty", _new_empty)
attach("new_full", _new_full)
attach("new_tensor", _new_tensor)
attach("uniform_", _uniform_)
attach("normal_", _normal_)
attach("log_normal_", _log_normal_)
attach("exponential_", _exponential_)
attach("cauchy_", _cauchy_)
attach("geometric_", _geometric_)
attach("bernoulli_", _bernoulli_)
attach("bernoulli", bernoulli)
attach("new", _new)
attach("random_", _random_)
attach("multinomial", multinomial)
attach("stride", _stride)
attach("is_contiguous", lambda self, memory_format=None: self._extra is None or not self._extra.overlap,
       "True: every lucid tensor is contiguous (MLX arrays have no user-visible strides), except one whose elements "
       "share memory in PyTorch (an expanded one).")
attach("nbytes", property(lambda self: self._storage.data.nbytes))
attach("itemsize", property(lambda self: self._storage.data.itemsize))
attach("is_xpu", property(lambda self: False))
attach("is_mps", property(lambda self: self.device.type == "gpu" and mx.metal.is_available()))
attach("is_cuda", property(lambda self: self.device.type == "gpu" and _dtype.cuda_available()))


# ---------------------------------------------------------------------------------------------------- functions
def numel(input) -> int:
    """The number of elements of ``input``."""
    return input.numel()


def is_tensor(obj) -> bool:
    """True if ``obj`` is a lucid Tensor (or Parameter)."""
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:
    """True if ``input``'s dtype is a floating-point one (float16/32/64, bfloat16)."""
    return input.is_floating_point()


def is_complex(input) -> bool:
    """True if ``input``'s dtype is complex."""
    return input.is_complex()


_PRESETS = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None),
            "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80, sci_mode=None),
            "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80, sci_mode=None)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """How tensors print (PyTorch's options, applied to numpy's printer, which lucid's repr uses): ``precision``
    digits, summarise above ``threshold`` elements showing ``edgeitems`` per edge, ``linewidth`` characters per
    line, ``sci_mode`` True/False forces or forbids scientific notation; ``profile`` "default", "short" or "full"
    sets all of them first."""
    opts = dict(_PRESETS[profile]) if profile is not None else {}
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth), ("sci_mode", sci_mode)):
        if v is not None:
            opts[k] = v
    if "threshold" in opts and opts["threshold"] == math.inf:
        opts["threshold"] = np.iinfo(np.int64).max
    if "sci_mode" in opts:
        opts["suppress"] = opts.pop("sci_mode") is False
    np.set_printoptions(**opts)


def _repr(self: Tensor) -> str:
    """``Tensor([...], dtype=..., requires_grad=True)``; a meta tensor has no values: ``Tensor(..., device='meta',
    size=(2, 3))``, as PyTorch prints it (with any dtype but the default)."""
    if self.is_meta:
        return "Tensor(" + ", ".join(["...", "device='meta'", f"size={tuple(self.shape)}"] +
                                     _repr_extras(self, (_dtype.get_default_dtype(),))) + ")"
    a = self._to_numpy()
    body = np.array2string(a, separator=", ", prefix="Tensor(")  # (set_printoptions sets numpy's)
    return "Tensor(" + ", ".join([body] + ([f"size={tuple(a.shape)}"] if a.size == 0 else []) +
                                 _repr_extras(self, (mx.float32, mx.int64, mx.bool_))) + ")"


def _repr_extras(self: Tensor, implied_dtypes: tuple) -> list:
    extras = [] if self.dtype in implied_dtypes else [f"dtype=lucid.{_dtype.dtype_name(self.dtype)}"]
    if self._node is not None:
        extras.append(f"grad_fn=<{self._node.name()}>")
    elif self._requires_grad:
        extras.append("requires_grad=True")
    return extras


def _format(self: Tensor, spec: str) -> str:
    # PyTorch formats a 0-d tensor as its number (f"{loss:.3f}", and f"{loss}" too); lucid also formats any
    # one-element tensor given a format spec (PyTorch raises TypeError there, as both do for a meta tensor)
    if self.is_meta:
        return object.__format__(self, spec) if spec else repr(self)
    if self.ndim == 0 or (spec and self._storage.data.size == 1):
        return format(_threads.item(self._values()), spec)
    return object.__format__(self, spec)


attach("__repr__", _repr)
attach("__str__", _repr)
attach("__format__", _format)


def _scalar_dtype(x):
    if isinstance(x, bool):
        return mx.bool_
    if isinstance(x, int):
        return mx.int64
    if isinstance(x, float):
        return _dtype.get_default_dtype()
    if isinstance(x, complex):
        return mx.complex64
    raise TypeError(f"result_type(): argument must be a Tensor or a Number, not {type(x).__name__}")


def _promote_skip_none(a, b):
    return b if a is None else a if b is None else _dtype.promote_types(a, b)


def _combine_categories(higher, lower):
    """PyTorch's rule: a lower-priority operand (0-d tensor, Python number) changes the result only when it is of a
    higher category."""
    if higher is not None and higher == mx.complex64:
        return higher
    if lower is not None and lower == mx.complex64:
        return mx.complex64 if higher is not None and _dtype.is_floating(higher) else lower
    if higher is not None and _dtype.is_floating(higher):
        return higher
    if (higher is not None and higher == mx.bool_) or (lower is not None and _dtype.is_floating(lower)):
        return _promote_skip_none(higher, lower)
    return higher if higher is not None else lower


def result_type(tensor1, tensor2):
    """The dtype an arithmetic op on ``tensor1`` and ``tensor2`` (Tensors or Python numbers) returns: dimensioned
    tensors first, then 0-d tensors, then Python numbers, each mattering only if of a higher category."""
    dim = zero = wrapped = None
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            if x.ndim:
                dim = _promote_skip_none(dim, x.dtype)
            else:
                zero = _promote_skip_none(zero, x.dtype)
        else:
            wrapped = _promote_skip_none(wrapped, _scalar_dtype(x))
    return _combine_categories(dim, _combine_categories(zero, wrapped))


def broadcast_shapes(*shapes):
    """The ``Size`` that tensors of ``shapes`` (sequences or ints) broadcast to, as ``broadcast_tensors`` would give."""
    out: list = []
    for i, s in enumerate(shapes):
        s = (s,) if isinstance(s, int) else tuple(s)
        if any(d < 0 for d in s):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(s)}: {list(s)}")
        n = max(len(out), len(s))
        a, b = [1] * (n - len(out)) + out, [1] * (n - len(s)) + list(s)
        for j in range(n - 1, -1, -1):  # PyTorch names the rightmost mismatch
            if a[j] != b[j] and a[j] != 1 and b[j] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {b[j]} at {j - n}! Mismatching "
                                   f"argument at index {i} had {tuple(s)}; but expected shape should be broadcastable "
                                   f"to {a}")
        out = [y if x == 1 else x for x, y in zip(a, b)]
    return Size(out)


# ---------------------------------------------------------------------------------------------------- casts
def _to_method(self, *args, **kwargs):
    """``t.to(dtype)``, ``t.to(device)``, ``t.to(device, dtype)``, ``t.to(other_tensor)``, each optionally followed
    by ``non_blocking`` and ``copy`` (and the keyword ``memory_format``), as PyTorch's overloads."""
    from .._dtype import check_device, parse_to
    device, dtype, _, copy, _ = parse_to(args, kwargs)
    if device is not None:
        to_meta = check_device(device, dtype or self.dtype).type == "meta"
        if to_meta != self.is_meta:  # to the meta device (a placeholder), or out of it (there is nothing to copy)
            return _meta_move(self, dtype, to_meta)
    out = self if dtype is None else cast(self, dtype)
    return out.clone() if copy and out is self else out


# shown as PyTorch's first overload; ``to(dtype, ...)`` and ``to(tensor, ...)`` are parsed too (_dtype.parse_to)
_to_method.__signature__ = inspect.signature(
    lambda self, device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=None: None)


def _meta_move(self: Tensor, dtype, to_meta: bool) -> Tensor:
    """``self`` (a real tensor) on the meta device: a new meta leaf of its shape and dtype (or ``dtype``)."""
    if not to_meta:
        raise NotImplementedError(_meta.NO_DATA)
    return _wrap(_meta.placeholder(self.shape, self.dtype if dtype is None else dtype))


def _cpu_method(self: Tensor, memory_format=None) -> Tensor:
    """``self`` (MLX's unified memory: there is no copy to make); a meta tensor has no values to copy."""
    if self.is_meta:
        raise NotImplementedError(_meta.NO_DATA)
    return self


attach("to", _to_method)
attach("type", _type)
attach("float", lambda self: cast(self, mx.float32), "``self`` as float32.")
attach("double", lambda self: cast(self, mx.float64), "``self`` as float64 (CPU device only).")
attach("half", lambda self: cast(self, mx.float16), "``self`` as float16.")
attach("bfloat16", lambda self: cast(self, mx.bfloat16), "``self`` as bfloat16.")
attach("long", lambda self: cast(self, mx.int64), "``self`` as int64.")
attach("int", lambda self: cast(self, mx.int32), "``self`` as int32.")
attach("short", lambda self: cast(self, mx.int16), "``self`` as int16.")
attach("char", lambda self: cast(self, mx.int8), "``self`` as int8.")
attach("byte", lambda self: cast(self, mx.uint8), "``self`` as uint8.")
attach("bool", lambda self: cast(self, mx.bool_), "``self`` as bool.")
attach("cpu", _cpu_method)
attach("type_as", lambda self, other: cast(self, other.dtype), "``self`` cast to ``other``'s dtype.")


def _cuda_method(self, device=None, non_blocking=False, memory_format=None):
    """``self`` on lucid's GPU where MLX runs on CUDA (an ``mlx[cuda]`` build): MLX's memory needs no copy, so
    ``self`` itself, as ``cpu()``. Elsewhere (a Mac's Metal GPU included, as PyTorch there) PyTorch's
    AssertionError; a device that is not CUDA's is PyTorch's RuntimeError.

    :param device: the CUDA device (``"cuda"``, ``"cuda:0"``, ``0``; MLX drives one GPU); None: the current one.
    :param non_blocking: accepted (there is no copy to overlap).
    :param memory_format: accepted (lucid's tensors are contiguous)."""
    if device is None:
        index = 0
    elif isinstance(device, int):
        if not _dtype.gpu_available():  # PyTorch looks the index up before asking for CUDA
            raise RuntimeError("Cannot access accelerator device when none is available.")
        index = device
    elif str(device).partition(":")[0] in ("cuda", "gpu"):  # (a lucid.device prints its type, "gpu")
        index = _dtype.device(device).index
    else:
        raise RuntimeError("Invalid device, must be cuda device")
    _dtype.require_cuda()
    if index != 0:
        raise RuntimeError(f"CUDA error: invalid device ordinal (MLX drives one GPU, index 0; got {index})")
    return self


attach("cuda", _cuda_method)
