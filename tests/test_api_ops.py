"""The functions real programs call: all/any, count_nonzero, bincount, histc, diff, cov, corrcoef, cdist, unique,
unique_consecutive, searchsorted, bucketize, meshgrid, repeat_interleave, multinomial. Values against numpy (and
PyTorch when installed), gradients by gradcheck + gradgradcheck in float64, errors as PyTorch's."""
import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf

RNG = np.random.default_rng(0)
INTS = RNG.integers(0, 5, size=(4, 6))


def test_all_any_count_nonzero():
    x = lucid.tensor(INTS)
    assert x.all().item() == INTS.all() and lucid.any(x).item() == INTS.any()
    np.testing.assert_array_equal(x.all(1).numpy(), INTS.all(1))
    np.testing.assert_array_equal(lucid.any(x, 0, keepdim=True).numpy(), INTS.any(0, keepdims=True))
    np.testing.assert_array_equal(lucid.all(x, (0, 1)).numpy(), INTS.all())
    np.testing.assert_array_equal(lucid.count_nonzero(x, 1).numpy(), np.count_nonzero(INTS, 1))
    assert lucid.count_nonzero(x).dtype == lucid.int64 and x.all().dtype == lucid.bool
    f = lucid.tensor([1.0, 2.0], requires_grad=True)
    assert not f.all().requires_grad


def test_bincount():
    v = np.array([0, 1, 1, 3, 7])
    w = np.array([0.5, 1.0, 2.0, 0.25, 1.5])
    np.testing.assert_array_equal(lucid.bincount(lucid.tensor(v)).numpy(), np.bincount(v))
    np.testing.assert_array_equal(lucid.bincount(lucid.tensor(v), minlength=10).numpy(), np.bincount(v, minlength=10))
    out = lucid.bincount(lucid.tensor(v), lucid.tensor(w, dtype=lucid.float32))
    np.testing.assert_allclose(out.numpy(), np.bincount(v, w))
    assert out.dtype == lucid.float32
    assert lucid.bincount(lucid.tensor([], dtype=lucid.int64)).shape == (0,)
    with pytest.raises(RuntimeError, match="1-d non-negative integral"):
        lucid.bincount(lucid.tensor([1, -1]))
    with pytest.raises(RuntimeError, match="1-d non-negative integral"):
        lucid.bincount(lucid.tensor([1.0]))


def test_histc_matches_pytorch_rules():
    x = np.array([1.0, 2.0, 1.0, 3.0, -1.0, 2.5], dtype=np.float32)
    np.testing.assert_array_equal(lucid.histc(lucid.tensor(x), bins=4, min=0, max=3).numpy(), [0, 2, 1, 2])
    np.testing.assert_array_equal(lucid.histc(lucid.tensor(x), bins=4).numpy(),
                                  np.histogram(x, bins=4, range=(x.min(), x.max()))[0])
    np.testing.assert_array_equal(lucid.histc(lucid.tensor([2.0, 2.0]), bins=2).numpy(), [0, 2])  # range 1..3
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        lucid.histc(lucid.tensor(x), min=2, max=1)


def test_diff_values_and_gradients():
    a = RNG.normal(size=(3, 5))
    x = lucid.tensor(a)
    np.testing.assert_allclose(lucid.diff(x).numpy(), np.diff(a))
    np.testing.assert_allclose(lucid.diff(x, n=2, dim=0).numpy(), np.diff(a, n=2, axis=0))
    pre = np.ones((3, 1))
    np.testing.assert_allclose(lucid.diff(x, prepend=lucid.tensor(pre), append=lucid.tensor(pre)).numpy(),
                               np.diff(a, prepend=pre, append=pre))
    np.testing.assert_array_equal(lucid.diff(lucid.tensor([True, False, False])).numpy(), [True, False])
    check_grads(lambda t: lucid.diff(t, n=2), leaf(3, 5))
    check_grads(lambda t, p: lucid.diff(t, dim=0, prepend=p), leaf(3, 4), leaf(1, 4, seed=1))


