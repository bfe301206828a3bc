"""The special functions of ``torch.special`` beyond the elementwise set: the gamma family (lgamma, digamma,
polygamma, mvlgamma, the Hurwitz zeta function, the regularized incomplete gamma functions), the normal
distribution's ndtr, log_ndtr and ndtri, erfcx, entr, logit, xlog1py, and the Bessel and Airy functions.

Each is declared once with its derivative, as PyTorch defines it: the gamma family, erfcx, the normal functions,
entr, logit, xlog1py and I0/I1 (plain and scaled) are differentiable (twice and more: their VJPs are lucid ops);
the derivatives PyTorch lacks raise its NotImplementedError (zeta in its first argument, igamma/igammac in the
first); the Bessel functions of ``torch.special`` (``bessel_j0``, ``modified_bessel_k1``, ...) and ``airy_ai`` have
no derivative, and their results never require grad, as in PyTorch.

The kernels (``_gamma``, ``_bessel``, ``_f64``) are exact to float64's rounding in float64 and run in float32 for
float32; float16 and bfloat16 are computed in float32 and rounded back, integers and bools give float32.
"""
from __future__ import annotations

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "igamma", "igammac", "i0", "logit"]

import math

import mlx.core as mx

from .._tensor import Tensor
from . import _bessel, _f64, _gamma
from ._core import BINARY, UNARY, accepts_out, attach, declare, defop
from .elementwise import eq, exp, ge, le, log, logical_and, sign, where
from .reduce import _TORCH_NAMES

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_HALF = (mx.float16, mx.bfloat16)


def _tensor_data(name: str, position: int, arg: str, value) -> None:
    """PyTorch's TypeError for an argument that is not a Tensor (the op received its raw value: a number, a list)."""
    if not isinstance(value, mx.array):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type(value).__name__}")


def _unary(kernel, name: str):
    """A kernel on one array, computed in float32 for float16/bfloat16 and rounded back (PyTorch's opmath)."""

    def fwd(a, *rest):
        _tensor_data(name, 1, "input", a)
        if a.dtype in _HALF:
            return kernel(a.astype(mx.float32), *rest).astype(a.dtype)
        return kernel(a, *rest)

    return fwd


def _binary_float(kernel, name: str):
    """A kernel on two operands (a tensor and a tensor or number) promoted to one float dtype, float32 for the half
    types."""

    def fwd(a, b):
        a, b = _gamma.float_operands(a, b, name)
        if a.dtype in _HALF:
            return kernel(a.astype(mx.float32), b.astype(mx.float32)).astype(a.dtype)
        return kernel(a, b)

    return fwd


def _not_implemented(what: str):
    """The VJP of an argument PyTorch has no derivative for: its NotImplementedError when asked for one."""

    def vjp(*_, **__):
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")

    return vjp


# ---------------------------------------------------------------------------------------------------- gamma family
lgamma = defop("lgamma", _unary(_gamma.lgamma, "lgamma"), vjp=lambda g, ans, x: g * digamma(x),
               sig=UNARY, doc="``log |Gamma(input)|``, elementwise (+inf at the poles 0, -1, -2, ...).", method=True,
               inplace=True)
digamma = defop("digamma", _unary(_gamma.digamma, "digamma"), vjp=lambda g, ans, x: g * polygamma(1, x),
                sig=UNARY,
                doc="The digamma function ``d/dx log Gamma(x)`` (-inf at +0, NaN at the negative integers).",
                method=True, inplace=True)
_polygamma_of = _unary(lambda x, n: _gamma.polygamma(n, x), "polygamma")
_polygamma = defop("polygamma", lambda n, a: _polygamma_of(a, n),
                   vjp=(None, lambda g, ans, n, x: g * polygamma(n + 1, x)))


@accepts_out
def polygamma(n: int, input) -> Tensor:  # noqa: A002  (PyTorch's names)
    """The ``n``-th derivative of digamma at ``input`` (n = 0 is digamma): ``(-1)^(n+1) n! zeta(n + 1, input)``."""
    if type(n) is not int:
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _polygamma(n, input)


def _mvlgamma_fwd(a, p):
    a = _gamma.floating(a)
    out = _gamma.lgamma(a)
    for j in range(1, p):
        out = out + _gamma.lgamma(a - j / 2)
    return out + p * (p - 1) / 4 * math.log(math.pi)


_mvlgamma = defop("mvlgamma", _unary(_mvlgamma_fwd, "mvlgamma"),
                  vjp=lambda g, ans, x, p: g * sum((digamma(x - j / 2) for j in range(1, p)), digamma(x)))


