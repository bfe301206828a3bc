"""grid_sample(mode="bicubic"): PyTorch's values and gradients for every padding mode x align_corners (the padding
moves each of the 16 taps, not the sample point), and float64 first and second derivatives by finite differences."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from helpers import check_grads, leaf

RNG = np.random.default_rng(0)
CASES = [(pad, align) for pad in ("zeros", "border", "reflection") for align in (False, True)]


@pytest.mark.parametrize("padding_mode, align_corners", CASES, ids=str)
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 2, 1, 3)], ids=str)
def test_bicubic_matches_pytorch(padding_mode, align_corners, shape):
    torch = pytest.importorskip("torch")
    a = RNG.normal(size=shape)
    # well outside [-1, 1], so the taps of every point reach the padding, and a few points exactly on pixels
    g = RNG.uniform(-1.8, 1.8, size=(shape[0], 3, 4, 2))
    g[:, 0, 0] = (-1.0, 1.0)
    x, grid = lucid.tensor(a, requires_grad=True), lucid.tensor(g, requires_grad=True)
    out = F.grid_sample(x, grid, "bicubic", padding_mode, align_corners)
    tx, tg = torch.tensor(a, requires_grad=True), torch.tensor(g, requires_grad=True)
    ref = torch.nn.functional.grid_sample(tx, tg, "bicubic", padding_mode, align_corners)
    assert tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = RNG.normal(size=ref.shape)
    (out * lucid.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grid.grad.numpy(), tg.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_bicubic_float32_matches_pytorch():
    torch = pytest.importorskip("torch")
    a = RNG.normal(size=(1, 2, 5, 6)).astype(np.float32)
    g = RNG.uniform(-1.3, 1.3, size=(1, 4, 3, 2)).astype(np.float32)
    out = F.grid_sample(lucid.tensor(a), lucid.tensor(g), "bicubic", "reflection", False)
    ref = torch.nn.functional.grid_sample(torch.tensor(a), torch.tensor(g), "bicubic", "reflection", False)
    assert out.dtype == lucid.float32
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("padding_mode, align_corners", CASES, ids=str)
def test_bicubic_gradcheck(padding_mode, align_corners):
    x = leaf(1, 2, 3, 4)
    grid = leaf(1, 2, 3, 2, low=-1.5, high=1.5, seed=1)
    check_grads(lambda a, g: F.grid_sample(a, g, "bicubic", padding_mode, align_corners), x, grid)


def test_bicubic_interpolates_pixels_exactly():
    # at the pixel centres the cubic kernel is 1 at the centre tap and 0 at the others
    x = leaf(1, 1, 3, 4)
    ys, xs = np.meshgrid(np.linspace(-1, 1, 3), np.linspace(-1, 1, 4), indexing="ij")
    grid = lucid.tensor(np.stack([xs, ys], -1)[None], dtype=lucid.float64)
    out = F.grid_sample(x, grid, "bicubic", "zeros", True)
    np.testing.assert_allclose(out.detach().numpy(), x.detach().numpy(), atol=1e-12)


def test_bicubic_needs_4d_input():
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(lucid.zeros(1, 1, 2, 2, 2), lucid.zeros(1, 1, 1, 1, 3), "bicubic", align_corners=False)
