"""Numerics that PyTorch's nn tests check: log_softmax is shift-invariant (the max is subtracted before exp, as in
PyTorch), hardshrink/softshrink propagate NaN, cosine_similarity follows PyTorch's formula, and a cross-entropy
mean over tens of millions of elements is accurate in float32."""
import math

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F


def _log_softmax_f64(a: np.ndarray, axis: int) -> np.ndarray:
    a = a.astype(np.float64)
    s = a - a.max(axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis, keepdims=True))


@pytest.mark.parametrize("shift", [0.0, 1e4, 1e7, -1e7])
def test_log_softmax_shift_invariant(shift):
    x = lucid.randn(8, 33, generator=lucid.Generator().manual_seed(0)) + shift  # float32: values as stored
    want = _log_softmax_f64(x.numpy(), 1)
    np.testing.assert_allclose(F.log_softmax(x, 1).numpy(), want, atol=2e-6)
    np.testing.assert_allclose(x.log_softmax(0).numpy(), _log_softmax_f64(x.numpy(), 0), atol=2e-6)


def test_log_softmax_shift_gradients():
    x = lucid.randn(3, 5, dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda t: F.log_softmax(t + 1e7, 1), (x,))
    assert lucid.autograd.gradgradcheck(lambda t: F.log_softmax(t, 1), (x,))


@pytest.mark.parametrize("row,want", [
    ([-math.inf] * 3, [math.nan] * 3), ([math.inf, 1.0, 2.0], [math.nan] * 3),
    ([-math.inf, 0.0, 1.0], [-math.inf, -math.log1p(math.e), -math.log1p(math.exp(-1))])])
def test_log_softmax_infinities_as_pytorch(row, want):
    np.testing.assert_allclose(F.log_softmax(lucid.tensor(row), 0).numpy(), want, rtol=1e-6)


def test_log_softmax_matches_torch_shifted():
    torch = pytest.importorskip("torch")
    x = lucid.randn(4, 50) + 1e7
    want = torch.log_softmax(torch.tensor(x.numpy()), 1).numpy()
    np.testing.assert_allclose(F.log_softmax(x, 1).numpy(), want, atol=1e-6)


@pytest.mark.parametrize("fn,want", [
    (F.hardshrink, [math.nan, 1.0, 0.0, -0.7, 0.0, 0.0]), (F.softshrink, [math.nan, 0.5, 0.0, -0.2, 0.0, 0.0])])
def test_shrink_propagates_nan(fn, want):
    x = lucid.tensor([math.nan, 1.0, 0.1, -0.7, 0.5, -0.5], requires_grad=True)
    y = fn(x)
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-6)
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 0.0, 1.0, 0.0, 0.0]  # NaN lies outside the band: its gradient passes


def test_cosine_similarity_matches_torch():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF
    lucid.manual_seed(0)
    v = lucid.arange(84).float().unsqueeze(0)
    a, b = lucid.randn(50, 7), lucid.randn(50, 7)
    for x, y in ((v, v), (a, b), (a, a), (lucid.ones(2, 3), lucid.ones(1, 1))):
        want = TF.cosine_similarity(torch.tensor(x.numpy()), torch.tensor(y.numpy())).numpy()
        got = F.cosine_similarity(x, y).numpy()
        # PyTorch's formula, x/|x| . y/|y|: the two sums may round differently by 2 ulps near 1 (2.4e-7)
        np.testing.assert_allclose(got, want, rtol=0, atol=3e-7)
        assert got.max() <= max(want.max(), 1.0) + 2.4e-7  # above 1 only by rounding, as PyTorch's can be


@pytest.mark.slow
def test_cross_entropy_large_mean_float32():
    """2**24 rows of loss log(1 + e): a float32 running sum stalls past 2**24, a blocked one does not."""
    n = 2 ** 24
    x = lucid.zeros(n, 2)
    x[:, 1] = 1.0
    loss = F.cross_entropy(x, lucid.zeros(n, dtype=lucid.long)).item()
    assert abs(loss - math.log1p(math.e)) < 1e-5
