"""The LU family, matrix_exp, Householder products and the rest of torch.linalg that lucid.ops.linalg_lu,
linalg_extra and householder add: gradcheck/gradgradcheck in float64 against finite differences, values against
closed forms and numpy (and PyTorch where installed), PyTorch's errors, deferred where they depend on values."""
import math

import numpy as np
import pytest

import lucid
from lucid import linalg as LA
from lucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def t64(shape, requires_grad=True, shift=0.0):
    a = RNG.normal(size=shape)
    if shift:
        a = a + shift * np.eye(shape[-1])
    return lucid.tensor(a, dtype=lucid.float64, requires_grad=requires_grad)


SHAPES = [(3, 3), (2, 4, 4), (5, 3), (3, 5), (2, 3, 6)]


@pytest.mark.parametrize("shape", SHAPES)
def test_lu_reconstructs_and_its_factors_have_their_shapes(shape):
    A = t64(shape, False)
    P, L, U = LA.lu(A)
    k = min(shape[-2:])
    assert L.shape == shape[:-1] + (k,) and U.shape == shape[:-2] + (k, shape[-1])
    np.testing.assert_allclose((P @ L @ U).numpy(), A.numpy(), atol=1e-12)
    assert np.allclose(np.triu(L.numpy(), 1), 0) and np.allclose(np.tril(U.numpy(), -1), 0)
    np.testing.assert_array_equal(np.diagonal(L.numpy(), 0, -2, -1), 1)
    LU, piv = LA.lu_factor(A)
    assert piv.dtype == lucid.int32 and piv.shape == shape[:-2] + (k,)
    for x, y in zip(lucid.lu_unpack(LU, piv), (P, L, U)):
        np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-14)


@pytest.mark.parametrize("shape", SHAPES[:4])
def test_lu_and_lu_factor_gradients(shape):
    A = t64(shape)
    assert gradcheck(lambda a: tuple(LA.lu(a))[1:], (A,))
    assert gradgradcheck(lambda a: tuple(LA.lu(a))[1:], (A,))
    assert gradcheck(lambda a: LA.lu_factor(a).LU, (A,))
    assert type(LA.lu(A).L.grad_fn).__name__ == "LinalgLuBackward0"


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_solves_and_is_differentiable(left, adjoint):
    A = t64((2, 4, 4), False, shift=3)
    B = t64((2, 4, 3) if left else (2, 3, 4))
    LU, piv = LA.lu_factor(A)
    X = LA.lu_solve(LU, piv, B, left=left, adjoint=adjoint)
    Aop = A.mT if adjoint else A
    np.testing.assert_allclose((Aop @ X if left else X @ Aop).detach().numpy(), B.detach().numpy(), atol=1e-12)
    LUg = LU.detach().requires_grad_()
    assert gradcheck(lambda lu, b: LA.lu_solve(lu, piv, b, left=left, adjoint=adjoint), (LUg, B))
    assert gradgradcheck(lambda lu, b: LA.lu_solve(lu, piv, b, left=left, adjoint=adjoint), (LUg, B))


def test_torch_lu_forms_and_tensor_methods():
    A = t64((3, 3), False, shift=3)
    b = t64((3, 2), False)
    LU, piv = A.lu()
    _, _, info = lucid.lu(A, get_infos=True)
    assert info.item() == 0
    np.testing.assert_allclose((A @ b.lu_solve(LU, piv)).numpy(), b.numpy(), atol=1e-12)
    np.testing.assert_allclose(lucid.lu_solve(b, LU, piv).numpy(), b.lu_solve(LU, piv).numpy())


def test_solve_ex_and_info():
    A = t64((2, 3, 3), shift=3)
    B = t64((2, 3))
    X, info = LA.solve_ex(A, B)
    np.testing.assert_array_equal(info.numpy(), [0, 0])
    np.testing.assert_allclose((A @ X.unsqueeze(-1)).squeeze(-1).detach().numpy(), B.detach().numpy(), atol=1e-12)
    assert gradcheck(lambda a, b: LA.solve_ex(a, b).result, (A, B))
    sing = lucid.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=lucid.float64)
    assert LA.solve_ex(sing, lucid.ones(2, dtype=lucid.float64)).info.item() == 2


