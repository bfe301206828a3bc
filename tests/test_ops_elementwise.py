"""Elementwise ops. One table (OPS) drives the derivative checks (gradcheck + gradgradcheck in float64) and the
forward checks (float64 and float32 against a numpy formula) over scalar, vector, matrix and broadcasting shapes.
The tests after it pin down PyTorch's semantics around these ops: subgradients at kinks, grad_fn names, type
promotion, broadcasting, numpy/Python operands, comparisons, casts."""
from __future__ import annotations

from typing import Callable, NamedTuple

import math

import mlx.core as mx
import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf
from lucid.autograd import gradgradcheck
from lucid.ops import _f64


# ---------------------------------------------------------------------------------------------------- domains
# A domain draws the values of one input: kinks, poles and jumps are kept out of gradcheck's reach.
def U(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def AWAY(lo, hi):
    """|x| in [lo, hi) with a random sign: away from 0 (abs, relu, sign, reciprocal)."""
    return lambda rng, shape: rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


def FRAC(rng, shape):
    """An integer in [-2, 2] plus a fraction in [0.1, 0.4): away from the jumps of floor/ceil/round/trunc."""
    return rng.integers(-2, 3, shape) + rng.uniform(0.1, 0.4, shape)


UNARY = (((),), ((3,),), ((2, 3),))
BINARY = (((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)), ((), (2, 3)), ((), ()))
TERNARY = (((2, 3), (2, 3), (2, 3)), ((2, 3), (3,), (2, 1)), ((), (2, 3), ()), ((), (), ()))
# the special functions' two-input ops: broadcasting both ways, a 0-d operand, and 0-d alone
BINARY_SHORT = (((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((), ()))


class Op(NamedTuple):
    name: str
    fn: Callable  # lucid, on Tensors
    ref: Callable  # numpy, on float64 arrays
    domains: tuple  # one per input
    shapes: tuple  # tuples of input shapes, one shape per input


def op(name, fn, ref, *domains, shapes=None):
    default = {1: UNARY, 2: BINARY, 3: TERNARY}[len(domains)]
    return Op(name, fn, ref, domains, shapes or default)


def sigmoid_np(x):
    return 1 / (1 + np.exp(-x))


erf_np, erfc_np = np.vectorize(math.erf), np.vectorize(math.erfc)  # C's erf/erfc: correctly rounded or nearly


def erfinv_np(x):
    return pytest.importorskip("scipy.special").erfinv(x)


def lerp_np(a, b, w):
    """PyTorch's lerp: a + w (b - a) for |w| < 0.5, else b - (b - a)(1 - w) (exact at both ends)."""
    return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


S = U(-1, 1)  # the default domain
POS = U(0.5, 2)

OPS = [
    # arithmetic
    op("add", lambda x, y: x + y, np.add, S, S),
    op("add_alpha", lambda x, y: lucid.add(x, y, alpha=2), lambda x, y: x + 2 * y, S, S),
    op("sub", lambda x, y: x - y, np.subtract, S, S),
    op("sub_alpha", lambda x, y: x.sub(y, alpha=0.5), lambda x, y: x - 0.5 * y, S, S),
    op("rsub", lambda x, y: lucid.rsub(x, y), lambda x, y: y - x, S, S),
    op("mul", lambda x, y: x * y, np.multiply, S, S),
    op("div", lambda x, y: x / y, np.divide, S, AWAY(0.5, 2)),
    op("floor_divide", lambda x, y: x // y, np.floor_divide, U(-2, 2), AWAY(0.5, 1.5)),
    op("div_floor", lambda x, y: x.div(y, rounding_mode="floor"), np.floor_divide, U(-2, 2), AWAY(0.5, 1.5)),
    op("div_trunc", lambda x, y: lucid.div(x, y, rounding_mode="trunc"), lambda x, y: np.trunc(x / y), U(-2, 2),
       AWAY(0.5, 1.5)),
    op("remainder", lambda x, y: x % y, np.remainder, U(-2, 2), AWAY(0.5, 1.5)),
    op("neg", lambda x: -x, np.negative, S),
    op("pow_scalar", lambda x: x ** 2.5, lambda x: x ** 2.5, POS),
    op("pow_int", lambda x: x ** 3, lambda x: x ** 3, S),
    op("pow_negative", lambda x: x.pow(-2), lambda x: x ** -2.0, AWAY(0.5, 2)),
    op("pow_one", lambda x: x ** 1, lambda x: x, S),
    op("pow_zero", lambda x: x ** 0, lambda x: x ** 0, S),
    op("pow_tensor", lambda x, y: x ** y, np.power, POS, U(-1, 2)),
    op("pow_scalar_base", lambda x: lucid.pow(2.5, x), lambda x: 2.5 ** x, S),
    # reflected forms with Python numbers
    op("radd", lambda x: 2 + x, lambda x: 2 + x, S),
    op("rsub_scalar", lambda x: 2 - x, lambda x: 2 - x, S),
    op("rmul", lambda x: 2 * x, lambda x: 2 * x, S),
    op("rdiv", lambda x: 2 / x, lambda x: 2 / x, AWAY(0.5, 2)),
    op("rpow", lambda x: 2 ** x, lambda x: 2.0 ** x, S),
    op("rpow_below_one", lambda x: 0.5 ** x, lambda x: 0.5 ** x, S),
    op("rfloordiv", lambda x: 2 // x, lambda x: 2 // x, AWAY(0.55, 0.65)),
    op("rmod", lambda x: 2 % x, lambda x: np.remainder(2, x), AWAY(0.55, 0.65)),
    # unary math
    op("abs", lambda x: x.abs(), np.abs, AWAY(0.2, 1)),
    op("exp", lucid.exp, np.exp, S),
    op("exp2", lucid.exp2, np.exp2, S),
    op("log", lucid.log, np.log, POS),
    op("log2", lucid.log2, np.log2, POS),
    op("log10", lucid.log10, np.log10, POS),
    op("log1p", lucid.log1p, np.log1p, U(-0.5, 1)),
    op("expm1", lucid.expm1, np.expm1, S),
    op("sqrt", lucid.sqrt, np.sqrt, POS),
    op("rsqrt", lucid.rsqrt, lambda x: 1 / np.sqrt(x), POS),
    op("square", lucid.square, np.square, S),
    op("reciprocal", lucid.reciprocal, np.reciprocal, AWAY(0.5, 2)),
    op("sin", lucid.sin, np.sin, U(-3, 3)),
    op("cos", lucid.cos, np.cos, U(-3, 3)),
    op("tan", lucid.tan, np.tan, S),
    op("tanh", lucid.tanh, np.tanh, U(-2, 2)),
    op("sigmoid", lucid.sigmoid, sigmoid_np, U(-3, 3)),
    op("relu", lucid.relu, lambda x: np.maximum(x, 0), AWAY(0.2, 1)),
    # piecewise constant: zero gradient
    op("sign", lucid.sign, np.sign, AWAY(0.2, 1)),
    op("floor", lucid.floor, np.floor, FRAC),
    op("ceil", lucid.ceil, np.ceil, FRAC),
    op("round", lucid.round, np.round, FRAC),
    op("trunc", lucid.trunc, np.trunc, FRAC),
    # two inputs
    op("maximum", lucid.maximum, np.maximum, S, S),
    op("minimum", lucid.minimum, np.minimum, S, S),
    op("fmax", lucid.fmax, np.fmax, S, S),
    op("fmin", lucid.fmin, np.fmin, S, S),
    op("maximum_scalar", lambda x: lucid.maximum(x, 0.2), lambda x: np.maximum(x, 0.2), S),
    op("where", lambda x, y: lucid.where(x > 0, x, y), lambda x, y: np.where(x > 0, x, y), AWAY(0.2, 1), S),
    op("where_scalar", lambda x: lucid.where(x > 0, x.exp(), 0.0), lambda x: np.where(x > 0, np.exp(x), 0.0),
       AWAY(0.2, 1)),
    op("where_method", lambda x, y: x.where(y < 0, y), lambda x, y: np.where(y < 0, x, y), S, AWAY(0.2, 1)),
    # clamp: number bounds, one-sided, tensor bounds, min > max
    op("clamp", lambda x: x.clamp(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), S),
    op("clamp_min_only", lambda x: lucid.clamp(x, min=-0.3), lambda x: np.maximum(x, -0.3), S),
    op("clamp_max_only", lambda x: x.clamp(max=0.3), lambda x: np.minimum(x, 0.3), S),
    op("clip", lambda x: lucid.clip(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), S),
    op("clamp_min", lambda x: x.clamp_min(0.1), lambda x: np.maximum(x, 0.1), S),
    op("clamp_max", lambda x: lucid.clamp_max(x, 0.1), lambda x: np.minimum(x, 0.1), S),
    op("clamp_tensor", lambda x, lo, hi: lucid.clamp(x, lo, hi), lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
       U(-2, 2), U(-1, -0.3), U(0.3, 1)),
    op("clamp_tensor_min", lambda x, lo: x.clamp(min=lo), np.maximum, S, S),
    op("clamp_tensor_max", lambda x, hi: x.clamp(max=hi), np.minimum, S, S),
    op("clamp_min_above_max", lambda x, lo, hi: lucid.clamp(x, lo, hi),
       lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), U(-2, 2), U(0.5, 1), U(-1, -0.5)),
    # inverse trigonometric and hyperbolic (away from the poles of their derivatives)
    op("asin", lucid.asin, np.arcsin, U(-0.9, 0.9)),
    op("acos", lambda x: x.acos(), np.arccos, U(-0.9, 0.9)),
    op("atan", lucid.atan, np.arctan, U(-3, 3)),
    op("atan2", lucid.atan2, np.arctan2, AWAY(0.2, 1), S, shapes=BINARY_SHORT),  # y away from the branch cut
    op("sinh", lucid.sinh, np.sinh, U(-2, 2)),
    op("cosh", lambda x: x.cosh(), np.cosh, U(-2, 2)),
    op("asinh", lucid.asinh, np.arcsinh, U(-3, 3)),
    op("acosh", lucid.acosh, np.arccosh, U(1.2, 3)),
    op("atanh", lambda x: x.arctanh(), np.arctanh, U(-0.9, 0.9)),
    # error function family
    op("erf", lucid.erf, erf_np, U(-3, 3)),
    op("erfc", lambda x: x.erfc(), erfc_np, U(-3, 3)),
    op("erfinv", lucid.erfinv, erfinv_np, U(-0.95, 0.95)),
    # two inputs
    op("logaddexp", lucid.logaddexp, np.logaddexp, U(-3, 3), U(-3, 3), shapes=BINARY_SHORT),
    op("logaddexp2", lambda x, y: x.logaddexp2(y), np.logaddexp2, U(-3, 3), U(-3, 3), shapes=BINARY_SHORT),
    op("hypot", lucid.hypot, np.hypot, AWAY(0.2, 1), S, shapes=BINARY_SHORT),  # away from the origin
    op("xlogy", lucid.xlogy, lambda x, y: x * np.log(y), S, POS, shapes=BINARY_SHORT),
    op("xlogy_scalar", lambda y: lucid.xlogy(2.5, y), lambda y: 2.5 * np.log(y), POS),
    op("copysign", lucid.copysign, np.copysign, AWAY(0.2, 1), AWAY(0.2, 1), shapes=BINARY_SHORT),
    op("fmod", lucid.fmod, np.fmod, U(-2, 2), AWAY(0.5, 1.5), shapes=BINARY_SHORT),
    op("fmod_scalar", lambda x: x.fmod(-0.7), lambda x: np.fmod(x, -0.7), U(-2, 2)),
    op("lerp", lambda x, y: lucid.lerp(x, y, 0.3), lambda x, y: lerp_np(x, y, 0.3), S, S, shapes=BINARY_SHORT),
    op("lerp_above_half", lambda x, y: x.lerp(y, 0.8), lambda x, y: lerp_np(x, y, 0.8), S, S, shapes=BINARY_SHORT),
    op("lerp_tensor", lucid.lerp, lerp_np, S, S, U(-0.5, 1.5)),
    # one input, piecewise or with a removable singularity
    op("sinc", lucid.sinc, np.sinc, U(-2, 2)),
    op("frac", lambda x: x.frac(), lambda x: x - np.trunc(x), FRAC),
    op("nan_to_num", lucid.nan_to_num, np.nan_to_num, S),
]


def _arrays(o: Op, shapes, seed=0) -> list:
    rng = np.random.default_rng(seed)
    return [np.asarray(domain(rng, shape), dtype=np.float64) for domain, shape in zip(o.domains, shapes)]


def _case_id(o, shapes):
    return f"{o.name}-{'x'.join(str(list(s)) for s in shapes)}"


def _cases():
    return [pytest.param(o, shapes, id=_case_id(o, shapes)) for o in OPS for shapes in o.shapes]


def _leaves(o, shapes):
    return [lucid.tensor(a, dtype=lucid.float64, requires_grad=True) for a in _arrays(o, shapes)]


@pytest.mark.parametrize("o, shapes", _cases())
def test_gradcheck(o, shapes):
    check_grads(o.fn, *_leaves(o, shapes), second=False)


@pytest.mark.parametrize("o, shapes", _cases())
def test_gradgradcheck(o, shapes):
    assert gradgradcheck(o.fn, _leaves(o, shapes), atol=1e-5, rtol=1e-3)


def test_identity_gradient_stays_connected_to_grad_outputs():
    """add passes its grad_output on unchanged: with create_graph the result must still depend on it."""
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    v = lucid.tensor([3.0, 4.0], requires_grad=True)
    g = lucid.autograd.grad(x + 1, x, v, create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(lucid.autograd.grad(g.sum(), v).numpy(), [1.0, 1.0])


@pytest.mark.parametrize("o, shapes", _cases())
@pytest.mark.parametrize("dtype", [lucid.float64, lucid.float32], ids=["f64", "f32"])
def test_forward_matches_numpy(o, shapes, dtype):
    arrays = _arrays(o, shapes, seed=1)
    xs = [lucid.tensor(a, dtype=dtype) for a in arrays]
    out = o.fn(*xs)
    # the reference sees the same (rounded) inputs, in float64
    expected = np.asarray(o.ref(*[x.numpy().astype(np.float64) for x in xs]))
    assert out.dtype == dtype
    assert tuple(out.shape) == expected.shape
    tol = dict(rtol=1e-13, atol=1e-15) if dtype == lucid.float64 else dict(rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), expected, **tol)


def test_a_chain_of_elementwise_ops_with_broadcasting():
    def f(x, y, s):
        return ((x.sin() * y.exp() + s) / (1 + x * x)).tanh().clamp(-0.9, 0.9) ** 2 - lucid.maximum(x, y).sqrt()

    check_grads(f, leaf(2, 3, low=0.1, high=1), leaf(3, low=0.1, high=1, seed=1), leaf(seed=2))


@pytest.mark.parametrize("o", [pytest.param(o, id=o.name) for o in OPS if len(o.domains) == 1])
def test_unary_result_requires_grad_and_keeps_the_leaf_shape_in_the_grad(o):
    x = lucid.tensor(_arrays(o, ((2, 3),))[0], dtype=lucid.float32, requires_grad=True)
    y = o.fn(x)
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    y.sum().backward()
    assert x.grad.shape == x.shape and x.grad.dtype == lucid.float32


# ---------------------------------------------------------------------------------------------------- zero gradients
@pytest.mark.parametrize("fn", [lucid.sign, lucid.floor, lucid.ceil, lucid.round, lucid.trunc, lambda x: x // 2,
                                lambda x: x ** 0], ids=["sign", "floor", "ceil", "round", "trunc", "floordiv", "pow0"])
def test_piecewise_constant_ops_require_grad_with_zero_gradient(fn):
    x = lucid.tensor([-1.7, -0.2, 0.3, 2.6], requires_grad=True)
    y = fn(x)
    assert y.requires_grad and y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(4))


def test_round_is_half_to_even_and_takes_decimals():
    x = lucid.tensor([0.5, 1.5, 2.5, -0.5, -2.5, 0.123])
    np.testing.assert_array_equal(lucid.round(x).numpy(), np.round(x.numpy()))
    np.testing.assert_allclose(x.round(decimals=1).numpy(), np.round(x.numpy(), 1), rtol=1e-6)


# ---------------------------------------------------------------------------------------------------- subgradients
def _grad_at(fn, values, dtype=lucid.float32):
    x = lucid.tensor(values, dtype=dtype, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.numpy()


def test_relu_gradient_at_zero_is_zero():
    np.testing.assert_array_equal(_grad_at(lucid.relu, [-1.0, 0.0, 2.0]), [0.0, 0.0, 1.0])


def test_abs_gradient_at_zero_is_zero():
    np.testing.assert_array_equal(_grad_at(lucid.abs, [-1.0, 0.0, 2.0]), [-1.0, 0.0, 1.0])


@pytest.mark.parametrize("fn", [lucid.sqrt, lambda x: x ** 0.5], ids=["sqrt", "pow_half"])
def test_sqrt_gradient_at_zero_is_inf(fn):
    g = _grad_at(fn, [0.0, 4.0])
    assert g[0] == np.inf and g[1] == 0.25


def test_clamp_bounds_pass_gradient_one():
    np.testing.assert_array_equal(_grad_at(lambda x: x.clamp(0, 1), [-0.5, 0.0, 0.5, 1.0, 1.5]),
                                  [0.0, 1.0, 1.0, 1.0, 0.0])


def test_clamp_tensor_bounds_get_the_gradient_where_they_win():
    x = lucid.tensor([-2.0, 0.0, 2.0], requires_grad=True)
    lo = lucid.tensor([-1.0, -1.0, -1.0], requires_grad=True)
    hi = lucid.tensor(1.0, requires_grad=True)
    lucid.clamp(x, lo, hi).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(lo.grad.numpy(), [1.0, 0.0, 0.0])
    assert hi.grad.item() == 1.0


def test_clamp_with_min_above_max_gives_max_and_only_max_gets_gradient():
    x = lucid.tensor([0.0, 1.5, 3.0], requires_grad=True)
    lo = lucid.tensor(2.0, requires_grad=True)
    hi = lucid.tensor(1.0, requires_grad=True)
    y = lucid.clamp(x, lo, hi)
    np.testing.assert_array_equal(y.detach().numpy(), [1.0, 1.0, 1.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])
    assert lo.grad.item() == 0.0 and hi.grad.item() == 3.0


def test_clamp_without_bounds_errors():
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        lucid.clamp(lucid.tensor([1.0]))


@pytest.mark.parametrize("fn", [lucid.maximum, lucid.minimum], ids=["maximum", "minimum"])
def test_maximum_minimum_ties_split_the_gradient(fn):
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = lucid.tensor([1.0, 0.0, 5.0], requires_grad=True)
    fn(x, y).sum().backward()
    win = [0.0, 1.0, 0.0] if fn is lucid.maximum else [0.0, 0.0, 1.0]
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, win[1], win[2]])
    np.testing.assert_array_equal(y.grad.numpy(), [0.5, 1 - win[1], 1 - win[2]])


def test_maximum_of_a_tensor_with_itself_gives_half_per_argument():
    x = lucid.tensor([1.0, -2.0], requires_grad=True)
    np.testing.assert_array_equal(lucid.autograd.grad(lucid.maximum(x, x).sum(), x).numpy(), [1.0, 1.0])


def test_where_of_log_at_zero_gives_nan():
    x = lucid.tensor([0.0, 1.0], requires_grad=True)
    lucid.where(x > 0, x.log(), 0.0).sum().backward()
    g = x.grad.numpy()
    assert np.isnan(g[0]) and g[1] == 1.0


def test_fmax_fmin_ignore_nan_and_send_the_gradient_to_the_returned_operand():
    nan = float("nan")
    x = lucid.tensor([nan, 1.0, 2.0, 3.0], requires_grad=True)
    y = lucid.tensor([1.0, nan, 2.0, 0.0], requires_grad=True)
    z = lucid.fmax(x, y)
    np.testing.assert_array_equal(z.detach().numpy(), [1.0, 1.0, 2.0, 3.0])
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(y.grad.numpy(), [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(lucid.fmin(x, y).detach().numpy(), [1.0, 1.0, 2.0, 0.0])
    assert np.isnan(lucid.maximum(x, y).detach().numpy()[:2]).all()


def test_pow_gradient_for_the_exponent_at_zero_base_is_zero():
    x = lucid.tensor([0.0, 2.0], requires_grad=True)
    e = lucid.tensor([2.0, 3.0], requires_grad=True)
    (x ** e).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), [0.0, 8 * np.log(2)], rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 12.0], rtol=1e-6)


# ---------------------------------------------------------------------------------------------------- grad_fn names
def _f32(*values):
    return lucid.tensor(list(values), requires_grad=True)


NAMES = [
    ("MulBackward0", lambda x: x * 2), ("MulBackward0", lambda x: x * x),
    ("MulBackward0", lambda x: x * lucid.tensor(2.0)),
    ("AddBackward0", lambda x: x + 1), ("AddBackward0", lambda x: x + x), ("AddBackward0", lambda x: 1 + x),
    ("SubBackward0", lambda x: x - 1), ("SubBackward0", lambda x: x - x),
    ("DivBackward0", lambda x: x / 2), ("DivBackward0", lambda x: x / x),
    ("DivBackward2", lambda x: x.div(2, rounding_mode="floor")),
    ("NegBackward0", lambda x: -x),
    ("PowBackward0", lambda x: x ** 2), ("PowBackward0", lambda x: x.square()),
    ("PowBackward1", lambda x: x ** x), ("PowBackward2", lambda x: 2 ** x),
    ("RsubBackward1", lambda x: 1 - x),
    ("ExpBackward0", lucid.exp), ("LogBackward0", lucid.log), ("SinBackward0", lucid.sin),
    ("TanhBackward0", lucid.tanh), ("SigmoidBackward0", lucid.sigmoid), ("ReluBackward0", lucid.relu),
    ("SqrtBackward0", lucid.sqrt), ("AbsBackward0", lucid.abs),
    ("WhereBackward0", lambda x: lucid.where(x > 1, x, 0.0)), ("MaximumBackward0", lambda x: lucid.maximum(x, 1.0)),
    ("ClampBackward1", lambda x: x.clamp(0, 1)), ("ClampBackward1", lambda x: x.clamp(min=0)),
    ("ClampBackward0", lambda x: x.clamp(lucid.tensor(0.0), lucid.tensor(1.0))),
    ("ToCopyBackward0", lambda x: x.double()),
    ("AsinBackward0", lucid.arcsin), ("AcoshBackward0", lambda x: (x + 1).acosh()),
    ("Atan2Backward0", lambda x: lucid.atan2(x, x)), ("ErfBackward0", lucid.erf), ("ErfcBackward0", lucid.erfc),
    ("ErfinvBackward0", lambda x: (x / 4).erfinv()), ("LogaddexpBackward0", lambda x: lucid.logaddexp(x, x)),
    ("HypotBackward0", lambda x: lucid.hypot(x, x)), ("XlogyBackward0", lambda x: lucid.xlogy(x, x)),
    ("SincBackward0", lucid.sinc), ("FracBackward0", lucid.frac), ("NanToNumBackward0", lucid.nan_to_num),
    ("FmodBackward0", lambda x: x.fmod(2)), ("FmodBackward1", lambda x: x.fmod(x)),
    ("LerpBackward0", lambda x: x.lerp(x * 2, 0.5)), ("LerpBackward1", lambda x: x.lerp(x * 2, x)),
    ("CopysignBackward0", lambda x: lucid.copysign(x, x)), ("CopysignBackward1", lambda x: x.copysign(-1.0)),
    ("XlogyBackward1", lambda x: lucid.xlogy(2.0, x)), ("XlogyBackward2", lambda x: x.xlogy(2.0)),
    ("Logaddexp2Backward0", lambda x: x.logaddexp2(x)),
]


@pytest.mark.parametrize("name, fn", NAMES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(NAMES)])
def test_grad_fn_names(name, fn):
    y = fn(_f32(1.0, 2.0))
    assert type(y.grad_fn).__name__ == name
    assert y.grad_fn.name() == name


