"""Scans and order statistics: cumsum, cumprod, cummax/cummin, sort, argsort, msort, topk, kthvalue, median,
nanmedian. Derivatives: gradcheck + gradgradcheck in float64 on distinct values (with ties the selection is not
differentiable); values and indices against numpy; PyTorch's conventions for ties, NaN and zeros tested apart."""
from __future__ import annotations

import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf


def distinct(*shape, seed=0, low=-2.0, high=2.0):
    """A float64 leaf whose values are well apart (gradcheck's steps never reorder them)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    values = rng.permutation(np.linspace(low, high, n)) + rng.uniform(-0.01, 0.01, n)
    return lucid.tensor(values.reshape(shape), dtype=lucid.float64, requires_grad=True)


SHAPES_DIMS = [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -2), ((3, 1), 1), ((), 0)]
IDS = ["vec", "mat-dim1", "mat-dim0", "3d-dim-2", "size-1-dim", "scalar"]


# ---------------------------------------------------------------------------------------------------- derivatives
def _selecting_ops():
    """(name, fn(x, dim)) for every op whose values are selected elements."""
    return [
        ("sort", lambda x, d: lucid.sort(x, d).values),
        ("sort_desc", lambda x, d: x.sort(d, descending=True)[0]),
        ("topk", lambda x, d: lucid.topk(x, min(2, x.shape[d] if x.ndim else 1), d).values),
        ("topk_smallest", lambda x, d: lucid.topk(x, 1, d, largest=False).values),
        ("kthvalue", lambda x, d: lucid.kthvalue(x, min(2, x.shape[d] if x.ndim else 1), d).values),
        ("kthvalue_keepdim", lambda x, d: x.kthvalue(1, d, keepdim=True).values),
        ("median_dim", lambda x, d: lucid.median(x, d).values),
        ("nanmedian_dim", lambda x, d: lucid.nanmedian(x, d, keepdim=True).values),
        ("cummax", lambda x, d: lucid.cummax(x, d).values),
        ("cummin", lambda x, d: x.cummin(d).values),
        ("cumsum", lambda x, d: lucid.cumsum(x, d)),
        ("cumprod", lambda x, d: lucid.cumprod(x, d)),
        ("msort", lambda x, d: lucid.msort(x)),
    ]


@pytest.mark.parametrize("name, fn", _selecting_ops(), ids=[n for n, _ in _selecting_ops()])
@pytest.mark.parametrize("shape, dim", SHAPES_DIMS, ids=IDS)
def test_gradcheck_and_gradgradcheck(name, fn, shape, dim):
    if name == "msort" and shape == ():
        pytest.skip("msort needs a dim 0")
    check_grads(lambda x: fn(x, dim), distinct(*shape))


@pytest.mark.parametrize("fn", [lucid.median, lucid.nanmedian], ids=["median", "nanmedian"])
@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 2), ()], ids=str)
def test_full_median_gradcheck_and_gradgradcheck(fn, shape):
    check_grads(fn, distinct(*shape))


@pytest.mark.parametrize("values", [[0.5, 0.0, 2.0, -1.5, 3.0], [0.0, 1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 0.0, 2.0, 1.0],
                                    [1.2, 0.7, -0.8, 1.1, 0.0]], ids=["one_zero", "two_zeros", "three_zeros", "last"])
def test_cumprod_with_zeros_first_and_second_derivatives(values):
    x = lucid.tensor(values, dtype=lucid.float64, requires_grad=True)
    check_grads(lambda x: lucid.cumprod(x, 0), x)
    m = lucid.tensor(np.stack([values, values[::-1]]), dtype=lucid.float64, requires_grad=True)
    check_grads(lambda x: x.cumprod(1), m)


def test_cumprod_gradient_with_zeros_matches_the_explicit_sum():
    xn = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    gn = np.array([1.0, -2.0, 0.5, 3.0, 1.5])
    x = lucid.tensor(xn, dtype=lucid.float64, requires_grad=True)
    lucid.cumprod(x, 0).backward(lucid.tensor(gn, dtype=lucid.float64))
    # d/dx_i = sum_{k >= i} g_k prod_{j <= k, j != i} x_j
    expected = [sum(gn[k] * np.prod([xn[j] for j in range(k + 1) if j != i]) for k in range(i, 5)) for i in range(5)]
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_a_chain_through_sort_and_cumsum():
    def f(x):
        s = lucid.sort(x, 1, descending=True).values
        return (lucid.cumsum(s, 1) * s.sin()).sum(1) + lucid.median(x.exp(), 1).values

    check_grads(f, distinct(3, 4))


# ---------------------------------------------------------------------------------------------------- cumsum, cumprod
@pytest.mark.parametrize("shape, dim", [s for s in SHAPES_DIMS if s[0] != ()], ids=IDS[:-1])
def test_cumsum_cumprod_forward_match_numpy(shape, dim):
    x = leaf(*shape, seed=1, requires_grad=False)
    xn = x.numpy()
    np.testing.assert_allclose(lucid.cumsum(x, dim).numpy(), np.cumsum(xn, dim), rtol=1e-14)
    np.testing.assert_allclose(x.cumprod(dim).numpy(), np.cumprod(xn, dim), rtol=1e-14)


def test_cumsum_and_cumprod_accumulate_integers_in_int64_and_take_dtype():
    i = lucid.tensor([1, 2, 3], dtype=lucid.int32)
    assert lucid.cumsum(i, 0).dtype == lucid.int64 and lucid.cumsum(i, 0).tolist() == [1, 3, 6]
    assert lucid.cumprod(lucid.tensor([True, True, False]), 0).tolist() == [1, 1, 0]
    y = lucid.cumsum(i, 0, dtype=lucid.float32)
    assert y.dtype == lucid.float32 and y.tolist() == [1.0, 3.0, 6.0]
    assert lucid.cumsum(lucid.tensor(2.5), 0).item() == 2.5 and lucid.cumprod(lucid.tensor(2.5), -1).item() == 2.5


def test_cumsum_in_place():
    leaf_ = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = leaf_ * 1
    assert x.cumsum_(0) is x and x.tolist() == [1.0, 3.0, 6.0]
    x.sum().backward()
    assert leaf_.grad.tolist() == [3.0, 2.0, 1.0]


@pytest.mark.parametrize("fn", [lambda x: lucid.sort(x, 0).values, lambda x: lucid.cummax(x, 0).values,
                                lambda x: lucid.topk(x, 0, 0).values, lambda x: lucid.median(x, 1).values,
                                lambda x: lucid.cumsum(x, 0), lambda x: lucid.cumprod(x, 1)],
                         ids=["sort", "cummax", "topk", "median_dim", "cumsum", "cumprod"])
def test_empty_inputs_give_empty_results_and_gradients(fn):
    x = lucid.zeros(0, 3, requires_grad=True)
    fn(x).sum().backward()
    assert x.grad.shape == (0, 3)


def test_reducing_an_empty_dim_is_an_error():
    with pytest.raises(IndexError, match="median\\(\\): Expected reduction dim 0 to have non-zero size"):
        lucid.median(lucid.zeros(0, 3), 0)
    with pytest.raises(IndexError, match="kthvalue\\(\\): Expected reduction dim 0 to have non-zero size"):
        lucid.kthvalue(lucid.zeros(0, 3), 1, 0)
    assert np.isnan(lucid.median(lucid.zeros(0)).item())


def test_dim_out_of_range():
    with pytest.raises(IndexError, match="Dimension out of range"):
        lucid.cumsum(lucid.zeros(2, 3), 2)


# ---------------------------------------------------------------------------------------------------- cummax, cummin
def _cum_extremum_np(xn, axis, better):
    """PyTorch's loop: the index moves on ties (>=) and sticks to the latest NaN."""
    xn = np.moveaxis(xn, axis, -1)
    values, indices = np.empty_like(xn), np.zeros(xn.shape, np.int64)
    for pos in np.ndindex(xn.shape[:-1]):
        best, idx = xn[pos][0], 0
        for i, v in enumerate(xn[pos]):
            if np.isnan(v) or (not np.isnan(best) and better(v, best)):
                best, idx = v, i
            values[pos][i], indices[pos][i] = best, idx
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


