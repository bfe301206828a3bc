"""lucid.special: every torch.special function against PyTorch over its domain and at its edges (NaN, +-inf, +-0,
the poles of the gamma family, large arguments), in float64 and float32; against mpmath (which PyTorch installs) where
PyTorch's own float64 kernels are less accurate than lucid's (the Bessel and Airy functions, trigamma, the
incomplete gamma functions); gradcheck and gradgradcheck of every differentiable one; PyTorch's errors, dtypes and
names. Each function is one vectorized call per dtype."""
from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.special as S
from helpers import check_grads

torch = pytest.importorskip("torch")
TS = torch.special
INF, NAN = math.inf, math.nan
RNG = np.random.default_rng(0)
EDGES = [-INF, -30.0, -3.0, -2.5, -1.0, -0.0, 0.0, 1e-300, 1e-8, 0.5, 1.0, 2.0, 20.0, 25.25, 1e5, INF, NAN]


def U(lo, hi, n=300):
    return RNG.uniform(lo, hi, n)


def LOG(lo, hi, n=100):
    return 10.0 ** RNG.uniform(lo, hi, n)


def assert_close(ours, ref, rtol, atol, what=""):
    """Equal NaN and inf positions (with the inf's sign), finite values within rtol/atol."""
    ours, ref = np.asarray(ours, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    assert ours.shape == ref.shape, what
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref), err_msg=f"{what}: NaN positions")
    np.testing.assert_array_equal(np.isposinf(ours), np.isposinf(ref), err_msg=f"{what}: +inf positions")
    np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(ref), err_msg=f"{what}: -inf positions")
    fin = np.isfinite(ref)
    np.testing.assert_allclose(ours[fin], ref[fin], rtol=rtol, atol=atol, err_msg=what)


