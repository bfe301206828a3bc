"""kl_divergence: every pair PyTorch registers against PyTorch at the same float64 parameters (finite and infinite
cases), the Bregman form for exponential families without a closed form of their own, register_kl's dispatch to
the most specific pair (and its ambiguity warning), the errors, and gradients of a few closed forms."""
import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck
from lucid.distributions.kl import _KL_REGISTRY

torch = pytest.importorskip("torch")
TD = torch.distributions
RNG = np.random.default_rng(3)
B = 3  # batch size


def _u(low, high, shape=(B,)):
    return RNG.uniform(low, high, size=shape)


def _spd(n=3):
    a = RNG.normal(size=(B, n, n))
    return a @ a.transpose(0, 2, 1) + n * np.eye(n)


# how to build each family (args, kwargs as numpy; `side` is "p" or "q": the support of p must lie in q's for a
# finite result, so a few families are drawn differently on each side)
def _params(name, side):
    if name == "Uniform":
        return ((_u(0.55, 0.6), _u(0.7, 0.9)) if side == "p" else (_u(-0.5, 0.0), _u(1.0, 1.5))), {}
    table = {
        "Bernoulli": ((), {"probs": _u(0.1, 0.9)}),
        "Beta": ((_u(0.5, 3), _u(0.5, 3)), {}),
        "Binomial": ((), {"total_count": 6.0, "probs": _u(0.1, 0.9)}),
        "Categorical": ((), {"probs": RNG.dirichlet(np.ones(4), size=B)}),
        "OneHotCategorical": ((), {"probs": RNG.dirichlet(np.ones(4), size=B)}),
        "Cauchy": ((_u(-1, 1), _u(0.5, 2)), {}),
        "ContinuousBernoulli": ((), {"probs": _u(0.1, 0.9)}),
        "Dirichlet": ((_u(0.5, 3, (B, 4)),), {}),
        "Exponential": ((_u(0.5, 2),), {}),
        "Gamma": ((_u(0.5, 4), _u(0.5, 2)), {}),
        "Geometric": ((), {"probs": _u(0.1, 0.9)}),
        "Gumbel": ((_u(-1, 1), _u(0.5, 2)), {}),
        "HalfNormal": ((_u(0.5, 2),), {}),
        "Laplace": ((_u(-1, 1), _u(0.5, 2)), {}),
        "Normal": ((_u(-1, 1), _u(0.5, 2)), {}),
        "Pareto": ((_u(0.2, 0.5), _u(2.5, 4)), {}),
        "Poisson": ((_u(0.5, 4),), {}),
        "MultivariateNormal": ((RNG.normal(size=(B, 3)),), {"covariance_matrix": _spd()}),
        "LowRankMultivariateNormal": ((RNG.normal(size=(B, 3)), RNG.normal(size=(B, 3, 2)), _u(0.5, 2, (B, 3))), {}),
    }
    return table[name]


def _build(module, name, args, kwargs):
    lib = lucid if module is D else torch

    def conv(v):
        return lib.tensor(v, dtype=lib.float64) if isinstance(v, np.ndarray) else v

    return getattr(module, name)(*map(conv, args), **{k: conv(v) for k, v in kwargs.items()})


def _pair(name, side):
    """The same distribution in lucid and in PyTorch."""
    if name == "Independent":
        loc, scale = _u(-1, 1, (B, 2)), _u(0.5, 2, (B, 2))
        return (D.Independent(_build(D, "Normal", (loc, scale), {}), 1),
                TD.Independent(_build(TD, "Normal", (loc, scale), {}), 1))
    if name == "TransformedDistribution":
        loc, scale = _u(-1, 1), _u(0.5, 2)
        return (D.TransformedDistribution(_build(D, "Normal", (loc, scale), {}), [D.ExpTransform()]),
                TD.TransformedDistribution(_build(TD, "Normal", (loc, scale), {}), [TD.ExpTransform()]))
    if name == "ExponentialFamily":  # Wishart has no pair of its own: the Bregman form serves it
        df, cov = _u(4, 6), _spd()
        return (_build(D, "Wishart", (df,), {"covariance_matrix": cov}),
                _build(TD, "Wishart", (df,), {"covariance_matrix": cov}))
    args, kwargs = _params(name, side)
    return _build(D, name, args, kwargs), _build(TD, name, args, kwargs)


PAIRS = sorted((p.__name__, q.__name__) for p, q in _KL_REGISTRY)


def test_every_pytorch_pair_is_registered():
    assert set(PAIRS) == {(p.__name__, q.__name__) for p, q in TD.kl._KL_REGISTRY}


