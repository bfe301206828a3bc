"""interpolate(..., antialias=True) for bilinear and bicubic: PyTorch's values and gradients (its separable kernel:
the filter stretched by the downscale factor, weights normalised per output, A = -0.5 for bicubic), the known
halving filter without PyTorch, float64 gradcheck + gradgradcheck, and the errors."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from helpers import check_grads, leaf

RNG = np.random.default_rng(0)
RESIZES = [
    ("down_size", (2, 3, 13, 17), dict(size=(5, 4))),
    ("down_up_mixed", (1, 2, 6, 7), dict(size=(3, 9))),
    ("scale_factor", (1, 1, 9, 10), dict(scale_factor=0.37)),
    ("scale_tuple", (1, 1, 9, 10), dict(scale_factor=(0.5, 1.7))),
    ("recompute_scale", (1, 1, 9, 10), dict(scale_factor=0.3, recompute_scale_factor=True)),
    ("to_one_pixel", (1, 1, 12, 11), dict(size=(1, 1))),
    ("one_dim_same", (1, 1, 4, 5), dict(size=(4, 2))),
]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("name, shape, kw", RESIZES, ids=[r[0] for r in RESIZES])
def test_antialias_matches_pytorch(mode, align_corners, name, shape, kw):
    torch = pytest.importorskip("torch")
    a = RNG.normal(size=shape)
    x = lucid.tensor(a, requires_grad=True)
    out = F.interpolate(x, mode=mode, align_corners=align_corners, antialias=True, **kw)
    tx = torch.tensor(a, requires_grad=True)
    ref = torch.nn.functional.interpolate(tx, mode=mode, align_corners=align_corners, antialias=True, **kw)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = RNG.normal(size=ref.shape)
    (out * lucid.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_float32_matches_pytorch(mode):
    torch = pytest.importorskip("torch")
    a = RNG.normal(size=(1, 3, 32, 27)).astype(np.float32)
    out = F.interpolate(lucid.tensor(a), size=(7, 10), mode=mode, antialias=True)
    ref = torch.nn.functional.interpolate(torch.tensor(a), size=(7, 10), mode=mode, antialias=True)
    assert out.dtype == lucid.float32
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


def test_antialias_bilinear_halving_is_the_1331_filter():
    # scale 2: the triangle stretched to 4 pixels puts weights 1, 3, 3, 1 (/ 8) on pixels 2i-1 .. 2i+2
    a = RNG.normal(size=(1, 1, 3, 12))
    out = F.interpolate(lucid.tensor(a), size=(3, 6), mode="bilinear", antialias=True).numpy()
    row = a[0, 0]
    interior = (row[:, 1:9:2] + 3 * row[:, 2:10:2] + 3 * row[:, 3:11:2] + row[:, 4:12:2]) / 8
    np.testing.assert_allclose(out[0, 0, :, 1:5], interior, rtol=1e-12)
    # at the edge the missing tap's weight is dropped and the rest renormalised
    np.testing.assert_allclose(out[0, 0, :, 0], (3 * row[:, 0] + 3 * row[:, 1] + row[:, 2]) / 7, rtol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_gradcheck(mode):
    check_grads(lambda t: F.interpolate(t, size=(2, 5), mode=mode, antialias=True), leaf(1, 2, 5, 3))


def test_antialias_errors():
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(lucid.zeros(1, 1, 4), size=2, mode="linear", antialias=True)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(lucid.zeros(1, 1, 4, 4), size=2, mode="nearest", antialias=True)
