"""Draws that need more than MLX's uniform and normal generators: the standard Gamma(alpha, 1) draw, differentiable
in alpha (Gamma, Beta, Dirichlet, Chi2, StudentT, FisherSnedecor and InverseGamma sample through it), and the
von Mises draw.

The draw is Marsaglia & Tsang's method ("A simple method for generating gamma variables", 2000): for alpha >= 1,
x = d v with d = alpha - 1/3, v = (1 + c z)^3, z standard normal, accepted when
log u < z^2 / 2 + d - d v + d log v. Rejection needs a loop over values, which a lazy array program cannot have,
so ``ROUNDS`` candidates are drawn per element at once and the first accepted one is kept. Each candidate is
accepted with probability at least 0.951 (the worst case, alpha = 1), so all ``ROUNDS`` = 16 fail with probability
below 1e-20 per element; such an element (never seen in practice) takes the distribution's mean rather than a
biased value. alpha < 1 uses the boost Gamma(alpha) = Gamma(alpha + 1) U^(1/alpha), in logs (tiny alphas underflow
to the smallest normal number, as PyTorch clamps them).

The gradient is the implicit reparameterization one (Figurnov et al., "Implicit reparameterization gradients",
2018): dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha) with F the Gamma CDF (the regularized lower incomplete gamma
P(alpha, x)) and f its density. dF/dalpha is computed from P's power series (x < alpha + 1) or from its continued
fraction for Q = 1 - P (x >= alpha + 1), each differentiated term by term in alpha; the Gamma function cancels
between F and f, so only digamma(alpha) is needed. Exact to ~1e-10 up to alpha = 1500; above, the Wilson-Hilferty
approximation (within about 1e-6, closer as alpha grows).
"""
from __future__ import annotations

import math

import mlx.core as mx

from .._random import next_key
from ..ops._core import defop
from ..ops._gamma import digamma
from .utils import finfo_tiny

ROUNDS = 16


def _draw(alpha: mx.array, key: mx.array) -> mx.array:
    """Standard Gamma(alpha) draws (raw MLX), alpha > 0, in alpha's dtype."""
    dtype = alpha.dtype
    small = alpha < 1
    a = mx.where(small, alpha + 1, alpha)
    d = a - 1.0 / 3.0
    c = mx.rsqrt(9.0 * d)
    k_normal, k_accept, k_boost = mx.random.split(key, 3)
    shape = (ROUNDS,) + tuple(alpha.shape)
    z = mx.random.normal(shape, dtype=mx.float32, key=k_normal).astype(dtype)
    u = mx.random.uniform(shape=shape, dtype=mx.float32, key=k_accept).astype(dtype)
    v = (1 + c * z) ** 3
    positive = v > 0
    safe_v = mx.where(positive, v, 1)
    accepted = positive & (mx.log(u) < 0.5 * z * z + d - d * safe_v + d * mx.log(safe_v))
    first = mx.argmax(accepted, axis=0)  # the first True (0 where none is: handled below)
    chosen = mx.take_along_axis(d * safe_v, first[None], axis=0)[0]
    x = mx.where(mx.any(accepted, axis=0), chosen, a)
    # the boost for alpha < 1, in logs: u^(1/alpha) underflows long before the product does
    u_boost = mx.random.uniform(shape=alpha.shape, dtype=mx.float32, key=k_boost).astype(dtype)
    u_boost = mx.maximum(u_boost, finfo_tiny(dtype))
    boosted = mx.maximum(mx.exp(mx.log(x) + mx.log(u_boost) / alpha), finfo_tiny(dtype))
    return mx.where(small, boosted, x)


def _forward(alpha, key):
    if alpha.dtype in (mx.float16, mx.bfloat16):  # drawn in float32: the acceptance test needs its range
        return _draw(alpha.astype(mx.float32), key).astype(alpha.dtype)
    return _draw(alpha, key)


SERIES_TERMS, SERIES_BLOCK = 320, 32  # ~8 sqrt(alpha) terms reach 1e-12 up to LARGE_ALPHA; summed 32 at a time
FRACTION_TERMS = 100  # the continued fraction converges to 1e-13 within 96 levels for alpha <= LARGE_ALPHA
LARGE_ALPHA = 1500.0


