"""lucid.linalg: values against numpy.linalg, gradcheck + gradgradcheck in float64 (batched shapes included), return
structures, node names, PyTorch's errors and what lucid does instead of raising on a value.

Two tables: VALUES (name, lucid fn, numpy fn, input kinds) and GRADS (name, fn, input kinds, second order). An input
kind is "g" (uniform in [-1, 1)), "i" (g + 3I: well conditioned), "s" (symmetric positive definite) or "u" (upper
triangular, well conditioned), with a shape. Decompositions are checked through gauge-invariant functions: the
signs of singular vectors and eigenvectors are arbitrary, so a loss must not depend on them. Where PyTorch is
installed it is an optional oracle for values and gradient conventions (TORCH_CASES)."""
import math
import re

import mlx.core as mx
import numpy as np
import pytest

import lucid
from helpers import check_grads
from lucid import linalg as LA

INF = math.inf


def make(kind, shape, seed, requires_grad=True):
    a = np.random.default_rng(seed).uniform(-1, 1, shape)
    n = shape[-1]
    if kind == "i":
        a = a + 3 * np.eye(n)
    elif kind == "s":
        a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    elif kind == "u":
        a = np.triu(a) + 3 * np.eye(n)
    return lucid.tensor(a, dtype=lucid.float64, requires_grad=requires_grad)


def inputs(specs, requires_grad=True):
    return [make(k, s, seed, requires_grad) for seed, (k, s) in enumerate(specs, 1)]


def spd(x):
    return x @ x.mT + x.shape[-1] * lucid.eye(x.shape[-1], dtype=lucid.float64)


def sym(x):
    return x + x.mT


def np_batched(f):
    """A numpy function of one matrix applied over leading batch dims."""
    def g(*arrays):
        a = arrays[0]
        if a.ndim == 2:
            return f(*arrays)
        return np.stack([g(*[x[i] for x in arrays]) for i in range(a.shape[0])])
    return g


def _np_lstsq(a, b):
    return np.linalg.lstsq(a, b, rcond=None)[0]


def _np_matrix_norm(ord, axis=(-2, -1), keepdims=False):
    return lambda a: np.linalg.norm(a, ord, axis=axis, keepdims=keepdims)


_UPPER = lucid.tensor(np.triu(np.ones((3, 3))), dtype=lucid.float64)  # eigh(UPLO="U") must not read below

