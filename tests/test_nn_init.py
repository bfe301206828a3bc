"""nn.init (statistics on large tensors against the formulas, in place under no_grad, reproducible with
manual_seed) and nn.utils (clip_grad_norm_/clip_grad_value_ against numpy, parameters_to_vector round trip)."""
import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn import Parameter, init
from lucid.nn.utils import (clip_grad_norm_, clip_grad_value_, get_total_norm, parameters_to_vector,
                            vector_to_parameters)


def big(*shape, dtype=lucid.float32):
    return Parameter(lucid.zeros(*shape, dtype=dtype))


# ---------------------------------------------------------------------------------------------------- formulas
def test_calculate_gain():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


def test_fan_in_and_fan_out():
    assert init._calculate_fan_in_and_fan_out(lucid.zeros(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(lucid.zeros(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2"):
        init._calculate_fan_in_and_fan_out(lucid.zeros(5))
    with pytest.raises(ValueError, match="Mode fan_avg not supported, please use one of"):
        init.kaiming_uniform_(lucid.zeros(2, 2), mode="fan_avg")


# ---------------------------------------------------------------------------------------------------- distributions
def test_uniform_and_normal_statistics():
    t = big(400, 500)
    init.uniform_(t, -2.0, 3.0)
    a = t.detach().numpy()
    assert a.min() >= -2.0 and a.max() < 3.0
    assert a.mean() == pytest.approx(0.5, abs=0.02) and a.std() == pytest.approx(5 / math.sqrt(12), rel=0.01)
    init.normal_(t, 1.0, 0.5)
    a = t.detach().numpy()
    assert a.mean() == pytest.approx(1.0, abs=0.005) and a.std() == pytest.approx(0.5, rel=0.01)


def test_trunc_normal_bounds_and_moments():
    t = big(400, 500)
    init.trunc_normal_(t, mean=0.0, std=1.0, a=-1.0, b=2.0)
    a = t.detach().numpy()
    assert a.min() >= -1.0 and a.max() <= 2.0
    # moments of N(0, 1) truncated to [alpha, beta]
    alpha, beta = -1.0, 2.0
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    mean = (phi(alpha) - phi(beta)) / z
    var = 1 + (alpha * phi(alpha) - beta * phi(beta)) / z - mean ** 2
    assert a.mean() == pytest.approx(mean, abs=0.01) and a.std() == pytest.approx(math.sqrt(var), rel=0.01)


def test_constant_zeros_ones_eye():
    t = big(3, 4)
    init.constant_(t, 2.5)
    np.testing.assert_array_equal(t.detach().numpy(), np.full((3, 4), 2.5))
    init.zeros_(t)
    assert not t.detach().numpy().any()
    init.ones_(t)
    assert (t.detach().numpy() == 1).all()
    init.eye_(t)
    np.testing.assert_array_equal(t.detach().numpy(), np.eye(3, 4))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(lucid.zeros(2, 2, 2))


def test_dirac_passes_channels_through():
    w = big(6, 3, 3, 3)
    init.dirac_(w, groups=2)
    a = w.detach().numpy()
    expected = np.zeros((6, 3, 3, 3), np.float32)
    for g in range(2):
        for d in range(3):
            expected[g * 3 + d, d, 1, 1] = 1
    np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("fn", ["xavier_uniform_", "xavier_normal_"])
def test_xavier(fn):
    t = big(300, 200)
    getattr(init, fn)(t, gain=2.0)
    a = t.detach().numpy()
    std = 2.0 * math.sqrt(2.0 / 500)
    assert a.std() == pytest.approx(std, rel=0.02) and abs(a.mean()) < 0.01 * std * 10
    if fn == "xavier_uniform_":
        bound = math.sqrt(3) * std
        assert a.max() <= bound and a.min() >= -bound and a.max() > 0.99 * bound


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
def test_kaiming_uniform_and_normal(mode):
    t = big(64, 32, 3, 3)  # fan_in 288, fan_out 576
    fan = 288 if mode == "fan_in" else 576
    init.kaiming_uniform_(t, a=math.sqrt(5), mode=mode)  # the default Linear/Conv init
    bound = math.sqrt(6 / ((1 + 5) * fan))
    a = t.detach().numpy()
    assert a.max() <= bound and a.min() >= -bound and a.max() > 0.99 * bound
    assert a.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)
    init.kaiming_normal_(t, mode=mode, nonlinearity="relu")
    assert t.detach().numpy().std() == pytest.approx(math.sqrt(2 / fan), rel=0.02)


def test_kaiming_on_empty_tensor_warns():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(lucid.zeros(0, 3))


@pytest.mark.parametrize("shape", [(20, 20), (10, 30), (30, 10), (6, 2, 3)])
def test_orthogonal(shape):
    t = big(*shape)
    init.orthogonal_(t, gain=2.0)
    q = t.detach().numpy().reshape(shape[0], -1) / 2.0
    rows, cols = q.shape
    if rows >= cols:
        np.testing.assert_allclose(q.T @ q, np.eye(cols), atol=1e-5)
    else:
        np.testing.assert_allclose(q @ q.T, np.eye(rows), atol=1e-5)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(lucid.zeros(3))


def test_sparse_zeroes_a_fraction_of_each_column():
    t = big(10, 50)
    init.sparse_(t, 0.3)
    a = t.detach().numpy()
    assert ((a == 0).sum(axis=0) == 3).all()


# ---------------------------------------------------------------------------------------------------- in place
def test_init_is_in_place_under_no_grad_and_returns_the_tensor():
    p = Parameter(lucid.zeros(3, 4))
    storage = p._storage
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_, init.orthogonal_,
               init.trunc_normal_, init.zeros_, init.eye_):
        assert fn(p) is p
        assert p.is_leaf and p.requires_grad and p.grad_fn is None and p._storage is storage
    f64 = Parameter(lucid.zeros(50, 40, dtype=lucid.float64))
    init.kaiming_uniform_(f64)
    init.normal_(f64)
    assert f64.dtype == lucid.float64 and f64.detach().numpy().std() > 0.5


def test_init_is_reproducible_with_manual_seed():
    a, b = big(5, 5), big(5, 5)
    lucid.manual_seed(7)
    init.xavier_normal_(a)
    lucid.manual_seed(7)
    init.xavier_normal_(b)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    init.xavier_normal_(b)
    assert not np.array_equal(a.detach().numpy(), b.detach().numpy())


def test_init_reaches_optimizer_held_parameters():
    m = nn.Module()
    m.w = Parameter(lucid.zeros(2, 2))
    held = list(m.parameters())
    init.ones_(m.w)
    np.testing.assert_array_equal(held[0].detach().numpy(), np.ones((2, 2)))


# ---------------------------------------------------------------------------------------------------- utils
def _params_with_grads(seed=0):
    rng = np.random.default_rng(seed)
    params = [Parameter(lucid.tensor(rng.standard_normal(s).astype(np.float32))) for s in [(3, 4), (4,), (2, 2)]]
    grads = [rng.standard_normal(tuple(p.shape)).astype(np.float32) * 3 for p in params]
    for p, g in zip(params, grads):
        p.grad = lucid.tensor(g)
    return params, grads


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_matches_numpy(norm_type):
    params, grads = _params_with_grads()
    flat = np.concatenate([g.ravel() for g in grads])
    expected = np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    total = clip_grad_norm_(params, max_norm=1.0, norm_type=norm_type)
    assert isinstance(total, lucid.Tensor) and total.ndim == 0
    assert total.item() == pytest.approx(expected, rel=1e-5)
    coef = min(1.0, 1.0 / (expected + 1e-6))
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g * coef, rtol=1e-5)


def test_clip_grad_norm_below_max_leaves_grads_and_skips_none():
    params, grads = _params_with_grads()
    params.append(Parameter(lucid.zeros(2)))  # no grad
    total = clip_grad_norm_(iter(params), max_norm=1e6)
    assert total.item() == pytest.approx(np.sqrt(sum((g ** 2).sum() for g in grads)), rel=1e-5)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-6)
    assert clip_grad_norm_([Parameter(lucid.zeros(1))], 1.0).item() == 0.0