@pytest.mark.parametrize("fn, better", [(lucid.cummax, np.greater_equal), (lucid.cummin, np.less_equal)],
                         ids=["cummax", "cummin"])
def test_cummax_cummin_values_and_indices_with_ties_and_nan(fn, better):
    xn = np.array([[1.0, 3.0, 3.0, 2.0, 0.0, 0.0], [2.0, np.nan, 5.0, np.nan, 1.0, 7.0],
                   [-1.0, -1.0, -1.0, 4.0, -2.0, -2.0]])
    for axis in (0, 1):
        out = fn(lucid.tensor(xn), axis)
        values, indices = _cum_extremum_np(xn, axis, better)
        np.testing.assert_array_equal(out.values.numpy(), values)
        np.testing.assert_array_equal(out.indices.numpy(), indices)
        assert out.indices.dtype == lucid.int64 and not out.indices.requires_grad


def test_cummax_gradient_accumulates_at_repeated_indices():
    x = lucid.tensor([3.0, 1.0, 2.0, 4.0, 0.0], requires_grad=True)
    lucid.cummax(x, 0).values.backward(lucid.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 0.0, 0.0, 9.0, 0.0])


# ---------------------------------------------------------------------------------------------------- sort
@pytest.mark.parametrize("shape, dim", [s for s in SHAPES_DIMS if s[0] != ()], ids=IDS[:-1])
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_sort_matches_a_stable_numpy_sort_with_ties(shape, dim, descending):
    xn = np.random.default_rng(0).integers(0, 3, shape).astype(np.float64)  # many ties
    values, indices = lucid.sort(lucid.tensor(xn), dim, descending)
    # numpy's stable argsort of -x keeps ties in their original order, as PyTorch's stable descending sort does
    ref = np.argsort(-xn if descending else xn, axis=dim, kind="stable")
    np.testing.assert_array_equal(indices.numpy(), ref)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(xn, ref, dim))
    assert indices.dtype == lucid.int64
    np.testing.assert_array_equal(lucid.argsort(lucid.tensor(xn), dim, descending=descending).numpy(), ref)


