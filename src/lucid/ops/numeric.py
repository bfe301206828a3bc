"""Number-theoretic and floating-point element functions: ``gcd``/``lcm``, ``bitwise_left_shift``/
``bitwise_right_shift``, ``frexp``, ``nextafter``, ``angle``, ``polar``, ``conj_physical``, ``logcumsumexp``,
plus the matrix composites ``addbmm``, ``chain_matmul`` and ``renorm`` (each with its in-place ``_`` form).

gcd, lcm and the shifts have integer results and no gradient (PyTorch has none). frexp's mantissa is
differentiable (``g / 2**exponent``); nextafter has a node whose backward raises, as PyTorch's. logcumsumexp's VJP
is PyTorch's log-space formula (split into the positive and negative parts of the gradient, so nothing overflows),
written with logcumsumexp itself, so higher derivatives follow. The rest are compositions of lucid's ops.
"""
from __future__ import annotations

__all__ = ["gcd", "lcm", "gcd_", "lcm_", "bitwise_left_shift", "bitwise_right_shift", "frexp", "nextafter", "angle",
           "polar", "conj_physical", "conj_physical_", "logcumsumexp", "addbmm", "chain_matmul", "renorm"]

import inspect
import math
import warnings
from collections import namedtuple

import mlx.core as mx

from .._dtype import get_default_dtype, promote
from .._tensor import Tensor
from ._core import as_tensor, data, declare, defop
from . import _f64
from . import elementwise as _ew
from . import reduce as _red
from . import shape as _sh
from .fft import conj, imag, real
from .linalg import matmul
from .special_fns import _not_implemented

_TYPE_NAMES = {mx.float64: "Double", mx.float32: "Float", mx.float16: "Half", mx.bfloat16: "BFloat16",
               mx.int64: "Long", mx.int32: "Int", mx.int16: "Short", mx.int8: "Char", mx.uint8: "Byte",
               mx.bool_: "Bool", mx.complex64: "ComplexFloat"}


def _not_for(kernel: str, dtype) -> NotImplementedError:
    """PyTorch's error for a kernel that has no version for ``dtype``."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_TYPE_NAMES.get(dtype, dtype)}'")


def _tensor_arg(fn: str, value, name: str, position: int) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


def _integers(kernel: str, a: mx.array, b: mx.array) -> tuple:
    """The two operands at their common dtype, which must be an integer one."""
    a, b = promote(a, b)
    if a.dtype != b.dtype:
        a, b = a.astype(mx.result_type(a.dtype, b.dtype)), b.astype(mx.result_type(a.dtype, b.dtype))
    if not mx.issubdtype(a.dtype, mx.integer):
        raise _not_for(kernel, a.dtype)
    return a, b


def function_form(name: str):
    """PyTorch's top-level spelling of the Tensor method ``name`` (``torch.gcd_(x, y)`` is ``x.gcd_(y)``)."""

    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)``: the Tensor method as a function."
    first, *rest = inspect.signature(getattr(Tensor, name)).parameters.values()
    fn.__signature__ = inspect.Signature([first.replace(name="input"), *rest])
    return fn


# ---------------------------------------------------------------------------------------------------- gcd, lcm
def _gcd_fwd(a, b):
    """Euclid's algorithm run a fixed number of steps (enough for the dtype's largest values: the worst case is
    consecutive Fibonacci numbers), so it stays lazy: no value decides how long it runs."""
    a, b = mx.abs(a), mx.abs(b)
    for _ in range(_EUCLID_STEPS[a.dtype.size]):
        nonzero = b != 0
        a, b = mx.where(nonzero, b, a), mx.where(nonzero, mx.remainder(a, mx.where(nonzero, b, 1)), 0)
    return a


# int8 needs 11 steps (Fibonacci numbers below 2**7), int16 23, int32 46, int64 92
_EUCLID_STEPS = {1: 12, 2: 24, 4: 47, 8: 93}