def test_clip_grad_norm_single_tensor_and_nonfinite():
    p = Parameter(lucid.zeros(2))
    p.grad = lucid.tensor([3.0, 4.0])
    assert clip_grad_norm_(p, 1.0).item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)
    p.grad = lucid.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert get_total_norm([lucid.tensor([1.0, 2.0, 2.0])]).item() == pytest.approx(3.0)


def test_clip_grad_value_():
    params, grads = _params_with_grads()
    assert clip_grad_value_(params, 0.5) is None
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), np.clip(g, -0.5, 0.5))


def test_parameters_to_vector_round_trip():
    params, _ = _params_with_grads()
    held = list(params)
    vec = parameters_to_vector(params)
    assert vec.shape == (12 + 4 + 4,)
    np.testing.assert_allclose(vec.detach().numpy(), np.concatenate([p.detach().numpy().ravel() for p in params]))
    vec.sum().backward()  # differentiable, as in PyTorch
    vector_to_parameters(lucid.arange(20, dtype=lucid.float32), params)
    assert all(p is q for p, q in zip(params, held)) and params[1].shape == (4,)
    np.testing.assert_array_equal(params[0].detach().numpy(), np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(params[2].detach().numpy(), [[16, 17], [18, 19]])
    with pytest.raises(TypeError, match="expected lucid.Tensor, but got: list"):
        vector_to_parameters([1.0], params)


# ---------------------------------------------------------------------------------------------------- PyTorch oracle
def test_clip_grad_norm_against_pytorch():
    torch = pytest.importorskip("torch")
    _, grads = _params_with_grads(3)
    tparams = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    for norm_type in (2.0, 0.5, math.inf):
        params, _ = _params_with_grads(3)
        for tp, g in zip(tparams, grads):
            tp.grad = torch.tensor(g)
        expected = torch.nn.utils.clip_grad_norm_(tparams, 2.0, norm_type=norm_type)
        total = clip_grad_norm_(params, 2.0, norm_type=norm_type)
        assert total.item() == pytest.approx(expected.item(), rel=1e-5)
        for p, tp in zip(params, tparams):
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5)
    assert init.calculate_gain("leaky_relu", 0.3) == pytest.approx(torch.nn.init.calculate_gain("leaky_relu", 0.3))
    w = torch.zeros(8, 4, 3, 3)
    assert init._calculate_fan_in_and_fan_out(lucid.zeros(8, 4, 3, 3)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(w)


def test_init_through_views_and_data_writes_into_the_parameter():
    w = Parameter(lucid.zeros(3, 4))
    init.ones_(w[0])
    init.constant_(w[1:, 2:], 5.0)  # e.g. an LSTM forget-gate bias slice
    np.testing.assert_array_equal(w.detach().numpy(), [[1, 1, 1, 1], [0, 0, 5, 5], [0, 0, 5, 5]])
    init.normal_(w.data, 0.0, 1e-3)
    assert w.detach().numpy().std() < 0.01 and w.requires_grad and w.is_leaf