# ---------------------------------------------------------------------------------------------------- unary values
# name: (inputs, (rtol, atol) vs torch in float64, (rtol, atol) in float32 vs float64 truth)
UNARY = {
    "gammaln": (np.r_[U(-20, 30), U(0, 3), LOG(0, 300), -LOG(0, 15)], (1e-13, 1e-14), (2e-6, 1e-5)),
    "digamma": (np.r_[U(-20, 30), U(0, 3), LOG(-10, 300), -LOG(0, 10)], (1e-12, 1e-13), (2e-6, 1e-5)),
    "psi": (U(-5, 5, 50), (1e-12, 1e-13), (2e-6, 1e-5)),
    "erfcx": (np.r_[U(-26, 40), LOG(-5, 10), [-26.5, -26.7, 1.25, 28.0]], (1e-13, 0), (2e-5, 0)),
    "ndtr": (np.r_[U(-40, 10), [-38.5, -1.0]], (1e-14, 1e-300), (1e-5, 1e-38)),
    "log_ndtr": (np.r_[U(-1e3, 10), U(-3, 3), [-1.0]], (1e-13, 1e-15), (2e-6, 2e-6)),
    "ndtri": (np.r_[U(0, 1), 10.0 ** -U(1, 300, 100), 1 - 10.0 ** -U(1, 15, 50), [-0.1, 1.1]], (1e-12, 1e-14),
              (5e-6, 5e-6)),
    "entr": (np.r_[U(-1, 5), [1.0]], (1e-14, 1e-15), (2e-6, 1e-7)),
    "logit": (U(-0.5, 1.5), (1e-13, 1e-15), (2e-6, 1e-6)),
    "expit": (U(-30, 30), (1e-14, 1e-300), (2e-6, 1e-30)),
    "i0": (np.r_[U(-100, 100), LOG(-5, 3)], (1e-13, 0), (1e-5, 0)),
    "i0e": (np.r_[U(-100, 100), LOG(-5, 3)], (1e-13, 0), (1e-5, 0)),
    "i1": (np.r_[U(-100, 100), LOG(-5, 3)], (1e-13, 0), (1e-5, 0)),
    "i1e": (np.r_[U(-100, 100), LOG(-5, 3)], (1e-13, 0), (1e-5, 0)),
    "modified_bessel_i0": (U(-50, 50, 100), (1e-13, 0), (1e-5, 0)),
    "modified_bessel_i1": (U(-50, 50, 100), (1e-13, 0), (1e-5, 0)),
    "modified_bessel_k0": (np.r_[U(-1, 50), LOG(-5, 3)], (1e-13, 1e-300), (1e-5, 1e-38)),
    "modified_bessel_k1": (np.r_[U(-1, 50), LOG(-5, 3)], (1e-13, 1e-300), (1e-5, 1e-38)),
    "scaled_modified_bessel_k0": (np.r_[U(-1, 50), LOG(-5, 5)], (1e-13, 0), (1e-5, 0)),
    "scaled_modified_bessel_k1": (np.r_[U(-1, 50), LOG(-5, 5)], (1e-13, 0), (1e-5, 0)),
    # PyTorch's float64 J/Y/Ai kernels are accurate to ~1e-8 only (mpmath checks lucid's below)
    "bessel_j0": (np.r_[U(-60, 60), LOG(-5, 4)], (1e-6, 1e-6), (1e-5, 3e-6)),
    "bessel_j1": (np.r_[U(-60, 60), LOG(-5, 4)], (1e-6, 1e-6), (1e-5, 3e-6)),
    "bessel_y0": (np.r_[U(-1, 60), LOG(-5, 4)], (1e-6, 1e-6), (1e-5, 3e-6)),
    "bessel_y1": (np.r_[U(-1, 60), LOG(-5, 4)], (1e-6, 1e-6), (1e-5, 3e-6)),
    "spherical_bessel_j0": (np.r_[U(-50, 50), LOG(-5, 5)], (1e-14, 1e-16), (1e-5, 1e-7)),
    "airy_ai": (np.r_[U(-30, 10), U(-3, 3)], (1e-4, 5e-6), (1e-4, 1e-5)),
    "erf": (U(-6, 6, 100), (1e-14, 1e-300), (2e-6, 1e-7)),
    "erfc": (U(-6, 26, 100), (1e-14, 1e-300), (1e-5, 1e-38)),
    "erfinv": (U(-1, 1, 100), (1e-13, 1e-300), (2e-6, 1e-7)),
    "exp2": (U(-100, 100, 100), (1e-14, 0), (2e-6, 0)),
    "expm1": (U(-10, 10, 100), (1e-14, 0), (2e-6, 0)),
    "log1p": (U(-1, 10, 100), (1e-14, 0), (2e-6, 0)),
    "sinc": (U(-10, 10, 100), (1e-13, 1e-15), (2e-6, 1e-6)),
    "round": (U(-10, 10, 100), (0, 0), (0, 0)),
}


def _reference(name, t):
    """PyTorch's function, but ndtr from its erfc: torch.special.ndtr loses the lower tail (0 below -8.3)."""
    if name == "ndtr":
        return 0.5 * TS.erfc(-t * math.sqrt(0.5))
    return getattr(TS, name)(t)


def _edges_for(name):
    if name in ("round", "exp2", "expm1", "log1p"):  # lucid's existing elementwise ops, tested in their own files
        return []
    return EDGES


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_match_torch_float64(name):
    xs, (rtol, atol), _ = UNARY[name]
    xs = np.r_[xs, _edges_for(name)]
    ours = getattr(S, name)(lucid.tensor(xs, dtype=lucid.float64))
    assert ours.dtype == lucid.float64
    assert_close(ours.numpy(), _reference(name, torch.tensor(xs)).numpy(), rtol, atol, name)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_float32(name):
    xs, _, (rtol, atol) = UNARY[name]
    with np.errstate(over="ignore"):  # (values beyond float32's range become inf, as in PyTorch)
        x32 = np.r_[xs, _edges_for(name)].astype(np.float32)
    ours = getattr(S, name)(lucid.tensor(x32))
    assert ours.dtype == lucid.float32
    truth = _reference(name, torch.tensor(x32.astype(np.float64))).numpy()
    with np.errstate(over="ignore"):
        truth = truth.astype(np.float32)
    assert_close(ours.numpy(), truth, rtol, atol, name)


