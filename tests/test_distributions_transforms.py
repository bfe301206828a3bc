"""lucid.distributions.transforms and constraint_registry: every transform's value, inverse and log|det J| against
central finite differences (and against PyTorch when it is installed), caching, shape inference, biject_to /
transform_to, and PyTorch's errors."""
import math

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.distributions import Normal, constraints, transforms as T
from lucid.distributions.constraint_registry import biject_to, transform_to


def f64(a):
    return lucid.tensor(np.asarray(a, dtype=np.float64), dtype=lucid.float64)


def numeric_jacobian(fn, x: np.ndarray, h=1e-6) -> np.ndarray:
    """d fn(x) / d x by central differences, fn mapping a vector to a vector (numpy in, numpy out)."""
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((fn(x + e) - fn(x - e)) / (2 * h))
    return np.stack(cols, -1)


def apply(t, x: np.ndarray) -> np.ndarray:
    return t(f64(x)).numpy()


RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4))

# (transform, input in its domain): elementwise ones, whose Jacobian is diagonal
ELEMENTWISE = [
    ("exp", T.ExpTransform(), X),
    ("sigmoid", T.SigmoidTransform(), X),
    ("tanh", T.TanhTransform(), X),
    ("softplus", T.SoftplusTransform(), X),
    ("power", T.PowerTransform(f64(2.5)), np.abs(X) + 0.1),
    ("power_batched", T.PowerTransform(f64([0.5, 2.0, -1.0, 3.0])), np.abs(X) + 0.1),
    ("affine", T.AffineTransform(f64(0.3), f64(-2.0)), X),
    ("affine_number", T.AffineTransform(1.0, 3.0), X),
    ("sigmoid_inv", T.SigmoidTransform().inv, 1 / (1 + np.exp(-X))),
    ("cdf_normal", T.CumulativeDistributionTransform(Normal(f64(0.5), f64(2.0))), X),
]


@pytest.mark.parametrize("t, x", [pytest.param(t, x, id=n) for n, t, x in ELEMENTWISE])
def test_elementwise_inverse_and_log_det_against_finite_differences(t, x):
    y = t(f64(x))
    np.testing.assert_allclose(t.inv(y).numpy(), x, rtol=1e-9, atol=1e-10)
    h = 1e-6
    slope = (apply(t, x + h) - apply(t, x - h)) / (2 * h)
    np.testing.assert_allclose(t.log_abs_det_jacobian(f64(x), y).numpy(), np.log(np.abs(slope)), rtol=1e-6, atol=1e-7)


def _square_part(t, n_out):
    """The map x -> t(x) restricted to its first n_out outputs, flattened (so its Jacobian is square)."""
    return lambda v: apply(t, v).reshape(-1)[:n_out]


def test_stick_breaking_log_det_against_finite_differences():
    t = T.StickBreakingTransform()
    x = RNG.normal(size=3)
    y = t(f64(x))
    assert y.shape == (4,) and abs(float(y.sum()) - 1) < 1e-12
    np.testing.assert_allclose(t.inv(y).numpy(), x, rtol=1e-9)
    jac = numeric_jacobian(_square_part(t, 3), x)
    assert float(t.log_abs_det_jacobian(f64(x), y)) == pytest.approx(np.log(abs(np.linalg.det(jac))), rel=1e-6)


def test_corr_cholesky_log_det_against_finite_differences():
    """D = 3: the free coordinates of the factor are its strict lower triangle (the diagonal follows)."""
    t = T.CorrCholeskyTransform()
    x = RNG.normal(size=3)
    y = t(f64(x))
    assert constraints.corr_cholesky.check(y).item()
    np.testing.assert_allclose(t.inv(y).numpy(), x, rtol=1e-8)
    rows, cols = np.tril_indices(3, -1)
    jac = numeric_jacobian(lambda v: apply(t, v)[rows, cols], x)
    assert float(t.log_abs_det_jacobian(f64(x), y)) == pytest.approx(np.log(abs(np.linalg.det(jac))), rel=1e-6)


