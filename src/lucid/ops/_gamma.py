"""The gamma family on MLX arrays: log-gamma, digamma, the Hurwitz zeta function (and with it polygamma) and the
regularized incomplete gamma functions. One algorithm per function serves every float dtype: float64 inputs are
computed in float64 with the exact forms of ``_f64`` (MLX's own float64 exp/sin are float32-accurate), float32 in
float32. The expansions are the textbook ones (Abramowitz and Stegun 6.1, 6.3, 6.5; DLMF 25.11), with the number of
terms fixed so that the last one is below float64's rounding: no loop depends on the values, so these build a
lazy graph like any other MLX function.
"""
from __future__ import annotations

import math
from fractions import Fraction

import mlx.core as mx

from .._dtype import promote
from . import _f64


def _bernoulli(n: int) -> list[Fraction]:
    """B_0 .. B_n (B_1 = -1/2), exactly."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


_B = _bernoulli(26)
_EULER = 0.57721566490153286061
_LOG_2PI_HALF = 0.5 * math.log(2 * math.pi)
# Stirling's series for log-gamma, sum_k B_2k / (2k (2k - 1) z^(2k-1)), and the asymptotic series of digamma,
# sum_k B_2k / (2k z^2k): for z >= 10 the eighth term is below 1e-16 relative
_STIRLING = [float(_B[2 * k] / (2 * k * (2 * k - 1))) for k in range(1, 9)]
_PSI_ASYMPTOTIC = [float(_B[2 * k] / (2 * k)) for k in range(1, 9)]
# Euler-Maclaurin for the Hurwitz zeta function: B_2j / (2j)!
_EM = [float(_B[2 * j] / math.factorial(2 * j)) for j in range(1, 13)]


def _zeta_minus_one(k: int) -> float:
    """zeta(k) - 1 for an integer k >= 2, summed directly to n = 9 with the Euler-Maclaurin tail at 10."""
    s = sum(n ** -float(k) for n in range(2, 10))
    w = 10.0
    s += w ** (1 - k) / (k - 1) + 0.5 * w ** -k
    t = k * w ** (-k - 1)  # (k)_(2j-1) w^(-k-2j+1)
    for j in range(1, 12):
        s += float(_B[2 * j] / math.factorial(2 * j)) * t
        t *= (k + 2 * j - 1) * (k + 2 * j) / (w * w)
    return s


# log-gamma(2 + t) = (1 - gamma) t + sum_{k>=2} (-1)^k (zeta(k) - 1) t^k / k  (A&S 6.1.33's relative around 2);
# |t| <= 1/2 here, where 27 terms reach 1e-17
_LGAMMA_2 = [0.0, 1 - _EULER] + [(-1) ** k * _zeta_minus_one(k) / k for k in range(2, 29)]


def _poly(z, coeffs):
    p = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        p = p * z + c
    return p


def exp(a):
    """e^a: exact in float64; in float32 MLX's kernel overflows from a = 88.03 on (e^88.72 is the largest float32),
    so the last stretch is taken as e^(a - 1) e."""
    if a.dtype == mx.float64:
        return _f64.exp(a)
    return mx.where(a > 88, mx.exp(a - 1) * math.e, mx.exp(a))


def sin(a):
    return _f64.sin(a) if a.dtype == mx.float64 else mx.sin(a)


def floating(a):
    """``a`` as a float array: integers and bools become float32, as in PyTorch (float16/bfloat16 stay)."""
    return a if mx.issubdtype(a.dtype, mx.floating) else a.astype(mx.float32)


def float_operands(a, b, name: str = "special"):
    """Two operands (MLX arrays or Python numbers, at least one an array) as arrays of one float dtype, by PyTorch's
    promotion: a number takes the other operand's dtype (a float number and an integer tensor give float32), a 0-d
    array does not widen a dimensioned one of its kind, integers become float32."""
    ok = (mx.array, bool, int, float)
    if not (isinstance(a, ok) and isinstance(b, ok) and (isinstance(a, mx.array) or isinstance(b, mx.array))):
        got = ", ".join("Tensor" if isinstance(v, mx.array) else type(v).__name__ for v in (a, b))
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected "
                        "(Tensor, Tensor), (Number, Tensor) or (Tensor, Number)")
    if not isinstance(a, mx.array):
        a = mx.array(a, dtype=b.dtype if mx.issubdtype(b.dtype, mx.floating) or type(a) is int else mx.float32)
    if not isinstance(b, mx.array):
        b = mx.array(b, dtype=a.dtype if mx.issubdtype(a.dtype, mx.floating) or type(b) is int else mx.float32)
    a, b = promote(a, b)
    if a.dtype != b.dtype:
        fa, fb = mx.issubdtype(a.dtype, mx.floating), mx.issubdtype(b.dtype, mx.floating)
        if fa and fb:  # float16 with bfloat16 gives float32, as in PyTorch
            wide = a.dtype if a.itemsize > b.itemsize else b.dtype if b.itemsize > a.itemsize else mx.float32
            a, b = a.astype(wide), b.astype(wide)
        elif fa:
            b = b.astype(a.dtype)
        elif fb:
            a = a.astype(b.dtype)
    return floating(a), floating(b)


def _sinpi_abs(x):
    """|sin(pi x)|, exact at the integers (0) however large x is: reduced to [-1/2, 1/2] first."""
    return mx.abs(sin((x - mx.round(x)) * math.pi))


# ---------------------------------------------------------------------------------------------------- log-gamma
def _lgamma_positive(x):
    """log Gamma(x) for x > 0: the series around 1 and 2 below 2.5 (relative accuracy at the zeros 1 and 2),
    Stirling's series at x + 8 (shifted down by the logarithm of a product) up to 10, Stirling beyond."""
    t = mx.where(x < 0.5, x, mx.where(x < 1.5, x - 1, x - 2))
    near = _poly(t, _LGAMMA_2) - mx.where(x < 1.5, mx.log1p(t), 0) - mx.where(x < 0.5, mx.log(x), 0)
    shifted = x < 10
    z = mx.where(shifted, x + 8, x)
    prod = x
    for k in range(1, 8):
        prod = prod * (x + k)
    w = 1 / z
    far = (z - 0.5) * mx.log(z) - z + _LOG_2PI_HALF + w * _poly(w * w, _STIRLING)
    far = far - mx.where(shifted, mx.log(mx.where(shifted, prod, 1)), 0)
    return mx.where(x < 2.5, near, far)


