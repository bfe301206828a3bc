"""The continuous univariate distributions of lucid.distributions: log_prob, cdf, icdf, entropy, mean, mode,
variance against PyTorch at the same float64 parameters (several batch shapes), sample shapes, sample moments at a
fixed seed, gradcheck of log_prob and of rsample with respect to the parameters, expand, and argument validation
with PyTorch's messages."""
import math

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck

RNG = np.random.default_rng(1)
SHAPES = [(), (3,), (2, 3)]


def _uniform(low, high):
    return lambda shape: RNG.uniform(low, high, size=shape)


# name -> (parameter generators by constructor keyword, values in the support for a batch shape)
FAMILIES = {
    "Normal": ({"loc": _uniform(-2, 2), "scale": _uniform(0.5, 2)}, _uniform(-3, 3)),
    "Uniform": ({"low": _uniform(-2, -1), "high": _uniform(1, 2)}, _uniform(-0.9, 0.9)),
    "Exponential": ({"rate": _uniform(0.5, 2)}, _uniform(0.1, 3)),
    "Laplace": ({"loc": _uniform(-2, 2), "scale": _uniform(0.5, 2)}, _uniform(-3, 3)),
    "Cauchy": ({"loc": _uniform(-2, 2), "scale": _uniform(0.5, 2)}, _uniform(-3, 3)),
    "HalfNormal": ({"scale": _uniform(0.5, 2)}, _uniform(0.1, 3)),
    "HalfCauchy": ({"scale": _uniform(0.5, 2)}, _uniform(0.1, 3)),
    "LogNormal": ({"loc": _uniform(-1, 1), "scale": _uniform(0.3, 1)}, _uniform(0.1, 3)),
    "Gumbel": ({"loc": _uniform(-2, 2), "scale": _uniform(0.5, 2)}, _uniform(-2, 3)),
    "Pareto": ({"scale": _uniform(0.5, 1), "alpha": _uniform(4.5, 6)}, _uniform(1.1, 3)),
    "GeneralizedPareto": ({"loc": _uniform(-1, 0), "scale": _uniform(0.5, 2), "concentration": _uniform(-0.3, 0.2)},
                          _uniform(0.0, 0.6)),
    "ContinuousBernoulli": ({"probs": _uniform(0.1, 0.9)}, _uniform(0.05, 0.95)),
    "Gamma": ({"concentration": _uniform(0.5, 5), "rate": _uniform(0.5, 2)}, _uniform(0.1, 3)),
    "Chi2": ({"df": _uniform(1, 6)}, _uniform(0.1, 3)),
    "StudentT": ({"df": _uniform(5, 8), "loc": _uniform(-1, 1), "scale": _uniform(0.5, 2)}, _uniform(-3, 3)),
    "FisherSnedecor": ({"df1": _uniform(3, 6), "df2": _uniform(10, 15)}, _uniform(0.1, 3)),
    "VonMises": ({"loc": _uniform(-1, 1), "concentration": _uniform(0.5, 5)}, _uniform(-3, 3)),
    "InverseGamma": ({"concentration": _uniform(5, 7), "rate": _uniform(0.5, 2)}, _uniform(0.1, 3)),
    "Weibull": ({"scale": _uniform(0.5, 2), "concentration": _uniform(1.5, 4)}, _uniform(0.1, 3)),
    "Kumaraswamy": ({"concentration1": _uniform(1.5, 4), "concentration0": _uniform(1.5, 4)}, _uniform(0.05, 0.95)),
    "Beta": ({"concentration1": _uniform(0.5, 4), "concentration0": _uniform(0.5, 4)}, _uniform(0.05, 0.95)),
}
RSAMPLE = ["Normal", "Uniform", "Exponential", "Laplace", "Cauchy", "HalfNormal", "HalfCauchy", "LogNormal",
           "Pareto", "GeneralizedPareto", "ContinuousBernoulli", "Kumaraswamy"]
# reparameterized through the standard Gamma draw: their gradient in the concentration is the implicit one, checked
# against the Gamma CDF below (finite differences of a draw at fixed noise measure another derivative)
GAMMA_RSAMPLE = ["Gamma", "Chi2", "StudentT", "FisherSnedecor", "InverseGamma", "Beta"]
# PyTorch's VonMises uses polynomial approximations of the Bessel functions (1e-7); lucid's are exact
RTOL = {"VonMises": 1e-6}
# PyTorch's float64 GeneralizedPareto.log_prob/cdf compare with a float32 zero and fail: closed forms below instead
TORCH_SKIPS = {("GeneralizedPareto", "log_prob"), ("GeneralizedPareto", "cdf")}


