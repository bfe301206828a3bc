"""Elementwise ops: arithmetic (with broadcasting, Python scalars and PyTorch's type promotion), unary math,
comparisons, where, clamp, casts, and the in-place forms. Each VJP is one line of lucid ops."""
from __future__ import annotations

__all__ = ["add", "sub", "rsub", "mul", "div", "floor_divide", "remainder", "neg", "subtract", "multiply", "divide",
           "negative", "true_divide", "pow", "abs", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt",
           "rsqrt", "square", "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "sign", "floor", "ceil",
           "trunc", "fix", "round", "maximum", "minimum", "fmax", "fmin", "where", "clamp", "clip", "clamp_min",
           "clamp_max", "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
           "not_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "isnan", "isinf", "isfinite",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "equal", "allclose", "isclose"]

import math

import mlx.core as mx
import numpy as np

from .._dtype import can_require_grad, from_numpy_dtype, promote
from .._tensor import Tensor, _wrap
from . import _f64
from ._core import data, defop, methods

_array = mx.array


def _operand(v):
    """A numpy array becomes an MLX array of its own dtype (``mx.array`` alone turns float64 into float32);
    Python scalars stay as they are, so MLX treats them as weakly typed, as PyTorch does."""
    return _array(v, dtype=from_numpy_dtype(v.dtype)) if type(v) is np.ndarray else v


def _binary(f):
    """An MLX binary function with PyTorch's promotion (a 0-d tensor does not widen a dimensioned one)."""

    def fwd(a, b, *rest):
        ta, tb = type(a), type(b)
        if ta is _array and tb is _array:
            if a.dtype != b.dtype:
                a, b = promote(a, b)
        elif ta is np.ndarray or tb is np.ndarray:
            return fwd(_operand(a), _operand(b), *rest)
        return f(a, b, *rest)

    return fwd


def _zeros(g, *_, **__):
    """The gradient of a piecewise-constant op (sign, floor, round, ...): zero, of g's shape."""
    return _wrap(mx.zeros_like(g._st.data))


def _trunc(a):  # MLX has no trunc
    return mx.where(a < 0, mx.ceil(a), mx.floor(a))


def _divide_rounded(a, b, rounding_mode):
    """``a / b`` rounded down ("floor") or toward zero ("trunc"); integer inputs give an integer result."""
    if rounding_mode == "floor":
        return mx.floor_divide(a, b)
    if rounding_mode != "trunc":
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"'{rounding_mode}'")
    q = mx.floor_divide(a, b)
    if mx.issubdtype(q.dtype, mx.integer):  # floor + 1 where the exact quotient is negative and not whole
        return q + ((mx.remainder(a, b) != 0) & (q < 0)).astype(q.dtype)
    return _trunc(mx.divide(a, b))


# ---------------------------------------------------------------------------------------------------- arithmetic
_add = defop("add", _binary(mx.add), vjp=(lambda g, ans, x, y: g, lambda g, ans, x, y: g), save=None)
_sub = defop("sub", _binary(mx.subtract), vjp=(lambda g, ans, x, y: g, lambda g, ans, x, y: -g), save=None)
_rsub = defop("rsub", _binary(lambda a, b: mx.subtract(b, a)),
              vjp=(lambda g, ans, x, y: -g, lambda g, ans, x, y: g), save=None, node="RsubBackward1")
mul = defop("mul", _binary(mx.multiply), vjp=(lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x))
_div = defop("div", _binary(mx.divide), vjp=(lambda g, ans, x, y: g / y, lambda g, ans, x, y: -g * x / (y * y)))
_div_rounded = defop("div", _binary(_divide_rounded), vjp=(_zeros, _zeros), save=None, node="DivBackward2")
floor_divide = defop("floor_divide", _binary(mx.floor_divide), vjp=(_zeros, _zeros), save=None)
remainder = defop("remainder", _binary(mx.remainder),
                  vjp=(lambda g, ans, x, y: g, lambda g, ans, x, y: -g * floor_divide(x, y)))
