"""lucid.func: grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian, vmap and functional_call
against closed forms, with torch.func's structures and messages, and nested transforms."""
import numpy as np
import pytest

import lucid
from lucid import func as LF
from lucid.autograd import functional as AF
from helpers import leaf

F64 = lucid.float64


def t64(values):
    return lucid.tensor(np.asarray(values, dtype=np.float64), dtype=F64)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# Derivatives here are MLX's: in float64 on the CPU, MLX differentiates tan (behind lucid's float64 sin/cos) with
# its float32-accurate cos kernel, so trigonometric derivatives are good to ~1e-7 only (tanh, powers, log: exact).
TRIG = 1e-6


def cube_sum(x):
    return (x ** 3).sum()


# ---------------------------------------------------------------------------------------------------- grad
def test_grad_of_sum_cube():
    x = t64([1.0, -2.0, 0.5])
    g = LF.grad(cube_sum)(x)
    assert isinstance(g, lucid.Tensor) and g.dtype == F64 and not g.requires_grad
    close(g, 3 * x.numpy() ** 2)


def test_grad_argnums_and_structure():
    x, y = t64([1.0, 2.0]), t64([3.0, -1.0])
    f = lambda a, b: (a * b ** 2).sum()
    close(LF.grad(f, argnums=1)(x, y), 2 * x.numpy() * y.numpy())
    close(LF.grad(f, argnums=-1)(x, y), 2 * x.numpy() * y.numpy())
    gx, gy = LF.grad(f, argnums=(0, 1))(x, y)
    close(gx, y.numpy() ** 2)
    close(gy, 2 * x.numpy() * y.numpy())
    (only,) = LF.grad(f, argnums=(1,))(x, y)
    close(only, gy)


def test_grad_argnums_errors():
    x = t64([1.0])
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 1 positional inputs"):
        LF.grad(cube_sum, argnums=2)(x)
    with pytest.raises(RuntimeError, match="argnums must be non-empty"):
        LF.grad(cube_sum, argnums=())(x)
    with pytest.raises(RuntimeError, match=r"argnums elements must be unique, got \(0, 0\)"):
        LF.grad(lambda a: a.sum(), argnums=(0, 0))(x)
    with pytest.raises(ValueError, match="Thing passed to transform API must be Tensor, got <class 'float'>"):
        LF.grad(lambda a, s: (a * s).sum(), argnums=1)(x, 2.0)


def test_grad_of_pytree_argument():
    params = {"w": t64([1.0, 2.0]), "b": (t64(0.5), [t64([3.0])])}
    f = lambda p, s: (p["w"] ** 2).sum() * s + p["b"][0] * p["b"][1][0].sum()
    g = LF.grad(f)(params, 2.0)  # a Python float argument passes through
    assert set(g) == {"w", "b"} and isinstance(g["b"], tuple) and isinstance(g["b"][1], list)
    close(g["w"], [4.0, 8.0])
    close(g["b"][0], 3.0)
    close(g["b"][1][0], [0.5])


def test_grad_non_scalar_message():
    msg = ("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with 1 dims. Maybe you "
           "wanted to use the vjp or jacrev APIs instead?")
    with pytest.raises(RuntimeError) as e:
        LF.grad(lambda a: a ** 2)(t64([1.0, 2.0]))
    assert str(e.value) == msg
    with pytest.raises(RuntimeError, match="got tensor with 1 dims"):
        LF.grad(lambda a: a.sum().reshape(1))(t64([1.0, 2.0]))  # one element is not enough: it must be 0-d
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a Tensor, got <class 'float'>"):
        LF.grad(lambda a: 1.0)(t64([1.0]))


def test_grad_and_value_and_has_aux():
    x = t64([1.0, 2.0])
    g, v = LF.grad_and_value(cube_sum)(x)
    close(g, [3.0, 12.0])
    close(v, 9.0)
    g, aux = LF.grad(lambda a: (cube_sum(a), {"sq": a ** 2, "tag": "hi"}), has_aux=True)(x)
    close(g, [3.0, 12.0])
    close(aux["sq"], [1.0, 4.0])
    assert aux["tag"] == "hi"
    g, (v, aux) = LF.grad_and_value(lambda a: (cube_sum(a), a * 2), has_aux=True)(x)
    close(v, 9.0)
    close(aux, [2.0, 4.0])
    with pytest.raises(RuntimeError, match="output of function f should be a tuple: \\(output, aux\\) if has_aux"):
        LF.grad(cube_sum, has_aux=True)(x)


def test_grad_of_grad():
    x = t64(0.7)
    close(LF.grad(LF.grad(lambda a: a.sin()))(x), -np.sin(0.7), tol=TRIG)
    close(LF.grad(LF.grad(LF.grad(lambda a: a ** 4)))(x), 24 * 0.7, tol=1e-12)


