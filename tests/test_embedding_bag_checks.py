"""embedding_bag refuses out-of-range indices with PyTorch's error (at once, or at the next evaluation when the
indices are lazy), differentiates through per_sample_weights, and Tensor.narrow takes a 0-d tensor start."""
import re

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.autograd import gradcheck

MESSAGE = "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {}"


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("indices,offsets,bad", [
    ([0, 7, 1], [0, 1], 7), ([-1, 1], [0], -1), ([[0, 5]], None, 5)])
def test_out_of_range_raises(mode, indices, offsets, bad):
    w = lucid.randn(5, 3)
    offsets = None if offsets is None else lucid.tensor(offsets)
    with pytest.raises(RuntimeError, match=re.escape(MESSAGE.format(bad))):
        F.embedding_bag(lucid.tensor(indices), w, offsets, mode=mode).tolist()


def test_out_of_range_lazy_indices_raise_at_evaluation():
    w = lucid.randn(5, 3)
    out = F.embedding_bag(lucid.randint(6, 8, (4,)), w, lucid.tensor([0, 2]))  # values not known yet
    with pytest.raises(RuntimeError, match="embedding_bag: Expected idx >= 0"):
        out.tolist()


def test_module_out_of_range_raises():
    bag = lucid.nn.EmbeddingBag(4, 2, mode="sum")
    with pytest.raises(RuntimeError, match="found idx to be 4"):
        bag(lucid.tensor([[1, 4]])).tolist()


@pytest.mark.parametrize("two_d", [False, True])
def test_per_sample_weights_gradient(two_d):
    w = lucid.randn(5, 3, dtype=lucid.float64, requires_grad=True)
    if two_d:
        idx, off = lucid.tensor([[0, 2], [1, 4]]), None
        psw = lucid.rand(2, 2, dtype=lucid.float64, requires_grad=True)
    else:
        idx, off = lucid.tensor([0, 2, 2, 1, 4]), lucid.tensor([0, 3])
        psw = lucid.rand(5, dtype=lucid.float64, requires_grad=True)
    assert gradcheck(lambda p, w: F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=p), (psw, w))
    bag = lucid.nn.EmbeddingBag.from_pretrained(w.detach(), freeze=True, mode="sum")
    bag(idx, off, per_sample_weights=psw).sum().backward()
    # d/dp_i of sum(p_i * w[idx_i]) is the row sum of w[idx_i]
    expected = w.detach().sum(1)[idx.reshape(-1)].reshape(psw.shape)
    assert lucid.allclose(psw.grad, expected)


def test_narrow_tensor_start():
    x = lucid.arange(10)
    assert x.narrow(0, lucid.tensor(2), 3).tolist() == [2, 3, 4]
    assert lucid.narrow(x, 0, lucid.tensor(-3), 2).tolist() == [7, 8]
    for bad in (lucid.tensor([2]), lucid.tensor(2.0)):
        with pytest.raises(RuntimeError, match="start must be an 0-dim integral Tensor."):
            x.narrow(0, bad, 3)


def test_top_level_embedding_bag_closed_form():
    """lucid.embedding_bag(weight, indices, offsets, ..., mode) -> (output, offset2bag, bag_size, max_indices)."""
    w = lucid.tensor([[0.0, 5.0], [1.0, 1.0], [2.0, -1.0], [3.0, 0.5]], dtype=lucid.float64)
    idx, off = lucid.tensor([0, 2, 1, 3, 2]), lucid.tensor([0, 2, 2])
    out, o2b, size, mx_idx = lucid.embedding_bag(w, idx, off, False, 2)
    assert out.tolist() == [[2.0, 5.0], [0.0, 0.0], [3.0, 1.0]]
    assert o2b.tolist() == [0, 0, 2, 2, 2] and size.tolist() == [2, 0, 3]
    assert mx_idx.tolist() == [[2, 0], [0, 0], [3, 1]] and mx_idx.dtype == lucid.int64
    out, o2b, size, mx_idx = lucid.embedding_bag(w, idx, off, False, 1, padding_idx=2)
    assert out.tolist() == [[0.0, 5.0], [0.0, 0.0], [2.0, 0.75]] and size.tolist() == [1, 0, 2]
    assert mx_idx.tolist() == size.tolist()
    out, o2b, size, mx_idx = lucid.embedding_bag(w.float(), idx, off)  # sum: PyTorch's fast path has no offset2bag
    assert tuple(o2b.shape) == (0,) and size.tolist() == [0, 0, 0] and mx_idx.tolist() == [0, 0, 0]


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("dtype,padding_idx,include_last", [
    ("float32", None, False), ("float64", None, False), ("float32", 2, False), ("float32", -1, False),
    ("float32", None, True)])
def test_top_level_embedding_bag_matches_torch(mode, dtype, padding_idx, include_last):
    torch = pytest.importorskip("torch")
    w = torch.randn(5, 3, dtype=getattr(torch, dtype))
    idx = torch.tensor([0, 2, 1, 4, 2])
    off = torch.tensor([0, 2, 2, 5] if include_last else [0, 2, 2])
    want = torch.embedding_bag(w, idx, off, False, mode, False, None, include_last, padding_idx)
    got = lucid.embedding_bag(*(lucid.tensor(t.numpy()) for t in (w, idx, off)), False, mode, False, None,
                              include_last, padding_idx)
    for a, b in zip(want, got, strict=True):
        assert tuple(b.shape) == tuple(a.shape) and str(b.dtype).split(".")[-1] == str(a.dtype).split(".")[-1]
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6)


def test_top_level_embedding_bag_gradient():
    w = lucid.randn(5, 3, dtype=lucid.float64, requires_grad=True)
    idx, off = lucid.tensor([0, 2, 1, 4, 2]), lucid.tensor([0, 2])
    for mode in (0, 1, 2):
        assert gradcheck(lambda w: lucid.embedding_bag(w, idx, off, False, mode)[0], (w,))
