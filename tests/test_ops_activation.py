"""Activation functions (lucid.nn.functional). One table drives gradcheck + gradgradcheck in float64 and the forward
checks (float64 and float32) against numpy formulas; the tests after it pin down PyTorch's conventions: the
gradient at the kinks, node names, in-place forms, argument errors and behaviour at large magnitudes."""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from helpers import check_grads

_erfc = np.vectorize(math.erfc)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def U(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def AWAY(lo, hi):
    """|x| in [lo, hi) with a random sign: away from a kink at 0."""
    return lambda rng, shape: rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


def SPLIT(*parts):
    """Values from several intervals (each kink left out), chosen at random per element."""
    def draw(rng, shape):
        pieces = np.stack([rng.uniform(lo, hi, shape) for lo, hi in parts])
        return np.take_along_axis(pieces, rng.integers(0, len(parts), (1,) + tuple(shape)), 0)[0]
    return draw


UNARY = ((), (3,), (2, 3))


class Act(NamedTuple):
    name: str
    fn: Callable  # lucid, on Tensors
    ref: Callable  # numpy, on float64 arrays
    domain: Callable
    shapes: tuple = UNARY


def sigmoid_np(x):
    return 1 / (1 + np.exp(-x))


def softplus_np(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def elu_np(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return np.where(x > 0, x * scale, np.expm1(x * input_scale) * alpha * scale)


def gelu_tanh_np(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def glu_np(x, axis):
    a, b = np.split(x, 2, axis=axis)
    return a * sigmoid_np(b)


S = U(-3, 3)
PRELU_W = np.array([0.1, -0.3, 0.25])

ACTS = [
    Act("softplus", F.softplus, softplus_np, S),
    Act("softplus_beta", lambda x: F.softplus(x, beta=2.0, threshold=5.0), lambda x: softplus_np(x, 2.0, 5.0),
        SPLIT((-3, 2), (3, 4))),  # both sides of beta * x = threshold
    Act("gelu", F.gelu, lambda x: 0.5 * x * _erfc(-x / np.sqrt(2)), S),
    Act("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), gelu_tanh_np, S),
    Act("silu", F.silu, lambda x: x * sigmoid_np(x), S),
    Act("mish", F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x))), S),
    Act("elu", F.elu, elu_np, AWAY(0.1, 3)),
    Act("elu_alpha", lambda x: F.elu(x, alpha=0.5), lambda x: elu_np(x, 0.5), AWAY(0.1, 3)),
    Act("selu", F.selu, lambda x: elu_np(x, SELU_ALPHA, SELU_SCALE), AWAY(0.1, 3)),
    Act("celu", lambda x: F.celu(x, alpha=1.5), lambda x: elu_np(x, 1.5, 1.0, 1 / 1.5), AWAY(0.1, 3)),
    Act("leaky_relu", F.leaky_relu, lambda x: np.where(x > 0, x, 0.01 * x), AWAY(0.1, 3)),
    Act("leaky_relu_slope", lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x), AWAY(0.1, 3)),
    Act("hardtanh", F.hardtanh, lambda x: np.clip(x, -1, 1), SPLIT((-2, -1.1), (-0.9, 0.9), (1.1, 2))),
    Act("hardtanh_bounds", lambda x: F.hardtanh(x, -0.5, 0.3), lambda x: np.clip(x, -0.5, 0.3),
        SPLIT((-1, -0.6), (-0.4, 0.2), (0.4, 1))),
    Act("relu6", F.relu6, lambda x: np.clip(x, 0, 6), SPLIT((-2, -0.1), (0.1, 5.9), (6.1, 8))),
    Act("relu", F.relu, lambda x: np.maximum(x, 0), AWAY(0.1, 3)),
    Act("hardsigmoid", F.hardsigmoid, lambda x: np.clip(x / 6 + 0.5, 0, 1), SPLIT((-5, -3.1), (-2.9, 2.9), (3.1, 5))),
    Act("hardswish", F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, SPLIT((-5, -3.1), (-2.9, 2.9), (3.1, 5))),
    Act("logsigmoid", F.logsigmoid, lambda x: -np.log1p(np.exp(-x)), U(-5, 5)),
    Act("softsign", F.softsign, lambda x: x / (1 + np.abs(x)), AWAY(0.1, 3)),
    Act("tanhshrink", F.tanhshrink, lambda x: x - np.tanh(x), S),
    Act("threshold", lambda x: F.threshold(x, 0.2, -1.0), lambda x: np.where(x > 0.2, x, -1.0),
        SPLIT((-1, 0.1), (0.3, 1))),
    Act("hardshrink", F.hardshrink, lambda x: np.where(np.abs(x) > 0.5, x, 0.0), AWAY(0.6, 2)),
    Act("hardshrink_inside", lambda x: x.hardshrink(0.7), lambda x: np.where(np.abs(x) > 0.7, x, 0.0), U(-2, 2)),
    Act("softshrink", F.softshrink, lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.5, 0), AWAY(0.6, 2)),
    Act("softshrink_inside", lambda x: F.softshrink(x, 0.2), lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.2, 0),
        SPLIT((-1, -0.3), (-0.1, 0.1), (0.3, 1))),
    Act("rrelu_eval", F.rrelu, lambda x: np.where(x >= 0, x, x * (1 / 8 + 1 / 3) / 2), AWAY(0.1, 3)),
    Act("glu", F.glu, lambda x: glu_np(x, -1), S, shapes=((4,), (3, 2), (2, 1, 6))),
    Act("glu_dim0", lambda x: F.glu(x, 0), lambda x: glu_np(x, 0), S, shapes=((2,), (4, 3))),
    Act("prelu", lambda x: F.prelu(x, lucid.tensor(PRELU_W, dtype=x.dtype)),
        lambda x: np.where(x > 0, x, PRELU_W.reshape((3,) + (1,) * (x.ndim - 2)) * x), AWAY(0.1, 3),
        shapes=((2, 3), (2, 3, 4))),
]


