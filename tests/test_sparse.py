"""lucid.sparse (sparse COO tensors): values and errors against PyTorch, gradients against float64 finite
differences, and a GCN over a sparse normalized adjacency that trains like the dense one (and PyTorch's sparse one)."""
import numpy as np
import pytest

import lucid
import lucid.compat.torch as ltorch
from lucid.autograd import gradcheck

IDX = [[1, 0, 1, 2, 0], [0, 1, 0, 2, 2]]  # (1, 0) repeated: an uncoalesced tensor
VAL = [1.0, 2.0, 3.0, -1.5, 0.5]


def _dense_ref(idx, val, size):
    out = np.zeros(size)
    np.add.at(out, tuple(np.asarray(idx)), np.asarray(val))
    return out


def _sp(dtype=lucid.float32, **kw):
    return lucid.sparse_coo_tensor(lucid.tensor(IDX), lucid.tensor(VAL, dtype=dtype), (3, 3), **kw)


def test_construction_and_description():
    s = _sp()
    assert s.layout is lucid.sparse_coo and s.is_sparse and not lucid.ones(2).is_sparse
    assert lucid.ones(2).layout is lucid.strided and repr(lucid.sparse_coo) == "torch.sparse_coo"
    assert (s.sparse_dim(), s.dense_dim(), s._nnz(), tuple(s.shape), s.is_coalesced()) == (2, 0, 5, (3, 3), False)
    np.testing.assert_allclose(s.to_dense().numpy(), _dense_ref(IDX, VAL, (3, 3)))
    inferred = lucid.sparse_coo_tensor(IDX, VAL)  # size: the largest index + 1 per dim
    assert tuple(inferred.shape) == (3, 3)


def test_conversions_and_pickle():
    import pickle
    s = _sp()
    assert s.double().dtype == lucid.float64 and s.to(lucid.float64).dtype == lucid.float64
    back = pickle.loads(pickle.dumps(s.coalesce()))
    assert back.is_coalesced() and back.to_dense().tolist() == s.to_dense().tolist()
    assert pickle.loads(pickle.dumps(lucid.sparse_coo)) is lucid.sparse_coo


def test_coalesce_sums_duplicates_and_sorts():
    c = _sp().coalesce()
    assert c.is_coalesced() and c._nnz() == 4
    assert c.indices().tolist() == [[0, 0, 1, 2], [1, 2, 0, 2]]
    assert c.values().tolist() == [2.0, 0.5, 4.0, -1.5]


def test_indices_values_need_coalesced():
    s = _sp()
    with pytest.raises(RuntimeError, match=r"Cannot get indices on an uncoalesced tensor, please call \.coalesce\(\) first"):
        s.indices()
    with pytest.raises(RuntimeError, match=r"Cannot get values on an uncoalesced tensor, please call \.coalesce\(\) first"):
        s.values()
    assert s._values().shape == (5,)


def test_bad_arguments_raise_pytorchs_errors():
    with pytest.raises(RuntimeError, match="indices and values must have same nnz, but got nnz from indices: 2, "
                                           "nnz from values: 1"):
        lucid.sparse_coo_tensor([[1, 1]], [1.0], (2,))
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0, size is 2 but found index 5"):
        lucid.sparse_coo_tensor([[5]], [1.0], (2,), check_invariants=True)
    with pytest.raises(RuntimeError, match="found negative index -1 for dim 0"):
        lucid.sparse_coo_tensor([[-1]], [1.0], (2,), check_invariants=True)
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        _sp() + lucid.ones(3, 3)
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        lucid.add(_sp(), lucid.ones(3, 3))
    with pytest.raises(TypeError, match="mul: lucid.sparse supports"):
        lucid.ones(3, 3) * _sp()
    with pytest.raises(RuntimeError, match="addmm: Argument #3 \\(dense\\): Expected dim 0 size 3, got 2"):
        lucid.sparse.mm(_sp(), lucid.ones(2, 2))
    with pytest.raises(RuntimeError, match="addmm: matrices expected, got 3D tensor"):
        lucid.sparse.mm(_sp(), lucid.ones(3, 2, 2))


def test_out_of_range_index_never_reaches_mlx():
    bad = lucid.sparse_coo_tensor([[0, 7], [0, 1]], [1.0, 2.0], (2, 2))  # unchecked at construction, as PyTorch
    with pytest.raises(RuntimeError, match="for dim 0, size is 2 but found index 7"):
        (bad @ lucid.ones(2, 2)).tolist()
    with pytest.raises(RuntimeError, match="for dim 0, size is 2 but found index 7"):
        bad.to_dense().tolist()
    lazy = lucid.sparse_coo_tensor(lucid.tensor([[0, 1], [0, 1]]) * 3, lucid.tensor([1.0, 2.0]), (2, 4))
    for _ in range(2):  # computed indices: checked when evaluated, each time they are used
        with pytest.raises(RuntimeError, match="for dim 0, size is 2 but found index 3"):
            lazy.to_dense().tolist()