MPMATH = {
    "bessel_j0": lambda m, x: m.besselj(0, x), "bessel_j1": lambda m, x: m.besselj(1, x),
    "bessel_y0": lambda m, x: m.bessely(0, x), "bessel_y1": lambda m, x: m.bessely(1, x),
    "airy_ai": lambda m, x: m.airyai(x), "modified_bessel_k0": lambda m, x: m.besselk(0, x),
    "modified_bessel_k1": lambda m, x: m.besselk(1, x), "i0": lambda m, x: m.besseli(0, x),
    "i1": lambda m, x: m.besseli(1, x),
}


@pytest.mark.parametrize("name", sorted(MPMATH))
def test_bessel_and_airy_are_exact_in_float64(name):
    mpmath = pytest.importorskip("mpmath")
    lo = 0.01 if name[-2] in "yk" else -40
    xs = np.r_[np.linspace(lo, 40, 60), [1.999, 2.0, 2.25, 19.9, 20.0, 25.25, 25.3, -12.25, -12.3]]
    xs = xs[xs > 0] if name[-2] in "yk" else xs
    ours = getattr(S, name)(lucid.tensor(xs, dtype=lucid.float64)).numpy()
    ref = np.array([float(MPMATH[name](mpmath, mpmath.mpf(x))) for x in xs])
    # oscillating functions: relative to the envelope near their zeros (the phase of a rounded x)
    scale = np.maximum(np.abs(ref), 1e-3 * np.maximum(1, np.abs(xs)) ** -0.5)
    np.testing.assert_array_less(np.abs(ours - ref) / scale, 1e-12 * np.maximum(1, np.abs(xs)) ** 1.5)


# ---------------------------------------------------------------------------------------------------- gamma family
@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_polygamma_matches_torch(n):
    xs = np.r_[U(-10, 20, 200), [-INF, -2.5, -0.0, 0.0, 0.5, 1.0, 2.0, INF, NAN]]
    if n != 1:
        xs = np.r_[xs, [-3.0, -1.0]]
    # PyTorch's trigamma is accurate to ~1e-9 (lucid's is checked against mpmath below); below 0 the sum of
    # terms of both signs cancels to the value (relative to the terms, not to the value)
    rtol = 1e-8 if n == 1 else 1e-10
    for dt, tdt in [(lucid.float64, torch.float64), (lucid.float32, torch.float32)]:
        if dt == lucid.float32 and n >= 2:  # float32 sums below 0 cancel to ~1e-2 (PyTorch sums in float64)
            xs = xs[~(xs < 0)]
        ours = S.polygamma(n, lucid.tensor(xs, dtype=dt)).numpy()
        ref = TS.polygamma(n, torch.tensor(xs, dtype=torch.float64)).numpy().astype(ours.dtype)
        with np.errstate(over="ignore"):
            assert_close(ours, ref, rtol if dt == lucid.float64 else 2e-4, 1e-12 if dt == lucid.float64 else 1e-4,
                         f"polygamma {n} {dt}")


def test_trigamma_is_exact_and_infinite_at_the_poles():
    """PyTorch's trigamma gives 7e31 at -3 (a rounded sin(pi x)) and is off by ~1e-9: lucid's is the true value."""
    mpmath = pytest.importorskip("mpmath")
    xs = np.r_[U(-10, 20, 40), [0.5, 1.0, 2.0]]
    ours = S.polygamma(1, lucid.tensor(xs, dtype=lucid.float64)).numpy()
    np.testing.assert_allclose(ours, [float(mpmath.psi(1, x)) for x in xs], rtol=1e-12)
    assert np.isposinf(S.polygamma(1, lucid.tensor([-3.0, -1.0, 0.0], dtype=lucid.float64)).numpy()).all()


