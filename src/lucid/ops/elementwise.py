"""Elementwise ops: arithmetic (with broadcasting, Python scalars and PyTorch's type promotion), unary math,
comparisons, where, clamp, casts, and the in-place forms. Each VJP is one line of lucid ops."""
from __future__ import annotations

__all__ = ["add", "sub", "rsub", "mul", "div", "floor_divide", "remainder", "neg", "subtract", "multiply", "divide",
           "negative", "true_divide", "pow", "abs", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt",
           "rsqrt", "square", "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "sign", "floor", "ceil",
           "trunc", "fix", "round", "maximum", "minimum", "fmax", "fmin", "where", "clamp", "clip", "clamp_min",
           "clamp_max", "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
           "not_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "isnan", "isinf", "isfinite",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "equal", "allclose", "isclose",
           "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan",
           "arctan2", "arcsinh", "arccosh", "arctanh", "erf", "erfc", "erfinv", "logaddexp", "logaddexp2", "hypot",
           "lerp", "sinc", "xlogy", "nan_to_num", "frac", "fmod", "copysign"]

import functools
import math

import mlx.core as mx
import numpy as np

from .. import _checks, _threads
from .._dtype import can_require_grad, from_numpy_dtype, promote
from .._tensor import Tensor, _wrap
from . import _f64
from ._constants import operand as _constant
from ._core import BINARY, UNARY, attach, data, declare, defop

_array = mx.array


def _operand(v):
    """A numpy array becomes an MLX array of its own dtype (``mx.array`` alone turns float64 into float32);
    Python scalars stay as they are, so MLX treats them as weakly typed, as PyTorch does."""
    return _array(v, dtype=from_numpy_dtype(v.dtype)) if type(v) is np.ndarray else v


def _binary(f, arithmetic: bool = False):
    """An MLX binary function with PyTorch's promotion (a 0-d tensor does not widen a dimensioned one).
    ``arithmetic``: a Python number operand becomes a shared constant array (ops/_constants.py: memory per op)."""

    def fwd(a, b, *rest):
        ta, tb = type(a), type(b)
        if ta is _array and tb is _array:
            # MLX's promotion is PyTorch's except when exactly one operand is 0-d (cheap test first)
            if (a.ndim == 0) is not (b.ndim == 0) and a.dtype != b.dtype:
                a, b = promote(a, b)
        elif ta is np.ndarray or tb is np.ndarray:
            return fwd(_operand(a), _operand(b), *rest)
        elif arithmetic:
            if ta is _array and (tb is float or tb is int):
                b = _constant(b, a)
            elif tb is _array and (ta is float or ta is int):
                a = _constant(a, b)
        return f(a, b, *rest)

    return fwd


def _integral(v) -> bool:
    return v.dtype == mx.bool_ or mx.issubdtype(v.dtype, mx.integer) if type(v) is _array else type(v) in (int, bool)


def _zero_division(_=None) -> RuntimeError:
    return RuntimeError("ZeroDivisionError")  # PyTorch's exception, word for word


def _int_division(f, op: str):
    """An MLX quotient or remainder that refuses an integer division by zero, as PyTorch does (MLX returns arbitrary
    integers). A Python 0, or a divisor whose values are on the host, raises at once; otherwise zeros in the divisor
    are replaced by 1 for MLX and a deferred check (lucid._checks) raises at the next evaluation, naming ``op`` and
    the user's line."""

    def fwd(a, b, *rest):
        if _integral(a) and _integral(b):
            if type(b) is not _array:
                if b == 0:
                    raise _zero_division()
            elif b.size and _checks.enabled[0]:
                zero = b == 0
                if _checks.is_known(b):
                    if not _threads.to_numpy(b, copy=None).all():
                        raise _zero_division()
                else:
                    _checks.check_later(mx.any(zero), _zero_division, op)
                    b = mx.where(zero, mx.array(1, b.dtype), b)
        return f(a, b, *rest)

    return fwd


def all_or_nothing(write):
    """A write op whose arguments are checked later (lucid._checks: an index out of range, a division by zero)
    leaves its input unchanged if a check fails: the error comes at the next evaluation, and the tensor written keeps
    its old values meanwhile."""
    @functools.wraps(write)
    def op(input, *args, **kwargs):
        with _checks.watch() as flags:
            out = write(input, *args, **kwargs)
        if not flags:
            return out
        return where(_wrap(functools.reduce(mx.logical_or, flags)), input, out)
    return op


def _zeros(g, *_, **__):
    """The gradient of a piecewise-constant op (sign, floor, round, ...): zero, of g's shape."""
    return _wrap(mx.zeros_like(g._storage.data))


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
_add = defop("add", _binary(mx.add, True), vjp=(lambda g, ans, x, y: g, lambda g, ans, x, y: g), save=None, raw=True)
_sub = defop("sub", _binary(mx.subtract, True), vjp=(lambda g, ans, x, y: g, lambda g, ans, x, y: -g), save=None, raw=True)
_rsub = defop("rsub", _binary(lambda a, b: mx.subtract(b, a), True),
              vjp=(lambda g, ans, x, y: -g, lambda g, ans, x, y: g), save=None, node="RsubBackward1", raw=True)