def make(name, shape, requires_grad=False):
    """(lucid distribution, PyTorch's or None, the float64 parameters as numpy, a value of the batch shape)."""
    gens, value_gen = FAMILIES[name]
    params = {k: np.asarray(g(shape), dtype=np.float64) for k, g in gens.items()}
    ours = getattr(D, name)(**{k: lucid.tensor(v, dtype=lucid.float64, requires_grad=requires_grad)
                               for k, v in params.items()})
    return ours, params, np.asarray(value_gen(shape), dtype=np.float64)


def _torch_dist(name, params):
    torch = pytest.importorskip("torch")
    return getattr(torch.distributions, name)(**{k: torch.tensor(v) for k, v in params.items()})


def _numpy(t):
    return t.detach().numpy()


CASES = [pytest.param(name, shape, id=f"{name}-{'x'.join(map(str, shape)) or 'scalar'}")
         for name in FAMILIES for shape in SHAPES]


@pytest.mark.parametrize("name, shape", CASES)
def test_matches_pytorch(name, shape):
    torch = pytest.importorskip("torch")
    ours, params, value = make(name, shape)
    theirs = _torch_dist(name, params)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape) and tuple(ours.event_shape) == ()
    checked = 0
    for what in ("log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance", "stddev"):
        if (name, what) in TORCH_SKIPS:
            continue
        arg = value if what != "icdf" else RNG.uniform(0.05, 0.95, size=shape)
        try:
            expected = getattr(theirs, what)
            expected = (expected(torch.tensor(arg)) if what in ("log_prob", "cdf", "icdf")
                        else expected() if what == "entropy" else expected).numpy()
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                got = getattr(ours, what)
                got(lucid.tensor(arg, dtype=lucid.float64)) if what in ("log_prob", "cdf", "icdf") else \
                    got() if what == "entropy" else got
            continue
        got = getattr(ours, what)
        got = got(lucid.tensor(arg, dtype=lucid.float64)) if what in ("log_prob", "cdf", "icdf") else \
            got() if what == "entropy" else got
        assert got.dtype == lucid.float64, what
        np.testing.assert_allclose(_numpy(got), expected, rtol=RTOL.get(name, 1e-9), atol=1e-12, err_msg=what)
        checked += 1
    assert checked >= 4


def test_generalized_pareto_closed_forms():
    loc, scale, conc = 0.5, 2.0, np.array([0.3, 0.0, -0.2])
    d = D.GeneralizedPareto(lucid.tensor(loc, dtype=lucid.float64), lucid.tensor(scale, dtype=lucid.float64),
                            lucid.tensor(conc, dtype=lucid.float64))
    x = np.array([1.5, 2.0, 3.0])
    z = (x - loc) / scale
    with np.errstate(divide="ignore", invalid="ignore"):
        survival = np.where(conc == 0, np.exp(-z), (1 + conc * z) ** (-1 / np.where(conc == 0, 1, conc)))
        density = np.where(conc == 0, np.exp(-z), (1 + conc * z) ** (-1 / np.where(conc == 0, 1, conc) - 1)) / scale
    value = lucid.tensor(x, dtype=lucid.float64)
    np.testing.assert_allclose(d.log_prob(value).numpy(), np.log(density), rtol=1e-12)
    np.testing.assert_allclose(d.cdf(value).numpy(), 1 - survival, rtol=1e-12)
    np.testing.assert_allclose(d.icdf(d.cdf(value)).numpy(), x, rtol=1e-10)


@pytest.mark.parametrize("name", FAMILIES)
def test_sample_shapes(name):
    ours, _, _ = make(name, (2, 3))
    for sample_shape in [(), (5,), (4, 1)]:
        s = ours.sample(sample_shape)
        assert tuple(s.shape) == tuple(sample_shape) + (2, 3) and s.dtype == lucid.float64
        assert not s.requires_grad
        assert ours.support.check(s).all().item()
    if name in RSAMPLE + GAMMA_RSAMPLE:
        assert ours.has_rsample and tuple(ours.rsample((7,)).shape) == (7, 2, 3)
    scalar = getattr(D, name)(**{k: 1.0 if k != "low" else 0.0 for k in FAMILIES[name][0]}
                              if name != "GeneralizedPareto" else {"loc": 0.0, "scale": 1.0, "concentration": 0.1})
    assert tuple(scalar.sample((3,)).shape) == (3,) + tuple(scalar.batch_shape)