def test_sort_puts_nan_last_ascending_and_first_descending():
    x = lucid.tensor([2.0, np.nan, -1.0, np.nan, 0.5])
    np.testing.assert_array_equal(lucid.sort(x).values.numpy(), [-1.0, 0.5, 2.0, np.nan, np.nan])
    values, indices = lucid.sort(x, descending=True)
    np.testing.assert_array_equal(values.numpy(), [np.nan, np.nan, 2.0, 0.5, -1.0])
    assert indices.tolist() == [1, 3, 0, 4, 2]


def test_sort_integers_bools_and_scalars():
    assert lucid.sort(lucid.tensor([3, -1, 2])).values.tolist() == [-1, 2, 3]
    assert lucid.sort(lucid.tensor([3, -1, 2]), descending=True).indices.tolist() == [0, 2, 1]
    assert lucid.sort(lucid.tensor([True, False, True])).values.tolist() == [False, True, True]
    v, i = lucid.sort(lucid.tensor(1.5, requires_grad=True))
    assert v.item() == 1.5 and i.item() == 0 and i.shape == () and v.requires_grad
    np.testing.assert_array_equal(lucid.msort(lucid.tensor([[2.0, 1.0], [0.0, 3.0]])).numpy(), [[0.0, 1.0], [2.0, 3.0]])