# (name, lucid fn, numpy fn, [(kind, shape), ...])
VALUES = [
    ("inv", LA.inv, np.linalg.inv, [("i", (3, 3))]),
    ("inv-batch", LA.inv, np.linalg.inv, [("i", (2, 3, 3))]),
    ("det", LA.det, np.linalg.det, [("g", (3, 3))]),
    ("det-batch", LA.det, np.linalg.det, [("g", (2, 3, 3))]),
    ("slogdet-sign", lambda a: LA.slogdet(a).sign, lambda a: np.linalg.slogdet(a)[0], [("g", (2, 3, 3))]),
    ("slogdet-logabsdet", lambda a: LA.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1], [("g", (2, 3, 3))]),
    ("solve", LA.solve, np.linalg.solve, [("i", (3, 3)), ("g", (3, 2))]),
    ("solve-vector", LA.solve, np.linalg.solve, [("i", (3, 3)), ("g", (3,))]),
    ("solve-broadcast", LA.solve, np.linalg.solve, [("i", (2, 3, 3)), ("g", (3, 2))]),
    ("solve-right", lambda a, b: LA.solve(a, b, left=False), lambda a, b: b @ np.linalg.inv(a),
     [("i", (3, 3)), ("g", (2, 3))]),
    ("solve_triangular", lambda a, b: LA.solve_triangular(a, b, upper=True), np.linalg.solve,
     [("u", (3, 3)), ("g", (3, 2))]),
    ("cholesky", LA.cholesky, np.linalg.cholesky, [("s", (2, 3, 3))]),
    ("cholesky-upper", lambda a: LA.cholesky(a, upper=True), lambda a: np.swapaxes(np.linalg.cholesky(a), -1, -2),
     [("s", (3, 3))]),
    ("cholesky_solve", lambda b, s: LA.cholesky_solve(b, LA.cholesky(s)), lambda b, s: np.linalg.solve(s, b),
     [("g", (3, 2)), ("s", (3, 3))]),
    ("matrix_power-3", lambda a: LA.matrix_power(a, 3), lambda a: np.linalg.matrix_power(a, 3), [("g", (2, 3, 3))]),
    ("matrix_power-neg", lambda a: LA.matrix_power(a, -2), lambda a: np.linalg.matrix_power(a, -2),
     [("i", (3, 3))]),
    ("matrix_power-0", lambda a: LA.matrix_power(a, 0), lambda a: np.linalg.matrix_power(a, 0), [("g", (3, 3))]),
    ("svdvals", LA.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), [("g", (2, 3, 2))]),
    ("svd-S", lambda a: LA.svd(a).S, lambda a: np.linalg.svd(a)[1], [("g", (2, 3))]),
    ("eigvalsh", LA.eigvalsh, np.linalg.eigvalsh, [("s", (2, 3, 3))]),
    ("eigh-UPLO-U", lambda a: LA.eigh(a * _UPPER, "U")[0], np.linalg.eigvalsh, [("s", (3, 3))]),
    ("pinv-tall", LA.pinv, np.linalg.pinv, [("g", (3, 2))]),
    ("pinv-wide", LA.pinv, np.linalg.pinv, [("g", (2, 3))]),
    ("pinv-batch", LA.pinv, np.linalg.pinv, [("g", (2, 3, 3))]),
    ("pinv-hermitian", lambda a: LA.pinv(a, hermitian=True), np.linalg.pinv, [("s", (3, 3))]),
    ("lstsq-tall", lambda a, b: LA.lstsq(a, b).solution, _np_lstsq, [("g", (3, 2)), ("g", (3, 2))]),
    ("lstsq-wide", lambda a, b: LA.lstsq(a, b).solution, _np_lstsq, [("g", (2, 3)), ("g", (2, 1))]),
    ("lstsq-batch", lambda a, b: LA.lstsq(a, b).solution, np_batched(_np_lstsq), [("g", (2, 3, 2)), ("g", (2, 3, 1))]),
    ("vector_norm", LA.vector_norm, np.linalg.norm, [("g", (5,))]),
    ("vector_norm-3", lambda x: LA.vector_norm(x, 3, dim=1), lambda a: np.linalg.norm(a, 3, axis=1), [("g", (2, 4))]),
    ("norm-flat", LA.norm, lambda a: np.linalg.norm(a.reshape(-1)), [("g", (2, 3, 2))]),
    ("norm-2d-ord", lambda a: LA.norm(a, 1), lambda a: np.linalg.norm(a, 1), [("g", (3, 2))]),
    ("norm-dim-int", lambda a: LA.norm(a, INF, dim=0), lambda a: np.linalg.norm(a, INF, axis=0), [("g", (3, 2))]),
    ("matrix_norm-dims-keepdim", lambda a: LA.matrix_norm(a, "nuc", dim=(0, 2), keepdim=True),
     _np_matrix_norm("nuc", (0, 2), True), [("g", (3, 2, 4))]),
    ("matrix_norm-1-dims", lambda a: LA.matrix_norm(a, 1, dim=(2, 0)), _np_matrix_norm(1, (2, 0)),
     [("g", (3, 2, 4))]),
] + [(f"matrix_norm-{o}", (lambda o: lambda a: LA.matrix_norm(a, o))(o), _np_matrix_norm(o), [("g", (2, 3, 2))])
     for o in ("fro", "nuc", 2, -2, 1, -1, INF, -INF)]


@pytest.mark.parametrize("fn, ref, specs", [pytest.param(*c[1:], id=c[0]) for c in VALUES])
def test_values_match_numpy(fn, ref, specs):
    args = inputs(specs, requires_grad=False)
    out = fn(*args)
    expected = ref(*[a.numpy() for a in args])
    assert tuple(out.shape) == np.shape(expected)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)


def _svd_products(full_matrices):
    """Sign-invariant functions of every output of svd: U diag(S) Vh, and each column of U (row of Vh) times a
    quantity with the same sign."""
    def f(a):
        U, S, Vh = LA.svd(a, full_matrices=full_matrices)
        k = S.shape[-1]
        U, Vh = U[..., :k], Vh[..., :k, :]
        return (U * S.unsqueeze(-2)) @ Vh, U * U.sum(-2, keepdim=True), Vh * U[..., :1, :].mT, S
    return f