MOMENTS = ["Normal", "Uniform", "Exponential", "Laplace", "HalfNormal", "LogNormal", "Gumbel", "Pareto",
           "GeneralizedPareto", "ContinuousBernoulli", "Gamma", "Chi2", "StudentT", "FisherSnedecor", "InverseGamma",
           "Weibull", "Kumaraswamy", "Beta"]


@pytest.mark.parametrize("name", MOMENTS)
def test_sample_moments(name):
    """The sample mean of 20000 draws lies within 5 standard errors of the mean, the variance within 15%."""
    lucid.manual_seed(0)
    ours, _, _ = make(name, (3,))
    n = 20000
    s = ours.sample((n,)).numpy()
    mean, var = ours.mean.detach().numpy(), ours.variance.detach().numpy()
    assert np.all(np.abs(s.mean(0) - mean) < 5 * np.sqrt(var / n)), (s.mean(0), mean)
    np.testing.assert_allclose(s.var(0), var, rtol=0.15)


def test_small_concentration_gamma_samples():
    """The boost for concentration < 1: the sample mean and variance of Gamma(0.3, 1) and Gamma(0.05, 1)."""
    lucid.manual_seed(1)
    alpha = np.array([0.3, 0.05])
    s = D.Gamma(lucid.tensor(alpha, dtype=lucid.float64), 1.0).sample((40000,)).numpy()
    assert np.all(s > 0)
    assert np.all(np.abs(s.mean(0) - alpha) < 5 * np.sqrt(alpha / 40000))


def test_von_mises_samples_circular_moments():
    """von Mises draws: their circular mean is loc, 1 - |E exp(ix)| the circular variance I1/I0 gives."""
    lucid.manual_seed(0)
    loc, kappa = np.array([0.5, 2.5, -2.0]), np.array([0.1, 3.0, 30.0])
    d = D.VonMises(lucid.tensor(loc, dtype=lucid.float64), lucid.tensor(kappa, dtype=lucid.float64))
    s = d.sample((20000,)).numpy()
    assert s.shape == (20000, 3) and np.all(np.abs(s) <= np.pi)
    r = np.exp(1j * s).mean(0)
    np.testing.assert_allclose(1 - np.abs(r), d.variance.numpy(), atol=0.015)
    np.testing.assert_allclose(np.angle(r)[1:], loc[1:], atol=0.03)  # (kappa = 0.1 is nearly uniform)


def test_von_mises_log_prob_is_exact():
    mpmath = pytest.importorskip("mpmath")
    d = D.VonMises(lucid.tensor([0.3, -1.0], dtype=lucid.float64), lucid.tensor([0.7, 40.0], dtype=lucid.float64))
    x = [1.0, -0.5]
    expected = [float(k * mpmath.cos(v - m) - mpmath.log(2 * mpmath.pi * mpmath.besseli(0, k)))
                for v, m, k in zip(x, [0.3, -1.0], [0.7, 40.0])]
    np.testing.assert_allclose(d.log_prob(lucid.tensor(x, dtype=lucid.float64)).numpy(), expected, rtol=1e-13)


def test_cauchy_samples_follow_the_cdf():
    """Cauchy has no moments: its sample quartiles are checked instead."""
    lucid.manual_seed(0)
    d = D.Cauchy(lucid.tensor(1.0, dtype=lucid.float64), lucid.tensor(2.0, dtype=lucid.float64))
    s = d.sample((20000,)).numpy()
    np.testing.assert_allclose(np.quantile(s, [0.25, 0.5, 0.75]), [-1.0, 1.0, 3.0], atol=0.1)


@pytest.mark.parametrize("name", FAMILIES)
def test_log_prob_gradcheck(name):
    gens, value_gen = FAMILIES[name]
    params = [lucid.tensor(g((3,)), dtype=lucid.float64, requires_grad=True) for g in gens.values()]
    value = lucid.tensor(value_gen((3,)), dtype=lucid.float64)
    fn = lambda *ps: getattr(D, name)(*ps).log_prob(value)  # noqa: E731
    assert gradcheck(fn, params)


