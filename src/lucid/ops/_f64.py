"""float64-accurate forms of the MLX functions whose CPU float64 kernels are only float32-accurate.

Measured on MLX 0.32 (CPU): exp, sin, cos, sigmoid, erf, erfinv, logaddexp, softmax and logsumexp in float64 are
off by 1e-7 to 1e-10 (erf by up to 7e-5 relative), which breaks finite-difference gradient checks; power, tan, tanh,
log, log1p, expm1, sqrt, rsqrt, sinh, cosh, the inverse trigonometric and hyperbolic functions, arctan2 and
remainder are exact to a few ulp. These forms are built from the exact ones and are used only for float64 inputs
(``erfc`` and ``erfcx``, which MLX lacks, serve every dtype). Each is checked against numpy/scipy over its range in
tests/test_ops_elementwise.py.
"""
from __future__ import annotations

import math

import mlx.core as mx

_E = mx.array(math.e, dtype=mx.float64)
# ln 2 split so that k * _LN2_HI is exact for |k| < 2**11 (Cody and Waite's argument reduction)
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10


def by_dtype(fast, exact):
    """``fast`` (MLX's kernel) for every dtype but float64, ``exact`` for float64."""

    def fwd(a, *args, **kwargs):
        if a.itemsize == 8 and a.dtype == mx.float64:  # itemsize first: comparing MLX dtypes costs ~3x as much
            return exact(a, *args, **kwargs)
        return fast(a, *args, **kwargs)

    return fwd


def exp(a):
    # e**a = 2**k * e**r with |r| <= ln(2)/2: e (rounded) raised to a large power would carry its rounding error
    # times a (4e-14 at a = -700); 2**k is exact, split in two factors so that neither overflows before the product
    a_c = mx.clip(a, -746.0, 710.0)  # beyond these exp is 0 or inf anyway; keeps k finite for a = +-inf
    k = mx.round(a_c * (1 / math.log(2.0)))
    r = (a_c - k * _LN2_HI) - k * _LN2_LO
    half = mx.floor(k * 0.5)
    return mx.power(_E, r) * mx.power(2.0, half) * mx.power(2.0, k - half)


def sin(a):
    t = mx.tan(a * 0.5)  # half-angle: tan is exact in float64
    return 2 * t / (1 + t * t)


def cos(a):
    t2 = mx.square(mx.tan(a * 0.5))
    return (1 - t2) / (1 + t2)


def sigmoid(a):
    e = exp(-mx.abs(a))
    return mx.where(a >= 0, 1 / (1 + e), e / (1 + e))


def logaddexp(a, b):
    m = mx.maximum(a, b)
    return mx.where(mx.isinf(m) & (a == b), m, m + mx.log1p(exp(-mx.abs(a - b))))


def logsumexp(a, axis=None, keepdims=False):
    m = mx.stop_gradient(mx.max(a, axis=axis, keepdims=True))
    m = mx.where(mx.isinf(m), 0, m)
    out = mx.log(mx.sum(exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else mx.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def softmax(a, axis=-1):
    m = mx.max(a, axis=axis, keepdims=True)
    e = exp(a - m)
    return e / mx.sum(e, axis=axis, keepdims=True)


# ---------------------------------------------------------------------------------------------------- erf, erfc
# Sun's fdlibm s_erf.c (freely distributable, see its notice): rational approximations on [0, 0.84375),
# [0.84375, 1.25), [1.25, 1/0.35) and [1/0.35, 28), each accurate to under one ulp in float64.
_ERX = 8.45062911510467529297e-01
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
       1.32494738004321644526e-04, -3.96022827877536812320e-06)
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
       1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)


def _poly(z, coeffs):
    """coeffs[0] + coeffs[1] z + ... by Horner's rule."""
    p = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        p = p * z + c
    return p