def lgamma(x):
    """log|Gamma(x)|: +inf at the poles (0 and the negative integers) and at +-inf, as PyTorch."""
    x = floating(x)
    neg = x < 0.5
    y = mx.where(neg, 1 - x, x)
    lg = _lgamma_positive(mx.where(mx.isinf(y), 1.0, y))
    # reflection for x < 1/2: Gamma(x) Gamma(1 - x) = pi / sin(pi x)
    s = _sinpi_abs(x)
    out = mx.where(neg, math.log(math.pi) - mx.log(s) - lg, lg)
    pole = (x <= 0) & (x == mx.floor(x))
    return mx.where(mx.isinf(x) | pole, math.inf, out)


# ---------------------------------------------------------------------------------------------------- digamma
def _digamma_positive(x):
    """psi(x) for x > 0: shifted by 10 below 10 (psi(x) = psi(x + 10) - sum 1/(x + k)), asymptotic beyond."""
    shifted = x < 10
    z = mx.where(shifted, x + 10, x)
    s = 0
    for k in range(10):
        s = s + 1 / (x + k)
    w = 1 / (z * z)
    out = mx.log(z) - 0.5 / z - w * _poly(w, _PSI_ASYMPTOTIC)
    return out - mx.where(shifted, s, 0)


def digamma(x):
    """psi(x) = d/dx log Gamma(x). As PyTorch: -inf at +0 and +inf at -0, NaN at the negative integers and -inf."""
    x = floating(x)
    neg = x < 0
    y = mx.where(neg, 1 - x, x)
    psi = _digamma_positive(mx.where(mx.isinf(y) | (y == 0), 1.0, y))
    # reflection: psi(x) = psi(1 - x) - pi / tan(pi x), tan taken on x reduced to [-1/2, 1/2]
    r = x - mx.round(x)
    out = mx.where(neg, psi - math.pi / mx.tan(r * math.pi), psi)
    out = mx.where(x == math.inf, math.inf, out)
    out = mx.where(neg & ((x == mx.floor(x)) | mx.isinf(x)), math.nan, out)
    zero_sign = mx.where(1 / mx.where(x == 0, x, 1) < 0, math.inf, -math.inf)  # the sign of a zero
    return mx.where(x == 0, zero_sign, out)