@pytest.mark.parametrize("p", [1, 2, 5])
def test_multigammaln_matches_torch(p):
    xs = np.r_[U((p - 1) / 2 + 0.01, 30, 200), [INF, NAN]]
    ours = S.multigammaln(lucid.tensor(xs, dtype=lucid.float64), p)
    assert_close(ours.numpy(), TS.multigammaln(torch.tensor(xs), p).numpy(), 1e-13, 1e-13)
    assert lucid.mvlgamma is S.multigammaln


GRID = np.array([-INF, -2.0, -1.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.5, INF, NAN])


@pytest.mark.parametrize("name", ["zeta", "gammainc", "gammaincc", "xlog1py", "xlogy"])
def test_binary_edges_match_torch(name):
    a, b = np.meshgrid(GRID, GRID, indexing="ij")
    for dt, tdt in [(lucid.float64, torch.float64), (lucid.float32, torch.float32)]:
        ours = getattr(S, name)(lucid.tensor(a, dtype=dt), lucid.tensor(b, dtype=dt)).numpy()
        ref = getattr(TS, name)(torch.tensor(a, dtype=tdt), torch.tensor(b, dtype=tdt)).numpy()
        assert_close(ours, ref, 1e-12 if dt == lucid.float64 else 1e-5, 0, f"{name} {dt}")


def test_zeta_matches_torch_and_mpmath():
    s = np.r_[U(1.01, 20, 300), np.round(U(2, 12, 200))]
    q = np.r_[U(0.01, 30, 300), U(-20, 0, 200)]  # q < 0 only with an integer s
    ours = S.zeta(lucid.tensor(s, dtype=lucid.float64), lucid.tensor(q, dtype=lucid.float64)).numpy()
    assert_close(ours, TS.zeta(torch.tensor(s), torch.tensor(q)).numpy(), 1e-12, 0)
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(50):  # (mpmath's Hurwitz zeta needs the extra digits)
        ref = [float(mpmath.zeta(mpmath.mpf(a), mpmath.mpf(b))) for a, b in zip(s[::10], q[::10])]
    np.testing.assert_allclose(ours[::10], ref, rtol=1e-13)
    s32, q32 = s[:300].astype(np.float32), q[:300].astype(np.float32)  # q > 0 (below, float32 sums cancel)
    ours32 = S.zeta(lucid.tensor(s32), lucid.tensor(q32)).numpy()
    ref32 = TS.zeta(torch.tensor(s32).double(), torch.tensor(q32).double())
    assert_close(ours32, ref32.numpy().astype(np.float32), 1e-4, 0)


def test_incomplete_gamma_matches_torch_and_mpmath():
    a = np.r_[LOG(-3, 3, 400), [0.5, 21.96, 500.0, 1000.0]]
    x = np.r_[a[:400] * U(0, 3, 400), [0.6, 22.9, 510.0, 1001.0]]
    ta, tx = lucid.tensor(a, dtype=lucid.float64), lucid.tensor(x, dtype=lucid.float64)
    p, q = S.gammainc(ta, tx).numpy(), S.gammaincc(ta, tx).numpy()
    # PyTorch's uniform asymptotic expansion (used for a > 20 near x = a) is accurate to ~1e-10
    np.testing.assert_allclose(p, TS.gammainc(torch.tensor(a), torch.tensor(x)).numpy(), atol=2e-9)
    np.testing.assert_allclose(q, TS.gammaincc(torch.tensor(a), torch.tensor(x)).numpy(), atol=2e-9)
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(30):
        ref = np.array([float(mpmath.gammainc(mpmath.mpf(u), 0, mpmath.mpf(v), regularized=True))
                        for u, v in zip(a[-24:], x[-24:])])
    np.testing.assert_allclose(p[-24:], ref, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(q[-24:], 1 - ref, rtol=1e-11, atol=1e-15)
    # float32: x^a e^-x / Gamma(a) is formed in log space, where a = 1000 leaves 1e-4 (as any float32 form)
    a32, x32 = a[:400].astype(np.float32), x[:400].astype(np.float32)
    p32 = S.gammainc(lucid.tensor(a32), lucid.tensor(x32)).numpy()
    np.testing.assert_allclose(p32, TS.gammainc(torch.tensor(a32).double(), torch.tensor(x32).double()).numpy(),
                               atol=2e-5)


def test_logit_eps_clamps_as_torch():
    xs = np.r_[U(-0.5, 1.5, 50), [0.0, 1.0, NAN]]
    for eps in (None, 0.1, 0.0, -1.0):
        ours = S.logit(lucid.tensor(xs, dtype=lucid.float64), eps=eps).numpy()
        assert_close(ours, TS.logit(torch.tensor(xs), eps=eps).numpy(), 1e-14, 1e-15, f"eps={eps}")


# ---------------------------------------------------------------------------------------------------- polynomials
POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
         "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
         "legendre_polynomial_p"]