def test_value_errors_are_deferred_and_as_in_pytorch():
    out = LA.lu_factor(lucid.zeros(2, 3, 3))  # the op itself does not wait for the values
    with pytest.raises(RuntimeError, match=r"linalg.lu_factor: \(Batch element 0\): U\[1,1\] is zero"):
        out.LU.numpy()
    r = LA.solve_ex(lucid.zeros(3, 3), lucid.ones(3), check_errors=True)
    with pytest.raises(LA.LinAlgError, match="The solver failed because the input matrix is singular"):
        print(r.result)
    assert issubclass(LA.LinAlgError, RuntimeError)
    x = lucid.cholesky_inverse(lucid.zeros(3, 3))
    with pytest.raises(LA.LinAlgError, match="The diagonal element 1 is zero"):
        x.numpy()
    info = LA.lu_factor_ex(lucid.zeros(3, 3)).info  # the _ex form reports instead
    assert info.item() == 1


def test_argument_errors_as_in_pytorch():
    A = lucid.eye(3)
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        LA.lu_factor(A, pivot=False)
    with pytest.raises(RuntimeError, match="pivots passed to lu_unpack must be between 1 and LU.size"):
        lucid.lu_unpack(A, lucid.tensor([5, 1, 2], dtype=lucid.int32))
    with pytest.raises(RuntimeError, match="pivots should be a Tensor of scalar type torch.int32"):
        LA.lu_solve(A, lucid.tensor([1, 2, 3]), lucid.ones(3, 1))
    with pytest.raises(RuntimeError, match="The input tensor B must have at least 2 dimensions"):
        LA.lu_solve(A, lucid.tensor([1, 2, 3], dtype=lucid.int32), lucid.ones(3))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are 3 by 2"):
        LA.matrix_exp(lucid.zeros(3, 2))
    with pytest.raises(RuntimeError, match="Expected a strictly positive integer for 'ind', but got 0"):
        LA.tensorinv(lucid.zeros(6, 2, 3), ind=0)
    with pytest.raises(RuntimeError, match="linalg.cond got an invalid norm type: 3"):
        LA.cond(A, 3)
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        LA.vander(lucid.tensor([1.0]))
    with pytest.raises(RuntimeError, match="inputs dimension -1 must have length 3"):
        LA.cross(lucid.ones(4), lucid.ones(4))
    with pytest.raises(RuntimeError, match="input.shape\\[-1\\] must be greater than or equal to tau.shape\\[-1\\]"):
        LA.householder_product(lucid.ones(3, 2), lucid.ones(3))


