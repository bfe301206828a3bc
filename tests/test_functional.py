"""lucid.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp against closed forms, with PyTorch's
return structures, error messages, strict mode and create_graph behaviour."""
import numpy as np
import pytest

import lucid
from lucid.autograd import functional as AF
from helpers import leaf

F64 = lucid.float64


def t64(values, requires_grad=False):
    return lucid.tensor(np.asarray(values, dtype=np.float64), dtype=F64, requires_grad=requires_grad)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a.detach()), np.asarray(b), rtol=tol, atol=tol)


ALL_JACOBIANS = [dict(), dict(vectorize=True), dict(vectorize=True, strategy="forward-mode")]
ALL_HESSIANS = [dict(), dict(vectorize=True), dict(vectorize=True, outer_jacobian_strategy="forward-mode")]


# ---------------------------------------------------------------------------------------------------- jacobian
@pytest.mark.parametrize("kw", ALL_JACOBIANS)
def test_jacobian_of_square_is_diag_2x(kw):
    x = leaf(4, seed=1)
    J = AF.jacobian(lambda x: x ** 2, x, **kw)
    close(J, np.diag(2 * x.detach().numpy()))
    assert not J.requires_grad and J.grad_fn is None


@pytest.mark.parametrize("kw", ALL_JACOBIANS)
def test_jacobian_shape_is_out_shape_plus_in_shape(kw):
    x = leaf(2, 3, seed=2)
    W = t64(np.arange(12.0).reshape(4, 3))
    J = AF.jacobian(lambda x: (x @ W.t()).sin(), x, **kw)  # (2, 4) output
    assert tuple(J.shape) == (2, 4, 2, 3)
    xn, Wn = x.detach().numpy(), W.numpy()
    expected = np.zeros((2, 4, 2, 3))
    c = np.cos(xn @ Wn.T)
    for i in range(2):
        expected[i, :, i, :] = c[i][:, None] * Wn
    close(J, expected)


@pytest.mark.parametrize("kw", ALL_JACOBIANS)
def test_jacobian_tuple_structure_is_nested_out_in(kw):
    x, y = leaf(3, seed=3), leaf(2, seed=4)
    J = AF.jacobian(lambda a, b: (a.sum() * b, a * 2), (x, y), **kw)
    assert isinstance(J, tuple) and len(J) == 2 and all(isinstance(r, tuple) and len(r) == 2 for r in J)
    assert [tuple(b.shape) for r in J for b in r] == [(2, 3), (2, 2), (3, 3), (3, 2)]
    yn, xs = y.detach().numpy(), x.detach().numpy().sum()
    close(J[0][0], np.outer(yn, np.ones(3)))
    close(J[0][1], xs * np.eye(2))
    close(J[1][0], 2 * np.eye(3))
    close(J[1][1], np.zeros((3, 2)))  # non-strict: independent input gives zeros


@pytest.mark.parametrize("kw", ALL_JACOBIANS)
def test_jacobian_single_output_tuple_inputs_and_vice_versa(kw):
    x, y = leaf(3, seed=5), leaf(3, seed=6)
    J = AF.jacobian(lambda a, b: a * b, (x, y), **kw)
    assert isinstance(J, tuple) and len(J) == 2 and all(isinstance(b, lucid.Tensor) for b in J)
    close(J[0], np.diag(y.detach().numpy()))
    J = AF.jacobian(lambda a: (a * 3, a.exp()), x, **kw)
    assert isinstance(J, tuple) and len(J) == 2 and all(isinstance(b, lucid.Tensor) for b in J)
    close(J[1], np.diag(np.exp(x.detach().numpy())))


@pytest.mark.parametrize("kw", ALL_JACOBIANS)
def test_jacobian_with_empty_outputs_and_inputs(kw):
    x, e = leaf(3, seed=43), t64(np.zeros(0))
    J = AF.jacobian(lambda a: (a.sum() * e, a * 2), x, **kw)
    assert tuple(J[0].shape) == (0, 3)
    close(J[1], 2 * np.eye(3))
    assert tuple(AF.jacobian(lambda a, b: a * 2, (x, e), **kw)[1].shape) == (3, 0)


