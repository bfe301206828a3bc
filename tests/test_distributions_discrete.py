"""The discrete distributions of lucid.distributions (Bernoulli, Binomial, Categorical, Geometric, Multinomial,
NegativeBinomial, OneHotCategorical(StraightThrough), Poisson) and the relaxed categoricals: log_prob, entropy,
mean, mode, variance, enumerate_support and expand against PyTorch at the same float64 parameters (several batch
shapes), sample shapes and moments at a fixed seed (the Poisson and Binomial samplers also by a chi-square test of
their frequencies against the exact mass function), gradcheck of log_prob (and of the reparameterized samples) with
respect to the parameters, and argument validation with PyTorch's messages."""
import math

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck

RNG = np.random.default_rng(2)
SHAPES = [(), (3,), (2, 3)]
K = 4  # categories


def _uniform(low, high):
    return lambda shape: RNG.uniform(low, high, size=shape)


def _simplex(shape):
    w = RNG.uniform(0.2, 1.0, size=tuple(shape) + (K,))
    return w / w.sum(-1, keepdims=True)


def _logits(shape):
    return RNG.normal(size=tuple(shape) + (K,))


def _counts(total):
    def gen(shape):
        draws = RNG.integers(0, K, size=tuple(shape) + (total,))
        return (draws[..., None] == np.arange(K)).sum(-2).astype(float)
    return gen


def _ints(low, high):
    return lambda shape: RNG.integers(low, high, size=shape).astype(float)


# name -> (parameters by constructor keyword, fixed keyword arguments, values in the support for a batch shape)
FAMILIES = {
    "Bernoulli": ({"probs": _uniform(0.1, 0.9)}, {}, _ints(0, 2)),
    "Bernoulli-logits": ({"logits": _uniform(-2, 2)}, {}, _ints(0, 2)),
    "Binomial": ({"probs": _uniform(0.1, 0.9)}, {"total_count": 7}, _ints(0, 8)),
    "Binomial-logits": ({"logits": _uniform(-2, 2)}, {"total_count": 5}, _ints(0, 6)),
    "Categorical": ({"probs": _simplex}, {}, _ints(0, K)),
    "Categorical-logits": ({"logits": _logits}, {}, _ints(0, K)),
    "Geometric": ({"probs": _uniform(0.2, 0.9)}, {}, _ints(0, 6)),
    "Geometric-logits": ({"logits": _uniform(-2, 2)}, {}, _ints(0, 6)),
    "Multinomial": ({"probs": _simplex}, {"total_count": 6}, _counts(6)),
    "Multinomial-logits": ({"logits": _logits}, {"total_count": 3}, _counts(3)),
    "NegativeBinomial": ({"total_count": _uniform(0.5, 4), "probs": _uniform(0.1, 0.8)}, {}, _ints(0, 9)),
    "NegativeBinomial-logits": ({"total_count": _uniform(0.5, 4), "logits": _uniform(-2, 1)}, {}, _ints(0, 9)),
    "OneHotCategorical": ({"probs": _simplex}, {}, lambda s: np.eye(K)[RNG.integers(0, K, size=s)]),
    "OneHotCategoricalStraightThrough": ({"logits": _logits}, {}, lambda s: np.eye(K)[RNG.integers(0, K, size=s)]),
    "Poisson": ({"rate": _uniform(0.5, 5)}, {}, _ints(0, 9)),
}
ENUMERABLE = {"Bernoulli", "Binomial", "Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough"}
NO_MODE = {"Multinomial"}  # PyTorch has none
NO_ENTROPY = {"NegativeBinomial", "Poisson"}  # nor these
# PyTorch's Multinomial entropy takes lgamma of an int64 tensor: that term is computed in float32
ENTROPY_RTOL = {"Multinomial": 1e-6}


def _cls(name):
    return name.split("-")[0]


def make(name, shape, requires_grad=False):
    """(lucid distribution, PyTorch's or None, the float64 parameters as numpy, a value of the batch shape)."""
    gens, fixed, value_gen = FAMILIES[name]
    params = {k: g(shape) for k, g in gens.items()}
    mine = D.__dict__[_cls(name)](**fixed, **{k: lucid.tensor(v, dtype=lucid.float64, requires_grad=requires_grad)
                                              for k, v in params.items()})
    value = value_gen(shape)
    try:
        import torch
    except ImportError:
        return mine, None, params, value
    theirs = torch.distributions.__dict__[_cls(name)](
        **fixed, **{k: torch.tensor(v, dtype=torch.float64) for k, v in params.items()})
    return mine, theirs, params, value