def test_grad_leaves_lucid_tape_alone():
    x = leaf(3, seed=1)
    g = LF.grad(cube_sum)(x)
    assert x.grad is None and not g.requires_grad and g.grad_fn is None
    assert lucid.is_grad_enabled()


# ---------------------------------------------------------------------------------------------------- vjp / jvp
def test_vjp_output_and_vjp_fn():
    x, y = t64([1.0, 2.0, 3.0]), t64([0.5, -1.0, 2.0])
    out, vjp_fn = LF.vjp(lambda a, b: a * b.exp(), x, y)
    close(out, x.numpy() * np.exp(y.numpy()))
    ct = t64([1.0, 0.0, 2.0])
    gx, gy = vjp_fn(ct)
    close(gx, ct.numpy() * np.exp(y.numpy()))
    close(gy, ct.numpy() * x.numpy() * np.exp(y.numpy()))
    res = LF.vjp(lambda a: a * 2, x)[1](ct)
    assert isinstance(res, tuple) and len(res) == 1
    close(res[0], 2 * ct.numpy())


def test_vjp_tuple_output_and_aux_and_structure_error():
    x = t64([1.0, 2.0])
    out, vjp_fn, aux = LF.vjp(lambda a: ((a ** 2, a.sum()), a * 10), x, has_aux=True)
    assert isinstance(out, tuple) and len(out) == 2
    close(aux, [10.0, 20.0])
    (g,) = vjp_fn((t64([1.0, 1.0]), t64(1.0)))
    close(g, 2 * x.numpy() + 1)
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents to be the same"):
        vjp_fn(t64([1.0, 1.0]))


def test_jvp_values_and_errors():
    x, y = t64([1.0, 2.0]), t64([3.0, 4.0])
    out, jv = LF.jvp(lambda a, b: a * b, (x, y), (t64([1.0, 0.0]), t64([0.0, 1.0])))
    close(out, [3.0, 8.0])
    close(jv, [3.0, 2.0])
    out, jv = LF.jvp(lambda a: (a.sin(), a ** 2), (x,), (t64([1.0, 1.0]),))
    close(jv[0], np.cos(x.numpy()), tol=TRIG)
    close(jv[1], 2 * x.numpy())
    with pytest.raises(RuntimeError, match="^jvp\\(f, primals, tangents\\): Expected primals to be a tuple. E.g. it "
                                           "should be valid to call f\\(\\*primals\\).$"):
        LF.jvp(lambda a: a, x, (x,))
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same python structure"):
        LF.jvp(lambda a, b: a, (x, y), (x,))


def test_linearize():
    x = t64([0.3, 1.2])
    out, jvp_fn = LF.linearize(lambda a: a.exp() * a, x)
    close(out, np.exp(x.numpy()) * x.numpy())
    close(jvp_fn(t64([1.0, 2.0])), np.exp(x.numpy()) * (x.numpy() + 1) * [1.0, 2.0], tol=1e-12)


# ---------------------------------------------------------------------------------------------------- jacobians
@pytest.mark.parametrize("jac", [LF.jacrev, LF.jacfwd])
def test_jacobian_of_square_is_diag_2x(jac):
    x = t64([1.0, -2.0, 3.0])
    close(jac(lambda a: a ** 2)(x), np.diag(2 * x.numpy()))


@pytest.mark.parametrize("jac", [LF.jacrev, LF.jacfwd])
def test_jacobian_structures(jac):
    x, y = t64([[1.0, 2.0], [3.0, 4.0]]), t64([0.5, -0.5, 2.0])
    f = lambda a, b: (a.sum() * b, (a ** 2).sum(1))  # outputs (3,), (2,)
    J = jac(f, argnums=(0, 1))(x, y)
    assert isinstance(J, tuple) and len(J) == 2 and all(isinstance(r, tuple) and len(r) == 2 for r in J)
    assert [tuple(b.shape) for r in J for b in r] == [(3, 2, 2), (3, 3), (2, 2, 2), (2, 3)]
    close(J[0][0], np.broadcast_to(y.numpy()[:, None, None], (3, 2, 2)))
    close(J[0][1], x.numpy().sum() * np.eye(3))
    expected = np.zeros((2, 2, 2))
    expected[0, 0], expected[1, 1] = 2 * x.numpy()[0], 2 * x.numpy()[1]
    close(J[1][0], expected)
    close(J[1][1], np.zeros((2, 3)))
    J0 = jac(f)(x, y)  # argnums=0: one block per output
    assert isinstance(J0, tuple) and all(isinstance(b, lucid.Tensor) for b in J0)
    close(J0[1], expected)


@pytest.mark.parametrize("jac", [LF.jacrev, LF.jacfwd])
def test_jacobian_has_aux(jac):
    x = t64([1.0, 2.0])
    J, aux = jac(lambda a: (a ** 3, a.sum()), has_aux=True)(x)
    close(J, np.diag(3 * x.numpy() ** 2))
    close(aux, 3.0)