def test_sort_gradient_goes_back_to_the_original_positions():
    x = lucid.tensor([3.0, 1.0, 2.0], requires_grad=True)
    lucid.sort(x).values.backward(lucid.tensor([10.0, 20.0, 30.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [30.0, 10.0, 20.0])


# ---------------------------------------------------------------------------------------------------- topk, kthvalue
@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
def test_topk_matches_numpy(largest):
    xn = np.random.default_rng(2).uniform(-1, 1, (3, 6))
    for dim, k in [(1, 3), (0, 2), (-1, 6), (1, 0)]:
        values, indices = lucid.topk(lucid.tensor(xn), k, dim, largest=largest)
        order = np.argsort(-xn if largest else xn, axis=dim, kind="stable")
        ref = np.take(order, np.arange(k), axis=dim)
        np.testing.assert_array_equal(indices.numpy(), ref)
        np.testing.assert_array_equal(values.numpy(), np.take_along_axis(xn, ref, dim))


def test_topk_errors_when_k_exceeds_the_dim():
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        lucid.topk(lucid.zeros(3), 4)


@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue_matches_numpy(keepdim):
    xn = np.random.default_rng(3).uniform(-1, 1, (4, 5))
    for dim, k in [(1, 1), (1, 5), (0, 3), (-1, 2)]:
        values, indices = lucid.kthvalue(lucid.tensor(xn), k, dim, keepdim)
        ref = np.take(np.argsort(xn, axis=dim), [k - 1], axis=dim)
        ref = ref if keepdim else ref.squeeze(dim)
        np.testing.assert_array_equal(indices.numpy(), ref)
        np.testing.assert_array_equal(values.numpy(), np.take(np.sort(xn, axis=dim), [k - 1], axis=dim).reshape(
            ref.shape))
    with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range"):
        lucid.kthvalue(lucid.zeros(3), 4)


# ---------------------------------------------------------------------------------------------------- median
def test_full_median_is_the_lower_median_and_splits_the_gradient_among_ties():
    x = lucid.tensor([3.0, 2.0, 1.0, 2.0], requires_grad=True)
    m = lucid.median(x)
    assert m.item() == 2.0 and m.shape == () and type(m.grad_fn).__name__ == "MedianBackward0"
    m.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 0.0, 0.5])
    assert lucid.median(lucid.tensor([[4.0, 1.0], [3.0, 2.0]])).item() == 2.0


def test_median_propagates_nan_and_nanmedian_ignores_it():
    x = lucid.tensor([[1.0, np.nan, 3.0, 0.0], [np.nan, np.nan, np.nan, np.nan], [4.0, 2.0, 6.0, 8.0]],
                     requires_grad=True)
    assert np.isnan(lucid.median(x).item())
    assert lucid.nanmedian(x).item() == 3.0  # the lower median of the 7 numbers
    values, indices = lucid.median(x, 1)
    np.testing.assert_array_equal(values.detach().numpy(), [np.nan, np.nan, 4.0])
    assert indices.tolist() == [1, 0, 0]  # the first NaN
    values, indices = lucid.nanmedian(x, 1)
    np.testing.assert_array_equal(values.detach().numpy(), [1.0, np.nan, 4.0])
    assert indices.tolist()[0] == 0 and indices.tolist()[2] == 0
    lucid.median(x).backward()  # a NaN median: the gradient is spread over the NaNs
    np.testing.assert_allclose(x.grad.numpy(), np.isnan(x.detach().numpy()) / 5.0, rtol=1e-6)