def _close(mine, theirs, rtol=1e-9, atol=1e-10):
    np.testing.assert_allclose(np.asarray(mine.detach().numpy(), dtype=float),
                               np.asarray(theirs.detach().numpy(), dtype=float), rtol=rtol, atol=atol)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_values_match_pytorch(name, shape):
    pytest.importorskip("torch")
    import torch
    mine, theirs, _, value = make(name, shape)
    assert tuple(mine.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(mine.event_shape) == tuple(theirs.event_shape)
    _close(mine.log_prob(lucid.tensor(value, dtype=lucid.float64)),
           theirs.log_prob(torch.tensor(value, dtype=torch.float64)))
    for attr in ("mean", "variance", "stddev") + (() if _cls(name) in NO_MODE else ("mode",)):
        np.testing.assert_allclose(getattr(mine, attr).numpy(), getattr(theirs, attr).numpy(), rtol=1e-9,
                                   atol=1e-12, err_msg=attr)
    if _cls(name) in NO_ENTROPY:
        with pytest.raises(NotImplementedError):
            mine.entropy()
    else:
        rtol = ENTROPY_RTOL.get(_cls(name), 1e-8)
        _close(mine.entropy(), theirs.entropy(), rtol=rtol)
        _close(mine.perplexity(), theirs.perplexity(), rtol=rtol)
    if _cls(name) in ENUMERABLE:
        for expand in (True, False):
            _close(mine.enumerate_support(expand), theirs.enumerate_support(expand))
    # expand: a new batch dimension in front, same values
    big = mine.expand((2,) + tuple(mine.batch_shape))
    big_t = theirs.expand((2,) + tuple(theirs.batch_shape))
    assert tuple(big.batch_shape) == tuple(big_t.batch_shape)
    _close(big.log_prob(lucid.tensor(value, dtype=lucid.float64)), big_t.log_prob(torch.tensor(value,
                                                                                              dtype=torch.float64)))


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_sample_shape_and_support(name):
    lucid.manual_seed(0)
    mine, _, _, _ = make(name, (2, 3))
    s = mine.sample((5,))
    assert tuple(s.shape) == (5,) + tuple(mine.batch_shape) + tuple(mine.event_shape)
    assert bool(mine.support.check(s).all())
    assert not s.requires_grad


MOMENT_CASES = {
    "Bernoulli": {"probs": [0.1, 0.5, 0.85]},
    "Binomial": {"total_count": [3.0, 30.0, 200.0], "probs": [0.3, 0.6, 0.95]},
    "Geometric": {"probs": [0.2, 0.5, 0.9]},
    "NegativeBinomial": {"total_count": [0.7, 3.0, 20.0], "probs": [0.3, 0.5, 0.8]},
    "Poisson": {"rate": [0.3, 7.0, 40.0]},
    "Categorical": {"probs": [[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]]},
    "Multinomial": {"total_count": 9, "probs": [[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]]},
}


@pytest.mark.parametrize("name", sorted(MOMENT_CASES))
def test_sample_moments(name):
    """Sample mean and variance of 20000 draws within 5 standard errors of the exact ones (Categorical: the
    frequency of each category)."""
    lucid.manual_seed(3)
    kwargs = {k: (v if isinstance(v, int) else lucid.tensor(v, dtype=lucid.float64))
              for k, v in MOMENT_CASES[name].items()}
    dist = D.__dict__[name](**kwargs)
    n = 20000
    x = dist.sample((n,)).numpy().astype(float)
    if name == "Categorical":
        x = (x[..., None] == np.arange(4)).astype(float)
        mean, var = dist.probs.numpy(), (dist.probs * (1 - dist.probs)).numpy()
    else:
        mean, var = dist.mean.numpy(), dist.variance.numpy()
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / n) + 1e-12)
    # the sample variance's standard error, from the fourth central moment of the draws
    m4 = ((x - x.mean(0)) ** 4).mean(0)
    assert np.all(np.abs(x.var(0) - var) < 5 * np.sqrt(np.maximum(m4 - var ** 2, 1e-12) / n) + 1e-12)