# ---------------------------------------------------------------------------------------------------- promotion
def test_f32_times_f64_gives_f64_and_each_leaf_keeps_its_dtype_in_grad():
    a = lucid.tensor([1.0, 2.0], dtype=lucid.float32, requires_grad=True)
    b = lucid.tensor([3.0, 4.0], dtype=lucid.float64, requires_grad=True)
    y = a * b
    assert y.dtype == lucid.float64
    y.sum().backward()
    assert a.grad.dtype == lucid.float32 and b.grad.dtype == lucid.float64
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0])


def test_zero_dim_f64_does_not_promote_an_f32_vector():
    s = lucid.tensor(2.0, dtype=lucid.float64, requires_grad=True)
    v = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = s * v
    assert y.dtype == lucid.float32 and (v + s).dtype == lucid.float32
    y.sum().backward()
    assert s.grad.dtype == lucid.float64 and s.grad.shape == () and s.grad.item() == 6.0
    assert v.grad.dtype == lucid.float32


def test_f16_times_f32_gives_f32_with_an_f16_grad():
    h = lucid.tensor([1.0, 2.0], dtype=lucid.float16, requires_grad=True)
    f = lucid.tensor([3.0, 4.0], dtype=lucid.float32, requires_grad=True)
    y = h * f
    assert y.dtype == lucid.float32
    y.sum().backward()
    assert h.grad.dtype == lucid.float16 and f.grad.dtype == lucid.float32
    np.testing.assert_array_equal(h.grad.numpy(), [3.0, 4.0])


