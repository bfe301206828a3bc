"""nn layers ported programs use: the padding layers, Fold/Unfold, grid_sample/affine_grid, EmbeddingBag,
weight_norm/spectral_norm and packed sequences. Values against PyTorch when installed (numpy where simple),
gradients by gradcheck + gradgradcheck in float64."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from helpers import check_grads, leaf

RNG = np.random.default_rng(0)

PADS = [("ReflectionPad1d", (2, 1), (2, 3, 5)), ("ReflectionPad2d", 1, (1, 2, 3, 4)),
        ("ReflectionPad3d", (1, 0, 1, 1, 0, 1), (1, 1, 3, 3, 3)), ("ReplicationPad1d", 3, (2, 4)),
        ("ReplicationPad2d", (0, 2, 1, 0), (1, 2, 3, 3)), ("ReplicationPad3d", 1, (1, 1, 2, 2, 2)),
        ("ZeroPad1d", (1, 2), (2, 3)), ("ZeroPad2d", (1, 0, 2, 1), (1, 1, 2, 2)), ("ZeroPad3d", 1, (1, 1, 1, 2, 2)),
        ("ConstantPad1d", 2, (1, 3)), ("ConstantPad2d", (1, 1, 0, 2), (1, 2, 2)),
        ("ConstantPad3d", (0, 1, 1, 0, 1, 0), (1, 1, 2, 2, 2)), ("CircularPad2d", 1, (1, 1, 3, 3))]


@pytest.mark.parametrize("name, padding, shape", PADS, ids=[p[0] for p in PADS])
def test_padding_layers_match_pytorch(name, padding, shape):
    torch = pytest.importorskip("torch")
    args = (padding, 1.5) if name.startswith("Constant") else (padding,)
    a = RNG.normal(size=shape)
    out = getattr(nn, name)(*args)(lucid.tensor(a)).numpy()
    ref = getattr(torch.nn, name)(*args)(torch.tensor(a)).numpy()
    np.testing.assert_allclose(out, ref)


def test_padding_layer_gradients_and_repr():
    check_grads(nn.ReflectionPad2d((1, 2, 0, 1)), leaf(1, 1, 3, 4))
    check_grads(nn.ReplicationPad1d(2), leaf(2, 3))
    assert repr(nn.ConstantPad2d(1, 0.5)) == "ConstantPad2d(padding=(1, 1, 1, 1), value=0.5)"
    assert repr(nn.ZeroPad2d((1, 2, 3, 4))) == "ZeroPad2d(padding=(1, 2, 3, 4))"
    with pytest.raises(ValueError, match="4 entries"):
        nn.ReflectionPad2d((1, 2))


def test_fold_unfold_modules():
    x = leaf(2, 3, 5, 4)
    unfold = nn.Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=(1, 2))
    cols = unfold(x)
    fold = nn.Fold(output_size=(5, 4), kernel_size=(2, 3), padding=1, stride=(1, 2))
    assert fold(cols).shape == x.shape
    check_grads(lambda t: fold(unfold(t)), leaf(1, 1, 5, 4))
    torch = pytest.importorskip("torch")
    ref = torch.nn.Unfold((2, 3), padding=1, stride=(1, 2))(torch.tensor(x.detach().numpy()))
    np.testing.assert_allclose(cols.detach().numpy(), ref.numpy())
    ref_fold = torch.nn.Fold((5, 4), (2, 3), padding=1, stride=(1, 2))(ref)
    np.testing.assert_allclose(fold(cols).detach().numpy(), ref_fold.numpy())