@pytest.mark.parametrize("name", RSAMPLE)
def test_rsample_gradcheck(name):
    gens, _ = FAMILIES[name]
    params = [lucid.tensor(g((3,)), dtype=lucid.float64, requires_grad=True) for g in gens.values()]

    def draw(*ps):
        lucid.manual_seed(3)  # the same noise for every evaluation
        return getattr(D, name)(*ps).rsample((2,))

    assert gradcheck(draw, params)


@pytest.mark.parametrize("name", GAMMA_RSAMPLE)
def test_gamma_based_rsample_gradcheck_in_the_scale_parameters(name):
    """Gradients of a draw through the parameters that scale it (rate, loc, scale); the shape parameters get the
    implicit gradient (next test)."""
    gens, _ = FAMILIES[name]
    shape_params = {"concentration", "df", "df1", "df2", "concentration1", "concentration0"}
    fixed = {k: lucid.tensor(g((3,)), dtype=lucid.float64) for k, g in gens.items() if k in shape_params}
    free = {k: lucid.tensor(g((3,)), dtype=lucid.float64, requires_grad=True) for k, g in gens.items()
            if k not in shape_params}
    if not free:
        pytest.skip(f"{name} has only shape parameters")

    def draw(*ps):
        lucid.manual_seed(3)
        return getattr(D, name)(**fixed, **dict(zip(free, ps))).rsample((2,))

    assert gradcheck(draw, list(free.values()))


def test_gamma_rsample_gradient_is_the_implicit_one():
    """d x / d alpha of Gamma draws = -(dF/dalpha) / f(x), F the regularized incomplete gamma (mpmath)."""
    mpmath = pytest.importorskip("mpmath")
    lucid.manual_seed(0)
    alpha = lucid.tensor([0.05, 0.4, 1.0, 3.5, 20.0, 150.0, 5000.0], dtype=lucid.float64, requires_grad=True)
    x = D.Gamma(alpha, 1.0).rsample()
    (grad,) = lucid.autograd.grad(x.sum(), [alpha])
    for a, xv, g in zip(alpha.detach().numpy(), x.detach().numpy(), grad.numpy()):
        a, xv = mpmath.mpf(float(a)), mpmath.mpf(float(xv))
        d_cdf = mpmath.diff(lambda s: mpmath.gammainc(s, 0, xv, regularized=True), a)
        density = mpmath.exp((a - 1) * mpmath.log(xv) - xv - mpmath.loggamma(a))
        assert g == pytest.approx(float(-d_cdf / density), rel=1e-8 if a < 1500 else 1e-6)  # (Wilson-Hilferty)


def test_entropy_gradcheck():
    for d in (lambda l, s: D.Normal(l, s), lambda l, s: D.Gumbel(l, s), lambda l, s: D.Laplace(l, s)):
        ps = [lucid.tensor([0.3, -1.0], dtype=lucid.float64, requires_grad=True),
              lucid.tensor([0.7, 2.0], dtype=lucid.float64, requires_grad=True)]
        assert gradcheck(lambda l, s, d=d: d(l, s).entropy(), ps)


def test_exponential_family_entropy_matches_the_closed_form():
    """ExponentialFamily.entropy (Bregman divergence of the log normalizer, by autograd) on Normal/Exponential."""
    n = D.Normal(lucid.tensor([0.3, 1.0], dtype=lucid.float64), lucid.tensor([0.5, 2.0], dtype=lucid.float64))
    np.testing.assert_allclose(D.ExponentialFamily.entropy(n).detach().numpy(), n.entropy().numpy(), rtol=1e-12)
    e = D.Exponential(lucid.tensor([0.5, 3.0], dtype=lucid.float64))
    np.testing.assert_allclose(D.ExponentialFamily.entropy(e).detach().numpy(), e.entropy().numpy(), rtol=1e-12)


def test_expand():
    d = D.Normal(lucid.tensor([0.0, 1.0]), lucid.tensor([1.0, 2.0]))
    e = d.expand((4, 2))
    assert e.batch_shape == (4, 2) and tuple(e.sample().shape) == (4, 2) and type(e) is D.Normal
    g = D.Gumbel(lucid.tensor([0.0, 1.0]), lucid.tensor([1.0, 2.0])).expand((3, 2))
    assert g.batch_shape == (3, 2) and tuple(g.sample((5,)).shape) == (5, 3, 2)
    h = D.HalfNormal(lucid.tensor([1.0, 2.0])).expand((3, 2))
    assert type(h) is D.HalfNormal and h.log_prob(lucid.ones(3, 2)).shape == (3, 2)


