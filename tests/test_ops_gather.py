"""The gather family: gather, scatter, scatter_add, index_add, index_copy, index_fill, take, take_along_dim.

Each case of the tables gets its value checked against a numpy reference, first and second derivatives in float64
(the output is squared, so the second derivative depends on the inputs too) and PyTorch's node name. Scatter cases
use indices that are unique where PyTorch's result would depend on the order of writes."""
import re

import mlx.core as mx
import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf

# scatter(..., reduce=) with a tensor src warns as in PyTorch; test_scatter_reduce_multiply_has_no_gradient checks it
pytestmark = pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")

A = np.array  # index arrays of the tables, read as int64 tensors
I_D0 = A([[0, 1, 2, 0], [2, 1, 0, 0]])  # for (3, 4) along dim 0: repeated indices
I_LAST = A([[3, 0], [1, 1], [2, 0]])  # for (3, 4) along dim -1
I_SMALL = A([[3, 0, 1], [1, 2, 2]])  # smaller than (3, 4) in dim 0 too
I_3D = A([[[1, 0], [2, 2], [0, 1]], [[0, 0], [1, 2], [2, 1]]])  # for (2, 3, 2) along dim 1
U_D0 = A([[0, 1, 2, 0], [2, 0, 1, 1]])  # unique along dim 0 in every column
U_LAST = A([[3, 0], [1, 2], [0, 3]])  # unique along the last dim in every row
U_3D = A([[[1, 0], [2, 1]], [[0, 2], [1, 0]]])  # (2, 2, 2) unique along dim 1 of (2, 3, 2)
U_SMALL = A([[3, 0], [1, 2]])  # unique along the last dim, smaller than (3, 4) in dim 0 too


def _t(a):
    return lucid.tensor(a)


def np_write(a, dim, idx, src, combine=None):
    """The reference for scatter: out[..., idx[p], ...] = src[p] (or combine(old, src[p])) for every p."""
    out = a.copy()
    dim = dim % a.ndim
    for p in np.ndindex(*idx.shape):
        q = list(p)
        q[dim] = idx[p]
        q = tuple(q)
        v = src[p] if isinstance(src, np.ndarray) else src
        out[q] = v if combine is None else combine(out[q], v)
    return out


def np_index_add(a, dim, idx, src, alpha=1.0):
    out = a.copy()
    np.add.at(out, (slice(None),) * (dim % a.ndim) + (idx,), alpha * src)
    return out


def np_index_copy(a, dim, idx, src):
    out = a.copy()
    out[(slice(None),) * (dim % a.ndim) + (idx,)] = src
    return out