@pytest.mark.parametrize("make, dtype", [
    (lambda f, i: f * i, lucid.float32),
    (lambda f, i: i + f, lucid.float32),
    (lambda f, i: i * 2.5, lucid.float32),
    (lambda f, i: i / i, lucid.float32),
    (lambda f, i: i // 2, lucid.int64),
    (lambda f, i: i * lucid.tensor(2.0, dtype=lucid.float64), lucid.float64),  # a 0-d of a higher category wins
    (lambda f, i: i.int() + lucid.tensor(1), lucid.int32),  # a 0-d of the same category does not widen
    (lambda f, i: lucid.tensor([True, False]) * f, lucid.float32),
    (lambda f, i: f.half() + 1.5, lucid.float16),
], ids=["float*int", "int+float", "int*pyfloat", "int/int", "int//int", "int*0d_f64", "int32+0d_int64",
        "bool*float", "f16+pyfloat"])
def test_promotion(make, dtype):
    f = lucid.tensor([1.0, 2.0])
    i = lucid.tensor([1, 2])
    assert make(f, i).dtype == dtype


def test_div_rounding_modes_keep_integers_integer():
    a, b = lucid.tensor([-7, 7, -7, 7, 6]), lucid.tensor([2, 2, -2, -2, 3])
    for mode, expected in [("floor", [-4, 3, 3, -4, 2]), ("trunc", [-3, 3, 3, -3, 2])]:
        y = lucid.div(a, b, rounding_mode=mode)
        assert y.dtype == lucid.int64 and y.tolist() == expected
    assert lucid.div(lucid.tensor([-7.0, 7.0]), 2, rounding_mode="trunc").tolist() == [-3.0, 3.0]
    with pytest.raises(ValueError, match="rounding_mode to be one of None, 'trunc', or 'floor'"):
        lucid.div(a, b, rounding_mode="round")


def test_int_tensor_divided_by_int_tensor_is_true_division():
    y = lucid.tensor([1, 7, -7]) / lucid.tensor([2, 2, 2])
    assert y.dtype == lucid.float32
    np.testing.assert_array_equal(y.numpy(), [0.5, 3.5, -3.5])


def test_float_times_int_tensor_grad_flows_to_the_float_leaf_only():
    f = lucid.tensor([1.0, 2.0], requires_grad=True)
    i = lucid.tensor([3, 4])
    (f * i).sum().backward()
    assert f.grad.dtype == lucid.float32
    np.testing.assert_array_equal(f.grad.numpy(), [3.0, 4.0])


# ---------------------------------------------------------------------------------------------------- broadcasting
def test_broadcasting_example_from_the_semantics_doc():
    an, bn, cn, dn = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 3.0]), np.array(2.0), np.array([[1.0], [2.0]])
    a, b, c, d = (lucid.tensor(v, requires_grad=True) for v in (an, bn, cn, dn))
    y = (a * b * c + d).sum()
    np.testing.assert_allclose(y.item(), (an * bn * cn + dn).sum())
    y.backward()
    # closed forms: d/db = c * column sums of a, d/dc = sum(a*b), d/dd = 3 per row, d/da = b*c
    np.testing.assert_array_equal(b.grad.numpy(), cn * an.sum(0))
    np.testing.assert_array_equal(b.grad.numpy(), [6.0, 10.0, 14.0])
    assert c.grad.shape == () and c.grad.item() == (an * bn).sum() == 34.0
    np.testing.assert_array_equal(d.grad.numpy(), [[3.0], [3.0]])
    np.testing.assert_array_equal(a.grad.numpy(), np.broadcast_to(bn * cn, (2, 3)))