def test_perplexity_and_stddev():
    d = D.Exponential(lucid.tensor([2.0], dtype=lucid.float64))
    assert d.perplexity().item() == pytest.approx(math.exp(1 - math.log(2)))
    assert d.stddev.item() == pytest.approx(0.5)


def test_validation_errors_are_pytorchs():
    with pytest.raises(ValueError, match=r"Expected parameter scale \(Tensor of shape \(2,\)\) of distribution "
                                         r"Normal\(loc: \w+.Size\(\[2\]\), scale: \w+.Size\(\[2\]\)\) to satisfy "
                                         r"the constraint GreaterThan\(lower_bound=0.0\), but found invalid values"):
        D.Normal(lucid.zeros(2), lucid.tensor([1.0, -1.0]))
    d = D.Exponential(lucid.tensor([1.0]))
    with pytest.raises(ValueError, match=r"Expected value argument \(Tensor of shape \(1,\)\) to be within the "
                                         r"support \(GreaterThanEq\(lower_bound=0.0\)\) of the distribution"):
        d.log_prob(lucid.tensor([-1.0]))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        d.log_prob(1.0)
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape"):
        D.Normal(lucid.zeros(3), lucid.ones(3)).log_prob(lucid.zeros(2))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        D.ContinuousBernoulli()
    with pytest.raises(ValueError, match="The parameter probs has invalid values"):
        D.ContinuousBernoulli(probs=lucid.tensor([1.5]), validate_args=True)
    # no validation: no error
    assert math.isnan(D.Normal(0.0, -1.0, validate_args=False).log_prob(lucid.tensor(0.0)).item())


def test_set_default_validate_args():
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(lucid.zeros(1), -lucid.ones(1))  # not checked
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(lucid.zeros(1), -lucid.ones(1))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_repr_and_argument_constraints_as_pytorch():
    torch = pytest.importorskip("torch")
    assert repr(D.Normal(0.0, 1.0)) == repr(torch.distributions.Normal(0.0, 1.0))
    assert repr(D.Normal(lucid.zeros(2), lucid.ones(2))) == "Normal(loc: lucid.Size([2]), scale: lucid.Size([2]))"
    for name in FAMILIES:
        ours, params, _ = make(name, (3,))
        theirs = _torch_dist(name, params)
        assert ours.has_rsample == theirs.has_rsample, name
        assert sorted(ours.arg_constraints) == sorted(theirs.arg_constraints), name
        assert type(ours.support).__name__ == type(theirs.support).__name__, name