def _array(a: Act, shape, seed=0):
    return np.asarray(a.domain(np.random.default_rng(seed), shape), dtype=np.float64)


def _cases():
    return [pytest.param(a, s, id=f"{a.name}-{list(s)}") for a in ACTS for s in a.shapes]


@pytest.mark.parametrize("act, shape", _cases())
def test_gradcheck_and_gradgradcheck(act, shape):
    check_grads(act.fn, lucid.tensor(_array(act, shape), dtype=lucid.float64, requires_grad=True))


@pytest.mark.parametrize("act, shape", _cases())
@pytest.mark.parametrize("dtype", [lucid.float64, lucid.float32], ids=["f64", "f32"])
def test_forward_matches_numpy(act, shape, dtype):
    x = lucid.tensor(_array(act, shape, seed=1), dtype=dtype)
    out = act.fn(x)
    expected = act.ref(x.numpy().astype(np.float64))
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    tol = dict(rtol=1e-13, atol=1e-15) if dtype == lucid.float64 else dict(rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), expected, **tol)


def test_prelu_weight_gradient_sums_over_batch_and_space():
    x = lucid.tensor(np.random.default_rng(0).uniform(-2, 2, (2, 3, 4)) + 0.05, dtype=lucid.float64)
    w = lucid.tensor([0.1, -0.3, 0.25], dtype=lucid.float64, requires_grad=True)
    check_grads(lambda w: F.prelu(x, w), w)
    x1 = lucid.tensor([[-1.0, 2.0], [-3.0, 4.0]], dtype=lucid.float64, requires_grad=True)
    w1 = lucid.tensor([0.5], dtype=lucid.float64, requires_grad=True)
    check_grads(F.prelu, x1, w1)  # one weight shared by every channel