@pytest.mark.parametrize("sa, sb", [((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((4, 1, 3), (2, 1))])
def test_broadcast_gradients_sum_back_to_each_input_shape(sa, sb):
    rng = np.random.default_rng(0)
    an, bn = rng.uniform(-1, 1, sa), rng.uniform(-1, 1, sb)
    a, b = lucid.tensor(an, requires_grad=True), lucid.tensor(bn, requires_grad=True)
    (a * b).sum().backward()
    full = np.broadcast_shapes(sa, sb)

    def sum_to(g, shape):
        g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
        return g.sum(axis=tuple(i for i, s in enumerate(shape) if s == 1), keepdims=True).reshape(shape)

    np.testing.assert_allclose(a.grad.numpy(), sum_to(np.broadcast_to(bn, full), sa), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), sum_to(np.broadcast_to(an, full), sb), rtol=1e-6)
    assert a.grad.shape == sa and b.grad.shape == sb


# ---------------------------------------------------------------------------------------------------- other operands
def test_numpy_array_operands_on_either_side():
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    n = np.array([0.5, 1.5, 2.5], dtype=np.float32)
    for y, expected in [(x + n, [1.5, 3.5, 5.5]), (n + x, [1.5, 3.5, 5.5]), (n * x, [0.5, 3.0, 7.5]),
                        (n - x, [-0.5, -0.5, -0.5]), (x / n, [2.0, 4 / 3, 1.2])]:
        assert isinstance(y, lucid.Tensor) and y.requires_grad
        np.testing.assert_allclose(y.detach().numpy(), expected, rtol=1e-6)
    (n * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), n)