def _eigh_function(a):
    L, V = LA.eigh(sym(a))
    return (V * L.exp().unsqueeze(-2)) @ V.mT, V * V.sum(-2, keepdim=True)


# (name, fn, [(kind, shape), ...]); every entry gets gradcheck and gradgradcheck
GRADS = [
    ("inv-2x2", LA.inv, [("i", (2, 2))]),
    ("inv-3x3", LA.inv, [("i", (3, 3))]),
    ("inv-batch", LA.inv, [("i", (2, 3, 3))]),
    ("det-2x2", LA.det, [("g", (2, 2))]),
    ("det-batch", LA.det, [("i", (2, 3, 3))]),
    ("slogdet", lambda a: LA.slogdet(a).logabsdet, [("g", (3, 3))]),
    ("slogdet-batch", lambda a: LA.slogdet(a).logabsdet, [("i", (2, 3, 3))]),
    ("solve", LA.solve, [("i", (3, 3)), ("g", (3, 2))]),
    ("solve-vector", LA.solve, [("i", (2, 2)), ("g", (2,))]),
    ("solve-broadcast", LA.solve, [("i", (2, 3, 3)), ("g", (3, 1))]),
    ("solve-right", lambda a, b: LA.solve(a, b, left=False), [("i", (3, 3)), ("g", (2, 3))]),
    ("solve_triangular-lower", lambda a, b: LA.solve_triangular(a.mT, b, upper=False), [("u", (3, 3)), ("g", (3, 2))]),
    ("solve_triangular-unit-right", lambda a, b: LA.solve_triangular(a, b, upper=True, left=False, unitriangular=True),
     [("u", (3, 3)), ("g", (2, 3))]),
    ("cholesky-2x2", lambda x: LA.cholesky(spd(x)), [("g", (2, 2))]),
    ("cholesky-3x3", lambda x: LA.cholesky(spd(x)), [("g", (3, 3))]),
    ("cholesky-upper-batch", lambda x: LA.cholesky(spd(x), upper=True), [("g", (2, 3, 3))]),
    ("cholesky_solve", lambda x, b: LA.cholesky_solve(b, LA.cholesky(spd(x))), [("g", (3, 3)), ("g", (3, 2))]),
    ("cholesky_solve-factor", LA.cholesky_solve, [("g", (3, 2)), ("u", (3, 3))]),
    ("cholesky_solve-upper", lambda b, u: LA.cholesky_solve(b, u, upper=True), [("g", (2, 3, 2)), ("u", (3, 3))]),
    ("matrix_power-2", lambda a: LA.matrix_power(a, 2), [("g", (2, 2))]),
    ("matrix_power-3-batch", lambda a: LA.matrix_power(a, 3), [("g", (2, 3, 3))]),
    ("matrix_power-neg", lambda a: LA.matrix_power(a, -2), [("i", (3, 3))]),
    ("qr-tall", LA.qr, [("g", (3, 2))]),
    ("qr-square", LA.qr, [("i", (3, 3))]),
    ("qr-wide", LA.qr, [("g", (2, 3))]),
    ("qr-wide-complete", lambda a: LA.qr(a, "complete"), [("g", (2, 3))]),
    ("qr-batch", LA.qr, [("g", (2, 3, 3))]),
    ("svd-tall", _svd_products(False), [("g", (3, 2))]),
    ("svd-wide-full", _svd_products(True), [("g", (2, 3))]),
    ("svd-square", _svd_products(True), [("g", (3, 3))]),
    ("svd-batch", _svd_products(False), [("g", (2, 3, 3))]),
    ("svdvals", LA.svdvals, [("g", (2, 3))]),
    ("eigh", _eigh_function, [("g", (3, 3))]),
    ("eigh-2x2", _eigh_function, [("g", (2, 2))]),
    ("eigh-batch", _eigh_function, [("g", (2, 3, 3))]),
    ("eigh-UPLO-U", lambda x: LA.eigh(sym(x), UPLO="U").eigenvalues, [("g", (3, 3))]),
    ("eigvalsh", lambda x: LA.eigvalsh(sym(x)), [("g", (3, 3))]),
    ("pinv-tall", LA.pinv, [("g", (3, 2))]),
    ("pinv-wide", LA.pinv, [("g", (2, 3))]),
    ("pinv-batch", LA.pinv, [("i", (2, 3, 3))]),
    ("pinv-hermitian", lambda x: LA.pinv(spd(x), hermitian=True), [("g", (3, 3))]),
    ("lstsq-tall", lambda a, b: LA.lstsq(a, b).solution, [("g", (3, 2)), ("g", (3, 2))]),
    ("lstsq-wide", lambda a, b: LA.lstsq(a, b).solution, [("g", (2, 3)), ("g", (2,))]),
    ("lstsq-batch", lambda a, b: LA.lstsq(a, b).solution, [("g", (2, 3, 2)), ("g", (3, 1))]),
    ("vector_norm", lambda x: LA.vector_norm(x, 3, dim=-1), [("g", (2, 3))]),
    ("norm", LA.norm, [("g", (2, 3))]),
] + [(f"matrix_norm-{o}", (lambda o: lambda a: LA.matrix_norm(a, o))(o), [("g", (3, 2))])
     for o in ("fro", "nuc", 2, -2, 1, -1, INF, -INF)]