def test_cov_corrcoef_values_and_gradients():
    a = RNG.normal(size=(3, 7))
    fw = np.array([1, 2, 1, 3, 1, 1, 2])
    aw = RNG.uniform(0.5, 1.5, 7)
    x = lucid.tensor(a)
    np.testing.assert_allclose(lucid.cov(x).numpy(), np.cov(a), rtol=1e-10)
    np.testing.assert_allclose(lucid.cov(x, correction=0).numpy(), np.cov(a, ddof=0), rtol=1e-10)
    np.testing.assert_allclose(lucid.cov(x, fweights=lucid.tensor(fw), aweights=lucid.tensor(aw)).numpy(),
                               np.cov(a, fweights=fw, aweights=aw), rtol=1e-10)
    np.testing.assert_allclose(lucid.cov(lucid.tensor(a[0])).numpy(), np.cov(a[0]), rtol=1e-10)
    np.testing.assert_allclose(lucid.corrcoef(x).numpy(), np.corrcoef(a), rtol=1e-10)
    check_grads(lucid.cov, leaf(3, 6))
    check_grads(lambda t: lucid.cov(t, aweights=lucid.tensor(aw[:6])), leaf(2, 6))
    check_grads(lucid.corrcoef, leaf(3, 6))


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_values_and_gradients(p):
    a, b = RNG.normal(size=(2, 4, 3)), RNG.normal(size=(2, 5, 3))
    out = lucid.cdist(lucid.tensor(a), lucid.tensor(b), p=p).numpy()
    diff = np.abs(a[:, :, None, :] - b[:, None, :, :])
    ref = diff.max(-1) if p == float("inf") else (diff ** p).sum(-1) ** (1 / p)
    np.testing.assert_allclose(out, ref, rtol=1e-10)
    if p >= 1:  # (p < 1 is not differentiable where coordinates coincide; gradcheck would not care, but keep it tidy)
        check_grads(lambda x, y: lucid.cdist(x, y, p=p), leaf(3, 2), leaf(4, 2, seed=1), second=p != float("inf"))


def test_cdist_gradient_is_zero_where_points_coincide():
    x = lucid.tensor([[0.0, 1.0]], dtype=lucid.float64, requires_grad=True)
    lucid.cdist(x, lucid.tensor([[0.0, 1.0]], dtype=lucid.float64)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.0]])