def test_numpy_float64_array_keeps_float64():
    x = lucid.tensor([1.0, 2.0], dtype=lucid.float64)
    n = np.array([0.1, 0.2])
    np.testing.assert_array_equal((x + n).numpy(), np.array([1.0, 2.0]) + n)  # exact: no trip through float32
    assert (lucid.tensor([1.0, 2.0]) + n).dtype == lucid.float64  # a dimensioned f64 operand promotes
    assert (lucid.tensor([1.0, 2.0]) + np.array(0.5)).dtype == lucid.float32  # a 0-d one does not
    assert (lucid.tensor([1.0, 2.0]) * np.float64(2.0)).dtype == lucid.float32  # a numpy scalar is a number


def test_numpy_operands_in_pow():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    np.testing.assert_allclose((x ** np.array([2.0, 3.0])).detach().numpy(), [1.0, 8.0])
    y = np.array([2.0, 3.0]) ** x
    assert isinstance(y, lucid.Tensor)
    np.testing.assert_allclose(y.detach().numpy(), [2.0, 9.0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2 * np.log(2), 9 * np.log(3)], rtol=1e-6)


def test_reflected_python_scalar_forms_and_their_gradients():
    xn = np.array([0.5, 1.0, 2.0])
    for fn, value, grad in [
        (lambda x: 2 - x, 2 - xn, -np.ones(3)),
        (lambda x: 2 / x, 2 / xn, -2 / xn ** 2),
        (lambda x: 2 ** x, 2 ** xn, 2 ** xn * np.log(2)),
        (lambda x: 3 * x, 3 * xn, 3 * np.ones(3)),
        (lambda x: 1 + x, 1 + xn, np.ones(3)),
    ]:
        x = lucid.tensor(xn, dtype=lucid.float64, requires_grad=True)
        y = fn(x)
        np.testing.assert_allclose(y.detach().numpy(), value, rtol=1e-14)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-14)