# each operand's value is needed only for the other's gradient (and y's for its own in div): as in PyTorch, `x * c`
# with c not requiring grad does not check x's version, so x may be written in place before backward. The VJPs call
# the ops by name (what `g * y` calls on Tensors) so that on arrays (the raw backward) they keep PyTorch's promotion.
mul = defop("mul", _binary(mx.multiply, True), save={0: (1,), 1: (0,)}, raw=True,
            vjp=(lambda g, ans, x, y: mul(g, y), lambda g, ans, x, y: mul(g, x)),
            sig=BINARY, doc="``input * other`` with broadcasting; either may be a Python number.",
            method=("mul", "multiply"), inplace=True)
_div = defop("div", _binary(mx.divide, True), save={0: (1,), 1: (0, 1)}, raw=True,
             vjp=(lambda g, ans, x, y: _div(g, y), lambda g, ans, x, y: _div(mul(neg(g), x), mul(y, y))))
_div_rounded = defop("div", _binary(_int_division(_divide_rounded, "div")),
                     vjp=(_zeros, _zeros), save=None, node="DivBackward2")
floor_divide = defop("floor_divide", _binary(_int_division(mx.floor_divide, "floor_divide")),
                     vjp=(_zeros, _zeros), save=None,
                     sig=BINARY, doc="``input / other`` rounded down (zero gradient); integers stay integers.",
                     method=True, inplace=all_or_nothing)
_REMAINDER_VJP = (lambda g, ans, x, y: g, lambda g, ans, x, y: -g * floor_divide(x, y))
_remainder_fwd = _binary(_int_division(mx.remainder, "remainder"))
_remainder_scalar = defop("remainder", _remainder_fwd, vjp=_REMAINDER_VJP, node="RemainderBackward0")
_remainder_tensor = defop("remainder", _remainder_fwd, vjp=_REMAINDER_VJP, node="RemainderBackward1")
neg = defop("neg", mx.negative, vjp=lambda g, ans, x: -g, save=None, raw=True,
            sig=UNARY, doc="``-input``, elementwise.", method=("neg", "negative"), inplace=True)


@declare(method=True, inplace=all_or_nothing)
def remainder(input, other) -> Tensor:
    """Python's modulus: the result takes the sign of ``other`` (``fmod`` takes that of ``input``)."""
    return (_remainder_tensor if isinstance(other, Tensor) else _remainder_scalar)(input, other)


@declare(method=True, inplace=True)
def add(input, other, *, alpha=1) -> Tensor:
    """``input + alpha * other`` with broadcasting."""
    return _add(input, other if alpha == 1 else mul(other, alpha))


@declare(method=("sub", "subtract"), inplace=True)
def sub(input, other, *, alpha=1) -> Tensor:
    """``input - alpha * other`` with broadcasting."""
    return _sub(input, other if alpha == 1 else mul(other, alpha))


@declare(method=("div", "divide", "true_divide"), inplace=all_or_nothing)
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


def _pow_base_vjp(g, ans, x, y):
    # d/dx x**y = y x**(y-1): 0 at 0**0 (PyTorch), not 0 * inf. Masked with a safe base, so that the second
    # derivative there is 0 too; only 0**0 is masked (PyTorch masks every y == 0, which zeroes the exact mixed
    # second derivative 1/x).
    zero = logical_and(eq(y, 0), eq(x, 0))
    return where(zero, 0.0, g * y * pow(where(zero, 1.0, x), y - 1))


def _rpow_exponent_vjp(g, ans, base, x):
    # d/dx base**x = base**x log(base); with base 0 it is 0 where x >= 0 (PyTorch's convention: no 1 * -inf at
    # x == 0) and -inf where x < 0
    if base == 0:
        return where(ge(x, 0), 0.0, g * -math.inf)
    return g * ans * math.log(base) if base > 0 else g * ans * math.nan


_pow_scalar = defop("pow", mx.power, vjp=(_pow_tensor_scalar_vjp,), node="PowBackward0")
_pow_tensor = defop(
    "pow", _binary(mx.power), save="both", node="PowBackward1",
    vjp=(_pow_base_vjp,
         # d/dy x**y = x**y log x, taken as 0 where x == 0 and y >= 0 (PyTorch's convention: no 0 * -inf)
         lambda g, ans, x, y: where(logical_and(eq(x, 0), ge(y, 0)), 0.0, g * ans * log(x))))
_rpow = defop("pow", mx.power, save="both", node="PowBackward2", vjp=(None, _rpow_exponent_vjp))


@declare(method=True, inplace=True)
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
abs = defop("abs", mx.abs, vjp=lambda g, ans, x: g * sign(x), raw=True,  # noqa: A001
            sig=UNARY, doc="``|input|``, elementwise. Its gradient is ``sign(input)`` (0 at 0).",
            method=("abs", "absolute"), inplace=True)