def test_affine_with_event_dim_sums_the_log_det():
    t = T.AffineTransform(f64([1.0, 2.0, 3.0]), f64([0.5, -2.0, 4.0]), event_dim=1)
    x = f64(RNG.normal(size=(2, 3)))
    ld = t.log_abs_det_jacobian(x, t(x))
    assert ld.shape == (2,)
    np.testing.assert_allclose(ld.numpy(), np.full(2, math.log(0.5 * 2 * 4)), rtol=1e-12)


def test_compose_sums_the_parts_and_inverts_in_reverse():
    t = T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.ExpTransform(), T.AffineTransform(1.0, 3.0)])
    x = X
    y = apply(t, x)
    np.testing.assert_allclose(y, 1 + 3 * np.exp(0.5 + 2 * x), rtol=1e-12)
    np.testing.assert_allclose(t.inv(f64(y)).numpy(), x, rtol=1e-10)
    h = 1e-6
    slope = (apply(t, x + h) - apply(t, x - h)) / (2 * h)
    np.testing.assert_allclose(t.log_abs_det_jacobian(f64(x), f64(y)).numpy(), np.log(slope), rtol=1e-6)
    assert t.inv.inv is t and t.bijective and t.sign == 1
    assert T.identity_transform(f64(x)).numpy().tolist() == x.tolist()


def test_independent_reshape_cat_stack():
    x = f64(X)
    ind = T.IndependentTransform(T.ExpTransform(), 1)
    assert ind.log_abs_det_jacobian(x, ind(x)).shape == (3,)
    np.testing.assert_allclose(ind.log_abs_det_jacobian(x, ind(x)).numpy(), X.sum(-1), rtol=1e-12)
    assert ind.domain.event_dim == 1 and ind.codomain.event_dim == 1

    r = T.ReshapeTransform((4,), (2, 2))
    assert r(x).shape == (3, 2, 2) and r.inv(r(x)).shape == (3, 4)
    assert r.forward_shape((5, 4)) == (5, 2, 2) and r.inverse_shape((5, 2, 2)) == (5, 4)
    assert r.log_abs_det_jacobian(x, r(x)).shape == (3,)

    c = T.CatTransform([T.ExpTransform(), T.identity_transform], dim=1, lengths=[1, 3])
    y = c(x)
    np.testing.assert_allclose(y.numpy()[:, 0], np.exp(X[:, 0]))
    np.testing.assert_allclose(y.numpy()[:, 1:], X[:, 1:])
    np.testing.assert_allclose(c.inv(y).numpy(), X, rtol=1e-12)
    np.testing.assert_allclose(c.log_abs_det_jacobian(x, y).numpy()[:, 0], X[:, 0])

    s = T.StackTransform([T.ExpTransform(), T.AffineTransform(0.0, 2.0), T.identity_transform, T.SigmoidTransform()],
                         dim=1)
    y = s(x)
    np.testing.assert_allclose(s.inv(y).numpy(), X, rtol=1e-10)
    ld = s.log_abs_det_jacobian(x, y).numpy()
    np.testing.assert_allclose(ld[:, 1], np.full(3, math.log(2)))


def test_lower_cholesky_and_positive_definite():
    m = f64(RNG.normal(size=(2, 3, 3)))
    lower = T.LowerCholeskyTransform()(m)
    assert constraints.lower_cholesky.check(lower).all().item()
    np.testing.assert_allclose(T.LowerCholeskyTransform().inv(lower).numpy(), np.tril(m.numpy()), rtol=1e-12)
    pd = T.PositiveDefiniteTransform()(m)
    assert constraints.positive_definite.check(pd).all().item()
    np.testing.assert_allclose(T.PositiveDefiniteTransform().inv(pd).numpy(), np.tril(m.numpy()), rtol=1e-8,
                               atol=1e-10)


def test_softmax_maps_onto_the_simplex():
    y = T.SoftmaxTransform()(f64(X))
    assert constraints.simplex.check(y).all().item()
    np.testing.assert_allclose(T.SoftmaxTransform()(T.SoftmaxTransform().inv(y)).numpy(), y.numpy(), rtol=1e-12)