# (name, fn(*tensors), shapes of the float64 inputs, numpy reference on their arrays, PyTorch's node name)
CASES = [
    ("gather_dim0", lambda x: lucid.gather(x, 0, _t(I_D0)), [(3, 4)],
     lambda a: np.take_along_axis(a, I_D0, 0), "GatherBackward0"),
    ("gather_dim_neg", lambda x: x.gather(-1, _t(I_LAST)), [(3, 4)],
     lambda a: np.take_along_axis(a, I_LAST, 1), "GatherBackward0"),
    ("gather_smaller_index", lambda x: x.gather(1, _t(I_SMALL)), [(3, 4)],
     lambda a: np.take_along_axis(a[:2], I_SMALL, 1), "GatherBackward0"),
    ("gather_3d", lambda x: lucid.gather(x, 1, _t(I_3D)), [(2, 3, 2)],
     lambda a: np.take_along_axis(a, I_3D, 1), "GatherBackward0"),
    ("gather_list_index", lambda x: lucid.gather(x, 0, [[2, 0, 1]]), [(3, 3)],
     lambda a: np.take_along_axis(a, A([[2, 0, 1]]), 0), "GatherBackward0"),
    ("gather_0d", lambda x: lucid.gather(x, 0, _t(0)), [()], lambda a: a, None),
    ("scatter_dim0", lambda x, s: lucid.scatter(x, 0, _t(U_D0), s), [(3, 4), (2, 4)],
     lambda a, s: np_write(a, 0, U_D0, s), "ScatterBackward0"),
    ("scatter_dim_neg_larger_src", lambda x, s: x.scatter(-1, _t(U_LAST), s), [(3, 4), (3, 3)],
     lambda a, s: np_write(a, -1, U_LAST, s[:, :2]), "ScatterBackward0"),
    ("scatter_smaller_index", lambda x, s: lucid.scatter(x, 1, _t(U_SMALL), s), [(3, 4), (2, 3)],
     lambda a, s: np_write(a, 1, U_SMALL, s[:, :2]), "ScatterBackward0"),
    ("scatter_3d", lambda x, s: lucid.scatter(x, 1, _t(U_3D), s), [(2, 3, 2), (2, 2, 2)],
     lambda a, s: np_write(a, 1, U_3D, s), "ScatterBackward0"),
    ("scatter_value", lambda x: lucid.scatter(x, 0, _t(I_D0), 2.5), [(3, 4)],
     lambda a: np_write(a, 0, I_D0, 2.5), "ScatterBackward1"),
    ("scatter_value_keyword", lambda x: x.scatter(1, _t(I_LAST), value=-1.0), [(3, 4)],
     lambda a: np_write(a, 1, I_LAST, -1.0), "ScatterBackward1"),
    ("scatter_reduce_add", lambda x, s: lucid.scatter(x, 0, _t(I_D0), s, reduce="add"), [(3, 4), (2, 4)],
     lambda a, s: np_write(a, 0, I_D0, s, np.add), "ScatterAddBackward0"),
    ("scatter_add_dim0", lambda x, s: lucid.scatter_add(x, 0, _t(I_D0), s), [(3, 4), (2, 4)],
     lambda a, s: np_write(a, 0, I_D0, s, np.add), "ScatterAddBackward0"),
    ("scatter_add_dim_neg", lambda x, s: x.scatter_add(-1, _t(I_LAST), s), [(3, 4), (3, 2)],
     lambda a, s: np_write(a, -1, I_LAST, s, np.add), "ScatterAddBackward0"),
    ("scatter_add_smaller_index", lambda x, s: lucid.scatter_add(x, 0, _t([[1, 1]]), s), [(3, 4), (1, 2)],
     lambda a, s: np_write(a, 0, A([[1, 1]]), s, np.add), "ScatterAddBackward0"),
    ("scatter_add_3d_larger_src", lambda x, s: lucid.scatter_add(x, 1, _t(I_3D), s), [(2, 3, 2), (2, 3, 3)],
     lambda a, s: np_write(a, 1, I_3D, s[:, :, :2], np.add), "ScatterAddBackward0"),
    ("index_add", lambda x, s: lucid.index_add(x, 0, _t([2, 0, 2]), s), [(3, 4), (3, 4)],
     lambda a, s: np_index_add(a, 0, [2, 0, 2], s), "IndexAddBackward0"),
    ("index_add_alpha_dim_neg", lambda x, s: x.index_add(-1, _t([1, 3]), s, alpha=-2.0), [(2, 3, 4), (2, 3, 2)],
     lambda a, s: np_index_add(a, -1, [1, 3], s, -2.0), "IndexAddBackward0"),
    ("index_copy", lambda x, s: lucid.index_copy(x, 0, _t([2, 0]), s), [(3, 4), (2, 4)],
     lambda a, s: np_index_copy(a, 0, [2, 0], s), "IndexCopyBackward0"),
    ("index_copy_dim_neg", lambda x, s: x.index_copy(-2, _t([1]), s), [(2, 3, 2), (2, 1, 2)],
     lambda a, s: np_index_copy(a, -2, [1], s), "IndexCopyBackward0"),
    ("index_fill", lambda x: lucid.index_fill(x, 1, _t([0, 2]), -1.0), [(3, 4)],
     lambda a: np_index_copy(a, 1, [0, 2], -1.0), "IndexFillBackward0"),
    ("index_fill_tensor_value", lambda x, v: x.index_fill(-1, _t([3, -4]), v), [(2, 4), ()],
     lambda a, v: np_index_copy(a, 1, [3, 0], v), "IndexFillBackward0"),
    ("take", lambda x: lucid.take(x, _t([[0, 11], [-1, 5]])), [(3, 4)],
     lambda a: np.take(a, [[0, 11], [-1, 5]]), "TakeBackward0"),
    ("take_repeated", lambda x: x.take(_t([1, 1, 0])), [(2, 2)], lambda a: np.take(a, [1, 1, 0]), "TakeBackward0"),
    ("take_along_dim_flat", lambda x: lucid.take_along_dim(x, _t([[0, 7], [11, 7]])), [(3, 4)],
     lambda a: a.reshape(-1)[[0, 7, 11, 7]], "GatherBackward0"),
    ("take_along_dim_neg", lambda x: x.take_along_dim(_t(I_LAST), dim=-1), [(3, 4)],
     lambda a: np.take_along_axis(a, I_LAST, -1), "GatherBackward0"),
    ("take_along_dim_broadcast_index", lambda x: lucid.take_along_dim(x, _t([[2, 0]]), 1), [(3, 4)],
     lambda a: np.take_along_axis(a, np.broadcast_to(A([[2, 0]]), (3, 2)), 1), "GatherBackward0"),
    ("take_along_dim_broadcast_input", lambda x: lucid.take_along_dim(x, _t(I_LAST), 1), [(1, 4)],
     lambda a: np.take_along_axis(np.broadcast_to(a, (3, 4)), I_LAST, 1), "GatherBackward0"),
]
IDS = [c[0] for c in CASES]