def test_matrix_exp_closed_forms_and_gradients():
    theta = 0.7  # exp of a rotation generator is the rotation
    R = LA.matrix_exp(lucid.tensor([[0.0, -theta], [theta, 0.0]], dtype=lucid.float64))
    np.testing.assert_allclose(R.numpy(), [[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]],
                               atol=1e-15)
    N = lucid.tensor([[0.0, 1e6], [0.0, 0.0]], dtype=lucid.float64)  # nilpotent: exp(N) = I + N, large norm
    np.testing.assert_allclose(LA.matrix_exp(N).numpy(), [[1, 1e6], [0, 1]], rtol=1e-9)
    D = np.diag([0.5, -2.0, 3.0])  # a scaled-up diagonal needs squarings
    np.testing.assert_allclose(LA.matrix_exp(lucid.tensor(D * 10)).numpy(), np.diag(np.exp(np.diag(D) * 10)),
                               rtol=1e-5)
    for shape in [(3, 3), (2, 2, 2)]:
        A = t64(shape)
        assert gradcheck(LA.matrix_exp, (A,)) and gradgradcheck(LA.matrix_exp, (A,))
    A = t64((3, 3)) * 8  # a large norm: the backward's block matrix squares too
    assert gradcheck(LA.matrix_exp, (A.detach().requires_grad_(),))
    assert lucid.matrix_exp(lucid.zeros(2, 2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_householder_product_orgqr_ormqr_from_geqrf():
    A = t64((5, 3), False)
    a, tau = lucid.geqrf(A)
    Q = LA.householder_product(a, tau)
    R = np.triu(a.numpy()[:3])
    np.testing.assert_allclose((Q.numpy() @ R), A.numpy(), atol=1e-12)  # A = Q R
    np.testing.assert_allclose(Q.numpy().T @ Q.numpy(), np.eye(3), atol=1e-12)
    np.testing.assert_allclose(lucid.orgqr(a, tau).numpy(), Q.numpy())
    C = t64((5, 2), False)
    Qfull = np.linalg.qr(A.numpy(), mode="complete")[0]
    QC = lucid.ormqr(a, tau, C).numpy()
    np.testing.assert_allclose(np.abs(Qfull.T @ QC), np.abs(Qfull.T @ (Qfull @ C.numpy())), atol=1e-9)
    np.testing.assert_allclose(lucid.ormqr(a, tau, lucid.ormqr(a, tau, C), transpose=True).numpy(), C.numpy(),
                               atol=1e-12)  # Q^T Q C = C
    ag, tg, Cg = (x.detach().requires_grad_() for x in (a, tau, C))
    assert gradcheck(LA.householder_product, (ag, tg)) and gradgradcheck(LA.householder_product, (ag, tg))
    assert gradcheck(lambda x, t, c: lucid.ormqr(x, t, c.mT, left=False, transpose=True), (ag, tg, Cg))


def test_cond_tensorinv_tensorsolve_vander_cross_diagonal():
    A = t64((3, 3), False, shift=2)
    s = np.linalg.svd(A.numpy(), compute_uv=False)
    assert LA.cond(A).item() == pytest.approx(s[0] / s[-1])
    assert LA.cond(A, "fro").item() == pytest.approx(np.linalg.cond(A.numpy(), "fro"))
    assert LA.cond(lucid.tensor([[1.0, 2.0], [2.0, 4.0]]), 1).item() == math.inf
    T = t64((6, 2, 3), False)
    np.testing.assert_allclose(np.tensordot(T.numpy(), LA.tensorinv(T, ind=1).numpy(), 2), np.eye(6), atol=1e-10)
    T2, B = t64((2, 3, 6), False), t64((2, 3), False)
    np.testing.assert_allclose(np.linalg.tensorsolve(T2.numpy(), B.numpy()), LA.tensorsolve(T2, B).numpy())
    assert LA.vander(lucid.tensor([1, 2, 3])).tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    x = t64((2, 3))
    assert gradcheck(lambda v: LA.vander(v, N=4), (x,))
    a, b = t64((2, 3)), t64((1, 3))  # the batch dims broadcast (the number of dims must agree, as in PyTorch)
    np.testing.assert_allclose(LA.cross(a, b).detach().numpy(), np.cross(a.detach().numpy(), b.detach().numpy()))
    M = t64((2, 3, 4), False)
    np.testing.assert_array_equal(LA.diagonal(M, offset=1).numpy(), np.diagonal(M.numpy(), 1, -2, -1))


def test_cholesky_inverse_and_triangular_solve():
    S = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    L = np.linalg.cholesky(S)
    np.testing.assert_allclose(lucid.cholesky_inverse(lucid.tensor(L)).numpy(), np.linalg.inv(S), atol=1e-12)
    np.testing.assert_allclose(lucid.tensor(L.T).cholesky_inverse(upper=True).numpy(), np.linalg.inv(S), atol=1e-12)
    Lg = lucid.tensor(L, requires_grad=True)
    assert gradcheck(lucid.cholesky_inverse, (Lg,))
    U = np.triu(RNG.normal(size=(3, 3))) + 3 * np.eye(3)
    b = RNG.normal(size=(3, 2))
    X, A = lucid.triangular_solve(lucid.tensor(b), lucid.tensor(U), transpose=True)
    np.testing.assert_allclose(U.T @ X.numpy(), b, atol=1e-12)
    np.testing.assert_array_equal(A.numpy(), U)


def test_eig_and_eigvals():
    A = lucid.tensor([[1.0, 2.0], [-3.0, 1.0]])
    w, V = LA.eig(A)
    assert w.dtype == lucid.complex64
    np.testing.assert_allclose(sorted(w.numpy(), key=lambda z: z.imag), [1 - 6 ** 0.5 * 1j, 1 + 6 ** 0.5 * 1j],
                               rtol=1e-6)
    a, v, lam = A.numpy(), V.numpy(), w.numpy()
    np.testing.assert_allclose(a @ v, v * lam, atol=1e-5)
    np.testing.assert_allclose(LA.eigvals(A).numpy(), lam, rtol=1e-6)


def test_eig_gradients_closed_forms():
    a = RNG.normal(size=(2, 4, 4))
    A = lucid.tensor(a, requires_grad=True)
    w = LA.eigvals(A)
    (w.real ** 2 - w.imag ** 2).sum().backward()  # sum of Re(lambda^2) = trace(A^2): gradient 2 A^T
    np.testing.assert_allclose(A.grad.numpy(), 2 * np.swapaxes(a, -1, -2), rtol=1e-4, atol=1e-4)
    assert A.grad.dtype == lucid.float64
    A.grad = None
    w, V = LA.eig(A)
    (w.real.sum() + (V.abs() ** 2).sum()).backward()  # trace(A); columns of unit norm: constant
    np.testing.assert_allclose(A.grad.numpy(), np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-4)
    assert type(w.grad_fn).__name__ == "LinalgEigBackward0"


def test_eig_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    a = RNG.normal(size=(2, 4, 4)).astype(np.float32)

    def loss(lib, x):  # invariant under the eigenvectors' phases
        w, v = lib.linalg.eig(x)
        return (w.real ** 2).sum() + (w.imag * w.real).sum() + (v.abs() ** 2 * lib.arange(4.0)).sum()

    grads = []
    for lib in (torch, lucid):
        x = lib.tensor(a, requires_grad=True)
        loss(lib, x).backward()
        grads.append(x.grad.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-3, atol=1e-4)


def test_values_match_pytorch():
    torch = pytest.importorskip("torch")
    a = RNG.normal(size=(2, 4, 4))
    for x, y in zip(LA.lu(lucid.tensor(a)), torch.linalg.lu(torch.tensor(a))):
        np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-14)
    LU, piv = torch.linalg.lu_factor(torch.tensor(a))
    mine = LA.lu_factor(lucid.tensor(a))
    np.testing.assert_array_equal(mine.pivots.numpy(), piv.numpy())
    np.testing.assert_allclose(mine.LU.numpy(), LU.numpy(), atol=1e-14)
    np.testing.assert_allclose(LA.matrix_exp(lucid.tensor(a * 3)).numpy(),
                               torch.linalg.matrix_exp(torch.tensor(a * 3)).numpy(), rtol=1e-10)
    for shape in [(4, 3), (3, 5), (2, 5, 2)]:
        m = RNG.normal(size=shape)
        for x, y in zip(lucid.geqrf(lucid.tensor(m)), torch.geqrf(torch.tensor(m))):
            np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-13)
        ra, rt = torch.geqrf(torch.tensor(m))
        if shape[-2] >= shape[-1]:
            mine = LA.householder_product(lucid.tensor(ra.numpy()), lucid.tensor(rt.numpy()))
            np.testing.assert_allclose(mine.numpy(), torch.linalg.householder_product(ra, rt).numpy(), atol=1e-13)
    for p in (None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf):
        np.testing.assert_allclose(LA.cond(lucid.tensor(a), p).numpy(), torch.linalg.cond(torch.tensor(a), p).numpy(),
                                   rtol=1e-9)
    w = torch.linalg.eigvals(torch.tensor(a[0], dtype=torch.float32)).numpy()  # the order is LAPACK build's
    np.testing.assert_allclose(np.sort_complex(LA.eigvals(lucid.tensor(a[0], dtype=lucid.float32)).numpy()),
                               np.sort_complex(w), rtol=1e-5, atol=1e-5)


