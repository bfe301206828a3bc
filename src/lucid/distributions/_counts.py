"""Exact samplers for the counting distributions: Poisson and Binomial draws on MLX arrays, vectorised over every
element with a bounded number of steps (no Python loop per element). Two reads of values keep the work down: the
parameters decide which of the two samplers below run at all, and the rejection sampler stops after the block of
candidates in which every element has accepted one (inside a trace, where nothing can be read, everything runs).

- Small means (rate < 10, or n min(p, 1 - p) < 10): inversion. The probabilities of 0, 1, ..., K - 1 follow one
  from the other (p_{k+1} = p_k * ratio), and the draw is the number of partial sums F(k) below u * F(K - 1): the
  scaling by the computed total keeps a draw inside the support however the sums round. K = 64 leaves out a tail
  below 1e-27 at these means.
- Large means: Hörmann's transformed rejection with squeeze (PTRS for Poisson, BTRS for Binomial; W. Hörmann,
  "The transformed rejection method for generating Poisson random variables", 1993, and "... binomial random
  variables", 1993), the algorithms of NumPy and PyTorch. Each element draws ``_ROUNDS`` candidates and keeps
  the first accepted one. A candidate is accepted with probability above 0.7 wherever these run (measured: 0.71
  for Binomial at n p = 10, rising with the mean), so the chance that all ``_ROUNDS`` candidates of an element
  are rejected (it then keeps one of them) is below 1e-26.

Uniforms are drawn with 48 random bits for float64 (MLX draws float32, whose 24 bits would stop the inversion
short of tail probabilities below 6e-8) and 24 for the other dtypes.
"""
from __future__ import annotations

import math

import mlx.core as mx

from .._creation import _key
from .._pending import _tracing
from ..ops._f64 import by_dtype, exp as _exp64

_exp = by_dtype(mx.exp, _exp64)
_INVERSION_TERMS = 64
_SMALL_MEAN = 10.0
_ROUNDS, _BLOCK = 50, 10
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
# log k! - (0.5 log 2 pi + (k + 0.5) log(k + 1) - (k + 1)) for k = 0..9 (past 9 its series is accurate to 1e-10)
_STIRLING_TAIL = [math.lgamma(k + 1) - (_HALF_LOG_2PI + (k + 0.5) * math.log(k + 1) - (k + 1)) for k in range(10)]


def _uniform(shape, dtype, key) -> mx.array:
    """Uniform on the open interval (0, 1), in ``dtype`` (float32 or float64)."""
    if dtype == mx.float64:
        hi, lo = mx.random.randint(0, 2 ** 24, shape=(2, *shape), key=key).astype(mx.float64)
        return (hi * 2.0 ** 24 + lo + 0.5) * 2.0 ** -48
    bits = mx.random.randint(0, 2 ** 24, shape=shape, key=key).astype(mx.float32)
    return (bits + 0.5) * 2.0 ** -24


def _stirling_tail(k: mx.array) -> mx.array:
    """log k! minus its Stirling approximation (k >= 0): the table below 10, the asymptotic series above."""
    k1 = k + 1
    k1sq = k1 * k1
    series = (1 / 12 - (1 / 360 - 1 / 1260 / k1sq) / k1sq) / k1
    index = mx.where((k >= 0) & (k < 10), k, 0).astype(mx.int32)  # NaN or inf (bad parameters) reads entry 0
    table = mx.array(_STIRLING_TAIL, dtype=k.dtype)[index]
    return mx.where(k < 10, table, series)


def _poisson_log_pmf(k, lam, log_lam) -> mx.array:
    """k log lam - lam - log k!, with log k! in Stirling's form and the large terms cancelled by hand (float32
    would lose them at rate 1e6)."""
    d = k + 1 - lam
    return d - (k + 0.5) * mx.log1p(d / lam) - 0.5 * log_lam - _HALF_LOG_2PI - _stirling_tail(k)


def _binomial_log_ratio(k, m, n, log_odds) -> mx.array:
    """log(f(k) / f(m)) of the Binomial(n, p) mass f, ``log_odds`` = log(p / (1 - p)): the log-factorials in
    Stirling's form, with the terms that grow with n cancelled by hand."""
    d = k - m
    return (d * (log_odds - mx.log((m + 1) / (n - m + 1))) - (k + 0.5) * mx.log1p(d / (m + 1))
            - (n - k + 0.5) * mx.log1p(-d / (n - m + 1))
            + _stirling_tail(m) + _stirling_tail(n - m) - _stirling_tail(k) - _stirling_tail(n - k))


def _invert(u, first, ratio) -> mx.array:
    """The number of partial sums of p_0 = ``first``, p_{k+1} = p_k * ratio(k) below u times their total."""
    def partial_sums():
        p, total = first, first
        yield total
        for k in range(_INVERSION_TERMS - 1):
            p = p * ratio(k)
            total = total + p
            yield total

    sums = list(partial_sums())
    target = u * sums[-1]
    count = mx.zeros_like(u)
    for f in sums:
        count = count + (f < target)
    return count