@declare(method=True, inplace=True)
@accepts_out
def mvlgamma(input, p: int) -> Tensor:  # noqa: A002
    """The multivariate log-gamma function of dimension ``p``: ``p(p-1)/4 log(pi) + sum_j lgamma(input - j/2)``
    for j = 0 .. p-1."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return _mvlgamma(input, p)


zeta = defop("zeta", _binary_float(_gamma.zeta, "zeta"), node="SpecialZetaBackward0",
             vjp=(_not_implemented("zeta"), lambda g, ans, x, q: -g * x * zeta(x + 1, q)),
             sig=BINARY,
             doc="The Hurwitz zeta function ``sum_k (k + other) ** -input``; differentiable in ``other`` only.")


def _igamma_grad(sign: float):
    # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a), PyTorch's form (log-space)
    return lambda g, ans, a, x: g * sign * exp((a - 1) * log(x) - x - lgamma(a))


_igamma = defop("igamma", _binary_float(lambda a, x: _gamma.igamma(a, x, upper=False), "igamma"),
                vjp=(_not_implemented("igamma: input"), _igamma_grad(1.0)))
_igammac = defop("igammac", _binary_float(lambda a, x: _gamma.igamma(a, x, upper=True), "igammac"),
                 vjp=(_not_implemented("igammac: input"), _igamma_grad(-1.0)))


def _incomplete_gamma(op, name: str, input, other) -> Tensor:
    for i, (arg, value) in enumerate((("input", input), ("other", other)), start=1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {i}) must be Tensor, not {type(value).__name__}")
    if not (mx.issubdtype(input.dtype, mx.floating) or mx.issubdtype(other.dtype, mx.floating)):
        raise RuntimeError(f"\"{name}\" not implemented for '{_TORCH_NAMES.get(input.dtype, input.dtype)}'")
    return op(input, other)


@declare(method=True, inplace=True)
@accepts_out
def igamma(input, other) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma function P(input, other) (``torch.special.gammainc``). Differentiable
    in ``other`` only, as in PyTorch."""
    return _incomplete_gamma(_igamma, "igamma", input, other)