def test_hessian_of_sum_cube_and_quadratic_form():
    x = t64([1.0, -2.0, 0.5])
    close(LF.hessian(cube_sum)(x), np.diag(6 * x.numpy()))
    A = t64(np.random.default_rng(2).normal(size=(3, 3)))
    close(LF.hessian(lambda a: a @ A @ a)(x), A.numpy() + A.numpy().T)


def test_nested_jacobians_agree():
    x = t64([0.3, -0.8, 1.1])
    f = lambda a: (a.sin() * a.exp()).sum() + (a[0] * a[1] * a[2])
    H = AF.hessian(f, x).numpy()
    for h in (LF.hessian(f), LF.jacrev(LF.jacfwd(f)), LF.jacrev(LF.jacrev(f)), LF.jacfwd(LF.jacfwd(f)),
              LF.jacrev(LF.grad(f))):
        close(h(x), H, tol=TRIG)


def test_results_agree_with_autograd_functional():
    rng = np.random.default_rng(3)
    W = t64(rng.normal(size=(4, 3)))
    x = t64(rng.normal(size=3))
    f = lambda a: (W @ a).tanh()
    close(LF.jacrev(f)(x), AF.jacobian(f, x), tol=1e-12)
    close(LF.jacfwd(f)(x), AF.jacobian(f, x), tol=1e-12)
    v = t64(rng.normal(size=3))
    close(LF.jvp(f, (x,), (v,))[1], AF.jvp(f, x, v)[1], tol=1e-12)


# ---------------------------------------------------------------------------------------------------- vmap
def test_vmap_basic_in_dims_out_dims():
    X = t64(np.arange(6.0).reshape(2, 3))
    close(LF.vmap(lambda r: r.sum())(X), [3.0, 12.0])
    close(LF.vmap(lambda c: c.sum(), in_dims=1)(X), [3.0, 5.0, 7.0])
    close(LF.vmap(lambda c: c.sum(), in_dims=-1)(X), [3.0, 5.0, 7.0])
    w = t64([1.0, 10.0, 100.0])
    close(LF.vmap(lambda r, w: r @ w, in_dims=(0, None))(X, w), [210.0, 543.0])
    out = LF.vmap(lambda r: r * 2, out_dims=1)(X)
    assert tuple(out.shape) == (3, 2)
    close(out, 2 * X.numpy().T)
    a, b = LF.vmap(lambda r: (r.sum(), r * 2), out_dims=(0, 1))(X)
    close(a, [3.0, 12.0])
    assert tuple(b.shape) == (3, 2)


def test_vmap_pytrees_kwargs_and_nesting():
    X = t64(np.arange(6.0).reshape(2, 3))
    out = LF.vmap(lambda d, scale=1.0: {"s": d["x"].sum() * scale}, in_dims=({"x": 0},))({"x": X}, scale=2.0)
    close(out["s"], [6.0, 24.0])
    M = t64(np.arange(24.0).reshape(2, 3, 4))
    close(LF.vmap(LF.vmap(lambda v: v.sum()))(M), M.numpy().sum(-1))


def test_vmap_of_other_transforms():
    rng = np.random.default_rng(6)
    W = t64(rng.normal(size=(2, 3)))
    X = t64(rng.normal(size=(5, 3)))
    f = lambda x: (W @ x).tanh()
    J = LF.vmap(LF.jacrev(f))(X)
    assert tuple(J.shape) == (5, 2, 3)
    for i in range(5):
        close(J[i], AF.jacobian(f, X[i]), tol=1e-12)
    close(LF.vmap(LF.jacfwd(f))(X), J, tol=1e-12)
    g, aux = LF.vmap(LF.grad(lambda x: (f(x).sum(), x.sum()), has_aux=True))(X)
    close(aux, X.numpy().sum(1))
    close(g, J.sum(1), tol=1e-12)
    out = LF.vmap(lambda x: W.sum() * 2)(X)  # independent of the mapped input: repeated along the batch
    close(out, np.full(5, 2 * W.numpy().sum()))


def test_vmap_errors():
    X, Y = t64(np.ones((2, 3))), t64(np.ones((4, 3)))
    with pytest.raises(ValueError, match="Expected all tensors to have the same size in the mapped dimension"):
        LF.vmap(lambda a, b: a + b)(X, Y)
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure of `inputs`"):
        LF.vmap(lambda a, b: a + b, in_dims=(0,))(X, X)
    with pytest.raises(ValueError, match="We cannot vmap over dim 2"):
        LF.vmap(lambda a: a, in_dims=2)(X)
    with pytest.raises(ValueError, match="at least one input must be a Tensor with an in_dim that is not None"):
        LF.vmap(lambda a: a, in_dims=None)(X)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        LF.vmap(lambda a: a, randomness="sometimes")


