"""einsum, tensordot, kron, cross, the fused products (addmm, baddbmm, addmv, addr), triangles and diagonals (tril,
triu, diag, diagonal, diag_embed, diagonal_scatter, trace), block_diag and cartesian_prod.

Every case: values against numpy, first and second derivatives in float64 (outputs squared, so the second
derivative depends on the inputs too), and PyTorch's node name where it is a simple one."""
import re
import warnings

import mlx.core as mx
import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf
from lucid.ops.linalg import vecdot

# (equation, operand shapes, numpy reference or None for np.einsum)
EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)], None),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)], None),
    ("ii->i", [(3, 3)], None),
    ("ii", [(3, 3)], None),
    ("i,i->", [(3,), (3,)], None),
    ("i,j->ij", [(2,), (3,)], None),
    ("...ij,...jk", [(2, 1, 2, 3), (3, 3, 2)], None),
    ("...ij,...jk->...ik", [(2, 3), (2, 3, 2)], None),
    ("ij->ji", [(2, 3)], None),
    ("ijk->k", [(2, 3, 2)], None),
    ("ij->", [(2, 3)], None),
    ("iij->j", [(2, 2, 3)], None),
    ("iii->", [(2, 2, 2)], None),
    ("ii,i->i", [(3, 3), (3,)], None),
    ("...ii->...i", [(2, 3, 3)], None),
    ("ij,ij->", [(2, 3), (2, 3)], None),
    ("i,i,i->i", [(3,), (3,), (3,)], None),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)], None),
    ("bij,bjk", [(2, 2, 3), (1, 3, 2)], None),  # a size-1 labelled dim broadcasts
    ("ij,j", [(2, 3), (3,)], None),
    ("Ba,aB", [(2, 3), (3, 2)], None),
    ("ba,ab", [(2, 3), (3, 2)], None),
    ("i j , j k -> k i", [(2, 3), (3, 2)], lambda a, b: np.einsum("ij,jk->ki", a, b)),
    ("...->", [(2, 3)], lambda a: a.sum()),  # PyTorch sums dims the output's missing ellipsis dropped
    (",i->i", [(), (3,)], None),
]
EIDS = [e for e, _, _ in EINSUM]


def _inputs(shapes):
    return [leaf(*s, seed=i) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("equation,shapes,ref", EINSUM, ids=EIDS)
def test_einsum_values(equation, shapes, ref):
    xs = _inputs(shapes)
    out = lucid.einsum(equation, *xs)
    arrays = [x.detach().numpy() for x in xs]
    expected = ref(*arrays) if ref else np.einsum(equation.replace(" ", ""), *arrays)
    assert tuple(out.shape) == np.shape(expected)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("equation,shapes,ref", EINSUM, ids=EIDS)
def test_einsum_gradients(equation, shapes, ref):
    check_grads(lambda *t: lucid.einsum(equation, *t) ** 2, *_inputs(shapes))


def test_einsum_operand_list_and_repeated_operand():
    a = leaf(2, 3)
    b = leaf(3, 2, seed=1)
    np.testing.assert_allclose(lucid.einsum("ij,jk", [a, b]).detach().numpy(),
                               a.detach().numpy() @ b.detach().numpy())
    x = leaf(3)
    lucid.einsum("i,i->", x, x).backward()  # both operands are x: the gradients add up
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())
    check_grads(lambda t: lucid.einsum("ij,ij->i", t, t), leaf(2, 3))


# (name, fn(*tensors), input shapes, numpy reference, PyTorch's node name or None)
def _np_diag_embed(a, offset, d1, d2):
    n = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n))
    i = np.arange(a.shape[-1])
    out[..., i + max(-offset, 0), i + max(offset, 0)] = a
    return np.moveaxis(out, (-2, -1), (d1, d2))


def _np_diagonal_scatter(a, s, offset):
    out = a.copy()
    i = np.arange(s.shape[-1])
    out[i + max(-offset, 0), i + max(offset, 0)] = s
    return out