# ---------------------------------------------------------------------------------------------------- conventions
def _grad_at(fn, values):
    x = lucid.tensor(values, dtype=lucid.float64, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.numpy()


@pytest.mark.parametrize("fn, points, grads", [
    (F.elu, [0.0], [1.0]),  # x <= 0 takes the exponential branch: alpha * exp(0)
    (lambda x: F.elu(x, alpha=0.3), [0.0], [0.3]),
    (lambda x: F.leaky_relu(x, 0.2), [0.0], [0.2]),
    (F.hardtanh, [-1.0, 1.0, 0.0], [0.0, 0.0, 1.0]),  # no gradient at the bounds (clamp passes one)
    (F.relu6, [0.0, 6.0, 3.0], [0.0, 0.0, 1.0]),
    (F.hardsigmoid, [-3.0, 3.0, 0.0], [0.0, 0.0, 1 / 6]),
    (F.hardswish, [-3.0, 3.0, 0.0, 1.5], [0.0, 1.0, 0.5, 1.0]),  # 0 at -3 and 1 at 3, as PyTorch 2
    (lambda x: F.threshold(x, 0.5, 0.0), [0.5], [0.0]),
    (F.hardshrink, [0.5, -0.5], [0.0, 0.0]),
    (F.softshrink, [0.5, -0.5], [0.0, 0.0]),
    (F.relu, [0.0], [0.0]),
    (lambda x: F.softplus(x, beta=1.0, threshold=1.0), [1.0, 1.5], [1 / (1 + math.exp(-1.0)), 1.0]),
], ids=["elu", "elu_alpha", "leaky_relu", "hardtanh", "relu6", "hardsigmoid", "hardswish", "threshold",
        "hardshrink", "softshrink", "relu", "softplus_threshold"])
def test_gradient_at_the_kinks_follows_pytorch(fn, points, grads):
    np.testing.assert_allclose(_grad_at(fn, points), grads, rtol=1e-15)


@pytest.mark.parametrize("name, fn", [
    ("SoftplusBackward0", F.softplus), ("GeluBackward0", F.gelu), ("GeluBackward0", lambda x: F.gelu(x, "tanh")),
    ("SiluBackward0", F.silu), ("MishBackward0", F.mish), ("EluBackward0", F.elu), ("EluBackward0", F.selu),
    ("CeluBackward0", F.celu), ("LeakyReluBackward0", F.leaky_relu), ("HardtanhBackward0", F.hardtanh),
    ("HardtanhBackward0", F.relu6), ("HardsigmoidBackward0", F.hardsigmoid), ("HardswishBackward0", F.hardswish),
    ("LogSigmoidBackward0", F.logsigmoid), ("DivBackward0", F.softsign), ("GluBackward0", F.glu),
    ("ThresholdBackward0", lambda x: F.threshold(x, 0.0, 1.0)), ("HardshrinkBackward0", F.hardshrink),
    ("SoftshrinkBackward0", F.softshrink), ("SubBackward0", F.tanhshrink), ("ReluBackward0", F.relu),
    ("PreluKernelBackward0", lambda x: F.prelu(x, lucid.tensor([0.2]))),
    ("RreluWithNoiseBackward0", lambda x: F.rrelu(x, training=True)),
    ("RreluWithNoiseBackward0", F.rrelu),
])
def test_node_names(name, fn):
    y = fn(lucid.tensor([-1.0, 2.0], requires_grad=True))
    assert type(y.grad_fn).__name__ == name


@pytest.mark.parametrize("fn, values", [
    (F.softplus, ([100.0, -100.0, -800.0], [100.0, math.exp(-100.0), 0.0])),
    (F.logsigmoid, ([100.0, -100.0, -800.0], [-math.exp(-100.0), -100.0, -800.0])),
    (F.mish, ([100.0, -100.0], [100.0, -100.0 * np.tanh(np.exp(-100.0))])),
    (F.silu, ([100.0, -100.0], [100.0, -100.0 / (1 + np.exp(100.0))])),
    (F.gelu, ([10.0, -10.0], [10.0, -10.0 * 0.5 * math.erfc(10 / math.sqrt(2))])),  # 7.6e-23: the erfc form
    (F.elu, ([-100.0], [-1.0])),
], ids=["softplus", "logsigmoid", "mish", "silu", "gelu", "elu"])
def test_large_magnitudes_are_stable_in_float64(fn, values):
    x, expected = values
    np.testing.assert_allclose(fn(lucid.tensor(x, dtype=lucid.float64)).numpy(), expected, rtol=1e-13, atol=0)


@pytest.mark.parametrize("fn", [F.softplus, F.logsigmoid, F.mish, F.silu, F.gelu], ids=lambda f: f.__name__)
def test_large_magnitudes_give_finite_gradients_in_float32(fn):
    g = _grad_at(lambda x: fn(x.float()), [80.0, -80.0, 0.0])
    assert np.isfinite(g).all()


# ---------------------------------------------------------------------------------------------------- in place
@pytest.mark.parametrize("name, call", [
    ("elu", lambda x: F.elu(x, inplace=True)), ("elu", F.elu_), ("elu", F.selu_), ("celu", F.celu_),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.1, inplace=True)), ("leaky_relu", F.leaky_relu_),
    ("hardtanh", F.hardtanh_), ("hardtanh", lambda x: F.relu6(x, inplace=True)), ("relu", F.relu_),
    ("threshold", lambda x: F.threshold_(x, 0.0, 2.0)), ("silu", lambda x: F.silu(x, inplace=True)),
    ("mish", lambda x: F.mish(x, inplace=True)), ("hardswish", lambda x: F.hardswish(x, inplace=True)),
    ("hardsigmoid", lambda x: F.hardsigmoid(x, inplace=True)), ("rrelu", F.rrelu_),
    ("rrelu", lambda x: F.rrelu(x, training=True, inplace=True)),
])
def test_inplace_forms_write_into_the_input_and_backpropagate(name, call):
    leaf_ = lucid.tensor([-1.5, 0.5, 2.0], dtype=lucid.float64, requires_grad=True)
    x = leaf_ * 1
    out = call(x)
    assert out is x and x._version == 1
    assert type(x.grad_fn).__name__.lower().startswith(name.replace("_", ""))
    x.sum().backward()
    assert leaf_.grad is not None and np.isfinite(leaf_.grad.numpy()).all()


