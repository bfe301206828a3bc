"""Reductions: forward values against numpy, gradcheck + gradgradcheck in float64, node names, PyTorch's subgradient
conventions (ties, zeros), argument forms and errors.

The main table is (name, lucid fn, numpy fn, which dims the op takes); every entry is crossed with every dim
configuration it supports, so adding an op adds its forward, gradient and second-derivative tests."""
import math
import re

import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf

INF = math.inf


def _np_lse(a, axis, keepdims):
    m = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def _np_pnorm(p):
    def ref(a, axis, keepdims):
        if p == INF:
            return np.max(np.abs(a), axis=axis, keepdims=keepdims)
        if p == -INF:
            return np.min(np.abs(a), axis=axis, keepdims=keepdims)
        if p == 0:
            return np.sum(a != 0, axis=axis, keepdims=keepdims).astype(a.dtype)
        return np.sum(np.abs(a) ** p, axis=axis, keepdims=keepdims) ** (1 / p)
    return ref


def _np_softmax(a, axis, keepdims):
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


# (name, fn(x, dim, keepdim), numpy fn(a, axis, keepdims), dims): "multi" takes None / int / tuple,
# "single" takes None / int, "int" needs an int (no keepdim: softmax)
OPS = [
    ("sum", lambda x, d, k: x.sum(d, k), np.sum, "multi"),
    ("mean", lambda x, d, k: lucid.mean(x, d, keepdim=k), np.mean, "multi"),
    ("prod", lambda x, d, k: x.prod(d, k), np.prod, "single"),
    ("amax", lambda x, d, k: x.amax(() if d is None else d, k), np.max, "multi"),
    ("amin", lambda x, d, k: lucid.amin(x, () if d is None else d, keepdim=k), np.min, "multi"),
    ("max_dim", lambda x, d, k: x.max(d, k).values, np.max, "int"),
    ("min_dim", lambda x, d, k: lucid.min(x, dim=d, keepdim=k)[0], np.min, "int"),
    ("var", lambda x, d, k: x.var(d, keepdim=k), lambda a, axis, keepdims: np.var(a, axis, ddof=1, keepdims=keepdims),
     "multi"),
    ("var_corr0", lambda x, d, k: lucid.var(x, d, keepdim=k, correction=0), np.var, "multi"),
    ("std", lambda x, d, k: x.std(d, keepdim=k), lambda a, axis, keepdims: np.std(a, axis, ddof=1, keepdims=keepdims),
     "multi"),
    ("std_unbiased_false", lambda x, d, k: lucid.std(x, d, False, k), np.std, "multi"),
    ("logsumexp", lambda x, d, k: x.logsumexp(tuple(range(x.ndim)) if d is None else d, k), _np_lse, "multi"),
    ("norm", lambda x, d, k: x.norm(dim=d, keepdim=k), _np_pnorm(2), "multi"),
    ("norm_fro", lambda x, d, k: lucid.norm(x, "fro", d, k), _np_pnorm(2), "multi"),
    ("norm_p1", lambda x, d, k: x.norm(1, d, k), _np_pnorm(1), "multi"),
    ("norm_p3", lambda x, d, k: x.norm(3, d, k), _np_pnorm(3), "multi"),
    ("norm_p0.5", lambda x, d, k: x.norm(0.5, d, k), _np_pnorm(0.5), "multi"),
    ("norm_inf", lambda x, d, k: x.norm(INF, d, k), _np_pnorm(INF), "multi"),
    ("norm_-inf", lambda x, d, k: x.norm(-INF, d, k), _np_pnorm(-INF), "multi"),
    ("norm_p0", lambda x, d, k: x.norm(0, d, k), _np_pnorm(0), "multi"),
    ("softmax", lambda x, d, k: x.softmax(d), _np_softmax, "int"),
    ("log_softmax", lambda x, d, k: lucid.log_softmax(x, d),
     lambda a, axis, keepdims: np.log(_np_softmax(a, axis, keepdims)), "int"),
]