neg = defop("neg", mx.negative, vjp=lambda g, ans, x: -g, save=None)


def add(input, other, *, alpha=1) -> Tensor:
    """``input + alpha * other`` with broadcasting."""
    return _add(input, other if alpha == 1 else mul(other, alpha))


def sub(input, other, *, alpha=1) -> Tensor:
    """``input - alpha * other`` with broadcasting."""
    return _sub(input, other if alpha == 1 else mul(other, alpha))


def div(input, other, *, rounding_mode: str | None = None) -> Tensor:
    """``input / other`` (true division: integers give floats); ``rounding_mode`` "floor" or "trunc" rounds the
    quotient (zero gradient, and integer inputs stay integer)."""
    return _div(input, other) if rounding_mode is None else _div_rounded(input, other, rounding_mode)


def rsub(input, other, *, alpha=1) -> Tensor:
    """``other - alpha * input``."""
    return _rsub(input if alpha == 1 else mul(input, alpha), other)


subtract, multiply, divide, negative, true_divide = sub, mul, div, neg, div


def _pow_tensor_scalar_vjp(g, ans, x, e):
    if e == 0:
        return _zeros(g)
    return g * e * pow(x, e - 1)


_pow_scalar = defop("pow", mx.power, vjp=(_pow_tensor_scalar_vjp,), node="PowBackward0")
_pow_tensor = defop(
    "pow", _binary(mx.power), save="both", node="PowBackward1",
    vjp=(lambda g, ans, x, y: g * y * pow(x, y - 1),
         # d/dy x**y = x**y log x, taken as 0 where x == 0 and y >= 0 (PyTorch's convention: no 0 * -inf)
         lambda g, ans, x, y: where(logical_and(eq(x, 0), ge(y, 0)), 0.0, g * ans * log(x))))
_rpow = defop("pow", mx.power, save="both", node="PowBackward2",
              vjp=(None, lambda g, ans, base, x: g * ans * math.log(base) if base > 0 else
                   where(eq(ans, 0), 0.0, g * ans * log(_wrap(mx.array(base, ans.dtype))))))


def pow(input, exponent) -> Tensor:  # noqa: A001  (PyTorch's name)
    """``input ** exponent``; either may be a Python number."""
    if type(input) is np.ndarray:
        input = _wrap(_operand(input))
    if type(exponent) is np.ndarray:
        exponent = _wrap(_operand(exponent))
    if not isinstance(input, Tensor):
        return _rpow(input, exponent)
    if isinstance(exponent, Tensor):
        return _pow_tensor(input, exponent)
    return _pow_scalar(input, exponent)


# ---------------------------------------------------------------------------------------------------- unary math
_LN2, _LN10 = math.log(2.0), math.log(10.0)
abs = defop("abs", mx.abs, vjp=lambda g, ans, x: g * sign(x))  # noqa: A001
exp = defop("exp", _f64.by_dtype(mx.exp, _f64.exp), vjp=lambda g, ans, x: g * ans, save="ans")
exp2 = defop("exp2", lambda a: mx.power(2.0, a), vjp=lambda g, ans, x: g * ans * _LN2, save="ans")
log = defop("log", mx.log, vjp=lambda g, ans, x: g / x)
log2 = defop("log2", mx.log2, vjp=lambda g, ans, x: g / (x * _LN2))
log10 = defop("log10", mx.log10, vjp=lambda g, ans, x: g / (x * _LN10))
log1p = defop("log1p", mx.log1p, vjp=lambda g, ans, x: g / (x + 1))
expm1 = defop("expm1", mx.expm1, vjp=lambda g, ans, x: g * (ans + 1), save="ans")
sqrt = defop("sqrt", mx.sqrt, vjp=lambda g, ans, x: g / (ans * 2), save="ans")
rsqrt = defop("rsqrt", mx.rsqrt, vjp=lambda g, ans, x: g * -0.5 * ans * ans * ans, save="ans")
square = defop("square", mx.square, vjp=lambda g, ans, x: g * 2 * x, node="PowBackward0")
reciprocal = defop("reciprocal", mx.reciprocal, vjp=lambda g, ans, x: -g * ans * ans, save="ans")
sin = defop("sin", _f64.by_dtype(mx.sin, _f64.sin), vjp=lambda g, ans, x: g * cos(x))
cos = defop("cos", _f64.by_dtype(mx.cos, _f64.cos), vjp=lambda g, ans, x: -g * sin(x))
tan = defop("tan", mx.tan, vjp=lambda g, ans, x: g * (ans * ans + 1), save="ans")
tanh = defop("tanh", mx.tanh, vjp=lambda g, ans, x: g * (1 - ans * ans), save="ans")
sigmoid = defop("sigmoid", _f64.by_dtype(mx.sigmoid, _f64.sigmoid), vjp=lambda g, ans, x: g * ans * (1 - ans),
                save="ans")