exp = defop("exp", _f64.by_dtype(mx.exp, _f64.exp), vjp=lambda g, ans, x: g * ans, save="ans", raw=True,
            sig=UNARY, doc="``e ** input``, elementwise.", method=True, inplace=True)
exp2 = defop("exp2", lambda a: mx.power(2.0, a), vjp=lambda g, ans, x: g * ans * _LN2, save="ans", raw=True,
             sig=UNARY, doc="``2 ** input``, elementwise.", method=True, inplace=True)
log = defop("log", mx.log, vjp=lambda g, ans, x: g / x, raw=True,
            sig=UNARY, doc="Natural logarithm of each element (``nan`` below 0, ``-inf`` at 0).", method=True,
            inplace=True)
log2 = defop("log2", mx.log2, vjp=lambda g, ans, x: g / (x * _LN2), raw=True,
             sig=UNARY, doc="Base-2 logarithm of each element.", method=True, inplace=True)
log10 = defop("log10", mx.log10, vjp=lambda g, ans, x: g / (x * _LN10), raw=True,
              sig=UNARY, doc="Base-10 logarithm of each element.", method=True, inplace=True)
log1p = defop("log1p", mx.log1p, vjp=lambda g, ans, x: g / (x + 1), node="Log1PBackward0", raw=True,
              sig=UNARY, doc="``log(1 + input)``, accurate for small ``input``.",
              method=True, inplace=True)  # str.title()
expm1 = defop("expm1", mx.expm1, vjp=lambda g, ans, x: g * (ans + 1), save="ans", raw=True,
              sig=UNARY, doc="``exp(input) - 1``, accurate for small ``input``.", method=True, inplace=True)
sqrt = defop("sqrt", mx.sqrt, vjp=lambda g, ans, x: g / (ans * 2), save="ans", raw=True,
             sig=UNARY, doc="Square root of each element.", method=True, inplace=True)
rsqrt = defop("rsqrt", mx.rsqrt, vjp=lambda g, ans, x: g * -0.5 * ans * ans * ans, save="ans", raw=True,
              sig=UNARY, doc="``1 / sqrt(input)``, elementwise.", method=True, inplace=True)
square = defop("square", mx.square, vjp=lambda g, ans, x: g * 2 * x, node="PowBackward0", raw=True,
               sig=UNARY, doc="``input * input``, elementwise.", method=True, inplace=True)
reciprocal = defop("reciprocal", mx.reciprocal, vjp=lambda g, ans, x: -g * ans * ans, save="ans", raw=True,
                   sig=UNARY, doc="``1 / input``, elementwise.", method=True, inplace=True)
sin = defop("sin", _f64.by_dtype(mx.sin, _f64.sin), vjp=lambda g, ans, x: g * cos(x), raw=True,
            sig=UNARY, doc="Sine of each element (radians).", method=True, inplace=True)
cos = defop("cos", _f64.by_dtype(mx.cos, _f64.cos), vjp=lambda g, ans, x: -g * sin(x), raw=True,
            sig=UNARY, doc="Cosine of each element (radians).", method=True, inplace=True)
tan = defop("tan", mx.tan, vjp=lambda g, ans, x: g * (ans * ans + 1), save="ans", raw=True,
            sig=UNARY, doc="Tangent of each element (radians).", method=True, inplace=True)
tanh = defop("tanh", mx.tanh, vjp=lambda g, ans, x: g * (1 - ans * ans), save="ans", raw=True,
             sig=UNARY, doc="Hyperbolic tangent of each element.", method=True, inplace=True)
sigmoid = defop("sigmoid", _f64.by_dtype(mx.sigmoid, _f64.sigmoid), vjp=lambda g, ans, x: g * ans * (1 - ans),
                save="ans", raw=True,
                sig=UNARY, doc="The logistic function ``1 / (1 + exp(-input))``, elementwise.", method=True,
                inplace=True)
# (a Python 0 takes a's dtype, for every dtype: no a.dtype read, no array made)
relu = defop("relu", lambda a: mx.maximum(a, 0), vjp=lambda g, ans, x: g * gt(ans, 0), save="ans", raw=True,
             sig=UNARY, doc="``max(input, 0)``, elementwise.", method=True, inplace=True)

# piecewise constant: zero gradient, but the result still requires grad (as in PyTorch)
sign = defop("sign", mx.sign, vjp=_zeros, save=None,
             sig=UNARY, doc="-1, 0 or 1 by the sign of each element (zero gradient).", method=True, inplace=True)
floor = defop("floor", mx.floor, vjp=_zeros, save=None,
              sig=UNARY, doc="Largest integer not above each element (zero gradient).", method=True, inplace=True)
ceil = defop("ceil", mx.ceil, vjp=_zeros, save=None,
             sig=UNARY, doc="Smallest integer not below each element (zero gradient).", method=True, inplace=True)