@pytest.mark.parametrize("fn, specs", [pytest.param(*c[1:], id=c[0]) for c in GRADS])
def test_gradients(fn, specs):
    check_grads(fn, *inputs(specs))


# ---------------------------------------------------------------------------------------------------- structures
def test_factorizations_reconstruct_their_input():
    a = make("g", (2, 4, 3), 1, requires_grad=False).numpy()
    A = lucid.tensor(a, dtype=lucid.float64)
    for mode, shapes in (("reduced", ((2, 4, 3), (2, 3, 3))), ("complete", ((2, 4, 4), (2, 4, 3)))):
        Q, R = LA.qr(A, mode=mode)
        assert (tuple(Q.shape), tuple(R.shape)) == shapes
        np.testing.assert_allclose((Q @ R).numpy(), a, atol=1e-12)
        np.testing.assert_allclose((Q.mT @ Q).numpy(), np.broadcast_to(np.eye(shapes[0][-1]), shapes[0][:1] +
                                                                      (shapes[0][-1],) * 2), atol=1e-12)
        assert np.allclose(np.tril(R.numpy(), -1), 0)
    Q, R = LA.qr(A, mode="r")
    assert Q.shape == (0,) and R.shape == (2, 3, 3)
    for full, (su, svh) in ((True, ((2, 4, 4), (2, 3, 3))), (False, ((2, 4, 3), (2, 3, 3)))):
        U, S, Vh = LA.svd(A, full_matrices=full)
        assert (tuple(U.shape), tuple(S.shape), tuple(Vh.shape)) == (su, (2, 3), svh)
        np.testing.assert_allclose(((U[..., :3] * S.unsqueeze(-2)) @ Vh).numpy(), a, atol=1e-12)
    s = spd(lucid.tensor(a[0, :3], dtype=lucid.float64)).numpy()
    w, v = LA.eigh(lucid.tensor(s, dtype=lucid.float64))
    np.testing.assert_allclose(((v * w.unsqueeze(-2)) @ v.mT).numpy(), s, atol=1e-12)


def test_return_types_are_named_tuples():
    a = make("s", (3, 3), 1, requires_grad=False)
    assert LA.slogdet(a)._fields == ("sign", "logabsdet")
    assert LA.qr(a)._fields == ("Q", "R")
    assert LA.svd(a)._fields == ("U", "S", "Vh")
    assert LA.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert LA.cholesky_ex(a)._fields == ("L", "info")
    assert LA.inv_ex(a)._fields == ("inverse", "info")
    assert LA.lstsq(a, a)._fields == ("solution", "residuals", "rank", "singular_values")


