"""The special functions' semantics beyond the elementwise table (tests/test_ops_elementwise.py holds their
gradcheck, gradgradcheck and forward rows): float64 accuracy of lucid's exact forms of exp, erf, erfc and erfinv into
the tails, PyTorch's values and gradients at the singular points (sinc, xlogy, hypot, nan_to_num, copysign, fmod,
lerp), aliases and in-place forms."""
from __future__ import annotations

import math

import mlx.core as mx
import numpy as np
import pytest

import lucid
from lucid.ops import _f64

erf_np, erfc_np = np.vectorize(math.erf), np.vectorize(math.erfc)  # C's erf/erfc: correctly rounded or nearly


def _grad_at(fn, values, dtype=lucid.float32):
    x = lucid.tensor(values, dtype=dtype, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.numpy()


# ---------------------------------------------------------------------------------------------------- float64 forms
@pytest.mark.cpu_only("calls lucid's float64 MLX forms on MLX arrays itself (MLX has float64 kernels only on the CPU)")
def test_float64_exp_is_accurate_over_its_whole_range():
    xn = np.concatenate([np.linspace(-708, 709.7, 20001), [-745.1, 709.78]])
    np.testing.assert_allclose(np.array(_f64.exp(mx.array(xn, dtype=mx.float64))), np.exp(xn), rtol=1e-15, atol=0)


@pytest.mark.cpu_only("calls lucid's float64 MLX forms on MLX arrays itself (MLX has float64 kernels only on the CPU)")
@pytest.mark.parametrize("fn, ref, lo, hi", [(_f64.erf, erf_np, -7, 7), (_f64.erfc, erfc_np, -7, 26)],
                         ids=["erf", "erfc"])
def test_float64_erf_erfc_are_accurate_to_the_last_digits(fn, ref, lo, hi):
    # the interval ends of fdlibm's approximations, and erfc's tail down to 1e-295 (relative accuracy there)
    xn = np.concatenate([np.random.default_rng(0).uniform(lo, hi, 4000),
                         [0.0, -0.0, 1e-300, 0.84375, -0.84375, 1.25, -1.25, 1 / 0.35, 6.0, -6.0, 0.25]])
    np.testing.assert_allclose(np.array(fn(mx.array(xn, dtype=mx.float64))), ref(xn), rtol=1e-14, atol=0)


def test_float64_erfinv_is_accurate_into_the_tails():
    special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(0)
    tail = 1 - 10.0 ** -rng.uniform(1, 15.9, 500)
    xn = np.concatenate([rng.uniform(-1, 1, 4000), tail, -tail, [0.0, 1e-300, 0.5, -0.5, 1 - 2 ** -53]])
    np.testing.assert_allclose(np.array(_f64.erfinv(mx.array(xn, dtype=mx.float64))), special.erfinv(xn),
                               rtol=1e-14, atol=0)


# ---------------------------------------------------------------------------------------------------- special points
@pytest.mark.parametrize("dtype", [lucid.float64, lucid.float32], ids=["f64", "f32"])
def test_erf_family_at_infinities_one_and_nan(dtype):
    x = lucid.tensor([-np.inf, np.inf, np.nan], dtype=dtype)
    np.testing.assert_array_equal(lucid.erf(x).numpy(), [-1.0, 1.0, np.nan])
    np.testing.assert_array_equal(lucid.erfc(x).numpy(), [2.0, 0.0, np.nan])
    np.testing.assert_array_equal(lucid.erfinv(lucid.tensor([-1.0, 1.0, 0.0, 1.5, np.nan], dtype=dtype)).numpy(),
                                  [-np.inf, np.inf, 0.0, np.nan, np.nan])


def test_erfc_keeps_relative_accuracy_in_the_tail_in_float32():
    x = lucid.tensor([3.0, 5.0, 9.0])
    np.testing.assert_allclose(lucid.erfc(x).numpy(), erfc_np([3.0, 5.0, 9.0]), rtol=1e-5)  # 1 - erf would give 0


def test_erfinv_gradient_is_sqrt_pi_over_2_exp_erfinv_squared():
    special = pytest.importorskip("scipy.special")
    xn = np.array([-0.99, -0.3, 0.0, 0.5, 0.999])
    np.testing.assert_allclose(_grad_at(lucid.erfinv, xn, lucid.float64),
                               np.sqrt(np.pi) / 2 * np.exp(special.erfinv(xn) ** 2), rtol=1e-13)


def test_sinc_at_zero_is_one_with_zero_gradient():
    x = lucid.tensor([0.0, 1.0, -2.0, 0.5], dtype=lucid.float64, requires_grad=True)
    y = lucid.sinc(x)
    np.testing.assert_allclose(y.detach().numpy(), [1.0, 0.0, 0.0, 2 / np.pi], atol=1e-16)
    (g,) = lucid.autograd.grad(y.sum(), [x], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [0.0, -1.0, -0.5, -4 / np.pi], atol=1e-15)
    assert np.isfinite(lucid.autograd.grad(g.sum(), x).numpy()).all()  # the masked branch leaks no nan


def test_xlogy_is_zero_where_x_is_zero_and_nan_where_y_is_nan():
    x = lucid.tensor([0.0, 0.0, 0.0, 2.0, 1.0], dtype=lucid.float64, requires_grad=True)
    y = lucid.tensor([0.0, np.inf, np.nan, 3.0, 0.0], dtype=lucid.float64, requires_grad=True)
    out = lucid.xlogy(x, y)
    np.testing.assert_array_equal(out.detach().numpy(), [0.0, 0.0, np.nan, 2 * np.log(3.0), -np.inf])
    out.sum().backward()
    # d/dx = log(y), masked to 0 where x == 0 and y <= 0 (PyTorch's convention)
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, np.inf, np.nan, np.log(3.0), -np.inf])
    np.testing.assert_allclose(y.grad.numpy()[3:], [2 / 3, np.inf])
    np.testing.assert_allclose(lucid.xlogy(2.0, lucid.tensor([np.e])).numpy(), [2.0], rtol=1e-6)