PX = np.array([-INF, -3.0, -1.5, -1.0, -0.99, -0.5, -0.0, 0.0, 0.3, 0.5, 0.9, 1.0, 1.2, 2.0, 7.5, INF, NAN])
PN = np.array([-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 20.0, 50.0, 140.0, 600.0, NAN, INF,
               -0.5, 2.7])


@pytest.mark.parametrize("name", POLYS)
def test_polynomials_match_torch(name):
    x, n = np.meshgrid(PX, PN, indexing="ij")
    with np.errstate(invalid="ignore"):
        keep = ~(np.isnan(x) & (n % 1 != 0))  # PyTorch returns an uninitialized value there (its loop never runs)
    for dt, tdt, rtol, atol in [(lucid.float64, torch.float64, 1e-9, 1e-13),
                                (lucid.float32, torch.float32, 1e-4, 2e-6)]:
        ours = getattr(S, name)(lucid.tensor(x, dtype=dt), lucid.tensor(n, dtype=dt))
        assert ours.dtype == dt and not ours.requires_grad
        ref = getattr(TS, name)(torch.tensor(x, dtype=tdt), torch.tensor(n, dtype=tdt)).numpy()
        assert_close(ours.numpy()[keep], ref[keep], rtol, atol, f"{name} {dt}")
    for k in (0, 1, 4, 9):  # a Python int degree
        ours = getattr(S, name)(lucid.tensor(PX[1:-2], dtype=lucid.float64), k).numpy()
        assert_close(ours, getattr(TS, name)(torch.tensor(PX[1:-2]), k).numpy(), 1e-9, 1e-13, f"{name} n={k}")


# ---------------------------------------------------------------------------------------------------- gradients
def _leaf(values):
    return lucid.tensor(values, dtype=lucid.float64, requires_grad=True)