def test_lstsq_extra_outputs_follow_the_driver():
    a, b = inputs([("g", (4, 2)), ("g", (4, 3))], requires_grad=False)
    na, nb = a.numpy(), b.numpy()
    _, res, rank, sv = np.linalg.lstsq(na, nb, rcond=None)
    out = LA.lstsq(a, b)  # gelsy: rank only
    assert out.residuals.shape == (0,) and out.singular_values.shape == (0,)
    assert out.rank.dtype == lucid.int64 and out.rank.item() == rank
    out = LA.lstsq(a, b, driver="gelsd")
    np.testing.assert_allclose(out.residuals.numpy(), res, rtol=1e-10)
    np.testing.assert_allclose(out.singular_values.numpy(), sv, rtol=1e-12)
    assert LA.lstsq(a, b, driver="gels").rank.shape == (0,)
    assert LA.lstsq(a[:, :1] @ a[:1, :], b, driver="gelss").rank.item() == 1  # rank-deficient


def test_matrix_rank():
    a = make("g", (3, 3), 1, requires_grad=False)
    assert LA.matrix_rank(a).item() == 3
    assert LA.matrix_rank(a[:, :1] @ a[:1, :]).item() == 1
    assert LA.matrix_rank(a, atol=10.0).item() == 0


def test_node_names():
    a = make("i", (3, 3), 1)
    s = spd(a)
    assert type(LA.inv(a).grad_fn).__name__ == "LinalgInvExBackward0"
    assert type(LA.det(a).grad_fn).__name__ == "LinalgDetBackward0"
    assert type(LA.slogdet(a).logabsdet.grad_fn).__name__ == "LinalgSlogdetBackward0"
    assert LA.slogdet(a).sign.grad_fn is None and not LA.slogdet(a).sign.requires_grad
    assert type(LA.solve(a, a).grad_fn).__name__ == "LinalgSolveExBackward0"
    assert type(LA.cholesky(s).grad_fn).__name__ == "LinalgCholeskyExBackward0"
    Q, R = LA.qr(a)
    assert Q.grad_fn is R.grad_fn and type(Q.grad_fn).__name__ == "LinalgQrBackward0"
    assert type(LA.svdvals(a).grad_fn).__name__ == "LinalgSvdBackward0"
    assert type(LA.eigh(s).eigenvectors.grad_fn).__name__ == "LinalgEighBackward0"


def test_legacy_tensor_methods():
    a = make("i", (3, 3), 1, requires_grad=False)
    na = a.numpy()
    np.testing.assert_allclose(a.det().numpy(), np.linalg.det(na), rtol=1e-12)
    np.testing.assert_allclose(a.logdet().numpy(), np.log(np.linalg.det(na)), rtol=1e-12)
    np.testing.assert_allclose(a.inverse().numpy(), np.linalg.inv(na), rtol=1e-12)
    np.testing.assert_allclose(a.matrix_power(2).numpy(), na @ na, rtol=1e-12)
    assert math.isnan((-a).logdet().item())  # det(-a) < 0 for 3x3
    U, S, V = a.svd()  # torch.svd returns V, not Vh
    np.testing.assert_allclose(((U * S.unsqueeze(-2)) @ V.mT).numpy(), na, atol=1e-12)


def test_linalg_namespace_has_torch_names_and_matmul():
    for name in ("inv", "det", "slogdet", "solve", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh", "pinv",
                 "lstsq", "matrix_norm", "vector_norm", "norm", "matrix_power", "cholesky_solve", "matmul"):
        assert callable(getattr(LA, name)), name


def test_matrix_power_zero_is_identity_with_zero_gradient():
    a = make("g", (2, 3, 3), 1)
    out = LA.matrix_power(a, 0)
    assert out.requires_grad
    out.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.zeros((2, 3, 3)))


def test_float32_inputs_stay_float32():
    a = lucid.tensor(make("s", (3, 3), 1, requires_grad=False).numpy(), dtype=lucid.float32)
    for out in (LA.inv(a), LA.det(a), LA.cholesky(a), LA.qr(a).R, LA.svdvals(a), LA.eigvalsh(a), LA.pinv(a)):
        assert out.dtype == lucid.float32


# ---------------------------------------------------------------------------------------------------- special values
def _singular():
    return lucid.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=lucid.float64)


def test_singular_matrix_det_slogdet_as_in_pytorch():
    assert LA.det(_singular()).item() == 0.0
    sign, logabsdet = LA.slogdet(_singular())
    assert sign.item() == 0.0 and logabsdet.item() == -INF