def test_against_torch():
    torch = pytest.importorskip("torch")
    ts = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), (3, 3))
    s = _sp()
    d = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for got, want in [(s @ lucid.tensor(d), ts @ torch.tensor(d)),
                      (lucid.mm(s, lucid.tensor(d)), torch.mm(ts, torch.tensor(d))),
                      (ltorch.sparse.mm(s, lucid.tensor(d)), torch.sparse.mm(ts, torch.tensor(d))),
                      (ltorch.spmm(s, lucid.tensor(d)), torch.spmm(ts, torch.tensor(d))),
                      (lucid.matmul(s, lucid.tensor(d[:, 0])), torch.matmul(ts, torch.tensor(d[:, 0]))),
                      (lucid.sparse.sum(s), torch.sparse.sum(ts)),
                      (lucid.sparse.sum(s, (0, 1)), torch.sparse.sum(ts, (0, 1))),
                      (lucid.sparse.sum(s, 1).to_dense(), torch.sparse.sum(ts, 1).to_dense()),
                      (lucid.sparse.sum(s, -2).coalesce().values(), torch.sparse.sum(ts, -2).coalesce().values()),
                      (lucid.ones(3, 3) + s, torch.ones(3, 3) + ts),
                      (lucid.ones(3, 3) - s, torch.ones(3, 3) - ts),
                      (lucid.add(lucid.ones(3, 3), s), torch.add(torch.ones(3, 3), ts)),
                      ((s + s).to_dense(), (ts + ts).to_dense()),
                      (lucid.tensor(d.T) @ s, torch.tensor(d.T) @ ts),
                      (lucid.mm(lucid.tensor(d.T), s), torch.mm(torch.tensor(d.T), ts)),
                      (lucid.matmul(lucid.tensor(d[:, 0]), s), torch.matmul(torch.tensor(d[:, 0]), ts)),
                      (s.t().to_dense(), ts.t().to_dense()),
                      (lucid.sparse.mm(s, s).to_dense(), torch.sparse.mm(ts, ts).to_dense())]:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    x = np.array([[0.0, 2, 0], [4, 0, 0]], np.float32)
    for sd in ((), (1,)):
        got, want = lucid.tensor(x).to_sparse(*sd), torch.tensor(x).to_sparse(*sd)
        assert got.indices().tolist() == want.indices().tolist()
        np.testing.assert_allclose(got.values().numpy(), want.values().numpy())
    scalar = lucid.tensor(3.0).to_sparse()
    assert (scalar._nnz(), tuple(scalar.shape), scalar.to_dense().item()) == (1, (), 3.0)
    with pytest.raises(RuntimeError, match=r"dense_to_sparse: sparse_dim argument must be in \[0,2\] range, but 3"):
        lucid.ones(2, 2).to_sparse(3)


def test_gradcheck_spmm_wrt_dense_and_values():
    rng = np.random.default_rng(1)
    idx = lucid.tensor(IDX)
    vals = lucid.tensor(rng.standard_normal(5), dtype=lucid.float64, requires_grad=True)
    dense = lucid.tensor(rng.standard_normal((3, 2)), dtype=lucid.float64, requires_grad=True)
    assert gradcheck(lambda v, d: lucid.sparse.mm(lucid.sparse_coo_tensor(idx, v, (3, 3)), d), (vals, dense))
    assert gradcheck(lambda v, d: d.t() @ lucid.sparse_coo_tensor(idx, v, (3, 3)), (vals, dense))
    assert gradcheck(lambda v: lucid.sparse_coo_tensor(idx, v, (3, 3)).coalesce().to_dense(), (vals,))
    assert gradcheck(lambda v, d: d + lucid.sparse_coo_tensor(idx, v, (3, 3)), (vals, lucid.tensor(
        rng.standard_normal((3, 3)), dtype=lucid.float64, requires_grad=True)))
    assert gradcheck(lambda d: d.to_sparse().values(), (dense,))


def _graph(n=12, seed=0):
    """A random undirected graph's normalized adjacency D^-1/2 (A + I) D^-1/2, as COO indices and values."""
    rng = np.random.default_rng(seed)
    a = (rng.random((n, n)) < 0.25).astype(np.float32)
    a = np.maximum(a, a.T) + np.eye(n, dtype=np.float32)
    a = np.minimum(a, 1)
    dinv = 1 / np.sqrt(a.sum(1))
    norm = a * dinv[:, None] * dinv[None, :]
    rows, cols = np.nonzero(norm)
    return np.stack([rows, cols]).astype(np.int64), norm[rows, cols], norm


def _train_gcn(mod, adj, x, y, w1, w2, steps=40):
    """A 2-layer GCN (adj @ relu(adj @ x W1) W2, cross-entropy) trained by SGD; the losses."""
    w1 = mod.tensor(w1, requires_grad=True)
    w2 = mod.tensor(w2, requires_grad=True)
    opt = mod.optim.SGD([w1, w2], lr=0.5)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        h = mod.relu(mod.sparse.mm(adj, x @ w1) if adj.is_sparse else adj @ (x @ w1))
        out = mod.sparse.mm(adj, h @ w2) if adj.is_sparse else adj @ (h @ w2)
        loss = mod.nn.functional.cross_entropy(out, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_gcn_on_sparse_adjacency_trains_like_dense():
    idx, val, norm = _graph()
    rng = np.random.default_rng(2)
    x = rng.standard_normal((12, 5)).astype(np.float32)
    y = (norm @ x @ rng.standard_normal((5, 3))).argmax(1)  # labels a GCN can learn
    w1 = (rng.standard_normal((5, 8)) * 0.5).astype(np.float32)
    w2 = (rng.standard_normal((8, 3)) * 0.5).astype(np.float32)
    sparse = lucid.sparse_coo_tensor(lucid.tensor(idx), lucid.tensor(val), (12, 12))
    args = (lucid.tensor(x), lucid.tensor(y), w1, w2)
    got = _train_gcn(ltorch, sparse, *args)
    dense = _train_gcn(ltorch, lucid.tensor(norm), *args)
    np.testing.assert_allclose(got, dense, rtol=1e-5)
    assert got[-1] < got[0] * 0.85  # it learns
    try:
        import torch
    except ImportError:
        return
    tsparse = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(val), (12, 12))
    want = _train_gcn(torch, tsparse, torch.tensor(x), torch.tensor(y), w1, w2)
    np.testing.assert_allclose(got, want, rtol=1e-4)