relu = defop("relu", lambda a: mx.maximum(a, mx.array(0, a.dtype)), vjp=lambda g, ans, x: g * gt(ans, 0), save="ans")

# piecewise constant: zero gradient, but the result still requires grad (as in PyTorch)
sign = defop("sign", mx.sign, vjp=_zeros, save=None)
floor = defop("floor", mx.floor, vjp=_zeros, save=None)
ceil = defop("ceil", mx.ceil, vjp=_zeros, save=None)
trunc = defop("trunc", _trunc, vjp=_zeros, save=None)
_round = defop("round", lambda a, decimals=0: mx.round(a, decimals), vjp=_zeros, save=None)
fix = trunc


def round(input, *, decimals: int = 0) -> Tensor:  # noqa: A001
    """Round half to even, as PyTorch does; ``decimals`` digits after the point."""
    return _round(input) if decimals == 0 else _round(input, decimals=decimals)


# ---------------------------------------------------------------------------------------------------- two-input
def _tie_share(x, y, win):
    """1 where this side wins, 0.5 on ties (PyTorch splits the gradient of maximum/minimum evenly)."""
    return win(x, y) + eq(x, y) * 0.5


def _picked(x, y, wins):
    """Where fmax/fmin returns ``x``: x wins or ties, or y is NaN."""
    return logical_or(wins(x, y), isnan(y))


maximum = defop("maximum", _binary(mx.maximum),
                vjp=(lambda g, ans, x, y: g * _tie_share(x, y, gt), lambda g, ans, x, y: g * _tie_share(y, x, gt)))
minimum = defop("minimum", _binary(mx.minimum),
                vjp=(lambda g, ans, x, y: g * _tie_share(x, y, lt), lambda g, ans, x, y: g * _tie_share(y, x, lt)))
# fmax/fmin ignore NaN (the other operand wins); the gradient goes wholly to the operand that was returned
fmax = defop("fmax", _binary(lambda a, b: mx.where(mx.isnan(b), a, mx.where(mx.isnan(a), b, mx.maximum(a, b)))),
             vjp=(lambda g, ans, x, y: where(_picked(x, y, ge), g, 0.0),
                  lambda g, ans, x, y: where(_picked(x, y, ge), 0.0, g)))
fmin = defop("fmin", _binary(lambda a, b: mx.where(mx.isnan(b), a, mx.where(mx.isnan(a), b, mx.minimum(a, b)))),
             vjp=(lambda g, ans, x, y: where(_picked(x, y, le), g, 0.0),
                  lambda g, ans, x, y: where(_picked(x, y, le), 0.0, g)))


def _where_fwd(c, a, b):
    a, b = _operand(a), _operand(b)
    if type(a) is _array and type(b) is _array and a.dtype != b.dtype:
        a, b = promote(a, b)
    return mx.where(c, a, b)