def test_nan_to_num_replaces_and_passes_the_gradient_where_finite():
    x = lucid.tensor([np.nan, np.inf, -np.inf, 1.5], dtype=lucid.float64, requires_grad=True)
    y = lucid.nan_to_num(x)
    big = np.finfo(np.float64).max
    np.testing.assert_array_equal(y.detach().numpy(), [0.0, big, -big, 1.5])
    np.testing.assert_array_equal(x.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0).detach().numpy(),
                                  [1.0, 2.0, -3.0, 1.5])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0, 1.0])
    h = lucid.tensor([np.inf, np.nan], dtype=lucid.float16)
    np.testing.assert_array_equal(lucid.nan_to_num(h).numpy(), np.array([65504.0, 0.0], np.float16))
    assert lucid.nan_to_num(lucid.tensor([1, 2])).tolist() == [1, 2]


def test_fmod_takes_the_sign_of_the_dividend_unlike_remainder():
    a, b = [-7.0, 7.0, -7.0, 7.0, 6.0], [2.0, -2.0, -2.0, 2.0, 3.0]
    x, y = lucid.tensor(a, requires_grad=True), lucid.tensor(b, requires_grad=True)
    np.testing.assert_array_equal(lucid.fmod(x, y).detach().numpy(), np.fmod(a, b))
    np.testing.assert_array_equal(lucid.remainder(x, y).detach().numpy(), np.remainder(a, b))
    assert lucid.fmod(lucid.tensor([-7, 7]), 2).tolist() == [-1, 1]
    lucid.fmod(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(5))
    np.testing.assert_array_equal(y.grad.numpy(), -np.trunc(np.divide(a, b)))