# ---------------------------------------------------------------------------------------------------- zeta
def _euler_maclaurin_tail(s, w):
    """sum_(k>=0) (w + k)^-s - w^-s / 2 ... : the Euler-Maclaurin remainder at w, with 12 Bernoulli terms
    (DLMF 25.11.5), for w >= 9."""
    b = mx.power(w, -s)
    total = w * b / (s - 1) + 0.5 * b
    t = s * b / w  # (s)_(2j-1) w^(-s-2j+1), one factor (s + k)/w at a time: never an inf times a 0
    for j, c in enumerate(_EM, start=1):
        total = total + c * t
        t = t * ((s + (2 * j - 1)) / w) * ((s + 2 * j) / w)
    return total


def _hurwitz(s, q, q2=None, sign=None):
    """zeta(s, q) for s > 1, q > 0 (nine terms, then the Euler-Maclaurin tail at q + 9), or
    zeta(s, q) + sign zeta(s, q2) summed term by term: where the two series cancel, they cancel pair by pair (and
    exactly where the terms are equal)."""
    total = 0
    for k in range(9):
        term = mx.power(q + k, -s)
        total = total + (term if q2 is None else term + sign * mx.power(q2 + k, -s))
    total = total + _euler_maclaurin_tail(s, q + 9)
    return total if q2 is None else total + sign * _euler_maclaurin_tail(s, q2 + 9)


# Masks of two arguments are joined with logical_and/or, not & and |: under mx.vmap, MLX's bitwise ops of a mask that
# is not batched (from a constant argument) and one that is give a batch of 1, and reading that result as batched
# corrupts memory (tests/test_opinfo.py's vmap of zeta(constant, x) ended the process).
_and, _or = mx.logical_and, mx.logical_or


def zeta(s, q):
    """The Hurwitz zeta function zeta(s, q) with PyTorch's domain: NaN for s < 1, inf at s = 1 and where q is 0
    or a negative integer; q < 0 otherwise only for an integer s (the sum is then still defined)."""
    s, q = mx.broadcast_arrays(*float_operands(s, q))
    # q < 0, not an integer, s an integer: q = f - m with f in (0, 1) and
    # zeta(s, q) = zeta(s, f) + (-1)^s zeta(s, 1 - f) - (-1)^s zeta(s, m + 1 - f)
    fl = mx.floor(q)
    f = q - fl
    negative = q < 0
    # (masks joined with logical_and/or: see igamma)
    ok = _or(_and(mx.isfinite(q), q > 0), _and(negative, f > 0))
    below = _and(ok, negative)
    safe_s = mx.where(_and(s > 1, mx.isfinite(s)), s, 2.0)
    sign = mx.where(below, 1 - 2 * mx.remainder(safe_s, 2), 0.0)
    near = _hurwitz(safe_s, mx.where(ok, mx.where(negative, f, q), 1.0), mx.where(below, 1 - f, 1.0), sign)
    far = _hurwitz(safe_s, mx.where(below, 1 - f - fl, 1.0))
    out = mx.where(negative, near - sign * far, near)
    out = mx.where(_or(_and(negative, s != mx.floor(s)), mx.isnan(q)), math.nan, out)
    # s = +inf: 1 for q = 1, inf below (q^-s), NaN above (PyTorch's sum stalls on 0 * inf there)
    out = mx.where(s == math.inf, mx.where(q == 1, 1.0, mx.where(q < 1, math.inf, math.nan)), out)
    out = mx.where(q == math.inf, math.nan, out)
    pole = _and(q <= 0, q == fl)
    out = mx.where(pole, math.inf, out)
    out = mx.where(s < 1, math.nan, out)
    return mx.where(s == 1, math.inf, mx.where(_and(mx.isnan(s), mx.logical_not(pole)), math.nan, out))


def polygamma(n: int, x):
    """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) for n >= 1."""
    x = floating(x)
    if n == 0:
        return digamma(x)
    out = zeta(mx.array(float(n + 1), dtype=x.dtype), x)
    # n! in x's dtype, as PyTorch (inf in float32 from n = 35)
    factorial = mx.array(float(math.factorial(n)) if n <= 170 else math.inf, dtype=x.dtype)
    out = out * factorial * (1.0 if n % 2 else -1.0)
    if n == 1:  # PyTorch's trigamma: 0 at +inf, NaN at -inf
        out = mx.where(x == math.inf, 0.0, mx.where(x == -math.inf, math.nan, out))
    return out