GRADS = {
    "gammaln": ([-2.5, 0.3, 1.7, 12.0],), "digamma": ([-2.5, 0.3, 1.7, 12.0],),
    "erfcx": ([-2.0, 0.3, 5.0, 30.0],), "ndtr": ([-3.0, 0.2, 2.0],), "log_ndtr": ([-30.0, -2.0, 0.5, 4.0],),
    "ndtri": ([0.02],), "entr": ([0.3, 2.0],), "logit": ([0.2, 0.7],),
    "i0": ([-25.0, -1.3, 0.4, 3.0, 30.0],), "i0e": ([-25.0, -1.3, 0.4, 3.0, 30.0],),
    "i1": ([-25.0, -1.3, 0.4, 3.0, 30.0],), "i1e": ([-25.0, -1.3, 0.4, 3.0, 30.0],),
    "expit": ([-3.0, 0.5],), "sinc": ([0.3, -1.7],), "erfinv": ([-0.9, 0.3],),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_unary_gradients(name):
    check_grads(getattr(S, name), _leaf(*GRADS[name]))


A = lucid.tensor([4.0], dtype=lucid.float64)


@pytest.mark.parametrize("fn, values", [
    (lambda x: S.polygamma(1, x), [2.1, 3.3]), (lambda x: S.polygamma(2, x), [2.1, 3.3]),
    (lambda x: S.multigammaln(x, 3), [2.1, 3.3]), (lambda x: S.logit(x, eps=0.1), [0.3, 0.6]),
    (lambda x: S.zeta(lucid.tensor([2.0, 3.5], dtype=lucid.float64), x), [2.1, 3.3]),
    (lambda x: S.gammainc(A, x), [2.1]), (lambda x: S.gammaincc(A, x), [5.5]),
], ids=["trigamma", "polygamma2", "multigammaln", "logit_eps", "zeta_q", "gammainc_x", "gammaincc_x"])
def test_gradients_in_the_differentiable_argument(fn, values):
    check_grads(fn, _leaf(values))


def test_xlog1py_gradients():
    check_grads(S.xlog1py, _leaf([[0.5, -1.2, 2.0]]), _leaf([[0.3], [1.5]]))


@pytest.mark.parametrize("name, values", [
    ("entr", [0.0, -1.0, 1.0]), ("i1", [0.0, 1e-300]), ("i1e", [0.0]), ("i0e", [0.0, 1e-300]),
    ("ndtri", [0.0, 1.0]), ("log_ndtr", [-40.0, 40.0]), ("erfcx", [-30.0, 3.0]),
])
def test_gradients_at_the_edges_match_torch(name, values):
    x = _leaf(values)
    (g,) = lucid.autograd.grad(getattr(S, name)(x).sum(), [x])
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(getattr(TS, name)(t).sum(), t)
    assert_close(g.numpy(), tg.numpy(), 1e-12, 0, name)


def test_logit_gradient_outside_the_clamp_and_outside_zero_one():
    xs = [-0.5, 0.0, 0.05, 0.5, 0.95, 1.0, 1.5, NAN]
    for eps in (None, 0.1, 0.0):
        x = _leaf(xs)
        (g,) = lucid.autograd.grad(S.logit(x, eps).sum(), [x])
        t = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
        (tg,) = torch.autograd.grad(TS.logit(t, eps).sum(), t)
        assert_close(g.numpy(), tg.numpy(), 1e-13, 0, f"eps={eps}")


def test_xlog1py_gradient_where_x_is_zero_matches_torch():
    x, y = _leaf([0.0, 0.0, 2.0]), _leaf([-1.0, -3.0, -1.0])
    gx, gy = lucid.autograd.grad(S.xlog1py(x, y).sum(), [x, y])
    tx = torch.tensor([0.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
    ty = torch.tensor([-1.0, -3.0, -1.0], dtype=torch.float64, requires_grad=True)
    tgx, tgy = torch.autograd.grad(TS.xlog1py(tx, ty).sum(), [tx, ty])
    assert_close(gx.numpy(), tgx.numpy(), 0, 0)
    assert_close(gy.numpy(), tgy.numpy(), 0, 0)


@pytest.mark.parametrize("call, message", [
    (lambda x: S.zeta(x, lucid.tensor([2.0], dtype=lucid.float64)), "the derivative for 'zeta' is not implemented."),
    (lambda x: S.gammainc(x, lucid.tensor([2.0], dtype=lucid.float64)),
     "the derivative for 'igamma: input' is not implemented."),
    (lambda x: lucid.igammac(x, lucid.tensor([2.0], dtype=lucid.float64)),
     "the derivative for 'igammac: input' is not implemented."),
])
def test_missing_derivatives_raise_torchs_not_implemented_error(call, message):
    x = _leaf([2.5])
    y = call(x)
    assert y.requires_grad
    with pytest.raises(NotImplementedError) as err:
        y.sum().backward()
    assert str(err.value) == message
    assert x.grad is None


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
                                  "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                                  "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
                                  "airy_ai"])
def test_functions_without_a_derivative_give_results_that_do_not_require_grad(name):
    assert not getattr(S, name)(_leaf([0.5, 1.5])).requires_grad
    assert not getattr(TS, name)(torch.tensor([0.5, 1.5], requires_grad=True)).requires_grad


# ---------------------------------------------------------------------------------------------------- errors, dtypes
def test_errors_are_torchs():
    x = lucid.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"polygamma\(n, x\) does not support negative n\."):
        S.polygamma(-1, x)
    with pytest.raises(TypeError, match="argument 'n' \\(position 1\\) must be int, not float"):
        S.polygamma(1.5, x)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        S.multigammaln(x, 0)
    with pytest.raises(TypeError, match="argument 'other' \\(position 2\\) must be Tensor, not float"):
        S.gammainc(x, 2.0)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        S.gammainc(lucid.tensor([1, 2]), lucid.tensor([1, 2]))
    with pytest.raises(TypeError):
        S.softmax(x)  # dim is required
    for call in (lambda: S.gammaln(2.0), lambda: S.i0e([1.0]), lambda: S.bessel_j0(1.0), lambda: S.zeta(2.0, 3.0),
                 lambda: S.xlog1py("a", x), lambda: S.chebyshev_polynomial_t(0.5, 3)):
        with pytest.raises(TypeError):
            call()