def test_python_scalars_do_not_change_the_tensor_dtype():
    for dtype in (lucid.float16, lucid.float32, lucid.float64):
        x = lucid.tensor([1.0, 2.0], dtype=dtype)
        for y in (x + 1, 2 * x, x / 3, 2 - x, 2 ** x, x ** 2, x.clamp(0, 1.5), lucid.where(x > 1, x, 0.0)):
            assert y.dtype == dtype


def test_alpha_keyword():
    x, y = lucid.tensor([1.0, 2.0]), lucid.tensor([10.0, 20.0])
    np.testing.assert_array_equal(lucid.add(x, y, alpha=2).numpy(), [21.0, 42.0])
    np.testing.assert_array_equal(lucid.sub(x, y, alpha=2).numpy(), [-19.0, -38.0])
    np.testing.assert_array_equal(lucid.rsub(x, y, alpha=2).numpy(), [8.0, 16.0])


# ---------------------------------------------------------------------------------------------------- comparisons
COMPARISONS = [
    (lambda a, b: a == b, np.equal), (lambda a, b: a != b, np.not_equal), (lambda a, b: a < b, np.less),
    (lambda a, b: a <= b, np.less_equal), (lambda a, b: a > b, np.greater), (lambda a, b: a >= b, np.greater_equal),
    (lucid.eq, np.equal), (lucid.ne, np.not_equal), (lucid.lt, np.less), (lucid.le, np.less_equal),
    (lucid.gt, np.greater), (lucid.ge, np.greater_equal),
]