_where = defop("where", _where_fwd,
               vjp=(None, lambda g, ans, c, x, y: where(c, g, 0.0), lambda g, ans, c, x, y: where(c, 0.0, g)))


def where(condition, input=None, other=None):
    """``input`` where ``condition`` holds, else ``other`` (broadcasting). ``where(condition)`` alone gives the
    indices of the nonzero elements, as ``nonzero(as_tuple=True)``."""
    if input is None and other is None:
        from .index import nonzero
        return nonzero(condition, as_tuple=True)
    return _where(condition, input, other)


def _clamp_fwd(a, lo, hi):
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if type(lo) is _array and lo.dtype != a.dtype:
        lo = lo.astype(a.dtype)
    if type(hi) is _array and hi.dtype != a.dtype:
        hi = hi.astype(a.dtype)
    if lo is not None and hi is not None:
        return mx.minimum(mx.maximum(a, lo), hi)
    return mx.maximum(a, lo) if hi is None else mx.minimum(a, hi)


def _inside(x, lo, hi):
    """1 where lo <= x <= hi (the bounds themselves pass the gradient, as in PyTorch)."""
    m = None
    if lo is not None:
        m = ge(x, lo)
    if hi is not None:
        m = le(x, hi) if m is None else logical_and(m, le(x, hi))
    return m


def _min_wins(x, lo, hi):
    """Where the result is ``lo``: x below it, and lo below hi (with min > max the result is max throughout)."""
    return lt(x, lo) if hi is None else logical_and(lt(x, lo), lt(lo, hi))


def _max_wins(x, lo, hi):
    """Where the result is ``hi``: x above it, or hi below lo."""
    return gt(x, hi) if lo is None else logical_or(gt(x, hi), lt(hi, lo))


_CLAMP_VJP = (lambda g, ans, x, lo, hi: where(_inside(x, lo, hi), g, 0.0),
              lambda g, ans, x, lo, hi: where(_min_wins(x, lo, hi), g, 0.0),
              lambda g, ans, x, lo, hi: where(_max_wins(x, lo, hi), g, 0.0))
# PyTorch's two overloads: tensor bounds (ClampBackward0) and number bounds (ClampBackward1)
_clamp_tensor = defop("clamp", _clamp_fwd, vjp=_CLAMP_VJP, node="ClampBackward0")
_clamp_scalar = defop("clamp", _clamp_fwd, vjp=_CLAMP_VJP, node="ClampBackward1")


def clamp(input, min=None, max=None) -> Tensor:  # noqa: A002
    """Limit ``input`` to [min, max]; either bound may be None, a number or a tensor."""
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(input, min, max)
    return _clamp_scalar(input, min, max)


clip = clamp


def clamp_min(input, min) -> Tensor:  # noqa: A002
    return clamp(input, min, None)


def clamp_max(input, max) -> Tensor:  # noqa: A002
    return clamp(input, None, max)


# ---------------------------------------------------------------------------------------------------- casts
_to = defop("to", lambda a, dtype: a.astype(dtype), vjp=lambda g, ans, x, dtype: g, save=None,
            node="ToCopyBackward0")
_to_nondiff = defop("to", lambda a, dtype: a.astype(dtype), differentiable=False)


def cast(input, dtype) -> Tensor:
    """``input`` as ``dtype``: differentiable to a floating dtype (the gradient is cast back to the input's dtype);
    an integer or bool result never requires grad."""
    if input.dtype == dtype:
        return input
    return _to(input, dtype) if can_require_grad(dtype) else _to_nondiff(input, dtype)


