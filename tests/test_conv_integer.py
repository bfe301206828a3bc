"""Integer convolutions (PyTorch convolves int64 on the CPU; MLX's convolution refuses integers): exact against
torch, with groups, strides, padding, dilation, bias, and the transposed forms; a module in int64."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

torch = pytest.importorskip("torch")

CASES = [("conv1d", (2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
         ("conv2d", (2, 4, 7, 8), (6, 4, 3, 2), dict(dilation=2, padding=1)),
         ("conv3d", (1, 2, 5, 5, 5), (4, 2, 2, 2, 2), dict(padding=1, stride=(1, 2, 1))),
         ("conv_transpose1d", (2, 4, 9), (4, 3, 3), dict(stride=2, padding=1)),
         ("conv_transpose2d", (2, 4, 5, 6), (4, 6, 3, 2), dict(stride=(2, 1), groups=2, output_padding=(1, 0))),
         ("conv_transpose3d", (1, 2, 3, 3, 3), (2, 3, 2, 2, 2), dict(stride=2))]


@pytest.mark.parametrize("name, xs, ws, kw", CASES, ids=[c[0] for c in CASES])
def test_int64_convolution_is_exact_as_torchs(name, xs, ws, kw):
    g = torch.Generator().manual_seed(0)
    x, w = torch.randint(-50, 50, xs, generator=g), torch.randint(-50, 50, ws, generator=g)
    out_channels = ws[1] * kw.get("groups", 1) if "transpose" in name else ws[0]
    b = torch.randint(-50, 50, (out_channels,), generator=g)
    expected = getattr(torch.nn.functional, name)(x, w, b, **kw)
    got = getattr(F, name)(lucid.tensor(x.numpy()), lucid.tensor(w.numpy()), lucid.tensor(b.numpy()), **kw)
    assert got.dtype == lucid.int64
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_int64_values_beyond_float_precision_stay_exact():
    x = lucid.tensor([[[2 ** 40 + 1, 3, -(2 ** 41) + 7]]])
    w = lucid.tensor([[[2 ** 12 + 1, -1]]])
    expected = torch.nn.functional.conv1d(torch.tensor(x.numpy()), torch.tensor(w.numpy()))
    np.testing.assert_array_equal(F.conv1d(x, w).numpy(), expected.numpy())


def test_an_int64_conv_module():
    m = nn.Conv2d(2, 3, 3, padding=1)
    with lucid.no_grad():
        m.weight.copy_(lucid.randint(-3, 3, (3, 2, 3, 3)).float())
        m.bias.copy_(lucid.randint(-3, 3, (3,)).float())
    x = lucid.randint(-5, 5, (1, 2, 4, 4))
    expected = F.conv2d(x, m.weight.detach().long(), m.bias.detach().long(), padding=1)
    np.testing.assert_array_equal(expected.numpy(), m(x.float()).detach().numpy().astype(np.int64))


def test_empty_batches_and_large_int64_convolutions(monkeypatch):
    import lucid.ops.conv
    monkeypatch.setattr(lucid.ops.conv, "_INT_PRODUCT_CHUNK", 10_000)  # blocks of 2 rows here
    assert F.conv2d(lucid.randint(0, 5, (0, 3, 5, 5)), lucid.randint(0, 5, (4, 3, 3, 3))).shape == (0, 4, 3, 3)
    x, w = lucid.randint(-100, 100, (2, 16, 12, 12)), lucid.randint(-100, 100, (32, 16, 3, 3))
    # more products than one block holds: the rows go in blocks, and the result stays exact
    np.testing.assert_array_equal(F.conv2d(x, w, padding=1).numpy(),
                                  F.conv2d(x.double(), w.double(), padding=1).numpy().astype(np.int64))