def _rounds(key, shape, dtype, propose):
    """Run a rejection sampler for up to ``_ROUNDS`` candidates per element: ``propose(u, v)`` gives candidates
    and whether each is accepted; the first accepted one is kept. The candidates come ``_BLOCK`` at a time along a
    leading axis (few, larger operations); once every element has accepted one, the remaining blocks are skipped
    (one evaluation per block; inside a trace, where nothing can be read, every block runs). The keys are split
    beforehand, so the draws do not depend on how many blocks ran."""
    value = None
    done = mx.zeros(shape, dtype=mx.bool_)
    for round_key in mx.random.split(key, _ROUNDS // _BLOCK):
        u, v = _uniform((2, _BLOCK, *shape), dtype, round_key)
        candidates, accept = propose(u - 0.5, v)
        first = mx.argmax(accept, axis=0, keepdims=True)  # the first accepted (0 when none is)
        candidate = mx.take_along_axis(candidates, first, axis=0)[0]
        value = candidate if value is None else mx.where(done, value, candidate)
        done = done | mx.any(accept, axis=0)
        if not _tracing() and bool(mx.all(done)):
            break
    return value


def _regimes(small: mx.array) -> tuple:
    """Whether some element needs the inversion sampler and whether some needs the rejection one: read from the
    parameters, so that a batch in one regime runs one sampler (inside a trace both run)."""
    if _tracing():
        return True, True
    any_large = bool(mx.any(~small))
    return bool(mx.any(small)) or not any_large, any_large  # (an empty batch runs the inversion, on nothing)


def _select(small, by_inversion, by_rejection):
    if by_rejection is None:
        return by_inversion
    return by_rejection if by_inversion is None else mx.where(small, by_inversion, by_rejection)


def poisson(rate: mx.array, generator=None) -> mx.array:
    """Poisson draws with the given rates (float array, any shape; rate 0 gives 0)."""
    dtype = mx.float64 if rate.dtype == mx.float64 else mx.float32
    lam = rate.astype(dtype)
    key_small, key_large = mx.random.split(_key(generator))
    small = lam < _SMALL_MEAN
    any_small, any_large = _regimes(small)

    by_inversion = by_rejection = None
    if any_small:
        lam_s = mx.where(small, lam, 1.0)
        u = _uniform(lam.shape, dtype, key_small)
        by_inversion = _invert(u, _exp(-lam_s), lambda k: lam_s / (k + 1))
    if any_large:
        by_rejection = _ptrs(lam, small, dtype, key_large)
    return _select(small, by_inversion, by_rejection).astype(rate.dtype)


def _ptrs(lam, small, dtype, key):
    """Hörmann's PTRS on the elements of rate >= 10 (the others get a stand-in rate of 10)."""
    lam_l = mx.where(small, _SMALL_MEAN, lam)
    slam, loglam = mx.sqrt(lam_l), mx.log(lam_l)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def propose(u, v):
        us = 0.5 - mx.abs(u)
        k = mx.floor((2 * a / us + b) * u + lam_l + 0.43)
        squeeze = (us >= 0.07) & (v <= v_r)
        k_safe = mx.maximum(k, 0)
        log_ratio = mx.log(v) + mx.log(inv_alpha) - mx.log(a / (us * us) + b)
        full = (k >= 0) & ~((us < 0.013) & (v > us)) & (log_ratio <= _poisson_log_pmf(k_safe, lam_l, loglam))
        return k_safe, squeeze | full

    return _rounds(key, lam.shape, dtype, propose)


def binomial(count: mx.array, prob: mx.array, generator=None) -> mx.array:
    """Binomial draws: successes in ``count`` trials of probability ``prob`` (float arrays of one shape)."""
    dtype = mx.float64 if prob.dtype == mx.float64 else mx.float32
    n, p = count.astype(dtype), prob.astype(dtype)
    flip = p > 0.5  # draw the failures of the likelier outcome: the samplers need p <= 1/2
    q = mx.where(flip, 1 - p, p)
    key_small, key_large = mx.random.split(_key(generator))
    small = n * q < _SMALL_MEAN
    any_small, any_large = _regimes(small)

    by_inversion = by_rejection = None
    if any_small:
        q_s = mx.where(small, q, 0.0)
        odds = q_s / (1 - q_s)
        u = _uniform(n.shape, dtype, key_small)
        by_inversion = _invert(u, _exp(n * mx.log1p(-q_s)), lambda k: mx.maximum(n - k, 0) / (k + 1) * odds)
    if any_large:
        by_rejection = _btrs(n, q, small, dtype, key_large)
    draws = _select(small, by_inversion, by_rejection)
    return mx.where(flip, n - draws, draws).astype(prob.dtype)


def _btrs(n, q, small, dtype, key):
    """Hörmann's BTRS on the elements with n q >= 10 (the others get harmless stand-ins: n = 40, q = 1/2)."""
    n_l, q_l = mx.where(small, 40.0, n), mx.where(small, 0.5, q)
    spq = mx.sqrt(n_l * q_l * (1 - q_l))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * q_l
    c = n_l * q_l + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    log_odds = mx.log(q_l / (1 - q_l))
    m = mx.floor((n_l + 1) * q_l)

    def propose(u, v):
        us = 0.5 - mx.abs(u)
        k = mx.floor((2 * a / us + b) * u + c)
        inside = (k >= 0) & (k <= n_l)
        ks = mx.clip(k, 0, n_l)
        squeeze = (us >= 0.07) & (v <= v_r)
        log_v = mx.log(v * alpha / (a / (us * us) + b))
        return ks, inside & (squeeze | (log_v <= _binomial_log_ratio(ks, m, n_l, log_odds)))

    return _rounds(key, n.shape, dtype, propose)