@pytest.mark.parametrize("name", sorted(set(UNARY) - {"round"}))
def test_integer_inputs_give_torchs_float_dtype(name):
    ours = getattr(S, name)(lucid.tensor([1, 2, 3]))
    assert ours.dtype == lucid.float32
    np.testing.assert_allclose(ours.numpy(), getattr(TS, name)(torch.tensor([1, 2, 3])).numpy(), rtol=1e-5)


def test_binary_promotion_with_numbers_and_zero_dim_tensors():
    f32, f64 = lucid.tensor([0.5, 1.5]), lucid.tensor(2.0, dtype=lucid.float64)
    assert S.zeta(2.0, f32).dtype == lucid.float32
    assert S.zeta(f32, f64).dtype == lucid.float32  # a 0-d tensor does not widen
    assert S.xlog1py(lucid.tensor([1, 2]), 0.5).dtype == lucid.float32
    assert S.chebyshev_polynomial_t(lucid.tensor([1, 2]), lucid.tensor([2, 3])).dtype == lucid.float32
    assert S.hermite_polynomial_h(0.5, lucid.tensor([1.0, 2.0], dtype=lucid.float64)).dtype == lucid.float64


@pytest.mark.parametrize("dtype", [lucid.float16, lucid.bfloat16])
def test_half_types_compute_in_float32_and_keep_their_dtype(dtype):
    x = lucid.tensor([0.3, 1.7, 4.0])
    for fn in (S.gammaln, S.digamma, S.i0e, S.ndtri, S.bessel_j0, lambda t: S.polygamma(2, t),
               lambda t: S.zeta(t + 1, t), lambda t: S.chebyshev_polynomial_t(t, 3),
               lambda t: S.legendre_polynomial_p(t, lucid.tensor([1, 2, 3]))):
        out = fn(x.to(dtype))
        assert out.dtype == dtype
        np.testing.assert_allclose(out.float().numpy(), fn(x.to(dtype).float()).numpy(), rtol=1e-2)


# ---------------------------------------------------------------------------------------------------- names
def test_every_torch_special_function_is_in_lucid_special():
    names = [n for n in dir(TS) if not n.startswith("_") and callable(getattr(TS, n))
             and n not in ("Tensor", "torch", "common_args", "multi_dim_common")]
    assert sorted(names) == sorted(S.__all__)


def test_special_names_are_lucids_own_objects():
    assert S.gammaln is lucid.lgamma and S.psi is S.digamma is lucid.digamma and S.expit is lucid.sigmoid
    assert S.gammainc is lucid.igamma and S.gammaincc is lucid.igammac and S.multigammaln is lucid.mvlgamma
    assert S.erf is lucid.erf and S.erfinv is lucid.erfinv and S.i0 is lucid.i0 and S.logit is lucid.logit
    assert S.xlogy is lucid.xlogy and S.logsumexp is lucid.logsumexp and S.softmax is lucid.softmax
    assert S.round is lucid.round and S.sinc is lucid.sinc and S.log_softmax is lucid.log_softmax
    import lucid.compat.torch as ctorch
    import lucid.compat.torch.special as cspecial
    assert ctorch.special is S and cspecial is S