def test_abs_transform_and_sign():
    t = T.AbsTransform()
    assert t(f64([-2.0, 3.0])).numpy().tolist() == [2.0, 3.0] and t.inv(f64([2.0])).numpy().tolist() == [2.0]
    assert T.AffineTransform(0.0, -2.0).sign == -1 and T.ExpTransform().sign == 1
    assert T.PowerTransform(f64(-1.0)).sign.item() == -1


def test_cache_returns_the_cached_value_by_identity():
    t = T.ExpTransform(cache_size=1)
    x = f64([0.5])
    y = t(x)
    assert t(x) is y and t.inv(y) is x
    plain = T.ExpTransform()
    assert plain.with_cache(1)._cache_size == 1 and plain.with_cache(0) is plain
    assert T.ComposeTransform([T.ExpTransform()], cache_size=1).parts[0]._cache_size == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)


def test_equality_and_errors():
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.AffineTransform(f64([1.0]), 2.0) != T.AffineTransform(f64([1.5]), 2.0)
    assert T.ExpTransform().inv == T.ExpTransform().inv
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers of elements"):
        T.ReshapeTransform((4,), (3,))
    with pytest.raises(ValueError, match="Shape mismatch"):
        T.ReshapeTransform((4,), (2, 2)).forward_shape((3, 5))
    with pytest.raises(ValueError, match="Input is not a flattened lower-diagonal number"):
        T.CorrCholeskyTransform().forward_shape((4,))
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        biject_to(constraints.boolean)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        biject_to.register(int, lambda c: None)


REGISTRY = [constraints.real, constraints.positive, constraints.nonnegative, constraints.greater_than(f64(1.5)),
            constraints.greater_than_eq(-2.0), constraints.less_than(3.0), constraints.unit_interval,
            constraints.interval(f64(-1.0), f64(4.0)), constraints.half_open_interval(0.0, 2.0),
            constraints.simplex, constraints.corr_cholesky, constraints.independent(constraints.positive, 1),
            constraints.real_vector, constraints.cat([constraints.positive, constraints.real], 1, [2, 1]),
            constraints.stack([constraints.positive, constraints.unit_interval, constraints.real], 1)]


@pytest.mark.parametrize("c", REGISTRY, ids=repr)
def test_biject_to_maps_the_reals_onto_the_constraint_and_back(c):
    t = biject_to(c)
    x = f64(RNG.normal(size=(2, 3)))
    y = t(x)
    assert c.check(y).all().item()
    assert t.bijective
    np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("c", [constraints.simplex, constraints.lower_cholesky, constraints.positive_definite,
                               constraints.positive_semidefinite], ids=repr)
def test_transform_to_reaches_the_constraint(c):
    x = f64(RNG.normal(size=(2, 3, 3)))
    assert c.check(transform_to(c)(x)).all().item()


def test_log_det_is_differentiable():
    x = f64(RNG.normal(size=3)).requires_grad_()
    for t in (T.StickBreakingTransform(), T.CorrCholeskyTransform(), T.TanhTransform()):
        assert gradcheck(lambda v, t=t: t.log_abs_det_jacobian(v, t(v)), (x,))
        assert gradcheck(lambda v, t=t: t(v), (x,))


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    TT = torch.distributions.transforms
    x = X
    pairs = [(T.ExpTransform(), TT.ExpTransform()), (T.SigmoidTransform(), TT.SigmoidTransform()),
             (T.TanhTransform(), TT.TanhTransform()), (T.SoftplusTransform(), TT.SoftplusTransform()),
             (T.StickBreakingTransform(), TT.StickBreakingTransform()),
             (T.AffineTransform(0.5, -3.0, event_dim=1), TT.AffineTransform(0.5, -3.0, event_dim=1))]
    for ours, theirs in pairs:
        y, yt = ours(f64(x)), theirs(torch.tensor(x))
        np.testing.assert_allclose(y.numpy(), yt.numpy(), rtol=1e-12)
        np.testing.assert_allclose(ours.log_abs_det_jacobian(f64(x), y).numpy(),
                                   theirs.log_abs_det_jacobian(torch.tensor(x), yt).numpy(), rtol=1e-10, atol=1e-12)
        assert ours.domain.event_dim == theirs.domain.event_dim
        assert ours.codomain.event_dim == theirs.codomain.event_dim
        assert repr(ours.codomain) == repr(theirs.codomain)
    v = RNG.normal(size=(2, 6))
    ours, theirs = T.CorrCholeskyTransform(), TT.CorrCholeskyTransform()
    y, yt = ours(f64(v)), theirs(torch.tensor(v))
    np.testing.assert_allclose(y.numpy(), yt.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours.log_abs_det_jacobian(f64(v), y).numpy(),
                               theirs.log_abs_det_jacobian(torch.tensor(v), yt).numpy(), rtol=1e-10)
    assert repr(T.ComposeTransform([T.ExpTransform(), T.SigmoidTransform()])) == \
        repr(TT.ComposeTransform([TT.ExpTransform(), TT.SigmoidTransform()]))