# (shape, dim, keepdim); the dims each kind of op accepts. 0-d tensors take dim 0 and -1 as in PyTorch.
DIMS = {
    "multi": [((), None, False), ((), 0, False), ((), -1, True), ((5,), None, True), ((5,), 0, False),
              ((2, 3, 2), None, False), ((2, 3, 2), 1, False), ((2, 3, 2), -1, True), ((2, 3, 2), (0, 2), False),
              ((2, 3, 2), (-1, 0), True)],
    "single": [((), None, False), ((), 0, True), ((5,), 0, False), ((2, 3, 2), None, False),
               ((2, 3, 2), 1, False), ((2, 3, 2), -1, True)],
    "int": [((), 0, False), ((), -1, True), ((5,), 0, False), ((2, 3, 2), 1, False), ((2, 3, 2), -1, True),
            ((2, 3, 2), 0, False)],
}
# ops whose value or derivative is undefined on a single element (one degree of freedom)
NEEDS_TWO = {"var", "std", "std_unbiased_false", "var_corr0"}

CASES = [pytest.param(fn, ref, shape, dim, keepdim, id=f"{name}-{list(shape)}-dim{dim}-keep{int(keepdim)}")
         for name, fn, ref, kind in OPS for shape, dim, keepdim in DIMS[kind]
         if not (name in NEEDS_TWO and shape == ())]


def _np_axis(dim, shape):
    if shape == ():
        return None
    return dim if not isinstance(dim, tuple) else tuple(d % len(shape) for d in dim)


@pytest.mark.parametrize("fn, ref, shape, dim, keepdim", CASES)
def test_forward_matches_numpy(fn, ref, shape, dim, keepdim):
    a = np.random.default_rng(1).uniform(-2, 2, shape)
    out = fn(lucid.tensor(a, dtype=lucid.float64), dim, keepdim)
    expected = np.asarray(ref(a, axis=_np_axis(dim, shape), keepdims=keepdim))
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, ref, shape, dim, keepdim", CASES)
def test_gradients(fn, ref, shape, dim, keepdim):
    x = leaf(*shape, seed=len(shape))
    check_grads(lambda t: fn(t, dim, keepdim), x)