# ---------------------------------------------------------------------------------------------------- comparisons
eq = defop("eq", _binary(mx.equal), differentiable=False)
ne = defop("ne", _binary(mx.not_equal), differentiable=False)
lt = defop("lt", _binary(mx.less), differentiable=False)
le = defop("le", _binary(mx.less_equal), differentiable=False)
gt = defop("gt", _binary(mx.greater), differentiable=False)
ge = defop("ge", _binary(mx.greater_equal), differentiable=False)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
logical_and = defop("logical_and", mx.logical_and, differentiable=False)
logical_or = defop("logical_or", mx.logical_or, differentiable=False)
logical_not = defop("logical_not", mx.logical_not, differentiable=False)
logical_xor = defop("logical_xor", lambda a, b: mx.not_equal(mx.array(a).astype(mx.bool_),
                                                             mx.array(b).astype(mx.bool_)), differentiable=False)
isnan = defop("isnan", mx.isnan, differentiable=False)
isinf = defop("isinf", mx.isinf, differentiable=False)
isfinite = defop("isfinite", mx.isfinite, differentiable=False)
bitwise_and = defop("bitwise_and", mx.bitwise_and, differentiable=False)
bitwise_or = defop("bitwise_or", mx.bitwise_or, differentiable=False)
bitwise_xor = defop("bitwise_xor", mx.bitwise_xor, differentiable=False)
bitwise_not = defop("bitwise_not", lambda a: mx.logical_not(a) if a.dtype == mx.bool_ else mx.bitwise_invert(a),
                    differentiable=False)