@pytest.mark.parametrize("fn, ref", COMPARISONS, ids=["==", "!=", "<", "<=", ">", ">=",
                                                      "eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_are_bool_and_never_require_grad(fn, ref):
    an, bn = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]), np.array([2.0, 2.0, 2.0])
    a, b = lucid.tensor(an, requires_grad=True), lucid.tensor(bn, requires_grad=True)
    for y, expected in [(fn(a, b), ref(an, bn)), (fn(a, 2.0), ref(an, 2.0)), (fn(a, lucid.tensor(2)), ref(an, 2))]:
        assert y.dtype == lucid.bool
        assert not y.requires_grad and y.is_leaf and y.grad_fn is None
        np.testing.assert_array_equal(y.numpy(), expected)


def test_logical_and_nan_predicates_never_require_grad():
    x = lucid.tensor([float("nan"), float("inf"), 1.0], requires_grad=True)
    for y, expected in [(lucid.isnan(x), [True, False, False]), (lucid.isinf(x), [False, True, False]),
                        (lucid.isfinite(x), [False, False, True]),
                        (lucid.logical_and(x > 0, x < 2), [False, False, True]),
                        (lucid.logical_not(x > 0), [True, False, False])]:
        assert y.dtype == lucid.bool and not y.requires_grad
        np.testing.assert_array_equal(y.numpy(), expected)


# ---------------------------------------------------------------------------------------------------- casts
def test_double_is_a_differentiable_copy_and_the_grad_keeps_the_leaf_dtype():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    assert y.dtype == lucid.float64 and type(y.grad_fn).__name__ == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.dtype == lucid.float32
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


@pytest.mark.parametrize("cast, dtype", [
    (lambda x: x.float(), lucid.float32), (lambda x: x.half(), lucid.float16), (lambda x: x.to(lucid.float32),
                                                                              lucid.float32),
    (lambda x: x.type(lucid.float16), lucid.float16), (lambda x: x.type_as(lucid.tensor([1.0])), lucid.float32)],
    ids=["float", "half", "to", "type", "type_as"])
def test_float_casts_are_differentiable(cast, dtype):
    x = lucid.tensor([1.0, 2.0], dtype=lucid.float64, requires_grad=True)
    y = cast(x)
    assert y.dtype == dtype and y.requires_grad
    (y * 3).sum().backward()
    assert x.grad.dtype == lucid.float64
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


@pytest.mark.parametrize("cast, dtype", [(lambda x: x.long(), lucid.int64), (lambda x: x.int(), lucid.int32),
                                         (lambda x: x.bool(), lucid.bool), (lambda x: x.to(lucid.int64), lucid.int64)],
                         ids=["long", "int", "bool", "to_int64"])
def test_integer_and_bool_casts_do_not_require_grad(cast, dtype):
    x = lucid.tensor([1.5, -2.5], requires_grad=True)
    y = cast(x)
    assert y.dtype == dtype
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None


def test_cast_to_the_same_dtype_returns_the_tensor_itself():
    x = lucid.tensor([1.0], requires_grad=True)
    assert x.float() is x and x.to(lucid.float32) is x


