"""lucid.nn.grad: convolution gradients with respect to input and weight, against PyTorch's torch.nn.grad and
against finite differences (they are differentiable again in the weight and grad_output)."""
import numpy as np
import pytest

import lucid
from lucid.nn import grad as G
from helpers import check_grads, leaf

CASES = {1: ((2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
         2: ((2, 4, 7, 8), (6, 4, 3, 2), dict(dilation=2)),
         3: ((1, 2, 5, 5, 5), (3, 2, 2, 2, 2), dict(padding=1, stride=(1, 2, 1)))}


@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_input_and_weight_gradients_match_torch(n):
    torch = pytest.importorskip("torch")
    xs, ws, kw = CASES[n]
    x, w = torch.randn(*xs, dtype=torch.float64), torch.randn(*ws, dtype=torch.float64)
    go = torch.randn_like(getattr(torch.nn.functional, f"conv{n}d")(x, w, **kw))
    L = lambda t: lucid.tensor(t.numpy())  # noqa: E731
    got = getattr(G, f"conv{n}d_input")(tuple(xs), L(w), L(go), **kw)
    np.testing.assert_allclose(got.numpy(), getattr(torch.nn.grad, f"conv{n}d_input")(x.shape, w, go, **kw).numpy(),
                               rtol=1e-12, atol=1e-12)
    got = getattr(G, f"conv{n}d_weight")(L(x), tuple(ws), L(go), **kw)
    np.testing.assert_allclose(got.numpy(), getattr(torch.nn.grad, f"conv{n}d_weight")(x, w.shape, go, **kw).numpy(),
                               rtol=1e-12, atol=1e-12)
    assert not got.requires_grad


def test_conv_gradients_are_differentiable():
    w, go, x = leaf(3, 2, 3, seed=1), leaf(2, 3, 5, seed=2), leaf(2, 2, 7, seed=3)
    check_grads(lambda a, b: G.conv1d_input((2, 2, 7), a, b), w, go)
    check_grads(lambda a, b: G.conv1d_weight(a, (3, 2, 3), b), x, go)
    with pytest.raises(RuntimeError, match="Expected grad_output of shape"):
        G.conv1d_input((2, 2, 8), w, go)