def equal(input, other) -> bool:
    """True if both tensors have the same shape and elements."""
    return tuple(input.shape) == tuple(other.shape) and bool(mx.array_equal(data(input), data(other)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return bool(mx.allclose(data(input), data(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    return _wrap(mx.isclose(data(input), data(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


# ---------------------------------------------------------------------------------------------------- Tensor methods
methods(add, sub, mul, div, neg, pow, abs, exp, exp2, log, log2, log10, log1p, expm1, sqrt, rsqrt, square,
        reciprocal, sin, cos, tan, tanh, sigmoid, relu, sign, floor, ceil, trunc, round, maximum, minimum, clamp,
        clip, clamp_min, clamp_max, eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_not, logical_xor, isnan,
        isinf, isfinite, floor_divide, remainder, fix, equal, allclose, isclose, bitwise_and, bitwise_or,
        bitwise_xor, bitwise_not, fmax, fmin,
        subtract=sub, multiply=mul, divide=div, true_divide=div, negative=neg, greater=gt, greater_equal=ge,
        less=lt, less_equal=le, not_equal=ne, absolute=abs)
Tensor.where = lambda self, condition, other: _where(condition, self, other)


def _to_method(self, *args, dtype=None, device=None, copy=False, non_blocking=False):
    """``t.to(dtype)``, ``t.to(device)``, ``t.to(device, dtype)``, ``t.to(other_tensor)``."""
    from .._dtype import check_device
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, mx.Dtype):
            dtype = a
        else:
            device = a
    if device is not None:
        check_device(device, dtype or self.dtype)
    out = self if dtype is None else cast(self, dtype)
    return out.clone() if copy and out is self else out


Tensor.to = _to_method
Tensor.type = lambda self, dtype=None: str(self.dtype) if dtype is None else cast(self, dtype)
Tensor.float = lambda self: cast(self, mx.float32)
Tensor.double = lambda self: cast(self, mx.float64)
Tensor.half = lambda self: cast(self, mx.float16)
Tensor.bfloat16 = lambda self: cast(self, mx.bfloat16)
Tensor.long = lambda self: cast(self, mx.int64)
Tensor.int = lambda self: cast(self, mx.int32)
Tensor.short = lambda self: cast(self, mx.int16)
Tensor.char = lambda self: cast(self, mx.int8)
Tensor.byte = lambda self: cast(self, mx.uint8)
Tensor.bool = lambda self: cast(self, mx.bool_)
Tensor.cpu = lambda self: self
Tensor.type_as = lambda self, other: cast(self, other.dtype)

# operators
Tensor.__add__ = lambda self, other: _add(self, other)
Tensor.__radd__ = lambda self, other: _add(other, self)
Tensor.__sub__ = lambda self, other: _sub(self, other)
Tensor.__rsub__ = lambda self, other: _rsub(self, other)
Tensor.__mul__ = lambda self, other: mul(self, other)
Tensor.__rmul__ = lambda self, other: mul(other, self)
Tensor.__truediv__ = lambda self, other: _div(self, other)
Tensor.__rtruediv__ = lambda self, other: _div(other, self)
Tensor.__floordiv__ = lambda self, other: floor_divide(self, other)
Tensor.__rfloordiv__ = lambda self, other: floor_divide(other, self)
Tensor.__mod__ = lambda self, other: remainder(self, other)
Tensor.__rmod__ = lambda self, other: remainder(other, self)
Tensor.__pow__ = lambda self, other: pow(self, other)
Tensor.__rpow__ = lambda self, other: pow(other, self)
Tensor.__neg__ = neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = abs
Tensor.__eq__ = lambda self, other: eq(self, other)
Tensor.__ne__ = lambda self, other: ne(self, other)
Tensor.__lt__ = lambda self, other: lt(self, other)
Tensor.__le__ = lambda self, other: le(self, other)
Tensor.__gt__ = lambda self, other: gt(self, other)
Tensor.__ge__ = lambda self, other: ge(self, other)
Tensor.__and__ = Tensor.__rand__ = lambda self, other: bitwise_and(self, other)
Tensor.__or__ = Tensor.__ror__ = lambda self, other: bitwise_or(self, other)
Tensor.__xor__ = Tensor.__rxor__ = lambda self, other: bitwise_xor(self, other)
Tensor.__invert__ = bitwise_not


# ---------------------------------------------------------------------------------------------------- in place
def _inplace_method(name, fn):
    def method(self, *args, **kwargs):
        return self._inplace(lambda old: fn(old, *args, **kwargs))
    method.__name__ = name
    return method


for _name, _fn in [("add_", add), ("sub_", sub), ("mul_", mul), ("div_", div), ("pow_", pow), ("clamp_", clamp),
                   ("clip_", clamp), ("clamp_min_", clamp_min), ("clamp_max_", clamp_max), ("neg_", neg),
                   ("abs_", abs), ("exp_", exp), ("log_", log), ("sqrt_", sqrt), ("sin_", sin), ("cos_", cos),
                   ("tanh_", tanh), ("sigmoid_", sigmoid), ("relu_", relu), ("floor_", floor), ("ceil_", ceil),
                   ("round_", round), ("trunc_", trunc), ("sign_", sign), ("square_", square),
                   ("reciprocal_", reciprocal), ("remainder_", remainder), ("floor_divide_", floor_divide),
                   ("maximum_", maximum), ("minimum_", minimum)]:
    setattr(Tensor, _name, _inplace_method(_name, _fn))

Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_
Tensor.__imod__ = Tensor.remainder_
Tensor.__ifloordiv__ = Tensor.floor_divide_


# fill_/zero_/copy_ replace the value: the old value gets a zero gradient, a tensor `value`/`src` gets g back
_fill = defop("fill", lambda a, v: mx.full(a.shape, v, a.dtype), save=None,
              vjp=(_zeros, lambda g, ans, x, v: g.sum()))
_zero = defop("zero", mx.zeros_like, vjp=_zeros, save=None)
_copy = defop("copy", lambda a, s: mx.broadcast_to(_array(_operand(s)).astype(a.dtype), a.shape), save=None,
              node="CopyBackwards", vjp=(_zeros, lambda g, ans, x, s: g))

Tensor.fill_ = lambda self, value: self._inplace(lambda old: _fill(old, value))
Tensor.zero_ = lambda self: self._inplace(_zero)
Tensor.copy_ = lambda self, src, non_blocking=False: self._inplace(lambda old: _copy(old, src))