def _np_block_diag(*arrays):
    arrays = [np.atleast_2d(a) for a in arrays]
    out = np.zeros((sum(a.shape[0] for a in arrays), sum(a.shape[1] for a in arrays)))
    r = c = 0
    for a in arrays:
        out[r:r + a.shape[0], c:c + a.shape[1]] = a
        r, c = r + a.shape[0], c + a.shape[1]
    return out


CASES = [
    ("tensordot_2", lambda a, b: lucid.tensordot(a, b), [(2, 3, 2), (3, 2, 2)], np.tensordot, "ViewBackward0"),
    ("tensordot_1", lambda a, b: lucid.tensordot(a, b, 1), [(2, 3), (3, 2)], lambda a, b: np.tensordot(a, b, 1),
     "ViewBackward0"),
    ("tensordot_0", lambda a, b: lucid.tensordot(a, b, dims=0), [(2,), (3,)], lambda a, b: np.tensordot(a, b, 0),
     "ViewBackward0"),
    ("tensordot_lists", lambda a, b: lucid.tensordot(a, b, ([1, 0], [0, 2])), [(3, 2, 2), (2, 2, 3)],
     lambda a, b: np.tensordot(a, b, ([1, 0], [0, 2])), "ViewBackward0"),
    ("tensordot_negative_dims", lambda a, b: lucid.tensordot(a, b, ([-1], [-2])), [(2, 3), (2, 3, 2)],
     lambda a, b: np.tensordot(a, b, ([1], [1])), "ViewBackward0"),
    ("kron_2d", lucid.kron, [(2, 3), (2, 2)], np.kron, None),
    ("kron_mixed_ndim", lambda a, b: a.kron(b), [(2, 1, 2), (3, 2)], np.kron, None),
    ("kron_1d", lucid.kron, [(3,), (2,)], np.kron, None),
    ("kron_0d", lucid.kron, [(), (2,)], np.kron, None),
    ("cross_last", lambda a, b: lucid.cross(a, b, dim=-1), [(4, 3), (4, 3)], np.cross, "LinalgCrossBackward0"),
    ("cross_dim0_broadcast", lambda a, b: a.cross(b, dim=0), [(3, 2), (3, 1)],
     lambda a, b: np.cross(a, b, axis=0), "LinalgCrossBackward0"),
    ("addmm", lambda c, a, b: lucid.addmm(c, a, b), [(2, 2), (2, 3), (3, 2)], lambda c, a, b: c + a @ b,
     "AddmmBackward0"),
    ("addmm_scaled_broadcast", lambda c, a, b: c.addmm(a, b, beta=0.5, alpha=-2), [(2,), (3, 4), (4, 2)],
     lambda c, a, b: 0.5 * c - 2 * a @ b, "AddmmBackward0"),
    ("addmm_beta_0", lambda c, a, b: lucid.addmm(c, a, b, beta=0), [(2, 2), (2, 3), (3, 2)],
     lambda c, a, b: a @ b, "AddmmBackward0"),
    ("baddbmm", lambda c, a, b: lucid.baddbmm(c, a, b, beta=2, alpha=0.5), [(2, 1, 3), (2, 2, 4), (2, 4, 3)],
     lambda c, a, b: 2 * c + 0.5 * a @ b, "BaddbmmBackward0"),
    ("addmv", lambda c, a, b: c.addmv(a, b, alpha=3), [(2,), (2, 3), (3,)], lambda c, a, b: c + 3 * a @ b,
     "AddmvBackward0"),
    ("addmv_0d_input", lambda c, a, b: lucid.addmv(c, a, b), [(), (2, 3), (3,)], lambda c, a, b: c + a @ b,
     "AddmvBackward0"),
    ("addr", lambda c, a, b: lucid.addr(c, a, b, beta=-1), [(2, 3), (2,), (3,)],
     lambda c, a, b: -c + np.outer(a, b), "AddrBackward0"),
    ("tril", lucid.tril, [(3, 3)], np.tril, "TrilBackward0"),
    ("tril_batched_negative", lambda x: x.tril(-1), [(2, 3, 4)], lambda a: np.tril(a, -1), "TrilBackward0"),
    ("triu", lambda x: lucid.triu(x, diagonal=1), [(3, 4)], lambda a: np.triu(a, 1), "TriuBackward0"),
    ("triu_wide_negative", lambda x: x.triu(-2), [(4, 2)], lambda a: np.triu(a, -2), "TriuBackward0"),
    ("diag_vector", lucid.diag, [(3,)], np.diag, "DiagEmbedBackward0"),
    ("diag_vector_offset", lambda x: x.diag(-2), [(2,)], lambda a: np.diag(a, -2), "DiagEmbedBackward0"),
    ("diag_matrix", lambda x: lucid.diag(x, 1), [(3, 4)], lambda a: np.diag(a, 1), None),
    ("diag_matrix_negative", lambda x: x.diag(-1), [(3, 2)], lambda a: np.diag(a, -1), None),
    ("diagonal", lucid.diagonal, [(3, 4)], np.diagonal, "DiagonalBackward0"),
    ("diagonal_dims", lambda x: x.diagonal(offset=1, dim1=-1, dim2=0), [(3, 2, 4)],
     lambda a: np.diagonal(a, 1, 2, 0), "DiagonalBackward0"),
    ("diagonal_adjacent_dims", lambda x: lucid.diagonal(x, -1, 1, 2), [(2, 3, 3)],
     lambda a: np.diagonal(a, -1, 1, 2), "DiagonalBackward0"),
    ("diagonal_past_the_end", lambda x: x.diagonal(5), [(2, 3)], lambda a: np.diagonal(a, 5), "DiagonalBackward0"),
    ("diag_embed", lucid.diag_embed, [(2, 3)], lambda a: _np_diag_embed(a, 0, -2, -1), "DiagEmbedBackward0"),
    ("diag_embed_dims", lambda x: x.diag_embed(1, 0, 2), [(2, 3)], lambda a: _np_diag_embed(a, 1, 0, 2),
     "DiagEmbedBackward0"),
    ("diag_embed_negative", lambda x: lucid.diag_embed(x, -1, dim1=2, dim2=0), [(3, 2)],
     lambda a: _np_diag_embed(a, -1, 2, 0), "DiagEmbedBackward0"),
    ("diagonal_scatter", lambda x, s: lucid.diagonal_scatter(x, s, 1), [(3, 4), (3,)],
     lambda a, s: _np_diagonal_scatter(a, s, 1), "DiagonalScatterBackward0"),
    ("trace", lucid.trace, [(3, 3)], np.trace, "TraceBackward0"),
    ("trace_wide", lambda x: x.trace(), [(2, 4)], np.trace, "TraceBackward0"),
    ("block_diag", lambda *t: lucid.block_diag(*t), [(2, 3), (), (2,), (1, 2)], _np_block_diag,
     "BlockDiagBackward0"),
    ("cartesian_prod", lambda *t: lucid.cartesian_prod(*t), [(2,), (3,), (2,)],
     lambda *a: np.array(np.meshgrid(*a, indexing="ij")).reshape(len(a), -1).T, "StackBackward0"),
    ("vecdot", lambda a, b: vecdot(a, b, dim=0), [(3, 2), (3, 1)], lambda a, b: (a * b).sum(0), None),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name,fn,shapes,ref,node", CASES, ids=IDS)
def test_values_match_numpy(name, fn, shapes, ref, node):
    xs = _inputs(shapes)
    out = fn(*xs)
    expected = ref(*[x.detach().numpy() for x in xs])
    assert tuple(out.shape) == np.shape(expected)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name,fn,shapes,ref,node", CASES, ids=IDS)
def test_gradients(name, fn, shapes, ref, node):
    check_grads(lambda *t: fn(*t) ** 2, *_inputs(shapes))


@pytest.mark.parametrize("name,fn,shapes,ref,node", [c for c in CASES if c[4]], ids=[c[0] for c in CASES if c[4]])
def test_node_names(name, fn, shapes, ref, node):
    assert fn(*_inputs(shapes)).grad_fn.name() == node


def test_beta_zero_ignores_nan_in_input():
    nan = lucid.tensor([[float("nan")]])
    assert lucid.addmm(nan, lucid.ones(1, 1), lucid.ones(1, 1), beta=0).tolist() == [[1.0]]
    assert lucid.baddbmm(nan, lucid.ones(1, 1, 1), lucid.ones(1, 1, 1), beta=0).tolist() == [[[1.0]]]


def test_integer_products_are_exact():
    a = lucid.tensor([[2**40, 1], [0, 3]])
    assert lucid.tensordot(a, lucid.tensor([1, 2]), 1).tolist() == [2**40 + 2, 6]
    assert lucid.kron(lucid.tensor([1, 2]), lucid.tensor([3, 4])).tolist() == [3, 4, 6, 8]
    assert lucid.addmm(lucid.tensor([1]), a, lucid.tensor([[1], [2]])).tolist() == [[2**40 + 3], [7]]
    assert lucid.trace(a).item() == 2**40 + 3


def test_cross_without_dim_takes_the_first_dim_of_size_3():
    a, b = leaf(3, 4), leaf(3, 4, seed=1)
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
        out = lucid.cross(a, b)
    np.testing.assert_allclose(out.detach().numpy(), np.cross(a.detach().numpy(), b.detach().numpy(), axis=0))


def test_diagonal_is_a_view():
    x = lucid.zeros(3, 3)
    x.diagonal().fill_(1.0)
    np.testing.assert_array_equal(x.numpy(), np.eye(3))
    y = lucid.zeros(2, 3, 3)
    y.diagonal(1, 1, 2).add_(lucid.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert y[1].tolist() == [[0, 3, 0], [0, 0, 4], [0, 0, 0]]

    def f(a):
        b = a * a
        b.diagonal(-1).mul_(3.0)
        return b

    check_grads(f, leaf(3, 3))


@pytest.mark.cpu_only("slices float64 MLX arrays itself, outside lucid (MLX has float64 kernels only on the CPU)")
def test_ops_run_inside_mlx_vmap_and_compile():
    def f(a, b):
        x, y = lucid.from_mlx(a).requires_grad_(), lucid.from_mlx(b)
        terms = [lucid.einsum("ij,jk->ik", x, y), lucid.einsum("ii->i", x[:, :3]), x.tril(-1), lucid.diagonal(x, 1),
                 lucid.diag_embed(x), lucid.cross(x[:, :3], x[:, 1:], dim=1), lucid.addmm(x[:, :3], x, y),
                 lucid.trace(x), lucid.kron(x, x), lucid.tensordot(x, y, 1), lucid.block_diag(x, x)]
        return lucid.autograd.grad(sum((t ** 2).sum() for t in terms), x).mlx

    a, b = leaf(2, 3, 4, requires_grad=False).mlx, leaf(2, 4, 3, seed=1, requires_grad=False).mlx
    expected = np.stack([np.array(f(a[0], b[0])), np.array(f(a[1], b[1]))])
    np.testing.assert_allclose(np.array(mx.vmap(f)(a, b)), expected, rtol=1e-12)
    np.testing.assert_allclose(np.array(mx.compile(f)(a[0], b[0])), expected[0], rtol=1e-12)


# (name, in-place call, the same out of place)
INPLACE = [
    ("tril_", lambda b: b.tril_(-1), lambda b: lucid.tril(b, -1)),
    ("triu_", lambda b: b.triu_(1), lambda b: lucid.triu(b, 1)),
    ("addmm_", lambda b: b.addmm_(lucid.ones(3, 2, dtype=lucid.float64), lucid.ones(2, 3, dtype=lucid.float64),
                                  alpha=2), lambda b: b + 4.0),
    ("addr_", lambda b: b.addr_(lucid.ones(3, dtype=lucid.float64), lucid.ones(3, dtype=lucid.float64), beta=0.5),
     lambda b: 0.5 * b + 1.0),
]


@pytest.mark.parametrize("name,inplace,outplace", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_variants(name, inplace, outplace):
    x = leaf(3, 3)
    b = x.detach().clone()
    assert inplace(b) is b and b._version == 1
    np.testing.assert_allclose(b.numpy(), outplace(x.detach()).numpy())

    def f(t):
        c = t * t
        inplace(c)
        return c

    check_grads(f, x)


def test_inplace_batched_and_vector_forms():
    c = lucid.zeros(2, 2, 2)
    c.baddbmm_(lucid.ones(2, 2, 3), lucid.ones(2, 3, 2))
    assert c.tolist() == [[[3, 3], [3, 3]]] * 2
    v = lucid.ones(2)
    v.addmv_(lucid.ones(2, 3), lucid.ones(3), beta=2)
    assert v.tolist() == [5, 5]


# ---------------------------------------------------------------------------------------------------- errors
O = lucid.ones
ERRORS = [
    (lambda: lucid.einsum("ij,jk->ik", O(2, 3)), "einsum(): fewer operands were provided than specified in the "
                                                 "equation"),
    (lambda: lucid.einsum("ij", O(2, 3), O(2)), "einsum(): more operands were provided than specified in the equation"),
    (lambda: lucid.einsum("ij,jk->ik", O(3, 4), O(3, 2)), "einsum(): subscript j has size 3 for operand 1 which does "
                                                           "not broadcast with previously seen size 4"),
    (lambda: lucid.einsum("ij->ii", O(2, 2)), "einsum(): output subscript i appears more than once in the output"),
    (lambda: lucid.einsum("ij->k", O(2, 2)), "einsum(): output subscript k does not appear in the equation for any "
                                             "input operand"),
    (lambda: lucid.einsum("ijk->k", O(2, 2)), "einsum(): the number of subscripts in the equation (3) does not match "
                                              "the number of dimensions (2) for operand 0 and no ellipsis was given"),
    (lambda: lucid.einsum("ii->i", O(2, 3)), "einsum(): subscript i is repeated for operand 0 but the sizes don't "
                                             "match, 2 != 3"),
    (lambda: lucid.einsum("i1->i", O(2, 2)), "einsum(): invalid subscript given at index 1 in the equation string, "
                                             "subscripts must be in [a-zA-Z]"),
    (lambda: lucid.einsum("i.j", O(2, 2)), "einsum(): found '.' for operand 0 that is not part of any ellipsis"),
    (lambda: lucid.tensordot(O(2, 3), O(3, 2), 3), "tensordot expects dims < ndim_a or ndim_b, but got dims=3"),
    (lambda: lucid.tensordot(O(2, 3), O(3, 2), -1), "tensordot expects dims >= 0, but got dims=-1"),
    (lambda: lucid.tensordot(O(3, 4), O(3, 4), ([0], [1])), "contracted dimensions need to match, but first has size "
                                                            "3 in dim 0 and second has size 4 in dim 1"),
    (lambda: lucid.tensordot(O(3, 4), O(3, 4), ([0, 1], [1])), "both dimension lists should have same length"),
    (lambda: lucid.cross(O(3, 2), O(3, 2), dim=1), "linalg.cross: inputs dimension 1 must have length 3. Got 2 and 2"),
    (lambda: lucid.cross(O(4, 3), O(3), dim=-1), "linalg.cross: inputs must have the same number of dimensions."),
    (lambda: lucid.addmm(O(4), O(2, 3), O(3, 3)), "The expanded size of the tensor (3) must match the existing size "
                                                  "(4) at non-singleton dimension 1.  Target sizes: [2, 3].  Tensor "
                                                  "sizes: [4]"),
    (lambda: lucid.addmm(O(3), O(2, 3), O(4, 3)), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x3)"),
    (lambda: lucid.addmm(O(3), O(2, 3, 1), O(4, 3)), "mat1 must be a matrix, got 3-D tensor"),
    (lambda: lucid.addmv(O(2), O(2, 3), O(4)), "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda: lucid.addmv(O(3), O(2, 3), O(3)), "size mismatch, got input (3), mat (2x3), vec (3)"),
    (lambda: lucid.addmv(O(2, 2), O(2, 3), O(3)), "vector + matrix @ vector expected, got 2, 2, 1"),
    (lambda: lucid.addr(O(2, 3), O(2, 1), O(3)), "addr: Expected 1-D argument vec1, but got 2-D"),
    (lambda: lucid.baddbmm(O(3), O(2, 2, 3), O(3, 3, 3)), "Expected size for first two dimensions of batch2 tensor to "
                                                          "be: [2, 3] but got: [3, 3]."),
    (lambda: lucid.baddbmm(O(3), O(2, 3), O(2, 4, 3)), "batch1 must be a 3D tensor"),
    (lambda: lucid.tril(O(3)), "tril: input tensor must have at least 2 dimensions"),
    (lambda: lucid.triu(O(3)), "triu: input tensor must have at least 2 dimensions"),
    (lambda: lucid.diag(O(2, 2, 2)), "diag(): Supports 1D or 2D tensors. Got 3D"),
    (lambda: lucid.diagonal(O(2, 2), 0, 1, -1), "diagonal dimensions cannot be identical 1, -1"),
    (lambda: lucid.diag_embed(O(3), 1, 0, 0), "diagonal dimensions cannot be identical 0, 0"),
    (lambda: lucid.diagonal_scatter(O(3, 4), O(2)), "expected src to have a size equal to the slice of self. src size "
                                                    "= [2], slice size = [3]"),
    (lambda: lucid.trace(O(2, 2, 2)), "trace: expected a matrix, but got tensor with dim 3"),
    (lambda: lucid.block_diag(O(2, 2, 2)), "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 0 "
                                           "has 3 dimensions"),
    (lambda: lucid.cartesian_prod(O(2, 2)), "Expect a 1D vector, but got shape [2, 2]"),
]


@pytest.mark.parametrize("fn,message", ERRORS, ids=[m[:40] for _, m in ERRORS])
def test_errors(fn, message):
    with pytest.raises(RuntimeError, match=re.escape(message)):
        fn()


def test_cross_without_a_dim_of_size_3():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
            lucid.cross(O(2, 2), O(2, 2))


# ---------------------------------------------------------------------------------------------------- PyTorch
def _run(lib, fn, arrays):
    xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    (out * out).sum().backward()
    return [out.detach().numpy()] + [x.grad.numpy() for x in xs]


def _einsum_call(equation):
    return lambda lib, *t: lib.einsum(equation, *t)


TORCH_CALLS = [(f"einsum {eq}", _einsum_call(eq), shapes) for eq, shapes, _ in EINSUM] + [
    ("tensordot", lambda lib, a, b: lib.tensordot(a, b, ([1, 0], [0, 2])), [(3, 2, 2), (2, 2, 3)]),
    ("kron", lambda lib, a, b: lib.kron(a, b), [(2, 1, 2), (3, 2)]),
    ("cross", lambda lib, a, b: lib.cross(a, b, dim=0), [(3, 2), (3, 1)]),
    ("baddbmm", lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=2, alpha=0.5), [(2, 1, 3), (2, 2, 4), (2, 4, 3)]),
    ("addr", lambda lib, c, a, b: lib.addr(c, a, b, beta=-1), [(2, 3), (2,), (3,)]),
    ("diag_embed", lambda lib, x: lib.diag_embed(x, -1, 2, 0), [(3, 2)]),
    ("diagonal", lambda lib, x: lib.diagonal(x, 1, -1, 0), [(3, 2, 4)]),
    ("diag", lambda lib, x: lib.diag(x, -1), [(3, 2)]),
    ("block_diag", lambda lib, *t: lib.block_diag(*t), [(2, 3), (), (2,)]),
]


@pytest.mark.parametrize("name,fn,shapes", TORCH_CALLS, ids=[c[0] for c in TORCH_CALLS])
def test_against_torch(name, fn, shapes):
    torch = pytest.importorskip("torch")
    arrays = [np.random.default_rng(i).standard_normal(s) for i, s in enumerate(shapes)]
    for mine, theirs in zip(_run(lucid, fn, arrays), _run(torch, fn, arrays)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