def _erfc_tail_exponent(x):
    """R(1/x^2)/S(1/x^2) for x >= 1.25: erfc(x) = exp(-x^2 - 0.5625 + R/S) / x up to x = 28."""
    t = 1 / (x * x)
    return mx.where(x < 1 / 0.35, _poly(t, _RA) / _poly(t, _SA), _poly(t, _RB) / _poly(t, _SB))


def _exp_square(x, exp_):
    """e^(x^2) without the rounding error of x^2: w^2 + (x - w)(x + w) with w = x rounded to 1/64 (w^2 is exact)."""
    x = mx.minimum(x, 30.0)  # e^900 is inf in every dtype; keeps w finite for x = inf
    w = mx.round(x * 64) / 64
    return exp_(w * w) * exp_((x - w) * (x + w))


def _erf_parts(a):
    """(erf(a), erfc(a)), both accurate to about one ulp (in float64), the tails of erfc relatively so. Any float
    dtype: only float64 takes this module's exp."""
    exp_ = exp if a.dtype == mx.float64 else mx.exp
    x = mx.abs(a)
    # |x| < 0.84375: erf = x + x R(x^2)
    z = a * a
    y = _poly(z, _PP) / _poly(z, _QQ)
    erf_small = a + a * y
    erfc_small = mx.where(a < 0.25, 1 - erf_small, 0.5 - (a * y + (a - 0.5)))
    # 0.84375 <= |x| < 1.25: erf = c + P(s)/Q(s), s = |x| - 1
    s = x - 1
    pq = _poly(s, _PA) / _poly(s, _QA)
    erf_mid = mx.where(a < 0, -_ERX - pq, _ERX + pq)
    erfc_mid = mx.where(a < 0, 1 + _ERX + pq, (1 - _ERX) - pq)
    # |x| >= 1.25: erfc(|x|) = exp(-x^2 - 0.5625 + R(1/x^2)/S(1/x^2)) / |x|; x^2 is taken without rounding error
    # as w^2 + (w - x)(w + x) with w = x rounded to 1/64 (below 28, w^2 has at most 22 bits: exact in float32 too)
    rs = _erfc_tail_exponent(x)
    w = mx.round(x * 64) / 64
    tail = exp_(-w * w - 0.5625) * exp_((w - x) * (w + x) + rs) / x
    tail = mx.where(x < 28, tail, 0.0)
    erf_big = mx.where(x < 6, 1 - tail, 1.0)
    erf_big = mx.where(a < 0, -erf_big, erf_big)
    erfc_big = mx.where(a < 0, 2 - tail, tail)
    small, mid = x < 0.84375, x < 1.25
    nan = mx.isnan(a)
    erf_ = mx.where(nan, a, mx.where(small, erf_small, mx.where(mid, erf_mid, erf_big)))
    erfc_ = mx.where(nan, a, mx.where(small, erfc_small, mx.where(mid, erfc_mid, erfc_big)))
    return erf_, erfc_


def erf(a):
    return _erf_parts(a)[0]


def erfc(a):
    """MLX has no erfc, and 1 - erf(a) loses every digit in the upper tail: this form serves every dtype."""
    return _erf_parts(a)[1]


def erfcx(a):
    """The scaled complementary error function e^(x^2) erfc(x), every dtype: fdlibm's tail form without its
    exponential from 1.25 to 28 (e^(x^2) cancels exactly), the asymptotic series beyond, e^(x^2) erfc(x) below, and
    2 e^(x^2) - erfcx(-x) for x < 0 (inf below -26.6)."""
    exp_ = exp if a.dtype == mx.float64 else mx.exp
    x = mx.abs(a)
    near = exp_(x * x) * _erf_parts(mx.where(x < 1.25, x, 0.0))[1]
    mid = exp_(_erfc_tail_exponent(mx.where(x < 1.25, 1.25, x)) - 0.5625) / x
    # x >= 28: (1 - 1/(2x^2) + 3/(2x^2)^2 - 15/(2x^2)^3 ...) / (x sqrt(pi))
    z = 1 / (2 * x * x)
    series, term = 1.0, 1.0
    for k in range(1, 9):
        term = term * (-(2 * k - 1)) * z
        series = series + term
    far = series / (x * math.sqrt(math.pi))
    pos = mx.where(x < 1.25, near, mx.where(x < 28, mid, far))
    neg = 2 * _exp_square(mx.where(a < 0, x, 0.0), exp_) - pos
    return mx.where(a < 0, neg, pos)