def test_jacobian_of_scalar_function_and_scalar_input():
    x = t64(2.0)
    close(AF.jacobian(lambda x: x ** 3, x), 12.0)
    v = leaf(3, seed=7)
    J = AF.jacobian(lambda v: (v ** 2).sum(), v)
    assert tuple(J.shape) == (3,)
    close(J, 2 * v.detach().numpy())


def test_jacobian_create_graph_results_are_differentiable():
    x = leaf(3, seed=8)
    J = AF.jacobian(lambda x: x ** 3, x, create_graph=True)
    assert J.requires_grad
    (g,) = lucid.autograd.grad(J.sum(), (x,))
    close(g, 6 * x.detach().numpy())
    # inputs that do not require grad: the results still require grad (through the function's own graph)
    y = t64([1.0, 2.0])
    assert AF.jacobian(lambda y: y ** 3, y, create_graph=True).requires_grad


def test_functional_api_works_under_no_grad():
    x = leaf(3, seed=40)
    with lucid.no_grad():
        close(AF.jacobian(lambda x: x ** 2, x), np.diag(2 * x.detach().numpy()))
        _, hv = AF.hvp(lambda x: (x ** 3).sum(), x, t64([1.0, 1.0, 1.0]))
        close(hv, 6 * x.detach().numpy())
    assert lucid.is_grad_enabled()


def test_strict_create_graph_on_a_linear_function():
    msg = "independent of input 0. This is not allowed in strict mode when create_graph=True."
    with pytest.raises(RuntimeError, match="^The jacobian of the user-provided function is " + msg):
        AF.jacobian(lambda a: a * 2, leaf(2), create_graph=True, strict=True)
    with pytest.raises(RuntimeError, match="^The jacobian of the user-provided function is " + msg):
        AF.vjp(lambda a: (a * 2).sum(), leaf(2), create_graph=True, strict=True)


def test_jacobian_does_not_touch_the_inputs_grad():
    x = leaf(3, seed=9)
    AF.jacobian(lambda x: x ** 2, x)
    assert x.grad is None and x.requires_grad


def test_jacobian_strict_independent_input_message():
    x, y = leaf(2, seed=10), leaf(2, seed=11)
    with pytest.raises(RuntimeError, match="^Output 0 of the user-provided function is independent of input 1. "
                                           "This is not allowed in strict mode.$"):
        AF.jacobian(lambda a, b: a * 2, (x, y), strict=True)


def test_jacobian_strict_output_without_grad_message():
    x = leaf(2, seed=12)
    msg = ("Output 0 of the user-provided function does not require gradients. The outputs must be computed in a "
           "differentiable manner from the input when running in strict mode.")
    with pytest.raises(RuntimeError, match="^" + msg + "$"):
        AF.jacobian(lambda a: lucid.ones(2, dtype=F64), x, strict=True)
    # non-strict: zeros
    close(AF.jacobian(lambda a: lucid.ones(2, dtype=F64), x), np.zeros((2, 2)))


def test_jacobian_strict_and_vectorize_not_supported():
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True` are not supported together"):
        AF.jacobian(lambda a: a * 2, leaf(2), strict=True, vectorize=True)


def test_forward_mode_needs_vectorize_verbatim_message():
    msg = ("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly implemented for "
           "`vectorize=True`.")
    with pytest.raises(NotImplementedError) as e:
        AF.jacobian(lambda a: a * 2, leaf(2), strategy="forward-mode")
    assert str(e.value) == msg
    with pytest.raises(NotImplementedError) as e:
        AF.hessian(lambda a: (a ** 3).sum(), leaf(2), outer_jacobian_strategy="forward-mode")
    assert str(e.value) == msg


def test_forward_mode_with_create_graph_or_strict_is_refused():
    with pytest.raises(NotImplementedError, match="`create_graph=True` and `strategy=\"forward-mode\"`"):
        AF.jacobian(lambda a: a * 2, leaf(2), create_graph=True, vectorize=True, strategy="forward-mode")
    with pytest.raises(RuntimeError, match="`strict=True` and `strategy=\"forward-mode\"`"):
        AF.jacobian(lambda a: a * 2, leaf(2), strict=True, vectorize=True, strategy="forward-mode")
    with pytest.raises(ValueError, match="Expected strategy to be either"):
        AF.jacobian(lambda a: a * 2, leaf(2), strategy="sideways")


