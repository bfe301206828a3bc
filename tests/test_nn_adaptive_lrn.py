"""AdaptiveLogSoftmaxWithLoss, CrossMapLRN2d and linear_cross_entropy / LinearCrossEntropyLoss against PyTorch
(same weights), their errors, and gradients against finite differences in float64."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from helpers import check_grads, leaf

torch = pytest.importorskip("torch")


def L(t):
    return lucid.tensor(t.detach().numpy())


def close(a, b, tol=1e-12):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("channels, size", [(3, 3), (7, 3), (8, 5), (2, 5)])
def test_cross_map_lrn2d_matches_torch(channels, size):
    x = torch.randn(2, channels, 4, 5, dtype=torch.float64)
    expected = torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.7, k=2)(x)
    m = nn.CrossMapLRN2d(size, alpha=0.5, beta=0.7, k=2)
    close(m(L(x)), expected)
    assert repr(m) == repr(torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.7, k=2))


def test_cross_map_lrn2d_gradients_and_errors():
    # (PyTorch's hand-written backward fails its own gradcheck; lucid's is the derivative of the forward)
    check_grads(nn.CrossMapLRN2d(3, 0.5, 0.7, 2), leaf(2, 3, 3, 3))
    check_grads(nn.CrossMapLRN2d(5, 0.5, 0.7, 2), leaf(1, 6, 2, 2))
    with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D instead."):
        nn.CrossMapLRN2d(3)(lucid.randn(3, 4, 4))


def _pair():
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=True).double()
    lm = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=True).double()
    lm.load_state_dict({k: L(v) for k, v in tm.state_dict().items()})
    return tm, lm


def test_adaptive_log_softmax_matches_torch():
    tm, lm = _pair()
    assert repr(tm) == repr(lm)
    x, t = torch.randn(9, 16, dtype=torch.float64), torch.tensor([0, 3, 4, 9, 10, 14, 15, 19, 2])
    expected, got = tm(x, t), lm(L(x), L(t))
    close(got.output, expected.output)
    close(got.loss, expected.loss)
    close(lm.log_prob(L(x)), tm.log_prob(x))
    assert (lm.predict(L(x)).numpy() == tm.predict(x).numpy()).all()
    one = lm(L(x[0]), L(t[0]))
    assert one.output.shape == () and abs(one.output.item() - tm(x[0], t[0]).output.item()) < 1e-12
    np.testing.assert_allclose(np.exp(lm.log_prob(L(x)).detach().numpy()).sum(1), 1, rtol=1e-12)


def test_adaptive_log_softmax_gradients_and_errors():
    _, lm = _pair()
    t = lucid.tensor([0, 5, 12, 19])
    check_grads(lambda a: lm(a, t).loss, leaf(4, 16), second=False)
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 19\], but values in range \[0, 25\]"):
        lm(lucid.randn(2, 16, dtype=lucid.float64), lucid.tensor([0, 25]))
    with pytest.raises(RuntimeError, match="Input and target should have the same size in the batch dimension."):
        lm(lucid.randn(3, 16, dtype=lucid.float64), lucid.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        lm(lucid.randn(3, 16, dtype=lucid.float64), lucid.tensor([[0, 1]]))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive integers"):
        nn.AdaptiveLogSoftmaxWithLoss(16, 20, [10, 4])


def test_linear_cross_entropy_matches_torch():
    x = torch.randn(5, 4, dtype=torch.float64)
    w, b = torch.randn(3, 2, 4, dtype=torch.float64), torch.randn(3, 2, dtype=torch.float64)
    t = torch.randint(0, 3, (5, 2))
    t[0, 0] = -100
    TF = torch.nn.functional
    close(F.linear_cross_entropy(L(x), L(w), L(t), linear_bias=L(b)), TF.linear_cross_entropy(x, w, t, linear_bias=b))
    w2, p = torch.randn(3, 4, dtype=torch.float64), torch.softmax(torch.randn(5, 3, dtype=torch.float64), 1)
    close(F.linear_cross_entropy(L(x), L(w2), L(p), label_smoothing=0.1, reduction="none"),
          TF.linear_cross_entropy(x, w2, p, label_smoothing=0.1, reduction="none"))
    tm, lm = torch.nn.LinearCrossEntropyLoss(4, 3, bias=True), nn.LinearCrossEntropyLoss(4, 3, bias=True)
    lm.load_state_dict({k: L(v) for k, v in tm.state_dict().items()})
    assert repr(tm) == repr(lm)
    close(lm(L(x.float()), L(t[:, 1])), tm(x.float(), t[:, 1]), 1e-6)
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified when target contains probabilities"):
        F.linear_cross_entropy(L(x), L(w2), L(p), ignore_index=1)
    with pytest.raises(RuntimeError, match="expected equal input and linear_weight last dimensions"):
        F.linear_cross_entropy(L(x), L(w2[:, :3]), L(t[:, 0]))
    check_grads(lambda a, c: F.linear_cross_entropy(a, c, L(t[:, 1])), leaf(5, 4), leaf(3, 4, seed=1))