def test_inplace_on_a_leaf_that_requires_grad_is_an_error():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        F.elu(lucid.tensor([1.0], requires_grad=True), inplace=True)


def test_inplace_matches_out_of_place():
    xn = np.array([-2.0, -0.1, 0.3, 7.0])
    for out_of_place, in_place in [(F.elu, F.elu_), (F.selu, F.selu_), (F.celu, F.celu_), (F.relu6, None),
                                   (F.leaky_relu, F.leaky_relu_), (F.hardtanh, F.hardtanh_)]:
        x = lucid.tensor(xn)
        expected = out_of_place(x).numpy()
        if in_place is None:
            out_of_place(x, inplace=True)
        else:
            in_place(x)
        np.testing.assert_array_equal(x.numpy(), expected)


# ---------------------------------------------------------------------------------------------------- rrelu, errors
def test_rrelu_training_draws_slopes_between_lower_and_upper():
    lucid.manual_seed(0)
    x = lucid.tensor(-np.ones(1000), dtype=lucid.float64, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.detach().numpy()
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and slopes.std() > 0.03
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-15)  # the gradient is the drawn slope
    pos = lucid.tensor([0.0, 2.0])
    np.testing.assert_array_equal(F.rrelu(pos, training=True).numpy(), [0.0, 2.0])


def test_argument_errors():
    x = lucid.tensor([[1.0, 2.0, 3.0]])
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        F.glu(x)
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(lucid.tensor(1.0))
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(x, approximate="fast")
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
        F.prelu(lucid.zeros(2, 3), lucid.tensor([0.1, 0.2]))
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
        F.softshrink(x, -0.5)


def test_selu_and_celu_are_scaled_elus():
    xn = np.linspace(-3, 3, 13)
    x = lucid.tensor(xn, dtype=lucid.float64)
    np.testing.assert_allclose(F.selu(x).numpy(), SELU_SCALE * np.where(xn > 0, xn, SELU_ALPHA * np.expm1(xn)),
                               rtol=1e-15)
    np.testing.assert_allclose(F.celu(x, 2.0).numpy(), np.maximum(xn, 0) + np.minimum(0, 2 * np.expm1(xn / 2)),
                               rtol=1e-15)


# ---------------------------------------------------------------------------------------------------- torch oracle
def _torch_fns(torch):
    tF = torch.nn.functional
    w = torch.tensor(PRELU_W)
    return {
        "softplus": tF.softplus, "softplus_beta": lambda t: tF.softplus(t, beta=2.0, threshold=5.0),
        "gelu": tF.gelu, "gelu_tanh": lambda t: tF.gelu(t, approximate="tanh"), "silu": tF.silu, "mish": tF.mish,
        "elu": tF.elu, "elu_alpha": lambda t: tF.elu(t, alpha=0.5), "selu": tF.selu,
        "celu": lambda t: tF.celu(t, alpha=1.5), "leaky_relu": tF.leaky_relu,
        "leaky_relu_slope": lambda t: tF.leaky_relu(t, 0.2), "hardtanh": tF.hardtanh,
        "hardtanh_bounds": lambda t: tF.hardtanh(t, -0.5, 0.3), "relu6": tF.relu6, "relu": tF.relu,
        "hardsigmoid": tF.hardsigmoid, "hardswish": tF.hardswish, "logsigmoid": tF.logsigmoid,
        "softsign": tF.softsign, "tanhshrink": tF.tanhshrink, "threshold": lambda t: tF.threshold(t, 0.2, -1.0),
        "hardshrink": tF.hardshrink, "hardshrink_inside": lambda t: t.hardshrink(0.7),
        "softshrink": tF.softshrink, "softshrink_inside": lambda t: tF.softshrink(t, 0.2), "rrelu_eval": tF.rrelu,
        "glu": tF.glu, "glu_dim0": lambda t: tF.glu(t, 0), "prelu": lambda t: tF.prelu(t, w),
    }