def _lcm_fwd(a, b):
    g = _gcd_fwd(a, b)
    # |a / g| * |b|, wrapping on overflow as PyTorch's (C++ computes the abs in int, then narrows)
    return mx.where(g == 0, 0, mx.abs(a // mx.where(g == 0, 1, g)) * mx.abs(b))


_gcd = defop("gcd", _gcd_fwd, differentiable=False)
_lcm = defop("lcm", _lcm_fwd, differentiable=False)


def gcd(input, other) -> Tensor:
    """The greatest common divisor of each pair of integers (non-negative; ``gcd(0, 0) = 0``)."""
    _tensor_arg("gcd", other, "other", 2)
    return _gcd(*_integers("gcd_cpu", data(input), data(other)))


def lcm(input, other) -> Tensor:
    """The least common multiple of each pair of integers (non-negative; 0 when either is 0)."""
    _tensor_arg("lcm", other, "other", 2)
    return _lcm(*_integers("lcm_cpu", data(input), data(other)))


# ---------------------------------------------------------------------------------------------------- shifts
def _shift_fwd(left: bool):
    def fwd(a, b):
        bits = a.dtype.size * 8
        outside = (b < 0) | (b >= bits)  # C++ leaves these undefined: PyTorch defines them, and so does lucid
        safe = mx.where(outside, bits - 1 if not left else 0, b).astype(a.dtype)
        if left:
            return mx.where(outside, mx.zeros_like(a), mx.left_shift(a, safe))
        return mx.right_shift(a, safe)  # (a shift by bits - 1: -1 for a negative value, else 0)

    return fwd


_lshift = defop("bitwise_left_shift", _shift_fwd(True), differentiable=False)
_rshift = defop("bitwise_right_shift", _shift_fwd(False), differentiable=False)


def _shift(op, kernel: str, input, other) -> Tensor:
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{op.__name__}(): expected a Tensor operand")
    a, b = _integers(kernel, data(as_tensor(input)), data(as_tensor(other)))
    if a.dtype == mx.bool_:
        raise _not_for(kernel, a.dtype)
    return op(a, b)


def bitwise_left_shift(input, other) -> Tensor:
    """``input << other`` for integers (0 where the shift is negative or at least the bit width)."""
    return _shift(_lshift, "lshift_cpu", input, other)


def bitwise_right_shift(input, other) -> Tensor:
    """``input >> other`` for integers, arithmetic for signed ones (a shift outside [0, bit width) shifts by the
    width less one: -1 for negative values, else 0)."""
    return _shift(_rshift, "rshift_cpu", input, other)


# ---------------------------------------------------------------------------------------------------- frexp
frexp_result = namedtuple("frexp", ["mantissa", "exponent"])

# per float dtype: (same-size int dtype, mantissa bits, exponent bits' mask, exponent of 2**0 as stored less one)
_LAYOUT = {mx.float32: (mx.int32, 23, 0xFF, 126), mx.float64: (mx.int64, 52, 0x7FF, 1022),
           mx.float16: (mx.int16, 10, 0x1F, 14), mx.bfloat16: (mx.int16, 7, 0xFF, 126)}


def _exponent_fwd(a):
    """e with |a| = m * 2**e, 0.5 <= |m| < 1, read from the bits (exact); 0 for 0, inf and nan. Subnormals are
    scaled into the normal range first (their stored exponent is 0)."""
    int_t, mant, mask, bias = _LAYOUT[a.dtype]
    scale = mant + 1
    tiny = mx.abs(a) < _SMALLEST_NORMAL[a.dtype]
    scaled = mx.where(tiny, a * (2.0 ** scale), a)
    stored = mx.right_shift(mx.view(scaled, int_t), mant) & mask
    e = stored.astype(mx.int32) - bias - mx.where(tiny, scale, 0)
    special = (a == 0) | mx.isinf(a) | mx.isnan(a)
    return mx.where(special, 0, e).astype(mx.int32)


_SMALLEST_NORMAL = {mx.float32: 2.0 ** -126, mx.float64: 2.0 ** -1022, mx.float16: 2.0 ** -14,
                    mx.bfloat16: 2.0 ** -126}


_exponent = defop("frexp_exponent", _exponent_fwd, differentiable=False)


def frexp(input) -> frexp_result:
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent`` and ``0.5 <= |mantissa| < 1`` (mantissa is
    ``input`` and exponent 0 for 0, inf and nan); exponent is int32. The mantissa's gradient is
    ``grad / 2**exponent``."""
    if not mx.issubdtype(input.dtype, mx.floating):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    e = _exponent(input)
    # 2**-e in two halves: for a subnormal input one factor alone would overflow the dtype
    half = _ew.floor_divide(_ew.neg(e), 2)
    one = _ew.pow(2.0, half.to(input.dtype))
    other = _ew.pow(2.0, _ew.sub(_ew.neg(e), half).to(input.dtype))
    return frexp_result(_ew.mul(_ew.mul(input, one), other), e)


# ---------------------------------------------------------------------------------------------------- nextafter
def _nextafter_fwd(a, b):
    int_t = _LAYOUT[a.dtype][0]
    toward_bigger_magnitude = (b > a) == (a > 0)
    step = mx.where(toward_bigger_magnitude, 1, -1).astype(int_t)
    r = mx.view(mx.view(a, int_t) + step, a.dtype)
    smallest = mx.view(mx.array(1, int_t), a.dtype)  # the smallest subnormal: what 0 steps to
    r = mx.where(a == 0, mx.where(b > 0, smallest, -smallest), r)
    r = mx.where(a == b, b, r)
    return mx.where(mx.isnan(a) | mx.isnan(b), mx.array(math.nan, a.dtype), r)


_nextafter = defop("nextafter", _nextafter_fwd, save=None,
                   vjp=(_not_implemented("nextafter"), _not_implemented("nextafter")))


def nextafter(input, other) -> Tensor:
    """The next floating-point value after ``input`` toward ``other`` (``other`` itself where they are equal)."""
    _tensor_arg("nextafter", other, "other", 2)
    a, b = promote(data(input), data(other))
    if a.dtype != b.dtype:
        a, b = a.astype(mx.result_type(a.dtype, b.dtype)), b.astype(mx.result_type(a.dtype, b.dtype))
    if a.dtype not in _LAYOUT:
        raise _not_for("nextafter_cpu", a.dtype)
    return _nextafter(input.to(a.dtype) if input.dtype != a.dtype else input,
                      other.to(b.dtype) if other.dtype != b.dtype else other)


# ---------------------------------------------------------------------------------------------------- complex
def angle(input) -> Tensor:
    """The argument of each element: ``atan2(imag, real)`` for complex input; pi for negative reals, 0 for the
    others, nan for nan (integer input gives the default float dtype). The real case's gradient is 0."""
    if input.is_complex():
        return _ew.atan2(imag(input), real(input))
    x = input if input.is_floating_point() else input.to(get_default_dtype())
    zero = _ew.mul(x, 0.0)  # keeps nan (and the graph: the gradient is 0, as PyTorch's)
    return _ew.add(zero, _ew.where(_ew.lt(x, 0), math.pi, 0.0))


def polar(abs, angle) -> Tensor:  # noqa: A002  (PyTorch's parameter names)
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``."""
    ok = (mx.float32, mx.float64, mx.float16)
    if abs.dtype not in ok or angle.dtype not in ok:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_TYPE_NAMES.get(abs.dtype)} and {_TYPE_NAMES.get(angle.dtype)}")
    if abs.dtype != angle.dtype:
        raise RuntimeError(f"Expected object of scalar type {_TYPE_NAMES[abs.dtype]} but got scalar type "
                           f"{_TYPE_NAMES[angle.dtype]} for second argument")
    from .fft import complex as _complex
    return _complex(_ew.mul(abs, _ew.cos(angle)), _ew.mul(abs, _ew.sin(angle)))


def conj_physical(input) -> Tensor:
    """The complex conjugate, computed (lucid has no lazy conjugate bit): ``input`` itself for real tensors."""
    return conj(input) if input.is_complex() else input


def _conj_physical_(self) -> Tensor:
    """In-place ``conj_physical``."""
    return self._inplace(conj) if self.is_complex() else self


# ---------------------------------------------------------------------------------------------------- logcumsumexp
def _reverse_logcumsumexp(x, axis: int) -> Tensor:
    return _sh.flip(_logcumsumexp(_sh.flip(x, (axis,)), axis), (axis,))


def _log_part(g, positive: bool, lowest: float) -> Tensor:
    """log|g| where g has the given sign, else the dtype's lowest value (finite, so no inf - inf makes a nan);
    the inner where keeps log's gradient finite where the outer one drops it."""
    keep = _ew.gt(g, 0) if positive else _ew.lt(g, 0)
    return _ew.where(keep, _ew.log(_ew.where(keep, _ew.abs(g), 1.0)), lowest)


def _logcumsumexp_vjp(g, ans, x, axis):
    lowest = float(mx.finfo(data(x).dtype).min)
    parts = [_ew.exp(_ew.add(_reverse_logcumsumexp(_ew.sub(_log_part(g, s, lowest), ans), axis), x))
             for s in (True, False)]
    return _ew.sub(*parts)


def _logcumsumexp_f64(a, axis):
    """MLX's float64 logcumsumexp is float32-accurate: ``c + log(cumsum(exp(a - c)))`` (c the largest value) with
    the exact exp, and MLX's kernel only where every term so far underflows that exp."""
    c = mx.max(a, axis=axis, keepdims=True)
    c = mx.where(mx.isfinite(c), c, 0)
    s = mx.cumsum(_f64.exp(a - c), axis=axis)
    return mx.where(s > 1e-290, c + mx.log(s), mx.logcumsumexp(a, axis=axis))


_logcumsumexp = defop("logcumsumexp", _f64.by_dtype(lambda a, axis: mx.logcumsumexp(a, axis=axis), _logcumsumexp_f64),
                      vjp=_logcumsumexp_vjp, save="both")


def logcumsumexp(input, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))``, computed without overflow."""
    if not (input.is_floating_point() or input.is_complex()):
        raise _not_for("logcumsumexp_out_cpu", input.dtype)
    axis = _sh.wrap_dim(dim, max(input.ndim, 1))
    if input.ndim == 0:
        return _logcumsumexp(input.reshape(1), 0).reshape(())
    return _logcumsumexp(input, axis)


# ---------------------------------------------------------------------------------------------------- matrices
def addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]`` (``input`` is ignored, nan included, when beta is 0)."""
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    total = _red.sum(matmul(batch1, batch2), 0)
    target = (batch1.shape[1], batch2.shape[2])
    if tuple(input.shape) != target:
        input = input.expand(target)
    scaled = total if alpha == 1 else _ew.mul(total, alpha)
    if beta == 0:
        return scaled
    return _ew.add(scaled, input if beta == 1 else _ew.mul(input, beta))


def chain_matmul(*matrices) -> Tensor:
    """The product of the 2-D ``matrices``, left to right (deprecated in PyTorch for ``linalg.multi_dot``)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    out = matrices[0]
    for m in matrices[1:]:
        out = matmul(out, m)
    return out.clone() if len(matrices) == 1 else out


def renorm(input, p, dim: int, maxnorm) -> Tensor:
    """Each slice ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm`` scaled to norm ``maxnorm``
    (``maxnorm / (norm + 1e-7)``); the others unchanged. The gradient flows through the norms, as PyTorch's."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_TYPE_NAMES.get(input.dtype, input.dtype)}")
    d = _sh.wrap_dim(dim, max(input.ndim, 1))
    others = tuple(i for i in range(input.ndim) if i != d)
    norms = _red.norm(input, p, others, True) if others else _ew.abs(input)
    factor = _ew.where(_ew.gt(norms, maxnorm), _ew.div(maxnorm, _ew.add(norms, 1e-7)), 1.0)
    return _ew.mul(input, factor)


def _float_power_(self, exponent) -> Tensor:
    """In-place ``float_power``: ``self`` must already be float64 (or complex), the result's dtype."""
    from .composites import float_power
    wide = mx.complex64 if self.is_complex() or (isinstance(exponent, Tensor) and exponent.is_complex()) \
        or isinstance(exponent, complex) else mx.float64
    if self.dtype != wide:
        raise RuntimeError(f"the base given to float_power_ has dtype {_TYPE_NAMES.get(self.dtype, self.dtype)} but "
                           f"the operation's result requires dtype {_TYPE_NAMES[wide]}")
    return self._inplace(lambda old: float_power(old, exponent))


def _addbmm_(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """In-place ``addbmm``."""
    return self._inplace(lambda old: addbmm(old, batch1, batch2, beta=beta, alpha=alpha))


declare(gcd, method=True, inplace=True)
declare(lcm, method=True, inplace=True)
declare(bitwise_left_shift, method=True, inplace=True)
declare(bitwise_right_shift, method=True, inplace=True)
declare(nextafter, method=True, inplace=True)
declare(renorm, method=True, inplace=True)
declare(frexp, method=True)
declare(angle, method=True)
declare(logcumsumexp, method=True)
declare(addbmm, method=True)
declare(_conj_physical_, method="conj_physical_")
declare(_float_power_, method="float_power_")
declare(_addbmm_, method="addbmm_")
gcd_, lcm_, conj_physical_ = (function_form(n) for n in ("gcd_", "lcm_", "conj_physical_"))  # torch.gcd_(x, y), ...