def test_list_inputs_and_outputs_are_type_errors():
    x = leaf(2)
    with pytest.raises(TypeError) as e:
        AF.jacobian(lambda a: a, [x])
    assert str(e.value) == ("The inputs given to jacobian must be either a Tensor or a tuple of Tensors but the given "
                            "inputs has type <class 'list'>.")
    with pytest.raises(TypeError) as e:
        AF.jacobian(lambda a: [a], x)
    assert str(e.value) == ("The outputs of the user-provided function given to jacobian must be either a Tensor or a "
                            "tuple of Tensors but the given outputs of the user-provided function has type "
                            "<class 'list'>.")
    with pytest.raises(TypeError, match="The inputs given to vjp must be either a Tensor or a tuple of Tensors but "
                                        "the value at index 1 has type <class 'float'>."):
        AF.vjp(lambda a, b: a, (x, 1.0))
    with pytest.raises(TypeError, match="The inputs given to hessian must be"):
        AF.hessian(lambda a: a.sum(), [x])


# ---------------------------------------------------------------------------------------------------- hessian
@pytest.mark.parametrize("kw", ALL_HESSIANS)
def test_hessian_of_sum_cube_is_diag_6x(kw):
    x = leaf(4, seed=13)
    H = AF.hessian(lambda x: (x ** 3).sum(), x, **kw)
    close(H, np.diag(6 * x.detach().numpy()))
    assert not H.requires_grad


@pytest.mark.parametrize("kw", ALL_HESSIANS)
def test_hessian_tuple_inputs(kw):
    x, y = leaf(3, seed=14), leaf(3, seed=15)
    H = AF.hessian(lambda a, b: (a * b).sum() + (a ** 2 * b).sum(), (x, y), **kw)
    xn, yn = x.detach().numpy(), y.detach().numpy()
    assert all(isinstance(r, tuple) and len(r) == 2 for r in H)
    close(H[0][0], np.diag(2 * yn))
    close(H[0][1], np.diag(1 + 2 * xn))
    close(H[1][0], np.diag(1 + 2 * xn))
    close(H[1][1], np.zeros((3, 3)))


@pytest.mark.parametrize("kw", ALL_HESSIANS)
def test_hessian_of_quadratic_form_on_a_matrix_input(kw):
    A = t64(np.random.default_rng(16).normal(size=(6, 6)))
    X = leaf(2, 3, seed=17)
    H = AF.hessian(lambda X: X.reshape(6) @ A @ X.reshape(6), X, **kw)
    assert tuple(H.shape) == (2, 3, 2, 3)
    close(H.reshape(6, 6), A.numpy() + A.numpy().T)


def test_hessian_non_scalar_output_message():
    with pytest.raises(RuntimeError, match="^The Tensor returned by the function given to hessian should contain a "
                                           "single element$"):
        AF.hessian(lambda a: a ** 2, leaf(2))
    with pytest.raises(RuntimeError, match="The function given to hessian should return a single Tensor"):
        AF.hessian(lambda a: (a.sum(), a.sum()), leaf(2))


def test_hessian_strict_linear_function_message():
    msg = ("While computing the hessian, found that the jacobian of the user-provided function with respect to "
           "input 0 is independent of the input. This is not allowed in strict mode.")
    with pytest.raises(RuntimeError, match="^" + msg):
        AF.hessian(lambda a: (a * 2).sum(), leaf(2), strict=True)
    close(AF.hessian(lambda a: (a * 2).sum(), leaf(2)), np.zeros((2, 2)))


