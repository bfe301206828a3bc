"""The orthogonal polynomials of ``torch.special``: Chebyshev T, U, V, W (and their shifted forms on [0, 1]),
Hermite H and He, Laguerre L and Legendre P, each ``f(input, n)`` with PyTorch's values: 0 for n < 0, its values
at the ends x = +-1, n truncated toward zero when a float. Like PyTorch's, these have no derivative (the result never
requires grad).

Chebyshev polynomials are computed in closed form (cos n theta and its relatives, with x = cos theta, or cosh beyond
[-1, 1]), where PyTorch switches to the closed form only above degree 6 or 8 (the values agree to rounding).
Hermite, Laguerre and Legendre polynomials run their three-term recurrences, as PyTorch does; PyTorch gives NaN
for Hermite degrees above 128 (float32) or 512 (float64), which bounds their loop. A Laguerre or Legendre degree
given as a tensor is read once (its largest value) to know how many steps to take.
"""
from __future__ import annotations

__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"]

import inspect
import math

import mlx.core as mx

from ._core import defop
from ._bessel import _cos
from ._gamma import exp, float_operands, sin


def _degree(x, n, name: str):
    """x and n as float arrays of one dtype (broadcast), n truncated toward zero (NaN and inf, which PyTorch's cast
    to int64 turns into the most negative integer, become -1), n as a Python int when it was one (then the
    recurrences need not read it), and the result's dtype."""
    known = n if type(n) is int else None
    x, n = float_operands(x, n, name)
    dtype = x.dtype
    if dtype in (mx.float16, mx.bfloat16):  # computed in float32, rounded back (PyTorch's opmath)
        x, n = x.astype(mx.float32), n.astype(mx.float32)
    n = mx.where(mx.isfinite(n), mx.where(n < 0, mx.ceil(n), mx.floor(n)), -1.0)
    x, n = mx.broadcast_arrays(x, n)
    return x, n, known, dtype


# ---------------------------------------------------------------------------------------------------- Chebyshev
def _chebyshev(x, n, kind: str):
    """T, U, V or W by their closed forms; at x = +-1 and for n <= 1 PyTorch's exact values."""
    ax = mx.abs(x)
    inside = ax < 1
    # |x| < 1: x = cos(theta)
    theta = mx.arccos(mx.where(inside, x, 0.0))
    # |x| > 1: |x| = cosh(t), and the polynomial of -x is (-1)^n times that of x (V and W trade places)
    t = mx.arccosh(mx.where(inside | mx.isnan(x), 2.0, ax))
    odd = mx.remainder(n, 2) == 1
    sign = mx.where((x < 0) & odd, -1.0, 1.0)
    flip = x < 0  # V(-x) = (-1)^n W(x), W(-x) = (-1)^n V(x)
    h = n + 0.5
    # beyond [-1, 1], written as e^(n t) times a ratio of order 1, so that only a result beyond the dtype's range
    # overflows (sinh((n + 1) t) / sinh(t) would overflow first)
    grow = exp(n * t)
    if kind == "t":
        trig, hyper = _cos(n * theta), exp(n * t - math.log(2)) * (1 + exp(-2 * n * t))
    elif kind == "u":
        trig, hyper = sin((n + 1) * theta) / sin(theta), grow * mx.expm1(-2 * (n + 1) * t) / mx.expm1(-2 * t)
    else:
        v_hyper = grow * (1 + exp(-2 * h * t)) / (1 + exp(-t))
        w_hyper = grow * mx.expm1(-2 * h * t) / mx.expm1(-t)
        own, other = (v_hyper, w_hyper) if kind == "v" else (w_hyper, v_hyper)
        hyper = mx.where(flip, other, own)
        trig = _cos(h * theta) / _cos(theta / 2) if kind == "v" else sin(h * theta) / sin(theta / 2)
    out = mx.where(inside, trig, sign * hyper)
    # PyTorch's recurrence overflows to inf, then inf - inf: NaN from degree 3 on (inf at degree 2 for x = +-inf)
    out = mx.where(mx.isinf(out) & (n >= 3) | mx.isnan(x), math.nan, out)
    out = mx.where(mx.isinf(x) & (n == 2), math.inf, out)
    # x = +-1
    n1 = n + 1
    at_minus_one = {"t": mx.where(odd, -1.0, 1.0), "u": mx.where(odd, -n1, n1),
                    "v": mx.where(odd, -(2 * n + 1), 2 * n + 1), "w": mx.where(odd, -1.0, 1.0)}[kind]
    at_one = {"t": 1.0, "u": n1, "v": 1.0, "w": 2 * n + 1}[kind]
    out = mx.where(x == 1, at_one, mx.where(x == -1, at_minus_one, out))
    first = {"t": x, "u": 2 * x, "v": 2 * x - 1, "w": 2 * x + 1}[kind]
    low = mx.where(n == 0, 1.0, first)
    out = mx.where((n <= 1) & (ax != 1), low, out)
    return mx.where(n < 0, 0.0, out)


def _chebyshev_op(kind: str, shifted: bool):
    name = f"{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"

    def fwd(x, n):
        x, n, _, dtype = _degree(x, n, name)
        return _chebyshev(2 * x - 1 if shifted else x, n, kind).astype(dtype)
    return fwd


# ---------------------------------------------------------------------------------------------------- recurrences
def _recurrence(x, n, known, steps: int, first, step, start: int):
    """Run ``q_(k+1) = step(k, q_k, q_(k-1))`` from q_0 = 1, q_1 = ``first`` for k = start .. and pick each
    element's q_n: ``steps`` steps when the degree is a known Python int, else enough for the largest n given."""
    p, q = mx.ones_like(x), first
    if known is not None:
        for k in range(start, start + steps):
            p, q = q, step(k, q, p)
        return q
    out = mx.where(n == 0, 1.0, first)
    for i, k in enumerate(range(start, start + steps)):
        p, q = q, step(k, q, p)
        out = mx.where(n == i + 2, q, out)
    return out