# ---------------------------------------------------------------------------------------------------- incomplete gamma
# terms of the series and the continued fraction: exact to rounding for a up to ~3000 (float64; 1e-7 at a = 1e4, where
# the series' n-th term just below x = a is about exp(-n / sqrt(a) - n^2 / 2a)); float32's rounding is reached sooner
_TERMS = {mx.float64: 400, mx.float32: 260}


def _log_prefix(a, x):
    """log(x^a e^-x / Gamma(a)). For a >= 10 with Stirling's series for log Gamma(a), as
    a (log1p(t) - t) + log(a)/2 - log(2 pi)/2 - (Stirling's correction), t = (x - a)/a: its rounding error is that
    of |x - a| rather than of a log x (a float32 a = 700 would otherwise leave 1e-4)."""
    big = a >= 10
    ab = mx.where(big, a, 10.0)
    t = (x - ab) / ab
    w = 1 / ab
    stirling = ab * (mx.log1p(t) - t) + 0.5 * mx.log(ab) - _LOG_2PI_HALF - w * _poly(w * w, _STIRLING)
    return mx.where(big, stirling, a * mx.log(x) - x - lgamma(mx.where(big, 1.0, a)))


def _igamma_parts(a, x):
    """(P(a, x), Q(a, x)) for a > 0, x > 0 finite: the power series of P below x = a + 1 (a - sqrt(a) for large a),
    the continued fraction of Q above, the other one as its complement. Both are evaluated from their last term back (a nested product
    and the fraction's tail first), a few operations a term."""
    log_prefix = _log_prefix(a, x)
    # Numerical Recipes' choice (the series below a + 1); for large a the fraction already converges from a - sqrt(a)
    # on, where the series would need ~ 37 sqrt(a) terms
    use_series = (x < a + 1) & ((a < 100) | (x < a - mx.sqrt(a)))
    terms = _TERMS[a.dtype]
    # series: P = x^a e^-x / Gamma(a + 1) * (1 + x/(a+1) (1 + x/(a+2) (1 + ...)))
    xs = mx.where(use_series, x, 0.0)
    total = mx.ones_like(a)
    for n in range(terms, 0, -1):
        total = 1 + xs / (a + n) * total
    p_series = exp(log_prefix) * total / a
    # continued fraction: Q = x^a e^-x / Gamma(a) / (b_0 + a_1 / (b_1 + a_2 / (b_2 + ...))), with
    # b_i = x + 2i + 1 - a and a_i = i (a - i) (Legendre's fraction in its even form)
    base = mx.where(use_series, a + 2, x) + 1 - a
    f = base + 2 * terms
    for i in range(terms, 0, -1):
        f = base + 2 * (i - 1) + i * (a - i) / f
    q_cf = exp(mx.where(use_series, 0.0, log_prefix)) / f
    return mx.where(use_series, p_series, 1 - q_cf), mx.where(use_series, 1 - p_series, q_cf)


def igamma(a, x, upper: bool):
    """The regularized lower (``upper`` False) or upper incomplete gamma function, with PyTorch's values at the
    edges: NaN for a < 0 or x < 0, P(0, x > 0) = 1, P(a, 0) = 0, P(inf, x) = 0 and P(a, inf) = 1 (NaN for both)."""
    a, x = mx.broadcast_arrays(*float_operands(a, x))
    inside = _and(_and(a > 0, x > 0), _and(mx.isfinite(a), mx.isfinite(x)))  # (logical_and: see _and)
    p, q = _igamma_parts(mx.where(inside, a, 1.0), mx.where(inside, x, 1.0))
    out = mx.where(_or(mx.isnan(a), mx.isnan(x)), math.nan, q if upper else p)
    one, zero = (0.0, 1.0) if upper else (1.0, 0.0)
    out = mx.where(mx.isinf(x), mx.where(mx.isinf(a), math.nan, one), out)
    out = mx.where(mx.isinf(a), mx.where(mx.isinf(x), math.nan, zero), out)
    out = mx.where(x == 0, zero, out)
    out = mx.where(a == 0, mx.where(x > 0, one, math.nan), out)
    return mx.where(_or(x < 0, a < 0), math.nan, out)