def test_hessian_create_graph():
    x = leaf(3, seed=18)
    H = AF.hessian(lambda x: (x ** 4).sum(), x, create_graph=True)
    assert H.requires_grad
    (g,) = lucid.autograd.grad(H.sum(), (x,))  # d/dx sum(diag(12 x^2)) = 24 x
    close(g, 24 * x.detach().numpy())


# ---------------------------------------------------------------------------------------------------- products
def test_vjp_values_and_structure():
    x = leaf(3, seed=19)
    v = t64([1.0, -2.0, 0.5])
    out, g = AF.vjp(lambda a: a ** 2, x, v)
    close(out, x.detach().numpy() ** 2)
    close(g, 2 * x.detach().numpy() * v.numpy())
    assert not out.requires_grad and not g.requires_grad
    y = leaf(2, seed=20)
    out, g = AF.vjp(lambda a, b: (a.sum() * b, a * 3), (x, y), (t64([1.0, 1.0]), t64([1.0, 0.0, 0.0])))
    assert isinstance(out, tuple) and isinstance(g, tuple) and len(g) == 2
    close(g[0], y.detach().numpy().sum() + np.array([3.0, 0.0, 0.0]))
    close(g[1], x.detach().numpy().sum() * np.ones(2))


def test_vjp_v_none_for_scalar_output():
    x = leaf(3, seed=21)
    out, g = AF.vjp(lambda a: (a ** 2).sum(), x)
    close(g, 2 * x.detach().numpy())


def test_vjp_v_none_message():
    with pytest.raises(RuntimeError, match="^The vector v can only be None if the user-provided function returns a "
                                           "single Tensor with a single element.$"):
        AF.vjp(lambda a: a * 2, leaf(2))