def test_copysign_gradient_and_negative_zero():
    x = lucid.tensor([1.0, -2.0, 3.0, 0.0], requires_grad=True)
    s = lucid.tensor([-0.0, 0.0, -1.0, -1.0], requires_grad=True)
    y = lucid.copysign(x, s)
    np.testing.assert_array_equal(y.detach().numpy(), [-1.0, 2.0, -3.0, -0.0])
    assert np.signbit(y.detach().numpy()[3])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-1.0, -1.0, -1.0, 0.0])  # 0 where the input is 0
    np.testing.assert_array_equal(s.grad.numpy(), np.zeros(4))
    ints = lucid.copysign(lucid.tensor([1, 2]), -1.0)
    assert ints.dtype == lucid.float32 and ints.tolist() == [-1.0, -2.0]


def test_lerp_is_exact_at_both_ends_and_takes_a_broadcast_tensor_weight():
    a = lucid.tensor([0.1, 1e20, -3.0], dtype=lucid.float64, requires_grad=True)
    b = lucid.tensor([0.7, 1.0, 5.0], dtype=lucid.float64, requires_grad=True)
    assert lucid.lerp(a, b, 0.0).tolist() == a.tolist() and lucid.lerp(a, b, 1.0).tolist() == b.tolist()
    w = lucid.tensor([[0.25], [0.75]], dtype=lucid.float64, requires_grad=True)
    y = lucid.lerp(a, b, w)
    assert y.shape == (2, 3) and type(y.grad_fn).__name__ == "LerpBackward1"
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(3, 1.0))  # (1 - 0.25) + (1 - 0.75)
    np.testing.assert_allclose(b.grad.numpy(), np.full(3, 1.0))
    np.testing.assert_allclose(w.grad.numpy(), np.full((2, 1), (b - a).sum().item()))


def test_hypot_does_not_overflow_and_has_a_nan_gradient_at_the_origin():
    x = lucid.tensor([3e200, 0.0, np.inf], dtype=lucid.float64, requires_grad=True)
    y = lucid.tensor([4e200, 0.0, np.nan], dtype=lucid.float64, requires_grad=True)
    h = lucid.hypot(x, y)
    np.testing.assert_allclose(h.detach().numpy(), [5e200, 0.0, np.inf], rtol=1e-15)
    h[:2].sum().backward()
    gx = x.grad.numpy()
    np.testing.assert_allclose(gx[0], 0.6, rtol=1e-15)
    assert np.isnan(gx[1])  # x / hypot at the origin, as in PyTorch


def test_logaddexp_of_minus_infinities_is_minus_infinity():
    a = lucid.tensor([-np.inf, 0.0], dtype=lucid.float64)
    np.testing.assert_array_equal(lucid.logaddexp(a, a).numpy(), [-np.inf, np.log(2.0)])
    np.testing.assert_array_equal(lucid.logaddexp(a.float(), a.float()).numpy(), np.float32([-np.inf, np.log(2.0)]))


# ---------------------------------------------------------------------------------------------------- names, in place
def test_torch_aliases_and_methods():
    for alias, name in [("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("arctan2", "atan2"),
                        ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh")]:
        assert getattr(lucid, alias) is getattr(lucid, name)
        x = lucid.tensor([1.5 if name == "acosh" else 0.5])
        args = (x,) if name != "atan2" else (x, x)
        np.testing.assert_array_equal(getattr(x, alias)(*args[1:]).numpy(), getattr(lucid, name)(*args).numpy())


@pytest.mark.parametrize("name, args", [("asin_", ()), ("atanh_", ()), ("erf_", ()), ("erfinv_", ()), ("sinc_", ()),
                                        ("frac_", ()), ("lerp_", (1.0, 0.5)), ("fmod_", (0.3,)),
                                        ("nan_to_num_", ()), ("xlogy_", (2.0,)), ("hypot_", (1.0,))])
def test_in_place_forms_match_the_out_of_place_ones(name, args):
    leaf_ = lucid.tensor([0.25, -0.5], dtype=lucid.float64, requires_grad=True)
    x = leaf_ * 1
    expected = getattr(lucid, name[:-1])(x, *args)
    out = getattr(x, name)(*args)
    assert out is x and x._version == 1 and type(x.grad_fn) is type(expected.grad_fn)
    np.testing.assert_array_equal(x.detach().numpy(), expected.detach().numpy())
    x.sum().backward()
    assert leaf_.grad is not None