# ---------------------------------------------------------------------------------------------------- float64 forms
@pytest.mark.parametrize("fn, ref", [
    (_f64.exp, np.exp), (_f64.sin, np.sin), (_f64.cos, np.cos), (_f64.sigmoid, sigmoid_np),
], ids=["exp", "sin", "cos", "sigmoid"])
@pytest.mark.cpu_only("calls lucid's float64 MLX forms on MLX arrays itself (MLX has float64 kernels only on the CPU)")
def test_float64_forms_are_float64_accurate(fn, ref):
    xn = np.concatenate([np.random.default_rng(0).uniform(-30, 30, 200), [0.0, -0.0, 1e-300, np.pi, -np.pi / 2]])
    with np.errstate(over="ignore"):
        expected = ref(xn)
    np.testing.assert_allclose(np.array(fn(mx.array(xn, dtype=mx.float64))), expected, rtol=1e-14, atol=1e-15)


@pytest.mark.cpu_only("calls lucid's float64 MLX forms on MLX arrays itself (MLX has float64 kernels only on the CPU)")
def test_float64_forms_at_infinities_and_nan():
    xn = np.array([-np.inf, np.inf, np.nan])
    x = mx.array(xn, dtype=mx.float64)
    np.testing.assert_array_equal(np.array(_f64.exp(x)), [0.0, np.inf, np.nan])
    np.testing.assert_array_equal(np.array(_f64.sigmoid(x)), [0.0, 1.0, np.nan])
    assert np.isnan(np.array(_f64.sin(x))).all() and np.isnan(np.array(_f64.cos(x))).all()


def test_float64_tensor_from_python_floats_is_exact():
    assert lucid.tensor(0.1, dtype=lucid.float64).item() == 0.1
    assert lucid.tensor([0.1, 0.2], dtype=lucid.float64).tolist() == [0.1, 0.2]
    assert lucid.tensor(np.float64(0.1), dtype=lucid.float64).item() == 0.1


@pytest.mark.cpu_only("calls lucid's float64 MLX forms on MLX arrays itself (MLX has float64 kernels only on the CPU)")
def test_float64_logaddexp_logsumexp_softmax():
    rng = np.random.default_rng(0)
    an, bn = rng.uniform(-20, 20, (3, 4)), rng.uniform(-20, 20, (3, 4))
    a, b = mx.array(an, dtype=mx.float64), mx.array(bn, dtype=mx.float64)
    np.testing.assert_allclose(np.array(_f64.logaddexp(a, b)), np.logaddexp(an, bn), rtol=1e-14)
    inf = mx.array([-np.inf, np.inf, -np.inf], dtype=mx.float64)
    np.testing.assert_array_equal(np.array(_f64.logaddexp(inf, mx.array([-np.inf, 1.0, 2.0], dtype=mx.float64))),
                                  [-np.inf, np.inf, 2.0])
    m = an.max(axis=1, keepdims=True)
    lse = np.log(np.exp(an - m).sum(axis=1, keepdims=True)) + m
    np.testing.assert_allclose(np.array(_f64.logsumexp(a, axis=1)), lse[:, 0], rtol=1e-14)
    np.testing.assert_allclose(np.array(_f64.logsumexp(a, axis=1, keepdims=True)), lse, rtol=1e-14)
    np.testing.assert_allclose(np.array(_f64.logsumexp(a)), np.log(np.exp(an - an.max()).sum()) + an.max(),
                               rtol=1e-14)
    np.testing.assert_allclose(np.array(_f64.softmax(a, axis=1)), np.exp(an - lse), rtol=1e-13)


# ---------------------------------------------------------------------------------------------------- torch oracle
@pytest.mark.parametrize("name", ["mul", "div", "pow_tensor", "rpow", "remainder", "abs", "log1p", "sigmoid",
                                  "maximum", "where", "clamp_tensor", "clamp_min_above_max", "fmax", "asin", "acos",
                                  "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv",
                                  "logaddexp", "logaddexp2", "hypot", "xlogy", "xlogy_scalar", "copysign", "fmod",
                                  "fmod_scalar", "lerp", "lerp_above_half", "lerp_tensor", "sinc", "frac",
                                  "nan_to_num"])
def test_against_torch(name):
    torch = pytest.importorskip("torch")
    o = next(o for o in OPS if o.name == name)
    shapes = o.shapes[1]
    arrays = _arrays(o, shapes, seed=2)
    xs = [lucid.tensor(a, dtype=lucid.float64, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    fns = {"clamp_tensor": lambda x, lo, hi: torch.clamp(x, lo, hi), "clamp_min_above_max": torch.clamp,
           "where": lambda x, y: torch.where(x > 0, x, y), "rpow": lambda x: 2 ** x, "fmax": torch.fmax,
           "maximum": torch.maximum, "sigmoid": torch.sigmoid, "log1p": torch.log1p, "abs": torch.abs,
           "atan2": torch.atan2, "erfinv": torch.erfinv, "logaddexp": torch.logaddexp, "hypot": torch.hypot,
           "xlogy": torch.xlogy, "copysign": torch.copysign, "fmod": torch.fmod, "lerp_tensor": torch.lerp,
           "sinc": torch.sinc, "asin": torch.asin, "atan": torch.atan, "sinh": torch.sinh, "asinh": torch.asinh,
           "acosh": torch.acosh, "erf": torch.erf, "xlogy_scalar": lambda y: torch.xlogy(2.5, y),
           "lerp": lambda x, y: torch.lerp(x, y, 0.3), "nan_to_num": torch.nan_to_num}
    out, tout = o.fn(*xs), fns.get(name, o.fn)(*ts)
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    seed = np.random.default_rng(3).uniform(-1, 1, tuple(out.shape))
    out.backward(lucid.tensor(seed, dtype=lucid.float64))
    tout.backward(torch.tensor(seed))
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-15)