def test_unique_matches_numpy_and_pytorch():
    x = lucid.tensor(INTS)
    vals, inv, counts = lucid.unique(x, return_inverse=True, return_counts=True)
    rv, ri, rc = np.unique(INTS, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(vals.numpy(), rv)
    np.testing.assert_array_equal(inv.numpy(), ri.reshape(INTS.shape))
    np.testing.assert_array_equal(counts.numpy(), rc)
    np.testing.assert_array_equal(x.unique().numpy(), rv)
    rows = np.array([[1, 2], [0, 5], [1, 2], [0, 5], [3, 3]])
    v, i = lucid.unique(lucid.tensor(rows), dim=0, return_inverse=True)
    np.testing.assert_array_equal(v.numpy(), [[0, 5], [1, 2], [3, 3]])
    np.testing.assert_array_equal(i.numpy(), [1, 0, 1, 0, 2])
    torch = pytest.importorskip("torch")
    for dim in (None, 0, 1):
        mine = lucid.unique(x, return_inverse=True, return_counts=True, dim=dim)
        ref = torch.unique(torch.tensor(INTS), return_inverse=True, return_counts=True, dim=dim)
        for m, r in zip(mine, ref):
            np.testing.assert_array_equal(m.numpy(), r.numpy())


def test_unique_consecutive():
    x = lucid.tensor([1, 1, 2, 2, 3, 1, 1, 2])
    v, i, c = lucid.unique_consecutive(x, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(v.numpy(), [1, 2, 3, 1, 2])
    np.testing.assert_array_equal(i.numpy(), [0, 0, 1, 1, 2, 3, 3, 4])
    np.testing.assert_array_equal(c.numpy(), [2, 2, 1, 2, 1])
    m = lucid.tensor([[1, 1, 2], [1, 1, 3]])
    v, c = lucid.unique_consecutive(m, return_counts=True, dim=1)
    np.testing.assert_array_equal(v.numpy(), [[1, 2], [1, 3]])
    np.testing.assert_array_equal(c.numpy(), [2, 1])


def test_searchsorted_and_bucketize_match_numpy():
    seq = np.array([1.0, 3.0, 3.0, 5.0, 7.0])
    vals = np.array([[0.0, 3.0, 4.0], [7.0, 8.0, 5.0]])
    for right in (False, True):
        side = "right" if right else "left"
        out = lucid.searchsorted(lucid.tensor(seq), lucid.tensor(vals), right=right)
        np.testing.assert_array_equal(out.numpy(), np.searchsorted(seq, vals, side=side))
        assert out.dtype == lucid.int64
        out = lucid.searchsorted(lucid.tensor(seq), lucid.tensor(vals), side=side, out_int32=True)
        assert out.dtype == lucid.int32
        np.testing.assert_array_equal(lucid.bucketize(lucid.tensor(vals), lucid.tensor(seq), right=right).numpy(),
                                      np.searchsorted(seq, vals, side=side))
    rows = np.sort(RNG.normal(size=(3, 6)), axis=1)
    v = RNG.normal(size=(3, 4))
    out = lucid.searchsorted(lucid.tensor(rows), lucid.tensor(v)).numpy()
    np.testing.assert_array_equal(out, [np.searchsorted(r, q) for r, q in zip(rows, v)])
    unsorted = np.array([5.0, 1.0, 3.0])
    order = lucid.tensor(np.argsort(unsorted))
    np.testing.assert_array_equal(lucid.searchsorted(lucid.tensor(unsorted), lucid.tensor([2.0, 4.0]),
                                                     sorter=order).numpy(), [1, 2])
    assert lucid.searchsorted(lucid.tensor(seq), 4.0).item() == 3
    assert lucid.searchsorted(lucid.tensor([], dtype=lucid.float32), lucid.tensor([1.0])).tolist() == [0]
    with pytest.raises(RuntimeError, match="opposites"):
        lucid.searchsorted(lucid.tensor(seq), lucid.tensor(vals), right=True, side="left")
    with pytest.raises(RuntimeError, match="sorter index out of range"):
        lucid.searchsorted(lucid.tensor(unsorted), lucid.tensor([2.0]), sorter=lucid.tensor([0, 1, 3]))


def test_meshgrid():
    a, b = lucid.tensor([1.0, 2.0, 3.0]), lucid.tensor([4.0, 5.0])
    for indexing in ("ij", "xy"):
        mine = lucid.meshgrid(a, b, indexing=indexing)
        ref = np.meshgrid([1.0, 2.0, 3.0], [4.0, 5.0], indexing=indexing)
        for m, r in zip(mine, ref):
            np.testing.assert_array_equal(m.numpy(), r)
    with pytest.warns(UserWarning, match="indexing argument"):
        lucid.meshgrid(a, b)
    check_grads(lambda x, y: sum(g.sin().sum() for g in lucid.meshgrid(x, y, indexing="xy")), leaf(3), leaf(2, seed=1))


def test_repeat_interleave():
    a = np.arange(6.0).reshape(2, 3)
    x = lucid.tensor(a)
    np.testing.assert_array_equal(lucid.repeat_interleave(x, 2).numpy(), np.repeat(a, 2))
    np.testing.assert_array_equal(x.repeat_interleave(2, dim=1).numpy(), np.repeat(a, 2, axis=1))
    np.testing.assert_array_equal(lucid.repeat_interleave(x, lucid.tensor([1, 3]), dim=0).numpy(),
                                  np.repeat(a, [1, 3], axis=0))
    np.testing.assert_array_equal(lucid.repeat_interleave(x, lucid.tensor([0, 2, 1]), dim=1, output_size=3).numpy(),
                                  np.repeat(a, [0, 2, 1], axis=1))
    np.testing.assert_array_equal(lucid.repeat_interleave(lucid.tensor([2, 0, 1])).numpy(), [0, 0, 2])
    check_grads(lambda t: lucid.repeat_interleave(t, lucid.tensor([2, 1, 3]), dim=1), leaf(2, 3))
    check_grads(lambda t: lucid.repeat_interleave(t, 2), leaf(2, 3))
    with pytest.raises(RuntimeError, match="negative"):
        lucid.repeat_interleave(x, lucid.tensor([1, -1]), dim=0)


def test_multinomial():
    lucid.manual_seed(0)
    p = lucid.tensor([0.1, 0.0, 0.6, 0.3])
    draws = lucid.multinomial(p, 4000, replacement=True).numpy()
    freq = np.bincount(draws, minlength=4) / 4000
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.6, 0.3], atol=0.03)
    rows = lucid.multinomial(lucid.tensor([[1.0, 1.0, 0.0, 1.0], [0.0, 2.0, 1.0, 1.0]]), 3)
    for r, zero in zip(rows.numpy(), (2, 0)):
        assert sorted(r.tolist()) == sorted(set(r.tolist())) and zero not in r
    g1, g2 = lucid.Generator().manual_seed(3), lucid.Generator().manual_seed(3)
    assert lucid.multinomial(p, 5, True, generator=g1).tolist() == p.multinomial(5, True, generator=g2).tolist()
    with pytest.raises(RuntimeError, match="without replacement"):
        lucid.multinomial(p, 5)
    with pytest.raises(RuntimeError, match="element < 0"):
        lucid.multinomial(lucid.tensor([0.5, -0.1]), 1).tolist()
    with pytest.raises(RuntimeError, match="element < 0"):
        lucid.multinomial(lucid.tensor([0.0, 0.0]), 1).tolist()
    assert lucid.multinomial(lucid.tensor([1.0, 0.0, 0.0]), 2).tolist()[0] == 0  # then a zero-weight one, as PyTorch