_SQRT_PI_2 = math.sqrt(math.pi) / 2
# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), double precision: erfinv(x) = x p(w) with
# w = -log((1 - x)(1 + x)), p a polynomial in w - 3.125 (w < 6.25), sqrt(w) - 3.25 (w < 16) or sqrt(w) - 5
_GILES_1 = (1.6536545626831027356, 0.24015818242558961693, -0.0060336708714301490533, -0.00074070253416626697512,
            0.0001867342080340571352, -1.3882523362786468719e-05, -1.3654692000834678645e-06,
            4.2347877827932403518e-07, -2.9070369957882005086e-08, -4.1126339803469836976e-09,
            1.051212273321532285e-09, -5.4154120542946279317e-11, -1.2975133253453532498e-11,
            2.6335093153082322977e-12, -8.1519341976054721522e-14, -4.0545662729752068639e-14,
            6.6376381343583238325e-15, 2.0972767875968561637e-17, -1.333171662854620906e-16,
            1.115787767802518096e-17, 1.2858480715256400167e-18, -1.685059138182016589e-19,
            -3.6444120640178196996e-21)
_GILES_2 = (3.0838856104922207635, 1.0052589676941592334, 0.005370914553590063617, -0.0037512085075692412107,
            0.0024914420961078508066, -0.0016882755560235047313, 0.00095328937973738049703,
            -0.0003550375203628474796, 2.4031110387097893999e-05, 6.8284851459573175448e-05,
            -4.7318229009055733981e-05, 1.2475304481671778723e-05, 2.9234449089955446044e-06,
            -4.013867526981545969e-06, 1.5027403968909827627e-06, 1.8239629214389227755e-08,
            -2.7517406297064545428e-07, 9.0756561938885390979e-08, 2.2137376921775787049e-09)
_GILES_3 = (4.8499064014085844221, 1.0103004648645343977, -0.00013871931833623122026, -0.00021503011930044477347,
            7.5995277030017761139e-05, -1.9681778105531670567e-05, 4.5260625972231537039e-06,
            -9.9298272942317002539e-07, 2.2900482228026654717e-07, -6.7711997758452339498e-08,
            2.9147953450901080826e-08, -1.4960026627149240478e-08, 7.6157012080783393804e-09,
            -3.7894654401267369937e-09, 1.5076572693500548083e-09, -2.5556418169965252055e-10,
            -2.7109920616438573243e-11)


def erfinv(a):
    """Giles' double-precision approximation (a few ulp), then one Newton step on erf(y) = x that takes it to
    the last digit: the residual is erf(y) - x below x = 0.5 and (1 - x) - erfc(y) above, where 1 - x is exact
    and erfc keeps relative accuracy, so the far tail (1 - x ~ 1e-16) is exact too."""
    x = mx.abs(a)
    w = -mx.log((1 - x) * (1 + x))
    sw = mx.sqrt(w)
    p = mx.where(w < 6.25, _poly(w - 3.125, _GILES_1),
                 mx.where(w < 16, _poly(sw - 3.25, _GILES_2), _poly(sw - 5.0, _GILES_3)))
    y = p * x
    central = x < 0.5
    e, ec = _erf_parts(y)
    y = y - mx.where(central, e - x, (1 - x) - ec) * _SQRT_PI_2 * exp(y * y)
    y = mx.where(x == 1, math.inf, mx.where(x > 1, math.nan, y))
    return mx.where(a < 0, -y, y)