def _inputs(shapes):
    return [leaf(*s, seed=i) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("name,fn,shapes,ref,node", CASES, ids=IDS)
def test_values_match_numpy(name, fn, shapes, ref, node):
    xs = _inputs(shapes)
    out = fn(*xs)
    expected = ref(*[x.detach().numpy() for x in xs])
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("name,fn,shapes,ref,node", CASES, ids=IDS)
def test_gradients(name, fn, shapes, ref, node):
    check_grads(lambda *t: fn(*t) ** 2, *_inputs(shapes))


@pytest.mark.parametrize("name,fn,shapes,ref,node", [c for c in CASES if c[4]], ids=[c[0] for c in CASES if c[4]])
def test_node_names(name, fn, shapes, ref, node):
    assert fn(*_inputs(shapes)).grad_fn.name() == node


def test_repeated_indices_accumulate_gradients():
    x = lucid.zeros(3, requires_grad=True)
    x.gather(0, _t([0, 0, 2, 0])).sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]
    s = lucid.ones(2, 2, requires_grad=True)
    out = lucid.zeros(2, 2).index_add(0, _t([1, 1]), s)
    assert out.tolist() == [[0, 0], [2, 2]]
    (out * lucid.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert s.grad.tolist() == [[3, 4], [3, 4]]


def test_scatter_gradients_mask_written_positions():
    x, s = leaf(3, 4), leaf(2, 4, seed=1)
    lucid.scatter(x, 0, _t(U_D0), s).sum().backward()
    written = np_write(np.zeros((3, 4)), 0, U_D0, 1.0)
    np.testing.assert_array_equal(x.grad.numpy(), 1 - written)
    np.testing.assert_array_equal(s.grad.numpy(), np.ones((2, 4)))
    # only the used part of a larger src gets a gradient
    big = leaf(3, 5, seed=2)
    lucid.scatter(x.detach(), 0, _t(U_D0), big).sum().backward()
    np.testing.assert_array_equal(big.grad.numpy(), np.pad(np.ones((2, 4)), ((0, 1), (0, 1))))


def test_scatter_reduce_multiply_has_no_gradient():
    x, s = leaf(3, 4), leaf(2, 4, seed=1)
    with pytest.warns(UserWarning, match="reduce argument of torch.scatter with Tensor src is deprecated"):
        out = lucid.scatter(x, 0, _t(I_D0), s, reduce="multiply")
    np.testing.assert_allclose(out.detach().numpy(), np_write(x.detach().numpy(), 0, I_D0, s.detach().numpy(),
                                                              np.multiply))
    assert out.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError, match="the derivative for 'scatter' with respect to argument 0 is not"):
        out.sum().backward()
    by_value = lucid.scatter(x.detach(), 1, _t(I_LAST), 2.0, reduce="multiply")
    np.testing.assert_allclose(by_value.numpy(), np_write(x.detach().numpy(), 1, I_LAST, 2.0, np.multiply))


def test_index_int32_and_numpy_indices():
    a = np.arange(12.0).reshape(3, 4)
    x = lucid.tensor(a)
    i32 = lucid.tensor(I_D0, dtype=lucid.int32)
    np.testing.assert_array_equal(x.gather(0, i32).numpy(), np.take_along_axis(a, I_D0, 0))
    np.testing.assert_array_equal(x.gather(0, I_D0).numpy(), np.take_along_axis(a, I_D0, 0))
    np.testing.assert_array_equal(x.index_add(1, np.array([0, 0]), lucid.ones(3, 2, dtype=lucid.float64)).numpy(),
                                  np_index_add(a, 1, [0, 0], np.ones((3, 2))))