def test_singular_matrix_gives_nan_where_pytorch_raises():
    # PyTorch: "linalg.inv: The diagonal element 3 is zero, the inversion could not be completed because the input
    # matrix is singular." lucid cannot look at the value inside an op, and MLX's LAPACK errors are unreliable
    # (raised on some evaluations only): the singular matrix of a batch gets NaN, and inv_ex gives PyTorch's info
    good = make("i", (3, 3), 1, requires_grad=False)
    batch = lucid.stack([good, _singular()])
    inverse, info = LA.inv_ex(batch)
    assert info.tolist() == [0, 3]
    np.testing.assert_allclose(inverse[0].numpy(), np.linalg.inv(good.numpy()), rtol=1e-12)
    assert np.isnan(inverse[1].numpy()).all()
    assert np.isnan(LA.inv(_singular()).numpy()).all()
    x = LA.solve(batch, batch[..., :1]).numpy()
    np.testing.assert_allclose(x[0], [[1.0], [0.0], [0.0]], atol=1e-12)
    assert np.isnan(x[1]).all()
    u = lucid.tensor([[1.0, 2.0], [0.0, 0.0]], dtype=lucid.float64)
    assert np.isnan(LA.solve_triangular(u, u, upper=True).numpy()).all()


def test_cholesky_of_non_positive_definite_matrix_is_nan_with_info():
    a = lucid.tensor([[[4.0, 2.0], [2.0, 5.0]], [[1.0, 2.0], [2.0, 1.0]]], dtype=lucid.float64)
    L, info = LA.cholesky_ex(a)
    assert info.tolist() == [0, 2]  # PyTorch's "the leading minor of order 2 is not positive-definite"
    np.testing.assert_allclose(L[0].numpy(), [[2.0, 0.0], [1.0, 2.0]])
    assert np.isnan(L[1].numpy()).all()
    with pytest.raises(NotImplementedError, match="check_errors"):
        LA.cholesky_ex(a, check_errors=True)
    with pytest.raises(NotImplementedError, match="check_errors"):
        LA.inv_ex(a, check_errors=True)


def test_qr_backward_errors_as_in_pytorch():
    a = make("g", (3, 2), 1)
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        LA.qr(a, "complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="depends on Q, which is not computed when mode='r'"):
        LA.qr(a, "r").R.sum().backward()


def test_factorization_output_modified_in_place_is_detected():
    Q, R = LA.qr(make("g", (3, 3), 1))
    Q.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        R.sum().backward()


def test_factorization_backward_twice_without_retain_graph():
    a = make("g", (3, 3), 1)
    S = LA.svdvals(a).sum()
    S.backward(retain_graph=True)
    S.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * LA.svd(a.detach(), False)[0].numpy() @
                               LA.svd(a.detach(), False)[2].numpy(), atol=1e-12)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        S.backward()


# ---------------------------------------------------------------------------------------------------- errors
def _f64(*shape):
    return lucid.zeros(*shape, dtype=lucid.float64)