def test_constraints_check_as_pytorch():
    torch = pytest.importorskip("torch")
    C, TC = constraints, torch.distributions.constraints
    m = RNG.normal(size=(3, 3))
    spd = m @ m.T + 3 * np.eye(3)
    values = [np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan]), np.array([[0.2, 0.8], [0.5, 0.6]]),
              np.array([[0.0, 1.0], [1.0, 1.0]]), np.tril(m), np.linalg.cholesky(spd), spd, m, m + m.T,
              np.array([[2.0, 1.0], [0.0, 3.0]])]
    pairs = [(C.real, TC.real), (C.positive, TC.positive), (C.nonnegative, TC.nonnegative),
             (C.unit_interval, TC.unit_interval), (C.boolean, TC.boolean), (C.simplex, TC.simplex),
             (C.one_hot, TC.one_hot), (C.nonnegative_integer, TC.nonnegative_integer),
             (C.positive_integer, TC.positive_integer), (C.integer_interval(0, 1), TC.integer_interval(0, 1)),
             (C.interval(-0.5, 1.0), TC.interval(-0.5, 1.0)), (C.half_open_interval(0.0, 1.0), TC.half_open_interval(0.0, 1.0)),
             (C.greater_than(0.5), TC.greater_than(0.5)), (C.greater_than_eq(0.5), TC.greater_than_eq(0.5)),
             (C.less_than(0.5), TC.less_than(0.5)), (C.real_vector, TC.real_vector),
             (C.lower_triangular, TC.lower_triangular), (C.lower_cholesky, TC.lower_cholesky),
             (C.square, TC.square), (C.symmetric, TC.symmetric), (C.positive_definite, TC.positive_definite),
             (C.positive_semidefinite, TC.positive_semidefinite), (C.multinomial(2), TC.multinomial(2)),
             (C.independent(C.positive, 1), TC.independent(TC.positive, 1))]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        assert ours.event_dim == theirs.event_dim and ours.is_discrete == theirs.is_discrete, repr(ours)
        for v in values:
            if v.ndim < ours.event_dim or (ours.event_dim == 2 and v.shape[-1] != v.shape[-2]):
                continue
            np.testing.assert_array_equal(ours.check(f64(v)).numpy(), theirs.check(torch.tensor(v)).numpy(),
                                          err_msg=f"{ours!r} on {v}")