def test_zero_dim_inputs():
    x = lucid.tensor(2.0, dtype=lucid.float64, requires_grad=True)
    assert lucid.gather(x, 0, _t([0, 0])).tolist() == [2.0, 2.0]
    assert lucid.scatter(x, 0, _t(0), lucid.tensor(5.0, dtype=lucid.float64)).item() == 5.0
    assert lucid.scatter_add(x, 0, _t(0), lucid.tensor(5.0, dtype=lucid.float64)).item() == 7.0
    assert lucid.index_add(x, 0, _t([0]), lucid.tensor(1.0, dtype=lucid.float64)).shape == ()
    assert lucid.index_copy(x, 0, _t(0), lucid.tensor(3.0, dtype=lucid.float64)).item() == 3.0
    assert lucid.take(x, _t([0, -1])).tolist() == [2.0, 2.0]
    check_grads(lambda t: lucid.index_add(t, 0, _t([0]), t * t) ** 2, leaf())


def test_empty_index():
    x = leaf(3, 4)
    assert x.gather(0, lucid.zeros(0, 4, dtype=lucid.int64)).shape == (0, 4)
    out = lucid.scatter_add(x, 1, lucid.zeros(3, 0, dtype=lucid.int64), lucid.ones(3, 0, dtype=lucid.float64))
    np.testing.assert_array_equal(out.detach().numpy(), x.detach().numpy())
    assert lucid.take(x, []).shape == (0,)


@pytest.mark.cpu_only("slices float64 MLX arrays itself, outside lucid (MLX has float64 kernels only on the CPU)")
def test_ops_run_inside_mlx_vmap_and_compile():
    """Forward and backward, traced by mx.vmap and mx.compile (scatter-add along an axis goes through mx.vjp)."""
    def f(a):
        x = lucid.from_mlx(a).requires_grad_()
        y = (lucid.gather(x, 0, _t(I_D0)) ** 2).sum() + (lucid.scatter_add(x, 0, _t(I_D0), x[:2]) ** 2).sum() \
            + (lucid.scatter(x, 1, _t(U_LAST), x[:, :2] * 2) ** 2).sum() + (lucid.take(x, _t(I_D0)) ** 2).sum() \
            + (lucid.index_add(x, 1, _t([0, 0]), x[:, 1:3]) ** 2).sum()
        return lucid.autograd.grad(y, x).mlx

    batch = leaf(2, 3, 4, requires_grad=False).mlx
    expected = np.stack([np.array(f(batch[0])), np.array(f(batch[1]))])
    np.testing.assert_allclose(np.array(mx.vmap(f)(batch)), expected, rtol=1e-12)
    np.testing.assert_allclose(np.array(mx.compile(f)(batch[0])), expected[0], rtol=1e-12)


# ---------------------------------------------------------------------------------------------------- in place
# (name, in-place call on b, the same out of place)
INPLACE = [
    ("scatter_", lambda b, s: b.scatter_(0, _t(U_D0), s), lambda b, s: lucid.scatter(b, 0, _t(U_D0), s)),
    ("scatter_value_", lambda b, s: b.scatter_(1, _t(I_LAST), 3.0), lambda b, s: lucid.scatter(b, 1, _t(I_LAST), 3.0)),
    ("scatter_add_", lambda b, s: b.scatter_add_(0, _t(I_D0), s), lambda b, s: lucid.scatter_add(b, 0, _t(I_D0), s)),
    ("index_add_", lambda b, s: b.index_add_(0, _t([1, 1]), s, alpha=2),
     lambda b, s: lucid.index_add(b, 0, _t([1, 1]), s, alpha=2)),
    ("index_copy_", lambda b, s: b.index_copy_(0, _t([2, 0]), s), lambda b, s: lucid.index_copy(b, 0, _t([2, 0]), s)),
    ("index_fill_", lambda b, s: b.index_fill_(1, _t([3]), 0.5), lambda b, s: lucid.index_fill(b, 1, _t([3]), 0.5)),
]