def _max_degree(n, known) -> int:
    """The largest degree, for the number of recurrence steps: read from a tensor degree (one evaluation)."""
    if known is not None:
        return known
    return int(mx.max(mx.where(mx.isfinite(n), n, 0)).item()) if n.size else 0


def _hermite_h(x, n):
    x, n, known, dtype = _degree(x, n, "hermite_polynomial_h")
    limit = 512 if x.dtype == mx.float64 else 128
    steps = max(min(known, limit + 1) - 1, 0) if known is not None else limit - 1
    out = _recurrence(x, n, known, steps, 2 * x, lambda k, q, p: 2 * x * q - (2 * k) * p, 1)
    out = mx.where(n > limit, math.nan, out)
    out = mx.where(n == 1, 2 * x, mx.where(n == 0, 1.0, out))
    return mx.where(n < 0, 0.0, out).astype(dtype)


def _hermite_he(x, n):
    x, n, known, dtype = _degree(x, n, "hermite_polynomial_he")
    limit = 512 if x.dtype == mx.float64 else 128
    steps = max(min(known, limit + 1) - 1, 0) if known is not None else limit - 1
    out = _recurrence(x, n, known, steps, x, lambda k, q, p: x * q - k * p, 1)
    out = mx.where(n > limit, math.nan, out)
    out = mx.where(n == 1, x, mx.where(n == 0, 1.0, out))
    return mx.where(n < 0, 0.0, out).astype(dtype)


def _laguerre(x, n):
    x, n, known, dtype = _degree(x, n, "laguerre_polynomial_l")
    steps = max(_max_degree(n, known) - 1, 0)
    out = _recurrence(x, n, known, steps, 1 - x, lambda k, q, p: ((2 * k + 1 - x) * q - k * p) / (k + 1), 1)
    out = mx.where(n == 1, 1 - x, mx.where((n == 0) | (x == 0), 1.0, out))
    return mx.where(n < 0, 0.0, out).astype(dtype)


def _legendre(x, n):
    x, n, known, dtype = _degree(x, n, "legendre_polynomial_p")
    steps = max(_max_degree(n, known) - 1, 0)
    out = _recurrence(x, n, known, steps, x, lambda k, q, p: ((2 * k + 1) * x * q - k * p) / (k + 1), 1)
    out = mx.where(n == 1, x, mx.where(n == 0, 1.0, out))
    odd = mx.remainder(n, 2) == 1
    out = mx.where(x == 1, 1.0, mx.where(x == -1, mx.where(odd, -1.0, 1.0), out))
    return mx.where(n < 0, 0.0, out).astype(dtype)


def _signature(input, n, *, out=None): ...  # noqa: A002,E704  (PyTorch's parameter names)


_SIGNATURE = inspect.signature(_signature)


def _nondiff(name, fwd, what: str):
    return defop(name, fwd, differentiable=False, sig=_SIGNATURE,
                 doc=f"{what[0].upper()}{what[1:]} at ``input``, of degree ``n`` (an integer or a tensor of degrees; 0 "
                     "for n < 0). Not differentiable.")


chebyshev_polynomial_t = _nondiff("chebyshev_polynomial_t", _chebyshev_op("t", False),
                                  "the Chebyshev polynomial of the first kind T_n")
chebyshev_polynomial_u = _nondiff("chebyshev_polynomial_u", _chebyshev_op("u", False),
                                  "the Chebyshev polynomial of the second kind U_n")
chebyshev_polynomial_v = _nondiff("chebyshev_polynomial_v", _chebyshev_op("v", False),
                                  "the Chebyshev polynomial of the third kind V_n")
chebyshev_polynomial_w = _nondiff("chebyshev_polynomial_w", _chebyshev_op("w", False),
                                  "the Chebyshev polynomial of the fourth kind W_n")
shifted_chebyshev_polynomial_t = _nondiff("shifted_chebyshev_polynomial_t", _chebyshev_op("t", True),
                                          "the shifted Chebyshev polynomial of the first kind T*_n(x) = T_n(2x - 1)")
shifted_chebyshev_polynomial_u = _nondiff("shifted_chebyshev_polynomial_u", _chebyshev_op("u", True),
                                          "the shifted Chebyshev polynomial of the second kind U*_n(x) = U_n(2x - 1)")
shifted_chebyshev_polynomial_v = _nondiff("shifted_chebyshev_polynomial_v", _chebyshev_op("v", True),
                                          "the shifted Chebyshev polynomial of the third kind V*_n(x) = V_n(2x - 1)")
shifted_chebyshev_polynomial_w = _nondiff("shifted_chebyshev_polynomial_w", _chebyshev_op("w", True),
                                          "the shifted Chebyshev polynomial of the fourth kind W*_n(x) = W_n(2x - 1)")
hermite_polynomial_h = _nondiff("hermite_polynomial_h", _hermite_h, "the physicists' Hermite polynomial H_n (NaN "
                                "above degree 128 in float32, 512 in float64)")
hermite_polynomial_he = _nondiff("hermite_polynomial_he", _hermite_he, "the probabilists' Hermite polynomial He_n "
                                 "(NaN above degree 128 in float32, 512 in float64)")
laguerre_polynomial_l = _nondiff("laguerre_polynomial_l", _laguerre, "the Laguerre polynomial L_n")
legendre_polynomial_p = _nondiff("legendre_polynomial_p", _legendre, "the Legendre polynomial P_n")