def test_per_sample_gradients_match_a_loop():
    rng = np.random.default_rng(4)
    w = t64(rng.normal(size=3))
    X, Y = t64(rng.normal(size=(8, 3))), t64(rng.normal(size=8))

    def loss(w, x, y):
        return ((x @ w).tanh() - y) ** 2

    per_sample = LF.vmap(LF.grad(loss), in_dims=(None, 0, 0))(w, X, Y)
    assert tuple(per_sample.shape) == (8, 3)
    wl = w.detach().requires_grad_()
    for i in range(8):
        (g,) = lucid.autograd.grad(loss(wl, X[i], Y[i]), (wl,))
        close(per_sample[i], g, tol=1e-12)


# ---------------------------------------------------------------------------------------------------- functional_call
class Affine:
    """A stand-in for a module: Tensor attributes, one of them nested."""

    class Inner:
        def __init__(self):
            self.scale = t64(2.0)

    def __init__(self):
        self.weight = t64([[1.0, 0.0], [0.0, 1.0]])
        self.inner = Affine.Inner()

    def __call__(self, x, shift=0.0):
        return (self.weight @ x) * self.inner.scale + shift


def test_functional_call_swaps_and_restores():
    m = Affine()
    w0, s0 = m.weight, m.inner.scale
    x = t64([1.0, 2.0])
    out = LF.functional_call(m, {"weight": t64([[0.0, 1.0], [1.0, 0.0]]), "inner.scale": t64(3.0)}, (x,),
                             {"shift": 1.0})
    close(out, [7.0, 4.0])
    assert m.weight is w0 and m.inner.scale is s0
    close(LF.functional_call(m, ({"weight": t64(np.eye(2))}, {"inner.scale": t64(1.0)}), x), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"\['weight'\] appeared in multiple dictionaries"):
        LF.functional_call(m, ({"weight": w0}, {"weight": w0}), (x,))
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'bias'"):
        LF.functional_call(m, {"bias": t64(1.0)}, (x,), strict=True)


def test_functional_call_restores_after_an_error_and_removes_new_attributes():
    m = Affine()
    w0 = m.weight
    with pytest.raises(Exception):
        LF.functional_call(m, {"weight": t64(np.ones((3, 3)))}, (t64([1.0, 2.0]),))
    assert m.weight is w0
    LF.functional_call(m, {"extra": t64(1.0)}, (t64([1.0, 2.0]),))
    assert not hasattr(m, "extra")


def test_grad_through_functional_call_and_per_sample():
    m = Affine()
    params = {"weight": t64([[1.0, 2.0], [3.0, 4.0]]), "inner.scale": t64(0.5)}
    X = t64([[1.0, -1.0], [2.0, 0.5]])

    def loss(p, x):
        return (LF.functional_call(m, p, (x,)) ** 2).sum()

    g = LF.grad(loss)(params, X[0])
    W, s, x = params["weight"].numpy(), 0.5, X.numpy()[0]
    r = W @ x * s
    close(g["weight"], 2 * s * np.outer(r, x))
    close(g["inner.scale"], 2 * r @ (W @ x))
    per_sample = LF.vmap(LF.grad(loss), in_dims=(None, 0))(params, X)
    assert tuple(per_sample["weight"].shape) == (2, 2, 2)
    close(per_sample["weight"][0], g["weight"])


# ---------------------------------------------------------------------------------------------------- Laplacian
def test_pinn_laplacian_with_vmap_of_hessian_trace():
    rng = np.random.default_rng(5)
    W1, b1, w2 = rng.normal(size=(8, 2)), rng.normal(size=8), rng.normal(size=8)
    tW1, tb1, tw2 = t64(W1), t64(b1), t64(w2)
    X = t64(rng.uniform(-1, 1, size=(16, 2)))

    def u(x):  # one point in R^2 -> scalar
        return (tW1 @ x + tb1).tanh() @ tw2

    lap = LF.vmap(lambda x: (LF.hessian(u)(x) * lucid.eye(2, dtype=F64)).sum())(X)
    h = np.tanh(X.numpy() @ W1.T + b1)
    expected = (w2 * (-2 * h * (1 - h ** 2)) * (W1 ** 2).sum(1)).sum(1)
    close(lap, expected)
    # the same Laplacian with lucid's own engine (sum over the batch trick)
    Xg = X.detach().requires_grad_()
    (g,) = lucid.autograd.grad(((Xg @ tW1.t() + tb1).tanh() @ tw2).sum(), (Xg,), create_graph=True)
    lap2 = sum(lucid.autograd.grad(g[:, k].sum(), (Xg,), create_graph=True)[0][:, k] for k in range(2))
    close(lap2.detach(), expected)