@pytest.mark.parametrize("name,inplace,outplace", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_variants(name, inplace, outplace):
    x, s = leaf(3, 4), leaf(2, 4, seed=1)
    b = x.detach().clone()
    assert inplace(b, s.detach()) is b and b._version == 1
    np.testing.assert_array_equal(b.numpy(), outplace(x.detach(), s.detach()).numpy())

    def f(t, u):
        c = t * t
        inplace(c, u * u)
        return c

    check_grads(f, x, s)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        inplace(leaf(3, 4), s)


# ---------------------------------------------------------------------------------------------------- errors
X = lucid.zeros(3, 4, dtype=lucid.float64)
S = lucid.zeros(2, 4, dtype=lucid.float64)
L = lucid.tensor
ERRORS = [
    (lambda: X.gather(0, [[5, 0, 0, 0]]), RuntimeError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: X.gather(-1, np.array([[0, -1]])), RuntimeError, "index -1 is out of bounds for dimension 1 with size 4"),
    (lambda: X.gather(0, L([0, 1])), RuntimeError, "Index tensor must have the same number of dimensions as input "
                                                    "tensor"),
    (lambda: X.gather(0, L([[0.0, 1.0]])), RuntimeError, "gather(): Expected dtype int32/int64 for index"),
    (lambda: X.gather(1, lucid.zeros(4, 2, dtype=lucid.int64)), RuntimeError,
     "Size does not match at dimension 0 expected index [4, 2] to be no larger than self [3, 4] apart from "
     "dimension 1"),
    (lambda: X.gather(2, L([[0]])), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but "
                                                "got 2)"),
    (lambda: X.gather(0, "a"), TypeError, "gather(): argument 'index' must be Tensor, not str"),
    (lambda: X.scatter(0, lucid.zeros(2, 4, dtype=lucid.int64), lucid.zeros(1, 4, dtype=lucid.float64)),
     RuntimeError, "Expected index [2, 4] to be no larger than self [3, 4] apart from dimension 0 and to be no larger "
                   "size than src [1, 4]"),
    (lambda: X.scatter(0, L([0]), S), RuntimeError, "Index tensor must have the same number of dimensions as self "
                                                    "tensor"),
    (lambda: X.scatter(0, [[7, 0]], S), RuntimeError, "index 7 is out of bounds for dimension 0 with size 3"),
    (lambda: X.scatter(0, L([[0]]), lucid.zeros(1, 1)), RuntimeError, "scatter(): Expected self.dtype to be equal "
                                                                      "to src.dtype"),
    (lambda: X.scatter(0, L([[0]]), S, reduce="max"), RuntimeError, "reduce argument must be either add or multiply"),
    (lambda: X.scatter(0, L([[0.5]]), S), RuntimeError, "scatter(): Expected dtype int32/int64 for index"),
    (lambda: X.scatter(0, L([[0]])), TypeError, "missing 1 required positional argument"),
    (lambda: X.scatter_add(0, [[-1]], S), RuntimeError, "index -1 is out of bounds for dimension 0 with size 3"),
    (lambda: X.scatter_add(0, lucid.zeros(3, 4, dtype=lucid.int64), S), RuntimeError,
     "Expected index [3, 4] to be no larger than self [3, 4] apart from dimension 0 and to be no larger size than "
     "src [2, 4]"),
    (lambda: X.index_add(0, [7], lucid.zeros(1, 4, dtype=lucid.float64)), IndexError, "index out of range in self"),
    (lambda: X.index_add(0, L([0]), lucid.zeros(1, 3, dtype=lucid.float64)), RuntimeError,
     "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = [3, 4] "
     "source.shape = [1, 3]"),
    (lambda: X.index_add(0, L([0]), S), RuntimeError,
     "index_add_(): Number of indices (1) should be equal to source.size(dim): (2), for dim: 0"),
    (lambda: X.index_add(0, L([[0]]), S), IndexError, "index_add_(): Index is supposed to be a vector, but got dim: 2 "
                                                      "with type: Long and size: [1, 1]"),
    (lambda: X.index_add(0, L([0.0]), S), RuntimeError, "index_add_(): Expected dtype int32/int64 for index but got: "
                                                        "Float"),
    (lambda: X.index_add(0, L([0]), lucid.zeros(1, 4)), RuntimeError,
     "index_add_(): self (Double) and source (Float) must have the same scalar type"),
    (lambda: X.index_copy(0, [-1], lucid.zeros(1, 4, dtype=lucid.float64)), IndexError,
     "index_copy_(): index -1 is out of bounds for dimension 0 with size 3"),
    (lambda: X.index_copy(0, L([0]), lucid.zeros(1, 3, dtype=lucid.float64)), RuntimeError,
     "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: 4 at dimension "
     "0 and source slice shape: 3 at dimension 0."),
    (lambda: X.index_copy(0, L([0, 1]), lucid.zeros(1, 4, dtype=lucid.float64)), IndexError,
     "index_copy_(): Number of indices (2) should be equal to source.size(dim) (1)"),
    (lambda: X.index_copy(0, L([0]), lucid.zeros(4, dtype=lucid.float64)), IndexError,
     "index_copy_(): When source and destination are not scalars, their dimensionality must match. Source "
     "dimensionality (1), destination dimensionality (2)"),
    (lambda: X.index_copy(0, L([[0]]), S), IndexError, "index_copy_(): Index should have dimension 1 or 0 (got 2)"),
    (lambda: X.index_copy(0, L([0]), lucid.zeros(1, 4)), RuntimeError,
     "index_copy_(): self and source expected to have the same dtype, but got (self) Double and (source) Float"),
    (lambda: X.index_fill(0, L([0]), lucid.ones(2)), RuntimeError, "index_fill_ only supports a 0-dimensional value "
                                                                   "tensor"),
    (lambda: X.take([12]), IndexError, "out of range: tried to access index 12 on a tensor of 12 elements."),
    (lambda: X.take(np.array([-13])), IndexError, "out of range: tried to access index -13 on a tensor of 12 "
                                                  "elements."),
    (lambda: X.take(L([0.5])), RuntimeError, "take(): Expected a long tensor for index, but got Float"),
    (lambda: X.take_along_dim(lucid.zeros(2, 2, 2, dtype=lucid.int64), 0), RuntimeError,
     "torch.take_along_dim(): input and indices should have the same number of dimensions, but got 2 dimensions for "
     "input, and 3 dimensions for indices"),
    (lambda: X.take_along_dim(lucid.zeros(2, 3, dtype=lucid.int64), 0), RuntimeError,
     "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1"),
    (lambda: X.take_along_dim(L([[0.0]]), 0), RuntimeError, "torch.take_along_dim(): dtype of indices should be Long "
                                                            "but got Float"),
    (lambda: X.take_along_dim([[0, 3, 0, 0]], 0), RuntimeError, "index 3 is out of bounds for dimension 0 with size 3"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[m[:40] for _, _, m in ERRORS])
def test_errors(fn, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        fn()


# ---------------------------------------------------------------------------------------------------- PyTorch
def test_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a, s = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    calls = [
        ("gather", (0, I_D0)), ("gather", (-1, I_LAST)), ("scatter", (0, U_D0, "src2")), ("scatter", (1, U_LAST, 1.5)),
        ("scatter_add", (0, I_D0, "src2")), ("index_add", (1, A([3, 0, 3]), "src3")),
        ("index_copy", (0, A([2, 0]), "src2")), ("index_fill", (1, A([1, 2]), -2.0)), ("take", (A([[0, -1], [5, 5]]),)),
        ("take_along_dim", (I_LAST, 1)), ("take_along_dim", (A([1, 11]),)),
    ]
    for name, args in calls:
        def conv(v, lib):
            if isinstance(v, str):
                src = {"src3": s[:, :3], "src2": s[:2]}[v]
                return lib.tensor(src, dtype=lib.float64, requires_grad=True)
            return lib.tensor(v) if isinstance(v, np.ndarray) else v

        outs = []
        for lib in (lucid, torch):
            x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
            largs = [conv(v, lib) for v in args]
            out = getattr(lib, name)(x, *largs)
            (out * out).sum().backward()
            srcs = [v for v in largs if getattr(v, "requires_grad", False)]
            outs.append([out.detach().numpy(), x.grad.numpy()] + [v.grad.numpy() for v in srcs]
                        + [type(out.grad_fn).__name__])
        for mine, theirs in zip(*outs):
            if isinstance(mine, str):
                assert mine == theirs, name
            else:
                np.testing.assert_allclose(mine, theirs, rtol=1e-12, err_msg=name)