@pytest.mark.parametrize("p_name,q_name", PAIRS, ids=lambda x: x)
def test_kl_matches_pytorch(p_name, q_name):
    p, tp = _pair(p_name, "p")
    q, tq = _pair(q_name, "q")
    mine, theirs = D.kl_divergence(p, q), TD.kl_divergence(tp, tq)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-8, atol=1e-10)


def test_kl_of_a_distribution_with_itself_is_zero():
    for name in ("Normal", "Gamma", "Beta", "Dirichlet", "MultivariateNormal", "LowRankMultivariateNormal",
                 "Categorical", "Poisson", "Binomial", "Geometric"):
        p, _ = _pair(name, "p")
        np.testing.assert_allclose(D.kl_divergence(p, p).detach().numpy(), 0.0, atol=1e-9, err_msg=name)


def test_infinite_where_supports_do_not_nest():
    p = D.Uniform(lucid.tensor([0.0, 0.2], dtype=lucid.float64), lucid.tensor([1.0, 0.5], dtype=lucid.float64))
    q = D.Uniform(lucid.tensor([0.1, 0.0], dtype=lucid.float64), lucid.tensor([2.0, 1.0], dtype=lucid.float64))
    kl = D.kl_divergence(p, q).numpy()
    assert kl[0] == np.inf and np.isclose(kl[1], np.log(1 / 0.3))
    assert D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0)).item() == np.inf


def test_dispatch_most_specific_and_ambiguity():
    class MyNormal(D.Normal):
        pass

    class MyOtherNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), MyOtherNormal(1.0, 2.0)
    assert np.isclose(D.kl_divergence(p, q).item(), D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)).item())

    @D.register_kl(MyNormal, D.Normal)
    def _left(p, q):
        return lucid.tensor(1.0)

    @D.register_kl(D.Normal, MyOtherNormal)
    def _right(p, q):
        return lucid.tensor(2.0)

    try:
        with pytest.warns(RuntimeWarning, match=r"Ambiguous kl_divergence\(MyNormal, MyOtherNormal\). "
                                                r"Please register_kl\(MyNormal, MyOtherNormal\)"):
            assert D.kl_divergence(p, q).item() == 1.0  # ordered by p's type first

        @D.register_kl(MyNormal, MyOtherNormal)
        def _both(p, q):
            return lucid.tensor(3.0)

        assert D.kl_divergence(p, q).item() == 3.0  # the memo is cleared by register_kl
        assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 1.0
    finally:
        for key in [(MyNormal, D.Normal), (D.Normal, MyOtherNormal), (MyNormal, MyOtherNormal)]:
            _KL_REGISTRY.pop(key, None)
        D.kl._KL_MEMOIZE.clear()


def test_errors():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type "
                                                  "Categorical"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(probs=lucid.tensor([0.5, 0.5])))
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        D.kl_divergence(D.Binomial(2, probs=lucid.tensor(0.5)), D.Binomial(3, probs=lucid.tensor(0.5)))
    with pytest.raises(NotImplementedError, match="cannot be computed using Bregman divergences"):
        D.kl.kl_divergence.__globals__["_kl_expfamily_expfamily"](D.Poisson(1.0), D.Normal(0.0, 1.0))
    mvn2 = D.MultivariateNormal(lucid.zeros(2), lucid.eye(2))
    mvn3 = D.MultivariateNormal(lucid.zeros(3), lucid.eye(3))
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(mvn2, mvn3)


@pytest.mark.parametrize("build", [
    lambda a, b: (D.Normal(a, b), D.Normal(b, a + 1)),
    lambda a, b: (D.Gamma(b, a + 1), D.Gamma(a + 1, b)),
    lambda a, b: (D.Dirichlet(lucid.stack([a + 1, b], -1)), D.Dirichlet(lucid.stack([b, a + 2], -1))),
    lambda a, b: (D.MultivariateNormal(lucid.stack([a, b], -1),
                                       scale_tril=lucid.diag_embed(lucid.stack([b, a + 1], -1))),
                  D.MultivariateNormal(lucid.stack([b, a], -1),
                                       covariance_matrix=lucid.eye(2, dtype=lucid.float64) * 2)),
], ids=["normal", "gamma", "dirichlet", "mvn"])
def test_kl_gradcheck(build):
    a = lucid.tensor([0.5, 1.2], dtype=lucid.float64, requires_grad=True)
    b = lucid.tensor([1.5, 0.7], dtype=lucid.float64, requires_grad=True)
    assert gradcheck(lambda a, b: D.kl_divergence(*build(a, b)), (a, b))