def test_float32_forward_uses_fast_kernels():
    a = np.random.default_rng(0).uniform(-3, 3, (4, 5)).astype(np.float32)
    x = lucid.tensor(a)
    np.testing.assert_allclose(x.softmax(1).numpy(), _np_softmax(a, 1, False), rtol=1e-5)
    np.testing.assert_allclose(x.log_softmax(0).numpy(), np.log(_np_softmax(a, 0, False)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.logsumexp(1).numpy(), _np_lse(a, 1, False), rtol=1e-5)
    np.testing.assert_allclose(x.var(0).numpy(), np.var(a, 0, ddof=1), rtol=1e-5)
    assert x.softmax(1).dtype == lucid.float32


def test_norm_matches_np_linalg_norm():
    a = np.random.default_rng(0).uniform(-2, 2, (3, 4))
    x = lucid.tensor(a, dtype=lucid.float64)
    for p in (2, 1, 3, INF, -INF):
        np.testing.assert_allclose(x.norm(p, 1).numpy(), np.linalg.norm(a, ord=p, axis=1))
    np.testing.assert_allclose(x.norm().numpy(), np.linalg.norm(a))  # 'fro'
    np.testing.assert_allclose(lucid.norm(x, "fro", (0, 1)).numpy(), np.linalg.norm(a, "fro"))


# ---------------------------------------------------------------------------------------------------- node names
NODE_NAMES = [
    (lambda x: x.sum(), "SumBackward0"),
    (lambda x: x.sum(0), "SumBackward1"),
    (lambda x: x.mean(), "MeanBackward0"),
    (lambda x: x.mean(1), "MeanBackward1"),
    (lambda x: x.prod(), "ProdBackward0"),
    (lambda x: x.prod(1), "ProdBackward1"),
    (lambda x: x.max(), "MaxBackward1"),
    (lambda x: x.min(), "MinBackward1"),
    (lambda x: x.max(1).values, "MaxBackward0"),
    (lambda x: x.min(0).values, "MinBackward0"),
    (lambda x: x.amax(1), "AmaxBackward0"),
    (lambda x: x.amin(), "AminBackward0"),
    (lambda x: x.var(), "VarBackward0"),
    (lambda x: x.std(0), "StdBackward0"),
    (lambda x: x.logsumexp(1), "LogsumexpBackward0"),
    (lambda x: x.norm(), "LinalgVectorNormBackward0"),
    (lambda x: x.norm(INF, 1), "LinalgVectorNormBackward0"),
    (lambda x: x.softmax(1), "SoftmaxBackward0"),
    (lambda x: x.log_softmax(1), "LogSoftmaxBackward0"),
    (lambda x: lucid.max(x, x * 2), "MaximumBackward0"),
    (lambda x: lucid.min(x, other=x * 2), "MinimumBackward0"),
]


@pytest.mark.parametrize("fn, name", NODE_NAMES, ids=[n for _, n in NODE_NAMES])
def test_node_names(fn, name):
    assert type(fn(leaf(2, 3)).grad_fn).__name__ == name


# ---------------------------------------------------------------------------------------------------- subgradients
def _grad(fn, values):
    x = lucid.tensor(values, dtype=lucid.float64, requires_grad=True)
    fn(x).backward()
    return x.grad.tolist()


def test_max_all_ties_split_evenly():
    assert _grad(lambda x: x.max(), [1.0, 3.0, 3.0]) == [0.0, 0.5, 0.5]
    assert _grad(lambda x: x.min(), [[2.0, 2.0], [5.0, 2.0]]) == [[1 / 3, 1 / 3], [0.0, 1 / 3]]


def test_max_dim_ties_give_only_the_returned_index():
    x = lucid.tensor([[3.0, 3.0, 1.0], [2.0, 5.0, 5.0]], requires_grad=True)
    values, indices = x.max(1)
    assert indices.tolist() == [0, 1] and values.tolist() == [3.0, 5.0]
    values.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert _grad(lambda t: t.min(0, keepdim=True).values.sum(), [[1.0, 4.0], [1.0, 2.0]]) == [[1.0, 0.0], [0.0, 1.0]]


def test_amax_amin_ties_split_evenly():
    assert _grad(lambda x: x.amax(1).sum(), [[3.0, 3.0, 1.0], [2.0, 5.0, 5.0]]) == [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]
    assert _grad(lambda x: x.amin((0, 1)), [[1.0, 2.0], [1.0, 1.0]]) == [[1 / 3, 0.0], [1 / 3, 1 / 3]]


def test_inf_norm_ties_split_with_sign():
    assert _grad(lambda x: x.norm(INF), [-2.0, 2.0, 1.0]) == [-0.5, 0.5, 0.0]


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, INF, -INF, 0, "fro"])
def test_norm_gradient_at_zero_vector_is_zero(p):
    assert _grad(lambda x: x.norm(p), [0.0, 0.0, 0.0]) == [0.0, 0.0, 0.0]
    assert _grad(lambda x: x.norm(p, 1).sum(), [[0.0, 0.0], [3.0, 4.0]])[0] == [0.0, 0.0]


def test_prod_gradient_with_zeros():
    assert _grad(lambda x: x.prod(), [2.0, 0.0, 3.0]) == [0.0, 6.0, 0.0]
    assert _grad(lambda x: x.prod(), [0.0, 0.0, 3.0]) == [0.0, 0.0, 0.0]
    assert _grad(lambda x: x.prod(1).sum(), [[2.0, 0.0, 3.0], [1.0, 2.0, 3.0]]) == [[0.0, 6.0, 0.0],
                                                                                    [6.0, 3.0, 2.0]]