@declare(method=True, inplace=True)
@accepts_out
def igammac(input, other) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P (``torch.special.gammaincc``).
    Differentiable in ``other`` only, as in PyTorch."""
    return _incomplete_gamma(_igammac, "igammac", input, other)


# ---------------------------------------------------------------------------------------------------- normal, erfcx
def _ndtr_fwd(a):
    a = _gamma.floating(a)
    return 0.5 * _f64.erfc(-a * _SQRT_HALF)


def _log_ndtr_fwd(a):
    a = _gamma.floating(a)
    # above -1 the log of 1 - the upper tail; below, log(erfcx(-x/sqrt2) / 2) - x^2/2 (no underflow)
    upper = mx.log1p(-0.5 * _f64.erfc(mx.where(a > -1, a, 0.0) * _SQRT_HALF))
    low = mx.where(a > -1, -1.0, a)
    lower = mx.log(0.5 * _f64.erfcx(-low * _SQRT_HALF)) - low * low / 2
    return mx.where(a > -1, upper, lower)


_erfinv = _f64.by_dtype(mx.erfinv, _f64.erfinv)


def _ndtri_fwd(p):
    """sqrt(2) erfinv(2p - 1) in the middle; in the tails (q = min(p, 1 - p) <= 1/16, x <= -1.5), Abramowitz and
    Stegun 26.2.23 (4.5e-4) refined by three Newton steps on log_ndtr(x) = log(q) (quadratic: 1e-7, 1e-14, exact),
    with log_ndtr(x) = log(erfcx(-x/sqrt2) / 2) - x^2/2, which keeps relative accuracy down to the smallest q."""
    p = _gamma.floating(p)
    central = math.sqrt(2) * _erfinv(2 * p - 1)
    q = mx.where(p > 0.5, 1 - p, p)  # exact for p >= 0.5
    q = mx.where((q > 0) & (q <= 0.5), q, 0.5)
    t = mx.sqrt(-2 * mx.log(q))
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    log_q = mx.log(q)
    for _ in range(3):
        e = _f64.erfcx(-x * _SQRT_HALF)
        x = x - (mx.log(0.5 * e) - x * x / 2 - log_q) * e / _SQRT_2_OVER_PI
    tail = mx.where(p > 0.5, -x, x)
    out = mx.where(mx.abs(p - 0.5) <= 0.4375, central, tail)
    out = mx.where(p == 0, -math.inf, mx.where(p == 1, math.inf, out))
    return mx.where((p < 0) | (p > 1) | mx.isnan(p), math.nan, out)


ndtr = defop("ndtr", _unary(_ndtr_fwd, "ndtr"), node="SpecialNdtrBackward0",
             vjp=lambda g, ans, x: g * exp(-x * x / 2) / _SQRT_2PI,
             sig=UNARY, doc="The standard normal distribution function ``(1 + erf(x / sqrt(2))) / 2``.")
# d log_ndtr = phi(x) / Phi(x) = sqrt(2/pi) / erfcx(-x/sqrt2): no underflow in the lower tail
log_ndtr = defop("log_ndtr", _unary(_log_ndtr_fwd, "log_ndtr"), node="SpecialLogNdtrBackward0",
                 vjp=lambda g, ans, x: g * _SQRT_2_OVER_PI / erfcx(-x * _SQRT_HALF),
                 sig=UNARY, doc="``log(ndtr(input))``, accurate far into the lower tail.")
ndtri = defop("ndtri", _unary(_ndtri_fwd, "ndtri"), node="SpecialNdtriBackward0", save="ans",
              vjp=lambda g, ans, x: g * _SQRT_2PI * exp(ans * ans / 2),
              sig=UNARY,
              doc="The inverse of ``ndtr``: the standard normal quantile of each probability (+-inf at 0 and 1).")
erfcx = defop("erfcx", _unary(lambda a: _f64.erfcx(_gamma.floating(a)), "erfcx"), node="SpecialErfcxBackward0",
              save="both", vjp=lambda g, ans, x: g * (2 * x * ans - _TWO_OVER_SQRT_PI),
              sig=UNARY, doc="The scaled complementary error function ``exp(x^2) * erfc(x)``, without overflow.")


# ---------------------------------------------------------------------------------------------------- entr, logit, ...
def _entr_fwd(a):
    a = _gamma.floating(a)
    out = -a * mx.log(mx.where(a > 0, a, 1.0))
    return mx.where(a < 0, -math.inf, mx.where(a == 0, 0.0, mx.where(a > 0, out, a)))


entr = defop("entr", _unary(_entr_fwd, "entr"), node="SpecialEntrBackward0", vjp=lambda g, ans, x: -g * (log(x) + 1),
             sig=UNARY, doc="The elementwise entropy ``-x log(x)`` (0 at 0, -inf for x < 0).")


def _logit_fwd(a, eps):
    a = _gamma.floating(a)
    if eps is not None and eps >= 0:  # PyTorch's order: eps where below it, else 1 - eps where above (eps > 0.5 too)
        a = mx.where(a < eps, eps, mx.where(a > 1 - eps, 1 - eps, a))
    return mx.log(a / (1 - a))


def _logit_vjp(g, ans, x, eps):
    d = g / (x * (1 - x))
    if eps is None or eps < 0:  # outside [0, 1] the logit is NaN, and so is its gradient
        return where(logical_and(ge(x, 0), le(x, 1)), d, math.nan)
    return where(logical_and(ge(x, eps), le(x, 1 - eps)), d, 0.0)  # clamped: no gradient outside (NaN included)


_logit = defop("logit", _unary(_logit_fwd, "logit"), vjp=_logit_vjp)


@declare(method=True, inplace=True)
@accepts_out
def logit(input, eps: float | None = None) -> Tensor:  # noqa: A002
    """``log(p / (1 - p))``; with ``eps``, ``p`` is first clamped to [eps, 1 - eps] (no gradient outside)."""
    return _logit(input, eps)


def _xlog1py_fwd(a, b):
    # 0 where x == 0 (whatever y is, but NaN), NaN where y is NaN
    return mx.where(mx.isnan(b), b, mx.where(a == 0, 0, a * mx.log1p(b)))


xlog1py = defop("xlog1py", _binary_float(_xlog1py_fwd, "xlog1py"), node="SpecialXlog1PyBackward0",
                vjp=(lambda g, ans, x, y: where(logical_and(eq(x, 0), le(y, -1)), 0.0, xlog1py(g, y)),
                     lambda g, ans, x, y: g * x / (y + 1)),
                sig=BINARY, doc="``input * log1p(other)``, 0 where ``input`` is 0 (NaN where other is NaN).")


# ---------------------------------------------------------------------------------------------------- Bessel
def _i(nu: int, scaled: bool, name: str):
    return _unary(lambda a: _bessel.modified_i(a, nu, scaled), name)


def _safe_x(x):
    return where(eq(x, 0), 1.0, x)


i0 = defop("i0", _i(0, False, "i0"), vjp=lambda g, ans, x: g * i1(x),
           sig=UNARY, doc="The modified Bessel function of the first kind of order 0, ``I0``.", method=True,
           inplace=True)
i0e = defop("i0e", _i(0, True, "i0e"), node="SpecialI0EBackward0", save="both",
            vjp=lambda g, ans, x: g * (i1e(x) - sign(x) * ans),
            sig=UNARY, doc="The exponentially scaled ``I0``: ``exp(-|x|) I0(x)``.")
# I1' = I0 - I1/x and I1e' = I0e - I1e (sign(x) + 1/x): 1/2 at x = 0 (the limit)
i1 = defop("i1", _i(1, False, "i1"), node="SpecialI1Backward0", save="both",
           vjp=lambda g, ans, x: g * where(eq(x, 0), 0.5, i0(x) - ans / _safe_x(x)),
           sig=UNARY, doc="The modified Bessel function of the first kind of order 1, ``I1``.")
i1e = defop("i1e", _i(1, True, "i1e"), node="SpecialI1EBackward0", save="both",
            vjp=lambda g, ans, x: g * where(eq(x, 0), 0.5, i0e(x) - ans * (sign(x) + 1 / _safe_x(x))),
            sig=UNARY, doc="The exponentially scaled ``I1``: ``exp(-|x|) I1(x)``.")


def _nondiff(name, kernel, doc: str):
    return defop(name, _unary(kernel, name), differentiable=False, sig=UNARY, doc=doc + " Not differentiable.")


bessel_j0 = _nondiff("bessel_j0", lambda a: _bessel.bessel(a, 0, second=False),
                     "The Bessel function of the first kind of order 0, ``J0``.")
bessel_j1 = _nondiff("bessel_j1", lambda a: _bessel.bessel(a, 1, second=False),
                     "The Bessel function of the first kind of order 1, ``J1``.")
bessel_y0 = _nondiff("bessel_y0", lambda a: _bessel.bessel(a, 0, second=True),
                     "The Bessel function of the second kind of order 0, ``Y0`` (-inf at 0, NaN below).")
bessel_y1 = _nondiff("bessel_y1", lambda a: _bessel.bessel(a, 1, second=True),
                     "The Bessel function of the second kind of order 1, ``Y1`` (-inf at 0, NaN below).")
modified_bessel_i0 = _nondiff("modified_bessel_i0", lambda a: _bessel.modified_i(a, 0, False),
                              "The modified Bessel function of the first kind of order 0 (as ``i0``).")
modified_bessel_i1 = _nondiff("modified_bessel_i1", lambda a: _bessel.modified_i(a, 1, False),
                              "The modified Bessel function of the first kind of order 1 (as ``i1``).")
modified_bessel_k0 = _nondiff("modified_bessel_k0", lambda a: _bessel.modified_k(a, 0, False),
                              "The modified Bessel function of the second kind of order 0, ``K0``.")
modified_bessel_k1 = _nondiff("modified_bessel_k1", lambda a: _bessel.modified_k(a, 1, False),
                              "The modified Bessel function of the second kind of order 1, ``K1``.")
scaled_modified_bessel_k0 = _nondiff("scaled_modified_bessel_k0", lambda a: _bessel.modified_k(a, 0, True),
                                     "The exponentially scaled ``K0``: ``exp(x) K0(x)``.")
scaled_modified_bessel_k1 = _nondiff("scaled_modified_bessel_k1", lambda a: _bessel.modified_k(a, 1, True),
                                     "The exponentially scaled ``K1``: ``exp(x) K1(x)``.")
spherical_bessel_j0 = _nondiff("spherical_bessel_j0", _bessel.spherical_j0,
                               "The spherical Bessel function of the first kind of order 0, ``sin(x) / x``.")
airy_ai = _nondiff("airy_ai", _bessel.airy_ai, "The Airy function ``Ai``.")


# ---------------------------------------------------------------------------------------------------- methods
def _polygamma_method(self, n):
    return polygamma(n, self)


def _polygamma_inplace(self, n):
    return self._inplace(lambda old: polygamma(n, old))


_polygamma_method.__name__ = _polygamma_method.__qualname__ = "polygamma"
_polygamma_method.__doc__ = "``polygamma(n, self)``: the n-th derivative of digamma."
_polygamma_inplace.__name__ = _polygamma_inplace.__qualname__ = "polygamma_"
_polygamma_inplace.__doc__ = "In-place version of ``polygamma``: ``self`` is overwritten with the result."
attach("polygamma", _polygamma_method)
attach("polygamma_", _polygamma_inplace)