trunc = defop("trunc", _trunc, vjp=_zeros, save=None,
              sig=UNARY, doc="Each element rounded toward zero (zero gradient); ``fix`` is the same function.",
              method=("trunc", "fix"), inplace=True)
_round = defop("round", lambda a, decimals=0: mx.round(a, decimals), vjp=_zeros, save=None)
fix = trunc


@declare(method=True, inplace=True)
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
                vjp=(lambda g, ans, x, y: g * _tie_share(x, y, gt), lambda g, ans, x, y: g * _tie_share(y, x, gt)),
                sig=BINARY,
                doc="The larger of ``input`` and ``other``, elementwise (NaN propagates; ties share the gradient).",
                method=True, inplace=True)
minimum = defop("minimum", _binary(mx.minimum),
                vjp=(lambda g, ans, x, y: g * _tie_share(x, y, lt), lambda g, ans, x, y: g * _tie_share(y, x, lt)),
                sig=BINARY,
                doc="The smaller of ``input`` and ``other``, elementwise (NaN propagates; ties share the gradient).",
                method=True, inplace=True)
# fmax/fmin ignore NaN (the other operand wins); the gradient goes wholly to the operand that was returned
fmax = defop("fmax", _binary(lambda a, b: mx.where(mx.isnan(b), a, mx.where(mx.isnan(a), b, mx.maximum(a, b)))),
             vjp=(lambda g, ans, x, y: where(_picked(x, y, ge), g, 0.0),
                  lambda g, ans, x, y: where(_picked(x, y, ge), 0.0, g)),
             sig=BINARY,
             doc="The larger of ``input`` and ``other``, elementwise, ignoring NaN (the other operand wins).",
             method=True)
fmin = defop("fmin", _binary(lambda a, b: mx.where(mx.isnan(b), a, mx.where(mx.isnan(a), b, mx.minimum(a, b)))),
             vjp=(lambda g, ans, x, y: where(_picked(x, y, le), g, 0.0),
                  lambda g, ans, x, y: where(_picked(x, y, le), 0.0, g)),
             sig=BINARY,
             doc="The smaller of ``input`` and ``other``, elementwise, ignoring NaN (the other operand wins).",
             method=True)


def _where_fwd(c, a, b):
    a, b = _operand(a), _operand(b)
    if type(a) is _array and type(b) is _array and a.dtype != b.dtype:
        a, b = promote(a, b)
    return mx.where(c, a, b)


_where = defop("where", _where_fwd, raw=True,
               vjp=(None, lambda g, ans, c, x, y: where(c, g, 0.0), lambda g, ans, c, x, y: where(c, 0.0, g)))