def _chi_square_pvalue(draws, log_pmf, support):
    """Pearson's test of the frequencies of ``draws`` on ``support`` (bins of expected count >= 5, the rest
    pooled) against the mass function."""
    torch = pytest.importorskip("torch")
    n = draws.size
    expected = np.exp(log_pmf) * n
    observed = np.array([(draws == k).sum() for k in support], dtype=float)
    keep = expected >= 5
    rest_o, rest_e = n - observed[keep].sum(), n - expected[keep].sum()
    chi2 = ((observed[keep] - expected[keep]) ** 2 / expected[keep]).sum()
    df = keep.sum() - 1
    if rest_e >= 5:
        chi2 += (rest_o - rest_e) ** 2 / rest_e
        df += 1
    return float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64),
                                         torch.tensor(chi2 / 2, dtype=torch.float64)))


@pytest.mark.parametrize("rate,dtype", [(0.4, lucid.float64), (6.5, lucid.float32), (10.0, lucid.float64),
                                        (85.0, lucid.float32), (3e5, lucid.float32), (3e5, lucid.float64)], ids=str)
def test_poisson_sampler_frequencies(rate, dtype):
    """Both of the Poisson sampler's regimes (inversion below rate 10, transformed rejection above, float32 and
    float64) draw the exact Poisson frequencies (chi-square test at the 1e-4 level at a fixed seed)."""
    lucid.manual_seed(4)
    draws = D.Poisson(lucid.tensor(rate, dtype=dtype)).sample((30000,)).numpy().astype(float)
    sd = math.sqrt(rate)
    support = np.arange(max(0, int(rate - 6 * sd)), int(rate + 6 * sd) + 6, dtype=float)
    log_pmf = D.Poisson(lucid.tensor(rate, dtype=lucid.float64), validate_args=False).log_prob(
        lucid.tensor(support, dtype=lucid.float64)).numpy()
    assert _chi_square_pvalue(draws, log_pmf, support) > 1e-4


@pytest.mark.parametrize("count,prob,dtype", [(12, 0.3, lucid.float64), (300, 0.01, lucid.float32),
                                              (60, 0.85, lucid.float64), (400, 0.45, lucid.float32),
                                              (2e6, 0.6, lucid.float32), (2e6, 0.6, lucid.float64)], ids=str)
def test_binomial_sampler_frequencies(count, prob, dtype):
    lucid.manual_seed(5)
    draws = D.Binomial(lucid.tensor(float(count), dtype=dtype), lucid.tensor(prob, dtype=dtype)).sample(
        (30000,)).numpy().astype(float)
    assert draws.min() >= 0 and draws.max() <= count
    sd = math.sqrt(count * prob * (1 - prob))
    support = np.arange(max(0, int(count * prob - 6 * sd)), min(count, int(count * prob + 6 * sd) + 6) + 1,
                        dtype=float)
    log_pmf = D.Binomial(lucid.tensor(float(count), dtype=lucid.float64), lucid.tensor(prob, dtype=lucid.float64),
                         validate_args=False).log_prob(lucid.tensor(support, dtype=lucid.float64)).numpy()
    assert _chi_square_pvalue(draws, log_pmf, support) > 1e-4


def test_count_samplers_edge_parameters():
    lucid.manual_seed(6)
    assert D.Poisson(lucid.tensor([0.0, 0.0])).sample((50,)).sum().item() == 0
    b = D.Binomial(lucid.tensor([0.0, 5.0, 5.0]), lucid.tensor([0.5, 0.0, 1.0])).sample((50,))
    assert np.array_equal(b.numpy(), np.tile([0.0, 0.0, 5.0], (50, 1)))


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_log_prob_gradcheck(name):
    mine, _, params, value = make(name, (2, 3))
    keys = list(params)
    value = lucid.tensor(value, dtype=lucid.float64)
    fixed = FAMILIES[name][1]

    def f(*args):
        return D.__dict__[_cls(name)](**fixed, **dict(zip(keys, args))).log_prob(value)

    assert gradcheck(f, tuple(lucid.tensor(params[k], dtype=lucid.float64, requires_grad=True) for k in keys))


def test_relaxed_rsample_gradcheck():
    logits = lucid.tensor(RNG.normal(size=(3, K)), dtype=lucid.float64, requires_grad=True)
    temperature = lucid.tensor(0.7, dtype=lucid.float64, requires_grad=True)

    def relaxed(logits, temperature):
        lucid.manual_seed(7)  # the same noise at every evaluation: a differentiable function of the parameters
        return D.RelaxedOneHotCategorical(temperature, logits=logits).rsample((2,))

    assert gradcheck(relaxed, (logits, temperature))