@pytest.mark.parametrize("keepdim", [False, True])
def test_median_dim_matches_numpy(keepdim):
    xn = np.random.default_rng(4).uniform(-1, 1, (3, 6))
    for dim in (0, 1, -1):
        values, indices = lucid.median(lucid.tensor(xn), dim, keepdim=keepdim)
        n = xn.shape[dim]
        ref = np.take(np.argsort(xn, axis=dim), [(n - 1) // 2], axis=dim)
        ref = ref if keepdim else ref.squeeze(dim)
        np.testing.assert_array_equal(indices.numpy(), ref)
        assert values.shape == indices.shape
        np.testing.assert_array_equal(values.numpy(), np.take_along_axis(xn, ref if keepdim else np.expand_dims(
            ref, dim), dim).reshape(ref.shape))


def test_median_dim_gradient_goes_to_the_returned_index_only():
    x = lucid.tensor([[2.0, 2.0, 2.0]], requires_grad=True)
    values, indices = x.median(1)
    values.sum().backward()
    expected = np.zeros((1, 3))
    expected[0, indices.item()] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


# ---------------------------------------------------------------------------------------------------- names, types
@pytest.mark.parametrize("name, fn", [
    ("SortBackward0", lambda x: lucid.sort(x).values), ("SortBackward0", lucid.msort),
    ("SortBackward1", lambda x: lucid.sort(x, stable=True).values),
    ("TopkBackward0", lambda x: lucid.topk(x, 1).values), ("KthvalueBackward0", lambda x: lucid.kthvalue(x, 1)[0]),
    ("MedianBackward0", lucid.median), ("MedianBackward1", lambda x: lucid.median(x, 0).values),
    ("NanmedianBackward0", lucid.nanmedian), ("NanmedianBackward1", lambda x: lucid.nanmedian(x, 0)[0]),
    ("CummaxBackward0", lambda x: lucid.cummax(x, 0).values), ("CumminBackward0", lambda x: lucid.cummin(x, 0)[0]),
    ("CumsumBackward0", lambda x: lucid.cumsum(x, 0)), ("CumprodBackward0", lambda x: lucid.cumprod(x, 0)),
])
def test_node_names(name, fn):
    assert type(fn(lucid.tensor([1.0, 2.0], requires_grad=True)).grad_fn).__name__ == name


def test_named_tuples_and_methods():
    x = lucid.tensor([[3.0, 1.0, 2.0]])
    for out, name in [(x.sort(), "sort"), (x.topk(2), "topk"), (x.kthvalue(1), "kthvalue"), (x.median(1), "median"),
                      (x.cummax(1), "cummax"), (x.cummin(1), "cummin"), (x.nanmedian(1), "nanmedian")]:
        assert type(out).__name__ == name and out._fields == ("values", "indices")
        values, indices = out
        assert indices.dtype == lucid.int64 and not indices.requires_grad
    assert x.argsort(descending=True).tolist() == [[0, 2, 1]]
    assert x.msort().tolist() == [[3.0, 1.0, 2.0]]


# ---------------------------------------------------------------------------------------------------- torch oracle
TORCH_CASES = {
    "cumsum": lambda m, x: m.cumsum(x, 1),
    "cumprod": lambda m, x: m.cumprod(x, 1),
    "cumprod_zeros": lambda m, x: m.cumprod(x * (x.abs() > 0.5), 1),
    "cummax": lambda m, x: m.cummax(x, 1)[0],
    "cummin_dim0": lambda m, x: m.cummin(x, 0)[0],
    "sort": lambda m, x: m.sort(x, dim=1, descending=True, stable=True)[0],
    "msort": lambda m, x: m.msort(x),
    "topk": lambda m, x: m.topk(x, 2, 1)[0],
    "topk_smallest": lambda m, x: m.topk(x, 3, 0, largest=False)[0],
    "kthvalue": lambda m, x: m.kthvalue(x, 2, 1)[0],
    "median": lambda m, x: m.median(x),
    "median_dim": lambda m, x: m.median(x, 1, keepdim=True)[0],
    "nanmedian_dim": lambda m, x: m.nanmedian(x, 0)[0],
}


@pytest.mark.parametrize("name", list(TORCH_CASES))
def test_against_torch(name):
    torch = pytest.importorskip("torch")
    xn = np.random.default_rng(5).permutation(np.linspace(-1.5, 1.5, 24)).reshape(4, 6)  # distinct values
    fn = TORCH_CASES[name]
    x = lucid.tensor(xn, dtype=lucid.float64, requires_grad=True)
    t = torch.tensor(xn, requires_grad=True)
    out, tout = fn(lucid, x), fn(torch, t)
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-14)
    seed = np.random.default_rng(6).uniform(-1, 1, tuple(out.shape))
    (gx,) = lucid.autograd.grad(out, [x], lucid.tensor(seed, dtype=lucid.float64), create_graph=True)
    (gt,) = torch.autograd.grad(tout, [t], torch.tensor(seed), create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), gt.detach().numpy(), rtol=1e-13, atol=1e-15)
    if gt.requires_grad and gx.requires_grad:
        (ggx,) = lucid.autograd.grad((gx * gx).sum(), [x])
        (ggt,) = torch.autograd.grad((gt * gt).sum(), [t])
        np.testing.assert_allclose(ggx.numpy(), ggt.numpy(), rtol=1e-12, atol=1e-14)


def test_cummax_ties_and_cumprod_zeros_against_torch():
    torch = pytest.importorskip("torch")
    xn = np.array([[1.0, 0.0, 3.0, 3.0, -2.0, 0.5], [2.0, 2.0, -1.0, 0.0, 0.0, 4.0]])
    for fn in (lambda m, x: m.cumprod(x, 1), lambda m, x: m.cummax(x, 1)[0], lambda m, x: m.cummin(x, 1)[0]):
        x = lucid.tensor(xn, dtype=lucid.float64, requires_grad=True)
        t = torch.tensor(xn, requires_grad=True)
        fn(lucid, x).sum().backward()
        fn(torch, t).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