def _symmetric(n, seed, zero_diagonal=False):
    a = np.random.default_rng(seed).normal(size=(n, n))
    a = a + a.T
    if zero_diagonal:  # forces 2x2 pivots
        a[np.diag_indices(n)] = 0
    return a


@pytest.mark.parametrize("n, zero_diagonal", [(1, False), (4, False), (5, True), (8, True), (8, False)])
def test_ldl_factor_reconstructs_and_ldl_solve_solves(n, zero_diagonal):
    a = _symmetric(n, n, zero_diagonal)
    LD, piv = LA.ldl_factor(lucid.tensor(a))
    assert piv.dtype == lucid.int32 and np.allclose(np.triu(LD.numpy(), 1), 0)
    b = np.random.default_rng(1).normal(size=(n, 3))
    x = LA.ldl_solve(LD, piv, lucid.tensor(b)).numpy()
    np.testing.assert_allclose(a @ x, b, atol=1e-9)
    if zero_diagonal:
        assert (piv.numpy() < 0).any()  # a 2x2 block was taken
    assert LA.ldl_factor_ex(lucid.tensor(a)).info.item() == 0
    info = LA.ldl_factor_ex(lucid.zeros(3, 3)).info
    assert info.item() == 1
    out = LA.ldl_factor(lucid.zeros(2, 3, 3))
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 0\): The factorization could not be completed"):
        out.LD.numpy()


def test_ldl_matches_pytorch_bit_for_bit():
    torch = pytest.importorskip("torch")
    for seed in range(12):
        a = _symmetric(6, seed, zero_diagonal=seed % 2 == 0)[None].repeat(2, 0)
        a[1] *= 0.01
        ref = torch.linalg.ldl_factor_ex(torch.tensor(a))
        mine = LA.ldl_factor_ex(lucid.tensor(a))
        np.testing.assert_array_equal(mine.pivots.numpy(), ref.pivots.numpy())
        np.testing.assert_allclose(mine.LD.numpy(), ref.LD.numpy(), rtol=1e-12, atol=1e-12)
        b = np.random.default_rng(seed).normal(size=(2, 6, 2))
        np.testing.assert_allclose(LA.ldl_solve(mine.LD, mine.pivots, lucid.tensor(b)).numpy(),
                                   torch.linalg.ldl_solve(ref.LD, ref.pivots, torch.tensor(b)).numpy(), rtol=1e-10,
                                   atol=1e-10)