@pytest.mark.parametrize("name", [a.name for a in ACTS])
def test_against_torch(name):
    torch = pytest.importorskip("torch")
    act = next(a for a in ACTS if a.name == name)
    xn = _array(act, act.shapes[-1], seed=2)
    x = lucid.tensor(xn, dtype=lucid.float64, requires_grad=True)
    t = torch.tensor(xn, requires_grad=True)
    out, tout = act.fn(x), _torch_fns(torch)[name](t)
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-15)
    seed = np.random.default_rng(3).uniform(-1, 1, tuple(out.shape))
    (gx,) = lucid.autograd.grad(out, [x], lucid.tensor(seed, dtype=lucid.float64), create_graph=True)
    (gt,) = torch.autograd.grad(tout, [t], torch.tensor(seed), create_graph=True)
    # PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32, even in float64
    rtol = 1e-7 if name == "hardsigmoid" else 1e-12
    np.testing.assert_allclose(gx.detach().numpy(), gt.detach().numpy(), rtol=rtol, atol=1e-15)
    if name == "hardsigmoid":
        return  # PyTorch has no second derivative for it
    (ggt,) = torch.autograd.grad(gt.sum(), [t], allow_unused=True)
    if gx.requires_grad:
        (ggx,) = lucid.autograd.grad(gx.sum(), [x])
        np.testing.assert_allclose(ggx.numpy(), ggt.numpy(), rtol=1e-10, atol=1e-13)
    else:  # piecewise linear: lucid's gradient does not depend on x at all, PyTorch's second derivative is 0
        assert ggt is None or not ggt.any()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_backward_reuses_the_forward_cdf_and_stays_exact_under_create_graph(dtype):
    """A first-order backward takes Phi(x) from the forward (MLX's erf is costly on the CPU); under create_graph the
    VJP recomputes it from x, so second derivatives match PyTorch's as before."""
    torch = pytest.importorskip("torch")
    a = np.linspace(-6, 6, 41)
    g = np.cos(a)
    x = lucid.tensor(a, dtype=getattr(lucid, dtype), requires_grad=True)
    t = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True)
    out, tout = F.gelu(x), torch.nn.functional.gelu(t)
    assert out.grad_fn.name() == "GeluBackward0"
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-14)
    (gx,) = lucid.autograd.grad(out, [x], lucid.tensor(g, dtype=x.dtype), retain_graph=True)
    (tgx,) = torch.autograd.grad(tout, [t], torch.tensor(g, dtype=t.dtype), retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), **tol)
    (gx,) = lucid.autograd.grad(out, [x], lucid.tensor(g, dtype=x.dtype), create_graph=True)
    (tgx,) = torch.autograd.grad(tout, [t], torch.tensor(g, dtype=t.dtype), create_graph=True)
    np.testing.assert_allclose(lucid.autograd.grad(gx.sum(), x).numpy(),
                               torch.autograd.grad(tgx.sum(), t)[0].numpy(), **tol)


@pytest.mark.parametrize("act", ACTS, ids=lambda a: a.name)
def test_first_order_backward_reads_no_values(act, monkeypatch):
    """A backward builds MLX's graph and evaluates nothing: no MLX operation in a VJP may take a Tensor as an
    operand (``mx.array + Tensor`` is MLX's ``__add__``, which reads the Tensor through ``__dlpack__``, an evaluation
    and a copy; the exact GELU's VJP did so, evaluating the forward graph in the middle of every backward)."""
    rng = np.random.default_rng(0)
    x = lucid.tensor(act.domain(rng, act.shapes[-1]), dtype=lucid.float32, requires_grad=True)
    out = act.fn(x)
    reads, export = [], lucid.Tensor.__dlpack__

    def counted(self, *args, **kwargs):  # counted, not raising: MLX would catch the error and read another way
        reads.append(self.shape)
        return export(self, *args, **kwargs)
    monkeypatch.setattr(lucid.Tensor, "__dlpack__", counted)
    out.sum().backward()
    assert reads == [] and x.grad.shape == x.shape