def test_docs_page_examples_run_as_written():
    import doctest
    import re
    from pathlib import Path
    text = (Path(__file__).parent.parent / "docs" / "distributions.md").read_text()
    text = re.sub(r"^```.*$", "", text, flags=re.M)  # a closing fence would read as expected output
    test = doctest.DocTestParser().get_doctest(text, {}, "distributions.md", "docs/distributions.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 6


def _t64(torch, a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def test_logistic_normal_and_relaxed_bernoulli_match_pytorch():
    torch = pytest.importorskip("torch")
    loc, scale = RNG.normal(size=(2, 3)), RNG.uniform(0.5, 2, size=(2, 3))
    ours = D.LogisticNormal(lucid.tensor(loc, dtype=lucid.float64), lucid.tensor(scale, dtype=lucid.float64))
    theirs = torch.distributions.LogisticNormal(_t64(torch, loc), _t64(torch, scale))
    assert ours.batch_shape == (2,) and ours.event_shape == (4,)
    value = RNG.dirichlet(np.ones(4), size=2)
    np.testing.assert_allclose(ours.log_prob(lucid.tensor(value, dtype=lucid.float64)).numpy(),
                               theirs.log_prob(_t64(torch, value)).numpy(), rtol=1e-10)
    s = ours.rsample((5,))
    assert s.shape == (5, 2, 4) and D.constraints.simplex.check(s).all().item()

    temp, probs = 0.7, RNG.uniform(0.1, 0.9, size=3)
    for cls in ("RelaxedBernoulli", "LogitRelaxedBernoulli"):
        ours = getattr(D.relaxed_bernoulli, cls)(lucid.tensor(temp, dtype=lucid.float64),
                                                 probs=lucid.tensor(probs, dtype=lucid.float64))
        theirs = getattr(torch.distributions.relaxed_bernoulli, cls)(_t64(torch, temp), probs=_t64(torch, probs))
        value = RNG.uniform(0.1, 0.9, size=3)
        np.testing.assert_allclose(ours.log_prob(lucid.tensor(value, dtype=lucid.float64)).numpy(),
                                   theirs.log_prob(_t64(torch, value)).numpy(), rtol=1e-10)
        assert ours.rsample((4,)).shape == (4, 3)
    logits = lucid.tensor([0.3, -1.0], dtype=lucid.float64, requires_grad=True)
    assert gradcheck(lambda lg: D.RelaxedBernoulli(lucid.tensor(0.5, dtype=lucid.float64), logits=lg)
                     .log_prob(lucid.tensor([0.2, 0.6], dtype=lucid.float64)), (logits,))


def test_transformed_distribution_cdf_icdf_and_errors():
    torch = pytest.importorskip("torch")
    base = D.Normal(lucid.tensor([0.0, 1.0], dtype=lucid.float64), lucid.tensor([1.0, 0.5], dtype=lucid.float64))
    tbase = torch.distributions.Normal(_t64(torch, [0.0, 1.0]), _t64(torch, [1.0, 0.5]))
    # a decreasing chain: the cdf is flipped (PyTorch's _monotonize_cdf)
    ours = D.TransformedDistribution(base, [D.ExpTransform(), D.AffineTransform(2.0, -3.0)])
    theirs = torch.distributions.TransformedDistribution(
        tbase, [torch.distributions.ExpTransform(), torch.distributions.AffineTransform(2.0, -3.0)])
    v = np.array([-1.0, -4.0])
    np.testing.assert_allclose(ours.cdf(lucid.tensor(v, dtype=lucid.float64)).numpy(),
                               theirs.cdf(_t64(torch, v)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.icdf(lucid.tensor([0.3, 0.8], dtype=lucid.float64)).numpy(),
                               theirs.icdf(_t64(torch, [0.3, 0.8])).numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.log_prob(lucid.tensor(v, dtype=lucid.float64)).numpy(),
                               theirs.log_prob(_t64(torch, v)).numpy(), rtol=1e-12)
    assert repr(ours.support) == repr(theirs.support) and ours.has_rsample
    e = ours.expand((3, 2))
    assert e.batch_shape == (3, 2) and e.sample((4,)).shape == (4, 3, 2)
    with pytest.raises(ValueError, match="transforms must be a Transform or a list of Transforms"):
        D.TransformedDistribution(base, [D.ExpTransform(), 3])
    with pytest.raises(ValueError, match="transforms must be a Transform or list, but was 3"):
        D.TransformedDistribution(base, 3)
    with pytest.raises(ValueError, match="base_distribution needs to have shape with size at least 1"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), D.StickBreakingTransform())


def test_flow_log_prob_is_differentiable_and_sample_has_the_event_shape():
    """A vector transform over a batch of Normals makes an Independent base: event shape (3,) -> (4,)."""
    loc = lucid.tensor([0.1, -0.2, 0.3], dtype=lucid.float64, requires_grad=True)
    flow = lambda l: D.TransformedDistribution(D.Normal(l, 1.0), [D.StickBreakingTransform()])  # noqa: E731
    d = flow(loc)
    assert d.batch_shape == () and d.event_shape == (4,) and d.sample((6,)).shape == (6, 4)
    value = lucid.tensor([0.1, 0.2, 0.3, 0.4], dtype=lucid.float64)
    assert gradcheck(lambda l: flow(l).log_prob(value), (loc,))


def test_sample_n_warns_and_custom_init_needs_expand():
    d = D.Normal(0.0, 1.0)
    with pytest.warns(FutureWarning, match=r"`sample_n\(n\)` will be deprecated. Use `sample\(\(n,\)\)` instead."):
        assert d.sample_n(3).shape == (3,)

    class MyNormal(D.Normal):
        def __init__(self, scale):
            super().__init__(0.0, scale)

    with pytest.raises(NotImplementedError, match="Subclass MyNormal of Normal that defines a custom __init__ method "
                                                  "must also define a custom .expand\\(\\) method."):
        MyNormal(1.0).expand((2,))
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        D.Distribution(validate_args=False).mode