@pytest.mark.parametrize("shape", [(3,), (2, 3)], ids=str)
def test_relaxed_categoricals_match_pytorch(shape):
    torch = pytest.importorskip("torch")
    logits = RNG.normal(size=shape + (K,))
    t = 0.6
    mine = D.RelaxedOneHotCategorical(lucid.tensor(t, dtype=lucid.float64), logits=lucid.tensor(logits,
                                                                                               dtype=lucid.float64))
    theirs = torch.distributions.RelaxedOneHotCategorical(torch.tensor(t, dtype=torch.float64),
                                                          logits=torch.tensor(logits))
    lucid.manual_seed(9)
    x = mine.rsample((5,))
    assert tuple(x.shape) == (5,) + shape + (K,)
    np.testing.assert_allclose(x.sum(-1).numpy(), 1.0, rtol=1e-12)
    _close(mine.log_prob(x), theirs.log_prob(torch.tensor(x.numpy())), rtol=1e-8)
    base = D.ExpRelaxedCategorical(lucid.tensor(t, dtype=lucid.float64), logits=lucid.tensor(logits,
                                                                                            dtype=lucid.float64))
    y = base.rsample((4,))
    _close(base.log_prob(y), theirs.base_dist.log_prob(torch.tensor(y.numpy())), rtol=1e-8)
    assert tuple(mine.expand((2,) + shape).batch_shape) == (2,) + shape


def test_straight_through_gradient_is_that_of_probs():
    logits = lucid.tensor([[0.3, -1.0, 2.0, 0.1]], dtype=lucid.float64, requires_grad=True)
    d = D.OneHotCategoricalStraightThrough(logits=logits)
    s = d.rsample()
    assert set(np.unique(s.detach().numpy())) <= {0.0, 1.0}
    weights = lucid.tensor([1.0, 2.0, 3.0, 4.0], dtype=lucid.float64)
    (s * weights).sum().backward()
    logits2 = lucid.tensor([[0.3, -1.0, 2.0, 0.1]], dtype=lucid.float64, requires_grad=True)
    (D.Categorical(logits=logits2).probs * weights).sum().backward()
    np.testing.assert_allclose(logits.grad.numpy(), logits2.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("build,match", [
    (lambda: D.Bernoulli(), "Either `probs` or `logits` must be specified, but not both."),
    (lambda: D.Bernoulli(probs=lucid.tensor([0.5]), logits=lucid.tensor([0.0])),
     "Either `probs` or `logits` must be specified, but not both."),
    (lambda: D.Categorical(probs=lucid.tensor(0.5)), "`probs` parameter must be at least one-dimensional."),
    (lambda: D.Categorical(logits=lucid.tensor(0.5)), "`logits` parameter must be at least one-dimensional."),
    (lambda: D.Bernoulli(probs=lucid.tensor([1.5])), "Expected parameter probs"),
    (lambda: D.Poisson(lucid.tensor([-1.0])), "to satisfy the constraint GreaterThanEq(lower_bound=0.0)"),
    (lambda: D.Binomial(2.5, probs=lucid.tensor(0.5)), "Expected parameter total_count"),
    (lambda: D.Geometric(probs=lucid.tensor([0.0, 0.5])), "to be positive but found invalid values"),
    (lambda: D.Categorical(probs=lucid.tensor([0.5, -0.1, 0.6])), "to satisfy the constraint Simplex()"),
    (lambda: D.NegativeBinomial(2.0, probs=lucid.tensor(1.0)), "HalfOpenInterval(lower_bound=0.0, upper_bound=1.0)"),
])
def test_validation_errors(build, match):
    with pytest.raises(ValueError) as info:
        build()
    assert match in str(info.value)


def test_validation_messages_match_pytorch():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as mine:
        D.Poisson(lucid.tensor([1.0])).log_prob(lucid.tensor([0.5]))
    with pytest.raises(ValueError) as theirs:
        torch.distributions.Poisson(torch.tensor([1.0])).log_prob(torch.tensor([0.5]))
    head = "Expected value argument (Tensor of shape (1,)) to be within the support (IntegerGreaterThan"
    assert str(mine.value).startswith(head) and str(theirs.value).startswith(head)
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count is not supported"):
        D.Multinomial(lucid.tensor(3), probs=lucid.tensor([0.5, 0.5]))
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count not supported by `enumerate_support`"):
        D.Binomial(lucid.tensor([2.0, 3.0]), probs=lucid.tensor([0.5, 0.5])).enumerate_support()
    assert D.Categorical(probs=lucid.tensor([1.0, 3.0])).probs.tolist() == [0.25, 0.75]