def test_tensor_methods_and_in_place_forms_are_torchs():
    names = ["lgamma", "digamma", "polygamma", "mvlgamma", "i0", "logit", "erfinv", "xlogy", "sinc", "igamma",
             "igammac", "exp2", "expm1", "log1p", "erf", "erfc", "sigmoid"]
    for n in names + [n + "_" for n in names]:
        assert hasattr(torch.Tensor, n) == hasattr(lucid.Tensor, n), n
    assert all(hasattr(lucid, n) for n in names)
    x = lucid.tensor([0.4, 2.5], dtype=lucid.float64)
    t = torch.tensor([0.4, 2.5], dtype=torch.float64)
    for call in (lambda a: a.lgamma(), lambda a: a.digamma(), lambda a: a.polygamma(2), lambda a: a.mvlgamma(1),
                 lambda a: a.i0(), lambda a: a.logit(0.45), lambda a: a.igamma(a), lambda a: a.igammac(a)):
        np.testing.assert_allclose(call(x).numpy(), call(t).numpy(), rtol=1e-12)
    for name, args in [("lgamma_", ()), ("digamma_", ()), ("polygamma_", (1,)), ("mvlgamma_", (1,)),
                       ("i0_", ()), ("logit_", ()), ("exp2_", ()), ("expm1_", ()), ("log1p_", ())]:
        a, b = x.clone(), t.clone()
        version = a._version
        assert getattr(a, name)(*args) is a and a._version == version + 1
        np.testing.assert_allclose(a.numpy(), getattr(b, name)(*args).numpy(), rtol=1e-9)  # (torch's trigamma)


def test_out_keyword():
    x = lucid.tensor([0.5, 2.0], dtype=lucid.float64)
    for fn, args in [(S.gammaln, (x,)), (S.polygamma, (1, x)), (S.zeta, (x + 1, x)), (S.xlogy, (x, x)),
                     (S.logsumexp, (x, 0)), (S.multigammaln, (x + 1, 2)), (S.bessel_j0, (x,))]:
        out = lucid.empty_like(fn(*args))
        assert fn(*args, out=out) is out
        np.testing.assert_array_equal(out.numpy(), fn(*args).numpy())


PROGRAM = '''
"""Maximum likelihood with torch.special: a gamma shape (its gradient is digamma) and two penalties."""
import json
import sys

import torch
import torch.special

x = torch.linspace(0.5, 4.0, 64, dtype=torch.float64)
k = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
opt = torch.optim.SGD([k], lr=0.1)
losses = []
for _ in range(8):
    opt.zero_grad()
    nll = -(torch.special.xlogy(k[0] - 1, x) - x - torch.special.gammaln(k[0])).mean()
    penalty = -torch.special.log_ndtr(k[1] - 3.0) + torch.special.i0e(k[1]) + 0.01 * torch.special.polygamma(1, k[0])
    loss = nll + penalty + torch.special.gammaincc(torch.tensor(2.0, dtype=torch.float64), k[1])
    loss.backward()
    opt.step()
    losses.append(loss.item())
json.dump(losses + k.tolist(), open(sys.argv[1], "w"))
'''


def test_a_pytorch_program_with_torch_special_runs_under_lucid_run(tmp_path):
    import json
    import runpy
    import sys

    from lucid.compat.run import run_script
    script = tmp_path / "mle.py"
    script.write_text(PROGRAM)
    run_script(script, [str(tmp_path / "lucid.json")])
    saved = sys.argv[:]
    sys.argv = [str(script), str(tmp_path / "torch.json")]
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv[:] = saved
    got, expected = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("lucid", "torch"))
    np.testing.assert_allclose(got, expected, rtol=1e-9)