def test_dependent_constraints():
    assert constraints.is_dependent(constraints.dependent) and not constraints.is_dependent(constraints.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        constraints.dependent.check(f64([1.0]))
    with pytest.raises(NotImplementedError, match=".event_dim cannot be determined statically"):
        constraints.dependent.event_dim
    assert constraints.dependent(is_discrete=True, event_dim=1).event_dim == 1
    from lucid.distributions import Uniform
    assert constraints.is_dependent(Uniform.support)
    assert repr(Uniform(0.0, 2.0).support) == "Interval(lower_bound=0.0, upper_bound=2.0)"


def test_utils_as_pytorch():
    torch = pytest.importorskip("torch")
    from lucid.distributions import utils as U
    TU = torch.distributions.utils
    v = RNG.normal(size=(2, 6))
    for diag in (0, -1):
        n = 4 if diag == -1 else 3
        np.testing.assert_array_equal(U.vec_to_tril_matrix(f64(v), diag).numpy(),
                                      TU.vec_to_tril_matrix(torch.tensor(v), diag).numpy())
        m = RNG.normal(size=(2, n, n))
        np.testing.assert_array_equal(U.tril_matrix_to_vec(f64(m), diag).numpy(),
                                      TU.tril_matrix_to_vec(torch.tensor(m), diag).numpy())
    with pytest.raises(ValueError, match="The size of last dimension is 4 which cannot be expressed as the lower "
                                         "triangular part of a square D x D matrix."):
        U.vec_to_tril_matrix(f64(np.zeros(4)))
    with pytest.raises(ValueError, match=r"diag \(3\) provided is outside \[-3, 2\]."):
        U.tril_matrix_to_vec(f64(np.zeros((3, 3))), 3)
    p = np.array([0.0, 0.3, 1.0])
    for is_binary in (True, False):
        np.testing.assert_allclose(U.probs_to_logits(f64(p), is_binary).numpy(),
                                   TU.probs_to_logits(torch.tensor(p), is_binary).numpy(), rtol=1e-12)
        np.testing.assert_allclose(U.logits_to_probs(f64(v), is_binary).numpy(),
                                   TU.logits_to_probs(torch.tensor(v), is_binary).numpy(), rtol=1e-12)
    np.testing.assert_array_equal(U.clamp_probs(f64(p)).numpy(), TU.clamp_probs(torch.tensor(p)).numpy())
    a, b = U.broadcast_all(2.0, f64([[1.0], [2.0]]))
    assert a.shape == b.shape == (2, 1) and a.dtype == lucid.float64
    (c,) = U.broadcast_all(3)
    assert c.dtype == lucid.get_default_dtype()
    with pytest.raises(ValueError, match="Input arguments must all be instances of Number, torch.Tensor or objects "
                                         "implementing __torch_function__."):
        U.broadcast_all(f64([1.0]), "x")


def test_torch_distributions_under_the_compat_layer():
    """``import torch.distributions`` and its submodules as a PyTorch program writes them, under lucid.compat."""
    import importlib
    torch = importlib.import_module("lucid.compat.torch")
    D = importlib.import_module("lucid.compat.torch.distributions")
    assert D is torch.distributions is lucid.distributions
    assert importlib.import_module("lucid.compat.torch.distributions.transforms").SigmoidTransform is \
        T.SigmoidTransform
    assert importlib.import_module("lucid.compat.torch.distributions.constraints").positive is constraints.positive
    assert importlib.import_module("lucid.compat.torch.distributions.normal").Normal is Normal
    assert torch.distributions.transforms.ExpTransform().inv.inv.__class__ is T.ExpTransform


def test_torch_distributions_in_a_program_under_lucid_run(tmp_path):
    from lucid.compat.run import run_script
    script = tmp_path / "prog.py"
    script.write_text(
        "import torch\n"
        "import torch.distributions as D\n"
        "from torch.distributions import Categorical\n"
        "from torch.distributions.transforms import SigmoidTransform\n"
        "from torch.distributions.kl import kl_divergence\n"
        "import torch.distributions.constraints as C\n"
        "c = Categorical(logits=torch.zeros(3))\n"
        "assert c.sample((4,)).shape == (4,)\n"
        "u = D.TransformedDistribution(D.Uniform(0.0, 1.0), [SigmoidTransform().inv])\n"
        "assert C.real.check(u.sample()).item()\n"
        "kl = kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 1.0))\n"
        "assert abs(kl.item() - 0.5) < 1e-6\n"
        "assert torch.distributions.kl.kl_divergence is kl_divergence\n"
        "print('ok')\n")
    run_script(script, [])