def test_v_invalid_size_messages():
    size = r"lucid\.Size\(\[{}\]\)"  # as PyTorch's torch.Size prints
    bad = r"v has invalid size: should be {} but got {}\.$".format(size.format(2), size.format(3))
    with pytest.raises(RuntimeError, match="^" + bad):
        AF.vjp(lambda a: a * 2, leaf(2), t64([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="^" + bad):
        AF.jvp(lambda a: a * 2, leaf(2), t64([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="^Entry 1 in " + bad):
        AF.hvp(lambda a, b: (a * b).sum(), (leaf(2), leaf(2)), (t64([1.0, 2.0]), t64([1.0, 2.0, 3.0])))
    with pytest.raises(RuntimeError, match="^v is a tuple of invalid length: should be 2 but got 1.$"):
        AF.vhp(lambda a, b: (a * b).sum(), (leaf(2), leaf(2)), (t64([1.0, 2.0]),))
    with pytest.raises(RuntimeError, match="^The given v should contain a single Tensor.$"):
        AF.jvp(lambda a: a * 2, leaf(2), (t64([1.0, 2.0]), t64([1.0, 2.0])))


def test_jvp_is_exact():
    x = leaf(5, seed=22)
    v = leaf(5, seed=23, requires_grad=False)
    out, jv = AF.jvp(lambda a: a.sin() * a, x, v)
    xn = x.detach().numpy()
    close(jv, (np.cos(xn) * xn + np.sin(xn)) * v.numpy(), tol=1e-13)
    assert not jv.requires_grad


def test_jvp_tuple_inputs_and_outputs():
    x, y = leaf(3, seed=24), leaf(3, seed=25)
    vx, vy = t64([1.0, 0.0, 2.0]), t64([0.0, 1.0, 1.0])
    out, jv = AF.jvp(lambda a, b: (a * b, a.exp()), (x, y), (vx, vy))
    xn, yn = x.detach().numpy(), y.detach().numpy()
    assert isinstance(jv, tuple) and len(jv) == 2
    close(jv[0], vx.numpy() * yn + xn * vy.numpy())
    close(jv[1], np.exp(xn) * vx.numpy())


def test_jvp_v_none_and_message():
    out, jv = AF.jvp(lambda a: a ** 3, t64(2.0))
    close(jv, 12.0)
    with pytest.raises(RuntimeError, match="^The vector v can only be None if the input to the user-provided "
                                           "function is a single Tensor with a single element.$"):
        AF.jvp(lambda a: a * 2, leaf(2))


def test_jvp_independent_output_gives_zeros_or_strict_error():
    x, y = leaf(2, seed=26), leaf(2, seed=27)
    _, jv = AF.jvp(lambda a, b: (a * 2, lucid.ones(2, dtype=F64)), (x, y), (t64([1.0, 1.0]), t64([1.0, 1.0])))
    close(jv[1], np.zeros(2))
    with pytest.raises(RuntimeError, match="Output 1 of the user-provided function does not require gradients"):
        AF.jvp(lambda a: (a * 2, lucid.ones(2, dtype=F64)), x, t64([1.0, 1.0]), strict=True)
    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 1"):
        AF.jvp(lambda a, b: a * 2, (x, y), (t64([1.0, 1.0]), t64([1.0, 1.0])), strict=True)


def test_jvp_create_graph_is_differentiable_in_inputs_and_v():
    x = leaf(3, seed=28)
    v = leaf(3, seed=29)
    _, jv = AF.jvp(lambda a: a.sin(), x, v, create_graph=True)
    assert jv.requires_grad
    gx, gv = lucid.autograd.grad(jv.sum(), (x, v))
    xn, vn = x.detach().numpy(), v.detach().numpy()
    close(gx, -np.sin(xn) * vn)
    close(gv, np.cos(xn))


def test_vjp_create_graph_is_differentiable_in_v():
    x, v = leaf(3, seed=41), leaf(3, seed=42)
    _, g = AF.vjp(lambda a: a.exp(), x, v, create_graph=True)
    gx, gv = lucid.autograd.grad(g.sum(), (x, v))
    close(gx, np.exp(x.detach().numpy()) * v.detach().numpy())
    close(gv, np.exp(x.detach().numpy()))


def test_vjp_create_graph_results_require_grad_even_for_plain_inputs():
    y = t64([1.0, 2.0])
    out, g = AF.vjp(lambda a: (a ** 3).sum(), y, create_graph=True)
    assert out.requires_grad and g.requires_grad


def test_vjp_strict_independent_input_message():
    with pytest.raises(RuntimeError, match="^The output of the user-provided function is independent of input 1. "
                                           "This is not allowed in strict mode.$"):
        AF.vjp(lambda a, b: (a * 2).sum(), (leaf(2), leaf(2)), strict=True)
    _, g = AF.vjp(lambda a, b: (a * 2).sum(), (leaf(2), leaf(2)))
    close(g[1], np.zeros(2))


@pytest.mark.parametrize("fn", [AF.hvp, AF.vhp])
def test_hvp_vhp_of_quadratic_form(fn):
    rng = np.random.default_rng(30)
    A = t64(rng.normal(size=(4, 4)))
    x = leaf(4, seed=31)
    v = t64(rng.normal(size=4))
    out, hv = fn(lambda a: a @ A @ a, x, v)
    xn, An = x.detach().numpy(), A.numpy()
    close(out, xn @ An @ xn)
    close(hv, (An + An.T) @ v.numpy())


@pytest.mark.parametrize("fn", [AF.hvp, AF.vhp])
def test_hvp_vhp_tuple_inputs_and_messages(fn):
    x, y = leaf(3, seed=32), leaf(3, seed=33)
    vx, vy = t64([1.0, 2.0, 3.0]), t64([0.5, 0.0, -1.0])
    _, hv = fn(lambda a, b: (a * b).sum() + (a ** 3).sum(), (x, y), (vx, vy))
    xn = x.detach().numpy()
    close(hv[0], 6 * xn * vx.numpy() + vy.numpy())
    close(hv[1], vx.numpy())
    name = fn.__name__
    with pytest.raises(RuntimeError, match=f"^The Tensor returned by the function given to {name} should contain a "
                                           "single element$"):
        fn(lambda a: a * a, x, vx)
    with pytest.raises(RuntimeError, match="found that the jacobian of the user-provided function with respect to "
                                           "input 0 is independent of the input"):
        fn(lambda a: (a * 2).sum(), x, vx, strict=True)
    _, hv = fn(lambda a: (a * 2).sum(), x, vx)
    close(hv, np.zeros(3))


def test_hvp_create_graph():
    x = leaf(3, seed=34)
    v = t64([1.0, 1.0, 1.0])
    _, hv = AF.hvp(lambda a: (a ** 4).sum(), x, v, create_graph=True)
    assert hv.requires_grad
    (g,) = lucid.autograd.grad(hv.sum(), (x,))
    close(g, 24 * x.detach().numpy())


# ---------------------------------------------------------------------------------------------------- Laplacian
def _mlp(seed, hidden=8):
    rng = np.random.default_rng(seed)
    W1, b1, w2 = rng.normal(size=(hidden, 2)), rng.normal(size=hidden), rng.normal(size=hidden)
    return W1, b1, w2


def mlp_laplacian_numpy(X, W1, b1, w2):
    """u(x) = w2 . tanh(W1 x + b1): Laplacian = sum_j w2_j (-2 h_j (1 - h_j^2)) |W1_j|^2."""
    h = np.tanh(X @ W1.T + b1)
    return (w2 * (-2 * h * (1 - h ** 2)) * (W1 ** 2).sum(1)).sum(1)


def test_pinn_laplacian_of_mlp_with_grad_create_graph():
    W1, b1, w2 = _mlp(35)
    tW1, tb1, tw2 = t64(W1), t64(b1), t64(w2)
    X = leaf(16, 2, seed=36)
    u = (X @ tW1.t() + tb1).tanh() @ tw2  # (N,)
    # sum over the batch: each point's u depends only on its own x
    (g,) = lucid.autograd.grad(u.sum(), (X,), create_graph=True)  # (N, 2)
    lap = 0
    for k in range(2):
        (gk,) = lucid.autograd.grad(g[:, k].sum(), (X,), create_graph=True)
        lap = lap + gk[:, k]
    assert lap.requires_grad  # a PINN loss on it can be trained
    close(lap, mlp_laplacian_numpy(X.detach().numpy(), W1, b1, w2))


def test_laplacian_of_sin_exp_with_hessian_and_grad():
    a, b = np.array([0.7, -1.3]), np.array([0.4, 0.9])
    ta, tb = t64(a), t64(b)
    u = lambda x: (x @ ta).sin() * (x @ tb).exp()
    x = leaf(2, seed=37)
    xn = x.detach().numpy()
    s, c, e = np.sin(a @ xn), np.cos(a @ xn), np.exp(b @ xn)
    expected = e * ((b @ b - a @ a) * s + 2 * (a @ b) * c)
    H = AF.hessian(u, x)
    close(H[0, 0] + H[1, 1], expected)
    (g,) = lucid.autograd.grad(u(x), (x,), create_graph=True)
    (g0,) = lucid.autograd.grad(g[0], (x,), retain_graph=True)
    (g1,) = lucid.autograd.grad(g[1], (x,))
    close(g0[0] + g1[1], expected)


@pytest.mark.skipif(not hasattr(lucid.linalg, "inv"), reason="lucid.linalg.inv not available")
def test_jacobian_uses_lucids_own_rules_where_mlx_has_none():
    # MLX has no VJP for inv (lucid.func cannot differentiate it); lucid's engine can: d(A^-1) = -A^-1 dA A^-1
    A = t64([[2.0, 1.0], [0.5, 3.0]])
    Ai = np.linalg.inv(A.numpy())
    for kw in ALL_JACOBIANS:
        close(AF.jacobian(lucid.linalg.inv, A, **kw), -np.einsum("ik,lj->ijkl", Ai, Ai))