ERRORS = [
    ("inv-non-square", lambda: LA.inv(_f64(2, 3)), RuntimeError,
     "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"),
    ("inv-1d", lambda: LA.inv(_f64(3)), RuntimeError,
     "linalg.inv: The input tensor A must have at least 2 dimensions."),
    ("inv-int", lambda: LA.inv(lucid.tensor([[1, 2], [3, 4]])), RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    ("det-half", lambda: LA.det(lucid.zeros(2, 2, dtype=lucid.float16)), RuntimeError,
     "linalg.det: Low precision dtypes not supported. Got Half"),
    ("cholesky-non-square", lambda: LA.cholesky(_f64(3, 2)), RuntimeError, "square matrices"),
    ("eigh-non-square", lambda: LA.eigh(_f64(2, 3, 2)), RuntimeError, "square matrices"),
    ("eigh-UPLO", lambda: LA.eigh(_f64(2, 2), "X"), RuntimeError, "Expected UPLO argument to be 'L' or 'U'"),
    ("solve-shapes", lambda: LA.solve(_f64(3, 3), _f64(2, 1)), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x1)"),
    ("solve-dtypes", lambda: LA.solve(_f64(2, 2), lucid.zeros(2, 1)), RuntimeError,
     "Expected A and B to have the same dtype"),
    ("solve-batch", lambda: LA.solve(_f64(2, 3, 3), _f64(4, 3, 1)), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0"),
    ("qr-mode", lambda: LA.qr(_f64(2, 2), "full"), RuntimeError, "qr received unrecognized mode 'full'"),
    ("matrix_power-non-square", lambda: LA.matrix_power(_f64(2, 3), 2), RuntimeError, "square matrices"),
    ("matrix_norm-ord", lambda: LA.matrix_norm(_f64(2, 2), 3), RuntimeError,
     "linalg.matrix_norm: Order 3 not supported."),
    ("matrix_norm-dim", lambda: LA.matrix_norm(_f64(2, 2, 2), dim=(0, 1, 2)), RuntimeError, "dim must be a 2-tuple"),
    ("vector_norm-str", lambda: LA.vector_norm(_f64(2), "fro"), TypeError, "argument 'ord' (position 2) must be Number"),
    ("norm-3d-ord", lambda: LA.norm(_f64(2, 2, 2), 2), RuntimeError,
     "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
    ("lstsq-driver", lambda: LA.lstsq(_f64(2, 2), _f64(2, 1), driver="foo"), RuntimeError,
     "parameter `driver` should be one of"),
    ("cholesky_solve-shapes", lambda: LA.cholesky_solve(_f64(2, 1), _f64(3, 3)), RuntimeError,
     "Incompatible matrix sizes for cholesky_solve: each A matrix is 3 by 3 but each b matrix is 2 by 1"),
]


@pytest.mark.parametrize("fn, exc, message", [pytest.param(*c[1:], id=c[0]) for c in ERRORS])
def test_errors(fn, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        fn()



@pytest.mark.cpu_only("slices float64 MLX arrays itself, outside lucid (MLX has float64 kernels only on the CPU)")
def test_ops_run_inside_mlx_vmap_and_compile():
    """MLX's lu_factor, qr and solve have no vmap rule: inv, det, slogdet avoid lu_factor (its slogdet has one), and
    solve_triangular zeroes the unread triangle (MLX's vmap rule reads the whole matrix)."""
    def f(a):
        t = lucid.from_mlx(a)
        return lucid.stack([LA.inv(t).sum(), LA.det(t), LA.slogdet(t).logabsdet, LA.cholesky(spd(t)).sum(),
                            LA.svdvals(t).sum(), LA.eigvalsh(sym(t)).sum(), LA.pinv(t).sum(),
                            LA.solve_triangular(t, t, upper=True).sum(), LA.cholesky_solve(t, t).sum()]).mlx

    batch = make("i", (2, 3, 3), 1, requires_grad=False).mlx
    expected = np.stack([np.array(f(batch[0])), np.array(f(batch[1]))])
    np.testing.assert_allclose(np.array(mx.vmap(f)(batch)), expected, rtol=1e-12)
    np.testing.assert_allclose(np.array(mx.compile(f)(batch[0])), expected[0], rtol=1e-12)


# (name, lucid fn, torch fn (same names under torch.linalg unless given), [(kind, shape), ...])
TORCH_CASES = [
    ("inv", LA.inv, "inv", [("i", (2, 3, 3))]),
    ("det", LA.det, "det", [("i", (2, 3, 3))]),
    ("slogdet", lambda a: LA.slogdet(a)[1], lambda t, a: t.linalg.slogdet(a)[1], [("i", (3, 3))]),
    ("solve", LA.solve, "solve", [("i", (2, 3, 3)), ("g", (3, 2))]),
    ("cholesky", lambda a: LA.cholesky(a, upper=True), lambda t, a: t.linalg.cholesky(a, upper=True),
     [("s", (2, 3, 3))]),
    ("qr", LA.qr, "qr", [("g", (2, 4, 3))]),
    ("svdvals", LA.svdvals, "svdvals", [("g", (3, 4))]),
    ("svd", _svd_products(False), lambda t, a: _svd_products_torch(t, a), [("g", (4, 3))]),
    ("eigh", lambda a: (lambda w, v: (v * w.unsqueeze(-2) ** 2) @ v.mT)(*LA.eigh(a)),
     lambda t, a: (lambda w, v: (v * w.unsqueeze(-2) ** 2) @ v.mT)(*t.linalg.eigh(a)), [("s", (3, 3))]),
    ("pinv", LA.pinv, "pinv", [("g", (2, 4))]),
    ("lstsq", lambda a, b: LA.lstsq(a, b).solution, lambda t, a, b: t.linalg.lstsq(a, b).solution,
     [("g", (4, 2)), ("g", (4, 3))]),
    ("matrix_norm-2", lambda a: LA.matrix_norm(a, 2), lambda t, a: t.linalg.matrix_norm(a, 2), [("g", (3, 2))]),
    ("matrix_power", lambda a: LA.matrix_power(a, -3), lambda t, a: t.linalg.matrix_power(a, -3), [("i", (3, 3))]),
]


def _svd_products_torch(torch, a):
    U, S, Vh = torch.linalg.svd(a, full_matrices=False)
    return (U * S.unsqueeze(-2)) @ Vh, U * U.sum(-2, keepdim=True), Vh * U[..., :1, :].mT, S


@pytest.mark.parametrize("fn, tfn, specs", [pytest.param(*c[1:], id=c[0]) for c in TORCH_CASES])
def test_gradients_match_pytorch(fn, tfn, specs):
    """PyTorch as an optional oracle: the same values and the same gradient conventions (eigh and cholesky
    symmetrized)."""
    torch = pytest.importorskip("torch")
    tfn = (lambda name: lambda t, *a: getattr(t.linalg, name)(*a))(tfn) if isinstance(tfn, str) else tfn
    ours = inputs(specs)
    theirs = [torch.tensor(a.detach().numpy(), requires_grad=True) for a in ours]
    out, tout = fn(*ours), tfn(torch, *theirs)
    out, tout = (out, tout) if isinstance(out, tuple) else ((out,), (tout,))
    rng = np.random.default_rng(0)
    weights = [rng.uniform(-1, 1, tuple(t.shape)) for t in tout]
    sum((o * lucid.tensor(w, dtype=lucid.float64)).sum() for o, w in zip(out, weights)).backward()
    sum((o * torch.tensor(w)).sum() for o, w in zip(tout, weights)).backward()
    for o, t in zip(out, tout):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), atol=1e-10)
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), atol=1e-10)