def where(condition, input=None, other=None):
    """``input`` where ``condition`` holds, else ``other`` (broadcasting). ``where(condition)`` alone gives the
    indices of the nonzero elements, as ``nonzero(as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return _where(condition, input, other)


@declare(method=True)
def nonzero(input, *, as_tuple: bool = False):
    """Indices of the nonzero elements: an int64 (N, ndim) tensor, or one 1-d tensor per dim with ``as_tuple``.
    The result's shape depends on the values, so they are read (an evaluation, as in PyTorch's sync)."""
    a = input._to_numpy() if isinstance(input, Tensor) else np.asarray(input)
    if as_tuple:
        return tuple(_wrap(mx.array(i, dtype=mx.int64)) for i in np.nonzero(np.atleast_1d(a)))
    return _wrap(mx.array(np.argwhere(a), dtype=mx.int64))


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


@declare(method=("clamp", "clip"), inplace=True)
def clamp(input, min=None, max=None) -> Tensor:  # noqa: A002
    """Limit ``input`` to [min, max]; either bound may be None, a number or a tensor."""
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(input, min, max)
    return _clamp_scalar(input, min, max)


clip = clamp


@declare(method=True, inplace=True)
def clamp_min(input, min) -> Tensor:  # noqa: A002
    """``max(input, min)``, elementwise: ``clamp(input, min=min)``."""
    return clamp(input, min, None)


@declare(method=True, inplace=True)
def clamp_max(input, max) -> Tensor:  # noqa: A002
    """``min(input, max)``, elementwise: ``clamp(input, max=max)``."""
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
eq = defop("eq", _binary(mx.equal), differentiable=False,
           sig=BINARY, doc="``input == other``, elementwise (a bool tensor).", method=True, inplace=True)
ne = defop("ne", _binary(mx.not_equal), differentiable=False,
           sig=BINARY, doc="``input != other``, elementwise (a bool tensor).", method=("ne", "not_equal"), inplace=True)
lt = defop("lt", _binary(mx.less), differentiable=False,
           sig=BINARY, doc="``input < other``, elementwise (a bool tensor).", method=("lt", "less"), inplace=True)
le = defop("le", _binary(mx.less_equal), differentiable=False,
           sig=BINARY, doc="``input <= other``, elementwise (a bool tensor).",
           method=("le", "less_equal"), inplace=True)
gt = defop("gt", _binary(mx.greater), differentiable=False,
           sig=BINARY, doc="``input > other``, elementwise (a bool tensor).", method=("gt", "greater"), inplace=True)
ge = defop("ge", _binary(mx.greater_equal), differentiable=False,
           sig=BINARY, doc="``input >= other``, elementwise (a bool tensor).",
           method=("ge", "greater_equal"), inplace=True)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
logical_and = defop("logical_and", mx.logical_and, differentiable=False,
                    sig=BINARY, doc="Elementwise AND of the inputs taken as booleans (a bool tensor).",
                    method=True, inplace=True)
logical_or = defop("logical_or", mx.logical_or, differentiable=False,
                   sig=BINARY, doc="Elementwise OR of the inputs taken as booleans (a bool tensor).",
                   method=True, inplace=True)
logical_not = defop("logical_not", mx.logical_not, differentiable=False,
                    sig=UNARY, doc="Elementwise NOT of ``input`` taken as booleans (a bool tensor).",
                    method=True, inplace=True)
logical_xor = defop("logical_xor", lambda a, b: mx.not_equal(mx.array(a).astype(mx.bool_),
                                                             mx.array(b).astype(mx.bool_)), differentiable=False,
                    sig=BINARY, doc="Elementwise XOR of the inputs taken as booleans (a bool tensor).",
                    method=True, inplace=True)
isnan = defop("isnan", mx.isnan, differentiable=False,
              sig=UNARY, doc="Where each element is NaN (a bool tensor).", method=True)
isinf = defop("isinf", mx.isinf, differentiable=False,
              sig=UNARY, doc="Where each element is +inf or -inf (a bool tensor).", method=True)
isfinite = defop("isfinite", mx.isfinite, differentiable=False,
                 sig=UNARY, doc="Where each element is neither inf nor NaN (a bool tensor).", method=True)
bitwise_and = defop("bitwise_and", mx.bitwise_and, differentiable=False,
                    sig=BINARY, doc="Bitwise AND of integer tensors; logical AND of bool tensors.",
                    method=True, inplace=True)
bitwise_or = defop("bitwise_or", mx.bitwise_or, differentiable=False,
                   sig=BINARY, doc="Bitwise OR of integer tensors; logical OR of bool tensors.",
                   method=True, inplace=True)
bitwise_xor = defop("bitwise_xor", mx.bitwise_xor, differentiable=False,
                    sig=BINARY, doc="Bitwise XOR of integer tensors; logical XOR of bool tensors.",
                    method=True, inplace=True)
bitwise_not = defop("bitwise_not", lambda a: mx.logical_not(a) if a.dtype == mx.bool_ else mx.bitwise_invert(a),
                    differentiable=False,
                    sig=UNARY, doc="Bitwise NOT of an integer tensor; logical NOT of a bool tensor.",
                    method=True, inplace=True)


@declare(method=True)
def equal(input, other) -> bool:
    """True if both tensors have the same shape and elements."""
    return tuple(input.shape) == tuple(other.shape) and bool(mx.array_equal(data(input), data(other)))


_allclose = defop("allclose", mx.allclose, differentiable=False)
_isclose = defop("isclose", mx.isclose, differentiable=False)


@declare(method=True)
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """True if ``|input - other| <= atol + rtol * |other|`` everywhere (NaNs equal only with ``equal_nan``)."""
    return bool(_allclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan))


@declare(method=True)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    """Where ``|input - other| <= atol + rtol * |other|``, elementwise (a bool tensor)."""
    return _isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


# ---------------------------------------------------------------------------------------------------- Tensor methods
attach("where", lambda self, condition, other: _where(condition, self, other),
       "``self`` where ``condition`` holds, else ``other`` (``lucid.where(condition, self, other)``).")


# operators
attach("__add__", _add)  # the op itself: no extra Python frame per operator
attach("__radd__", lambda self, other: _add(other, self))
attach("__sub__", _sub)
attach("__rsub__", lambda self, other: _rsub(self, other))
attach("__mul__", mul)
attach("__rmul__", lambda self, other: mul(other, self))
attach("__truediv__", _div)
attach("__rtruediv__", lambda self, other: _div(other, self))
attach("__floordiv__", lambda self, other: floor_divide(self, other))
attach("__rfloordiv__", lambda self, other: floor_divide(other, self))
attach("__mod__", lambda self, other: remainder(self, other))
attach("__rmod__", lambda self, other: remainder(other, self))
attach("__pow__", lambda self, other: pow(self, other))
attach("__rpow__", lambda self, other: pow(other, self))
attach("__neg__", neg)
attach("__pos__", lambda self: self)
attach("__abs__", abs)
attach("__eq__", lambda self, other: eq(self, other))
attach("__ne__", lambda self, other: ne(self, other))
attach("__lt__", lambda self, other: lt(self, other))
attach("__le__", lambda self, other: le(self, other))
attach("__gt__", lambda self, other: gt(self, other))
attach("__ge__", lambda self, other: ge(self, other))
attach("__and__", lambda self, other: bitwise_and(self, other))
attach("__rand__", Tensor.__and__)
attach("__or__", lambda self, other: bitwise_or(self, other))
attach("__ror__", Tensor.__or__)
attach("__xor__", lambda self, other: bitwise_xor(self, other))
attach("__rxor__", Tensor.__xor__)
attach("__invert__", bitwise_not)


# ---------------------------------------------------------------------------------------------------- in place
# fill_/zero_/copy_ replace the value: the old value gets a zero gradient, a tensor `value`/`src` gets g back
_fill = defop("fill", lambda a, v: mx.full(a.shape, v, a.dtype), save=None,
              vjp=(_zeros, lambda g, ans, x, v: g.sum()))
_zero = defop("zero", mx.zeros_like, vjp=_zeros, save=None)
_copy = defop("copy", lambda a, s: mx.broadcast_to(_array(_operand(s)).astype(a.dtype), a.shape), save=None,
              node="CopyBackwards", vjp=(_zeros, lambda g, ans, x, s: g))


def _fill_(self, value):
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                           "dimensions.")
    return self._inplace(lambda old: _fill(old, value), overlap_ok=True)


attach("fill_", _fill_, "Fill ``self`` with ``value`` (a number or a 0-d tensor), in place.")
attach("zero_", lambda self: self._inplace(_zero, overlap_ok=True), "Fill ``self`` with zeros, in place.")
attach("copy_", lambda self, src, non_blocking=False: self._inplace(lambda old: _copy(old, src)),
       "Copy ``src`` (broadcast to ``self``'s shape, cast to its dtype) into ``self``, in place.")


# ---------------------------------------------------------------------------------------------------- special functions
# Inverse trigonometric and hyperbolic functions (MLX's float64 kernels are exact), erf and its relatives, and the
# two-input functions PyTorch adds to numpy's set. Where PyTorch defines a value at a removable singularity (sinc at
# 0, xlogy at x == 0) the VJP does too, and masks with a safe operand so that the masked branch cannot leak nan into
# a second derivative; where PyTorch's gradient is nan (hypot at the origin) so is lucid's.
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2

asin = defop("asin", mx.arcsin, vjp=lambda g, ans, x: g * rsqrt(1 - x * x),
             sig=UNARY, doc="Inverse sine of each element (``arcsin``).", method=("asin", "arcsin"), inplace=True)
acos = defop("acos", mx.arccos, vjp=lambda g, ans, x: -g * rsqrt(1 - x * x),
             sig=UNARY, doc="Inverse cosine of each element (``arccos``).", method=("acos", "arccos"), inplace=True)
atan = defop("atan", mx.arctan, vjp=lambda g, ans, x: g / (1 + x * x),
             sig=UNARY, doc="Inverse tangent of each element (``arctan``).", method=("atan", "arctan"), inplace=True)
sinh = defop("sinh", mx.sinh, vjp=lambda g, ans, x: g * cosh(x),
             sig=UNARY, doc="Hyperbolic sine of each element.", method=True, inplace=True)
cosh = defop("cosh", mx.cosh, vjp=lambda g, ans, x: g * sinh(x),
             sig=UNARY, doc="Hyperbolic cosine of each element.", method=True, inplace=True)
asinh = defop("asinh", mx.arcsinh, vjp=lambda g, ans, x: g * rsqrt(x * x + 1),
              sig=UNARY, doc="Inverse hyperbolic sine of each element (``arcsinh``).", method=("asinh", "arcsinh"),
              inplace=True)
acosh = defop("acosh", mx.arccosh, vjp=lambda g, ans, x: g * rsqrt(x * x - 1),
              sig=UNARY, doc="Inverse hyperbolic cosine of each element (``arccosh``).", method=("acosh", "arccosh"),
              inplace=True)
atanh = defop("atanh", mx.arctanh, vjp=lambda g, ans, x: g / (1 - x * x),
              sig=UNARY, doc="Inverse hyperbolic tangent of each element (``arctanh``).", method=("atanh", "arctanh"),
              inplace=True)


def _atan2_vjp(sign):
    # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2): 0 at the origin, as in PyTorch (a safe denominator, not 0/0)
    def vjp(g, ans, y, x):
        r2 = x * x + y * y
        zero = eq(r2, 0)
        return where(zero, 0.0, g * (x if sign > 0 else -y) / where(zero, 1.0, r2))
    return vjp


atan2 = defop("atan2", _binary(mx.arctan2), vjp=(_atan2_vjp(1), _atan2_vjp(-1)),
              sig=BINARY,
              doc="The angle of the point (``other``, ``input``): ``atan(input / other)`` in the right quadrant.",
              method=("atan2", "arctan2"), inplace=True)
arcsin, arccos, arctan, arctan2, arcsinh, arccosh, arctanh = asin, acos, atan, atan2, asinh, acosh, atanh

erf = defop("erf", _f64.by_dtype(mx.erf, _f64.erf), vjp=lambda g, ans, x: g * _TWO_OVER_SQRT_PI * exp(-x * x),
            sig=UNARY, doc="The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``, elementwise.", method=True,
            inplace=True)
erfc = defop("erfc", _f64.erfc, vjp=lambda g, ans, x: -g * _TWO_OVER_SQRT_PI * exp(-x * x),
             sig=UNARY, doc="The complementary error function ``1 - erf(input)``, accurate where erf is near 1.",
             method=True, inplace=True)
erfinv = defop("erfinv", _f64.by_dtype(mx.erfinv, _f64.erfinv),
               vjp=lambda g, ans, x: g * _SQRT_PI_OVER_TWO * exp(ans * ans), save="ans",
               sig=UNARY, doc="The inverse error function, elementwise (defined on (-1, 1)).", method=True,
               inplace=True)

_logaddexp_fwd = _f64.by_dtype(mx.logaddexp, _f64.logaddexp)
logaddexp = defop("logaddexp", _binary(_logaddexp_fwd),
                  vjp=(lambda g, ans, x, y: g * sigmoid(x - y), lambda g, ans, x, y: g * sigmoid(y - x)),
                  sig=BINARY, doc="``log(exp(input) + exp(other))`` without overflow.", method=True)
logaddexp2 = defop("logaddexp2", _binary(lambda a, b: _logaddexp_fwd(a * _LN2, b * _LN2) / _LN2),
                   vjp=(lambda g, ans, x, y: g * sigmoid((x - y) * _LN2),
                        lambda g, ans, x, y: g * sigmoid((y - x) * _LN2)),
                   sig=BINARY, doc="``log2(2 ** input + 2 ** other)`` without overflow.", method=True)


def _hypot_fwd(a, b):
    # scaled by the larger magnitude, so that squares neither overflow nor underflow; inf wins over nan
    m = mx.maximum(mx.abs(a), mx.abs(b))
    safe = mx.where((m == 0) | mx.isinf(m), 1, m)
    r = m * mx.sqrt(mx.square(a / safe) + mx.square(b / safe))
    return mx.where(mx.isinf(a) | mx.isinf(b), math.inf, mx.where(m == 0, 0, r))


# d hypot = x / hypot: nan at the origin, as in PyTorch
hypot = defop("hypot", _binary(_hypot_fwd), save="both",
              vjp=(lambda g, ans, x, y: g * x / ans, lambda g, ans, x, y: g * y / ans),
              sig=BINARY, doc="``sqrt(input ** 2 + other ** 2)`` without overflow or underflow.", method=True,
              inplace=True)


@_binary
def _lerp_fwd(a, b, w):
    # PyTorch's form: exact at both ends (w = 0 gives a, w = 1 gives b)
    d = b - a
    return mx.where(mx.abs(w) < 0.5, a + w * d, b - d * (1 - w))


_LERP_VJP = (lambda g, ans, x, y, w: g * (1 - w), lambda g, ans, x, y, w: g * w,
             lambda g, ans, x, y, w: g * (y - x))
_lerp_scalar = defop("lerp", _lerp_fwd, vjp=_LERP_VJP, node="LerpBackward0")
_lerp_tensor = defop("lerp", _lerp_fwd, vjp=_LERP_VJP, node="LerpBackward1")


@declare(method=True, inplace=True)
def lerp(input, end, weight) -> Tensor:
    """``input + weight * (end - input)``; ``weight`` is a number or a tensor (broadcasting)."""
    return (_lerp_tensor if isinstance(weight, Tensor) else _lerp_scalar)(input, end, weight)


_sin_fwd = _f64.by_dtype(mx.sin, _f64.sin)


def _sinc_fwd(a):
    if not mx.issubdtype(a.dtype, mx.inexact):
        a = a.astype(mx.float32)
    safe = mx.where(a == 0, 1, a * math.pi)
    return mx.where(a == 0, 1, _sin_fwd(safe) / safe)


def _sinc_vjp(g, ans, x):
    # (cos(pi x) - sinc(x)) / x, and 0 at x == 0 (the limit)
    zero = eq(x, 0)
    safe = where(zero, 1.0, x)
    return where(zero, 0.0, g * (cos(safe * math.pi) - sinc(safe)) / safe)


sinc = defop("sinc", _sinc_fwd, vjp=_sinc_vjp,
             sig=UNARY, doc="The normalized sinc ``sin(pi x) / (pi x)``, 1 at 0.", method=True, inplace=True)


def _xlogy_fwd(a, b):
    # 0 where x == 0 (even for y == 0 or inf), nan where y is nan
    out = a * mx.log(b)
    return mx.where(mx.isnan(b), b, mx.where(a == 0, 0, out))


_XLOGY_VJP = (lambda g, ans, x, y: where(logical_and(eq(x, 0), le(y, 0)), 0.0, xlogy(g, y)),
              lambda g, ans, x, y: g * x / y)
# PyTorch's overloads: two tensors, a number for x, a number for y
_xlogy_ops = tuple(defop("xlogy", _binary(_xlogy_fwd), vjp=_XLOGY_VJP, node=f"XlogyBackward{i}") for i in range(3))


@declare(method=True, inplace=True)
def xlogy(input, other) -> Tensor:
    """``input * log(other)``, 0 where ``input`` is 0 (even where other is 0 or inf), NaN where other is NaN.
    Either argument may be a number."""
    if not isinstance(input, Tensor):
        return _xlogy_ops[1](input, other)
    return _xlogy_ops[0 if isinstance(other, Tensor) else 2](input, other)


def _nan_to_num_fwd(a, nan, posinf, neginf):
    if not mx.issubdtype(a.dtype, mx.inexact):
        return a
    info = mx.finfo(a.dtype)
    a = mx.where(mx.isnan(a), nan, a)
    a = mx.where(mx.isposinf(a), info.max if posinf is None else posinf, a)
    return mx.where(mx.isneginf(a), info.min if neginf is None else neginf, a)


_nan_to_num = defop("nan_to_num", _nan_to_num_fwd,
                    vjp=lambda g, ans, x, nan, posinf, neginf: where(isfinite(x), g, 0.0))


@declare(method=True, inplace=True)
def nan_to_num(input, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """NaN -> ``nan``, +inf -> ``posinf``, -inf -> ``neginf`` (the dtype's largest and smallest finite values when
    None). The gradient passes where the input is finite."""
    return _nan_to_num(input, nan, posinf, neginf)


frac = defop("frac", lambda a: a - _trunc(a), vjp=lambda g, ans, x: g, save=None,
             sig=UNARY, doc="The fractional part ``input - trunc(input)``, with the sign of ``input``.", method=True,
             inplace=True)


def _fmod_fwd(a, b):
    # C's fmod: the remainder of division rounded toward zero, with the sign of the dividend
    r = mx.remainder(a, b)
    return mx.where((r != 0) & ((r < 0) != (a < 0)), r - b, r)


_FMOD_VJP = (lambda g, ans, x, y: g, lambda g, ans, x, y: -g * div(x, y, rounding_mode="trunc"))
_fmod_checked = _binary(_int_division(_fmod_fwd, "fmod"))
_fmod_scalar = defop("fmod", _fmod_checked, vjp=_FMOD_VJP, node="FmodBackward0")
_fmod_tensor = defop("fmod", _fmod_checked, vjp=_FMOD_VJP, node="FmodBackward1")


@declare(method=True, inplace=all_or_nothing)
def fmod(input, other) -> Tensor:
    """Remainder with the sign of ``input`` (``remainder`` takes the sign of ``other``)."""
    return (_fmod_tensor if isinstance(other, Tensor) else _fmod_scalar)(input, other)


def _copysign_fwd(a, b):
    b = _array(b)
    if not mx.issubdtype(a.dtype, mx.inexact):  # integers give floats, as in PyTorch
        a = a.astype(b.dtype if mx.issubdtype(b.dtype, mx.inexact) else mx.float32)
    negative = (b < 0) | ((b == 0) & (1 / b < 0))  # -0.0 counts as negative
    return mx.where(negative, -mx.abs(a), mx.abs(a))


_COPYSIGN_VJP = (lambda g, ans, x, y: g * sign(x) * sign(ans), _zeros)  # +-1, and 0 where x == 0
_copysign_tensor = defop("copysign", _binary(_copysign_fwd), save="both", vjp=_COPYSIGN_VJP, node="CopysignBackward0")
_copysign_scalar = defop("copysign", _binary(_copysign_fwd), save="both", vjp=_COPYSIGN_VJP, node="CopysignBackward1")


@declare(method=True, inplace=True)
def copysign(input, other) -> Tensor:
    """``|input|`` with the sign of ``other`` (-0.0 counts as negative); integers give floats."""
    return (_copysign_tensor if isinstance(other, Tensor) else _copysign_scalar)(input, other)


# ---------------------------------------------------------------------------------------------------- help()


# ------------------------------------------------------------------------------------------------ in-place operators
# (the in-place methods are declared with their ops; the integer divisions are all or nothing: a division by zero
# found later leaves the tensor unchanged)
attach("__iadd__", Tensor.add_)
attach("__isub__", Tensor.sub_)
attach("__imul__", Tensor.mul_)
attach("__itruediv__", Tensor.div_)
attach("__ipow__", Tensor.pow_)
attach("__imod__", Tensor.remainder_)
attach("__ifloordiv__", Tensor.floor_divide_)
attach("__iand__", Tensor.bitwise_and_)
attach("__ior__", Tensor.bitwise_or_)
attach("__ixor__", Tensor.bitwise_xor_)