def _grad_parts(alpha: mx.array, x: mx.array) -> mx.array:
    """dx/dalpha at the draw x (raw MLX). With G = Gamma(alpha) cancelled:
    series (x < alpha + 1): P = x^a e^-x S / G, S = sum_n x^n / (a (a+1) ... (a+n)), so
        dx/da = -x (S (log x - psi) + dS/da);
    continued fraction (x >= alpha + 1): Q = x^a e^-x H / G, H = 1 / (b0 + a1 / (b1 + a2 / (b2 + ...))) with
    b_i = x + 2i + 1 - a, a_i = -i (i - a), evaluated from the bottom up (stable), so
        dx/da = x (H (log x - psi) + dH/da);
    above LARGE_ALPHA, Wilson-Hilferty: F ~ Phi(((x / a)^(1/3) - 1 + 1 / (9a)) sqrt(9a)) differentiated at fixed F
    (within about 1e-6 of the exact value, closer as alpha grows)."""
    log_term = mx.log(x) - digamma(alpha)
    in_series = x < alpha + 1
    # the series, SERIES_BLOCK terms per step: t_n = t_{n-1} x / (a + n) (a running product: no overflow, the
    # ratios are below 1 here) and dt_n/da = t_n D_n with D_n = -sum_{k<=n} 1 / (a + k)
    xs = mx.where(in_series, x, 0)  # the other branch's x would overflow the series' terms
    t_last = 1 / alpha
    d_sum = 1 / alpha
    s, ds = t_last, -t_last * d_sum
    for start in range(1, SERIES_TERMS, SERIES_BLOCK):
        k = mx.arange(start, start + SERIES_BLOCK, dtype=alpha.dtype).reshape((-1,) + (1,) * alpha.ndim)
        inv = 1 / (alpha + k)
        t = t_last * mx.cumprod(xs * inv, axis=0)
        s = s + t.sum(0)
        ds = ds - (t * (d_sum + mx.cumsum(inv, axis=0))).sum(0)
        t_last, d_sum = t[-1], d_sum + inv.sum(0)
    series = -x * (s * log_term + ds)
    # the continued fraction from its last level up: T_i = b_i + a_{i+1} / T_{i+1}, with dT_i/da alongside
    base = mx.where(in_series, alpha + 1, x) + 1 - alpha  # b_i = base + 2i
    level = base + 2 * FRACTION_TERMS
    dlevel = mx.full(alpha.shape, -1.0, dtype=alpha.dtype)
    for i in range(FRACTION_TERMS - 1, -1, -1):
        a_next = (i + 1) * (alpha - (i + 1))
        ratio = a_next / level
        level, dlevel = base + 2 * i + ratio, ((i + 1) - ratio * dlevel) / level - 1
    fraction = x * (log_term - dlevel / level) / level
    r = mx.power(x / alpha, 1 / 3)
    wilson_hilferty = -3 * x / r * (-r / (3 * alpha) - 1 / (9 * alpha * alpha) + (r - 1 + 1 / (9 * alpha)) / (2 * alpha))
    return mx.where(alpha > LARGE_ALPHA, wilson_hilferty, mx.where(in_series, series, fraction))


_standard_gamma_grad = defop("_standard_gamma_grad", _grad_parts)  # no derivative of its own, as in PyTorch


def standard_gamma_grad(alpha, x):
    """d x / d alpha of a standard Gamma(alpha) draw x, holding its CDF value fixed."""
    return _standard_gamma_grad(alpha, x)


_standard_gamma = defop("_standard_gamma", _forward, save="both",
                        vjp=(lambda g, ans, alpha, key: g * standard_gamma_grad(alpha, ans), None))


def standard_gamma(alpha, generator=None):
    """A Gamma(alpha, 1) draw of alpha's shape, differentiable in alpha (the implicit reparameterization gradient).
    ``generator``: a ``lucid.Generator`` (default: lucid's global generator)."""
    key = next_key() if generator is None else generator.next_key()
    return _standard_gamma(alpha, key)


VON_MISES_BLOCKS, VON_MISES_ROUNDS = 5, 8


def von_mises(loc: mx.array, concentration: mx.array, shape: tuple, key: mx.array) -> mx.array:
    """von Mises(loc, concentration) draws of ``shape`` in (-pi, pi] (raw MLX; no gradient), by Best & Fisher's
    wrapped-Cauchy envelope ("Efficient simulation of the von Mises distribution", 1979). A candidate is accepted
    with probability at least 0.65, so the 5 x 8 candidates per element all fail with probability below 1e-18;
    drawn in blocks of 8 (each block only fills the elements still open), which bounds the memory to 24 draws per
    element. An element that never accepts (never seen) takes the mode, loc."""
    kappa = mx.broadcast_to(concentration, shape)
    tau = 1 + mx.sqrt(1 + 4 * kappa * kappa)
    rho = (tau - mx.sqrt(2 * tau)) / (2 * kappa)
    r = mx.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho * rho) / (2 * rho))  # the series where rho cancels
    x = mx.zeros(shape, dtype=loc.dtype)
    done = mx.zeros(shape, dtype=mx.bool_)
    for block_key in mx.random.split(key, VON_MISES_BLOCKS):
        u = mx.random.uniform(shape=(3, VON_MISES_ROUNDS) + tuple(shape), key=block_key).astype(loc.dtype)
        u1, u2, u3 = u[0], mx.maximum(u[1], 1e-30), u[2]
        z = mx.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        accepted = ((c * (2 - c) - u2) > 0) | (mx.log(c / u2) + 1 - c >= 0)
        angle = mx.sign(u3 - 0.5) * mx.arccos(mx.clip(f, -1, 1))
        first = mx.argmax(accepted, axis=0)
        pick = mx.take_along_axis(angle, first[None], axis=0)[0]
        found = mx.any(accepted, axis=0)
        x = mx.where(done | ~found, x, pick)
        done = done | found
    return mx.remainder(x + math.pi + loc, 2 * math.pi) - math.pi