# ---------------------------------------------------------------------------------------------------- lobpcg
def test_lobpcg_gives_the_extreme_eigenpairs_in_order():
    a = make("s", (2, 9, 9), 7, requires_grad=False)
    w, v = np.linalg.eigh(a.numpy())
    E, X = lucid.lobpcg(a, k=3)  # largest first
    np.testing.assert_allclose(E.numpy(), w[:, ::-1][:, :3], rtol=1e-10)
    AX = (a @ X).numpy()
    np.testing.assert_allclose(AX, X.numpy() * E.numpy()[:, None, :], atol=1e-9)  # A x = lambda x
    E, X = lucid.lobpcg(a, X=lucid.eye(9, 2, dtype=lucid.float64).expand(2, 9, 2), largest=False)
    assert X.shape == (2, 9, 2)
    np.testing.assert_allclose(E.numpy(), w[:, :2], rtol=1e-10)
    b = make("s", (9, 9), 8, requires_grad=False)  # generalized: A x = lambda B x
    E, X = lucid.lobpcg(a[0], k=2, B=b)
    expected = np.sort(np.linalg.eigvals(np.linalg.solve(b.numpy(), a[0].numpy())).real)[::-1][:2]
    np.testing.assert_allclose(E.numpy(), expected, rtol=1e-9)
    np.testing.assert_allclose((a[0] @ X).numpy(), (b @ X).numpy() * E.numpy(), atol=1e-9)


def test_lobpcg_refuses_too_many_pairs_for_the_size():
    with pytest.raises(ValueError, match=r"number of A rows \(=6\) is smaller than 3 x the number of requested "
                                         r"eigenpairs \(=3\)"):
        lucid.lobpcg(lucid.eye(6), k=3)


def test_lobpcg_gradient_is_symmetric_and_matches_finite_differences():
    def f(A):
        E, X = lucid.lobpcg(A, k=2)
        return E, X * X  # X's sign is arbitrary
    a = make("s", (6, 6), 9)
    assert lucid.autograd.gradcheck(f, (a,)) and lucid.autograd.gradgradcheck(f, (a,), atol=1e-4)
    E, X = lucid.lobpcg(a, k=2, largest=False)
    (E.sum() + (X * X).sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), a.grad.mT.numpy(), atol=1e-12)