@pytest.mark.parametrize("values", [[[2.0, 0.0, 3.0], [0.0, 0.0, -1.5]], [[0.0, 0.5, 0.0], [1.0, 0.0, 0.0]]],
                         ids=["one-zero-per-row", "two-zeros"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_gradcheck_with_zeros(values, dim):
    x = lucid.tensor(values, dtype=lucid.float64, requires_grad=True)
    check_grads(lambda t: t.prod() if dim is None else t.prod(dim), x)


def test_std_of_constant_has_zero_gradient_as_in_pytorch():
    # PyTorch's std_backward masks std == 0 (2.x); the second derivative there is 0 too, not 0 * inf
    assert _grad(lambda x: x.std(), [1.0, 1.0]) == [0.0, 0.0]
    x = lucid.tensor([1.0, 1.0], dtype=lucid.float64, requires_grad=True)
    (g,) = lucid.autograd.grad(x.std(), [x], create_graph=True)
    assert lucid.autograd.grad(g.sum(), [x])[0].tolist() == [0.0, 0.0]


# ---------------------------------------------------------------------------------------------------- arguments
def test_argmax_argmin_values_dtype_and_no_grad():
    a = np.array([[1.0, 5.0, 5.0], [7.0, 0.0, 7.0]])
    x = lucid.tensor(a, requires_grad=True)
    cases = [(x.argmax(), np.argmax(a)), (x.argmax(1), np.argmax(a, 1)), (x.argmin(0), np.argmin(a, 0)),
             (lucid.argmax(x, -1, keepdim=True), np.argmax(a, -1)[:, None]), (x.argmin(keepdim=True), [[4]])]
    for out, expected in cases:
        assert out.dtype == lucid.int64 and not out.requires_grad and out.grad_fn is None
        assert out.tolist() == np.asarray(expected).tolist()
    assert not x.max(1).indices.requires_grad and x.max(1).indices.dtype == lucid.int64


def test_0d_reductions_behave_as_in_pytorch():
    x = lucid.tensor(2.5, dtype=lucid.float64, requires_grad=True)
    values, indices = x.max(0)
    assert values.item() == 2.5 and indices.item() == 0 and values.shape == ()
    assert x.argmax().item() == 0 and x.argmin(0, keepdim=True).shape == ()
    assert x.softmax(0).item() == 1.0 and x.log_softmax(-1).item() == 0.0
    assert x.sum(0, keepdim=True).shape == () and x.prod(-1).item() == 2.5
    assert math.isnan(x.var().item()) and x.var(correction=0).item() == 0.0
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"):
        x.sum(1)


def test_var_argument_forms():
    a = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    x = lucid.tensor(a, dtype=lucid.float64)
    forms = [(x.var(), np.var(a, ddof=1)), (x.var(True), np.var(a, ddof=1)), (x.var(False), np.var(a)),
             (x.var(0, True), np.var(a, 0, ddof=1)), (x.var(0, False, True), np.var(a, 0, keepdims=True)),
             (x.var(1, unbiased=False), np.var(a, 1)), (x.var(dim=1, correction=2), np.var(a, 1, ddof=2)),
             (x.std(unbiased=True), np.std(a, ddof=1)), (lucid.std(x, (0, 1), correction=0), np.std(a))]
    for out, expected in forms:
        assert out.shape == np.shape(expected)
        np.testing.assert_allclose(out.numpy(), expected)


def test_var_mean_std_mean():
    a = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    x = lucid.tensor(a, dtype=lucid.float64, requires_grad=True)
    v, m = lucid.var_mean(x, 1, keepdim=True)
    np.testing.assert_allclose(v.detach().numpy(), np.var(a, 1, ddof=1, keepdims=True))
    np.testing.assert_allclose(m.detach().numpy(), np.mean(a, 1, keepdims=True))
    s, m = lucid.std_mean(x, correction=0)
    np.testing.assert_allclose(s.detach().numpy(), np.std(a))
    np.testing.assert_allclose(m.detach().numpy(), np.mean(a))
    check_grads(lambda t: lucid.var_mean(t, 0), leaf(2, 3))
    check_grads(lambda t: lucid.std_mean(t, 1, keepdim=True), leaf(2, 3))


def test_empty_dim_list_reduces_every_dim():
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.sum(()).item() == 10.0 and x.mean([]).item() == 2.5 and x.amax().item() == 4.0
    assert x.sum((), keepdim=True).shape == (1, 1)


def test_integer_sum_and_prod_promote_to_int64():
    x = lucid.tensor([[1, 2], [3, 4]], dtype=lucid.int32)
    assert x.sum().dtype == lucid.int64 and x.sum().item() == 10
    assert x.prod(0).dtype == lucid.int64 and x.prod(0).tolist() == [3, 8]
    assert lucid.tensor([True, True, False]).sum().item() == 2
    assert x.sum(dtype=lucid.float32).dtype == lucid.float32


def test_max_with_tensor_argument_is_maximum():
    a = lucid.tensor([1.0, 5.0, 2.0])
    b = lucid.tensor([3.0, 4.0, 2.0])
    assert lucid.max(a, b).tolist() == [3.0, 5.0, 2.0]
    assert a.min(b).tolist() == [1.0, 4.0, 2.0]


def test_max_dim_returns_a_named_pair():
    x = lucid.tensor([[1.0, 9.0], [8.0, 2.0]])
    out = x.max(dim=1, keepdim=True)
    values, indices = out
    assert type(out).__name__ == "max" and out.values is values and out.indices is indices
    assert values.tolist() == [[9.0], [8.0]] and indices.tolist() == [[1], [0]]


def test_softmax_dtype_argument_and_stability():
    x = lucid.tensor([1, 2, 3])
    np.testing.assert_allclose(x.softmax(0, dtype=lucid.float64).numpy(), _np_softmax(np.array([1., 2, 3]), 0, 0))
    big = lucid.tensor([1000.0, 1000.0], dtype=lucid.float64)
    assert big.softmax(0).tolist() == [0.5, 0.5] and big.logsumexp(0).item() == pytest.approx(1000 + math.log(2))
    assert lucid.tensor([1, 2]).logsumexp(0).dtype == lucid.float32


def test_sum_backward_twice_without_retain_graph():
    # sum and mean save no tensors: a second backward works, as in PyTorch
    x = leaf(2, 3)
    for y in (x.sum(1), x.mean((0, 1), keepdim=True)):
        seed = lucid.ones(*y.shape, dtype=lucid.float64)
        x.grad = None
        y.backward(seed)
        y.backward(seed)
        assert x.grad.shape == (2, 3)


def test_prod_backward_twice_raises():
    y = leaf(3).prod()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


# ---------------------------------------------------------------------------------------------------- errors
ERRORS = [
    (lambda: lucid.tensor([1, 2]).mean(), RuntimeError,
     "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long"),
    (lambda: lucid.tensor([1, 2]).var(), RuntimeError, "std and var only support floating point"),
    (lambda: lucid.tensor([1, 2]).norm(), RuntimeError,
     "Expected a floating point or complex tensor as input. Got Long"),
    (lambda: lucid.tensor([1, 2]).softmax(0), RuntimeError, "not implemented for 'Long'"),
    (lambda: leaf(2, 3).sum(2), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: leaf(2, 3).amax((0, -2)), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    (lambda: leaf(0).max(), RuntimeError, "max(): Expected reduction dim to be specified for input.numel() == 0"),
    (lambda: leaf(0).argmin(), RuntimeError, "argmin(): Expected reduction dim to be specified"),
    (lambda: leaf(2, 3).max((0, 1)), TypeError, "max(): argument 'dim' must be int, not tuple"),
    (lambda: leaf(2, 3).norm("bad"), RuntimeError, "unknown p='bad'"),
    (lambda: leaf(3).var(0, True, correction=0), RuntimeError, "cannot specify both unbiased and correction"),
]


@pytest.mark.parametrize("fn, exc, message", ERRORS, ids=[e[2][:30] for e in ERRORS])
def test_errors(fn, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        fn()


def test_nuclear_norm_is_the_sum_of_singular_values():
    a = leaf(2, 3)
    assert lucid.norm(a, p="nuc").item() == pytest.approx(np.linalg.norm(a.detach().numpy(), "nuc"), rel=1e-12)
    check_grads(lambda t: lucid.norm(t, p="nuc"), a)
