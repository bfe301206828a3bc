"""Float reductions stay accurate at any size (issue 19): MLX's CPU backend sums float32 in sequence, so
``mx.ones(2**25).sum()`` is 16777216; lucid sums in blocks past lucid._sums.THRESHOLD elements. References are
float64 sums (NumPy) or closed forms; the structure of the blocked sum (any axes, keepdim, tails) is also checked
with a tiny threshold, where float64 values must match NumPy's to rounding and gradcheck runs."""
import math

import mlx.core as mx
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.autograd import gradcheck, gradgradcheck

N = 2 ** 25  # past 2**24: a sequential float32 sum of ones stops growing there
M = 2 ** 21  # MLX's sequential float32 sum of this many uniform values is off by about 1e-5


def _rel(got, want) -> float:
    return abs(float(got) - float(want)) / abs(float(want))


@pytest.fixture(scope="module")
def uniform():
    """2**21 float32 values in [0, 1) and their float64 copy."""
    x = np.random.default_rng(0).random(M, dtype=np.float32)
    return lucid.from_numpy(x), x.astype(np.float64)


# ---------------------------------------------------------------------------------------------------- at scale
def test_sum_and_mean_of_ones_past_2_to_the_24():
    x = lucid.ones(1).expand(N)  # a broadcast: no 128 MiB array
    assert x.sum().item() == N
    assert x.mean().item() == 1.0
    assert x.reshape(2 ** 20, 32).sum(0).tolist() == [2.0 ** 20] * 32  # a leading (strided) dim


def test_uniform_values_within_1e6_of_float64(uniform):
    x, ref = uniform
    assert _rel(x.sum().item(), ref.sum()) <= 1e-6
    assert _rel(x.mean().item(), ref.mean()) <= 1e-6
    assert _rel(x.norm().item(), np.sqrt((ref * ref).sum())) <= 1e-6
    assert _rel(x.norm(1).item(), ref.sum()) <= 1e-6
    assert _rel(x.norm(3).item(), ((ref ** 3).sum()) ** (1 / 3)) <= 1e-6
    assert _rel(lucid.linalg.vector_norm(x).item(), np.sqrt((ref * ref).sum())) <= 1e-6
    assert _rel(F.normalize(x, dim=0)[:1].item(), ref[0] / np.sqrt((ref * ref).sum())) <= 1e-6
    assert _rel(lucid.logsumexp(x, 0).item(), np.log(np.exp(ref).sum())) <= 1e-6
    assert _rel(lucid.softmax(x, 0)[0].item(), np.exp(ref[0]) / np.exp(ref).sum()) <= 1e-6
    assert _rel(lucid.log_softmax(x, 0)[0].item(), ref[0] - np.log(np.exp(ref).sum())) <= 1e-5  # (a difference)
    rows = x.reshape(2 ** 3, 2 ** 18).sum(1).numpy()
    np.testing.assert_allclose(rows, ref.reshape(2 ** 3, 2 ** 18).sum(1), rtol=1e-6)
    cols = x.reshape(2 ** 18, 2 ** 3).sum(0).numpy()
    np.testing.assert_allclose(cols, ref.reshape(2 ** 18, 2 ** 3).sum(0), rtol=1e-6)


def test_mid_sized_sums_within_1e6_of_float64():
    """A few thousand values (a 64x64 loss): MLX's sequential sum of 4096 |normal| float32 values is off by up to
    2e-6, twenty times PyTorch's error (PyTorch's test of smooth_l1 against huber found it); lucid's stays <= 1e-6."""
    rng = np.random.default_rng(0)
    for n in (1025, 2048, 4096):
        for _ in range(10):
            a = np.abs(rng.standard_normal(n)).astype(np.float32)
            assert _rel(lucid.from_numpy(a).sum().item(), a.astype(np.float64).sum()) <= 1e-6, n


def test_var_and_std_near_1000(uniform):
    """Values near 1000 with variance 1: the two-pass variance of accurate sums."""
    _, ref = uniform
    values = (1000.0 + (ref - 0.5) * math.sqrt(12.0)).astype(np.float32)
    x, ref = lucid.from_numpy(values), values.astype(np.float64)
    assert _rel(x.var().item(), ref.var(ddof=1)) <= 1e-6
    assert _rel(x.std(correction=0).item(), ref.std()) <= 1e-6
    v, m = lucid.var_mean(x)
    assert _rel(v.item(), ref.var(ddof=1)) <= 1e-6 and _rel(m.item(), ref.mean()) <= 1e-6


def test_losses_and_their_gradient(uniform):
    x, ref = uniform
    x = x.reshape(2, 4, 512, 512).requires_grad_()
    y = lucid.zeros_like(x)
    assert _rel(F.mse_loss(x, y).item(), (ref ** 2).mean()) <= 1e-6
    assert _rel(F.l1_loss(x, y, reduction="sum").item(), ref.sum()) <= 1e-6
    assert _rel(F.smooth_l1_loss(x, y).item(), (0.5 * ref ** 2).mean()) <= 1e-6
    F.mse_loss(x, y).backward()
    np.testing.assert_allclose(x.grad.reshape(-1)[:8].numpy(), 2 * ref[:8] / M, rtol=1e-6)  # 2 x / n


def test_gradient_of_a_broadcast_sums_accurately():
    """A bias broadcast over 2**25 elements: its gradient is the sum of theirs (the engine's unbroadcast)."""
    b = lucid.zeros(1, requires_grad=True)
    (lucid.ones(1).expand(N) + b).sum().backward()
    assert b.grad.item() == N
    c = lucid.zeros(4, 1, 1, requires_grad=True)
    (lucid.full((1,), 2.0).expand(64, 4, 512, 256) + c).sum().backward()
    assert c.grad.reshape(-1).tolist() == [2.0 ** 23] * 4


def test_nll_loss_over_many_targets():
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((2 ** 18, 3)).astype(np.float32)
    target = rng.integers(0, 3, 2 ** 18)
    logp = logits.astype(np.float64) - np.log(np.exp(logits.astype(np.float64)).sum(1, keepdims=True))
    want = -logp[np.arange(2 ** 18), target]
    x, t = lucid.from_numpy(logits), lucid.from_numpy(target)
    assert _rel(F.cross_entropy(x, t, reduction="sum").item(), want.sum()) <= 1e-6
    assert _rel(F.cross_entropy(x, t).item(), want.mean()) <= 1e-6


def test_layer_norm_of_a_long_row():
    values = (1000.0 + np.random.default_rng(3).standard_normal((2, 2 ** 18))).astype(np.float32)
    y = F.layer_norm(lucid.from_numpy(values), (2 ** 18,)).numpy()
    ref = values.astype(np.float64)
    ref = (ref - ref.mean(1, keepdims=True)) / np.sqrt(ref.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, ref, atol=2e-3)


def test_half_precision_accumulates_in_float32():
    torch = pytest.importorskip("torch")
    a = np.full(2 ** 17, 300.0, dtype=np.float16)
    for dt, tdt in ((lucid.float16, torch.float16), (lucid.bfloat16, torch.bfloat16)):
        x = lucid.from_numpy(a).to(dt)
        assert x.mean().item() == torch.from_numpy(a).to(tdt).mean().item()  # MLX's float16 mean overflows to inf
        assert x.mean().dtype == dt


@pytest.mark.slow
def test_the_issues_cases_at_full_scale():
    """The issue's targets: relative error <= 1e-6 against float64 for 2**30 ones (a broadcast: no 4 GiB array) and
    2**27 uniform values; its examples: a mean over 10**8 ones, the variance of 10**8 values near 1000 whose
    variance is 1, mse_loss over a (32, 4, 512, 512) batch."""
    ones = lucid.ones(1).expand(2 ** 30)
    assert ones.sum().item() == 2 ** 30
    assert lucid.ones(1).expand(10 ** 8).mean().item() == 1.0
    near_1000 = lucid.tensor([999.0, 1001.0]).repeat(5 * 10 ** 7)  # variance n / (n - 1), mean 1000
    assert _rel(near_1000.var().item(), 10 ** 8 / (10 ** 8 - 1)) <= 1e-6 and near_1000.mean().item() == 1000.0
    del near_1000
    x = np.random.default_rng(4).random(2 ** 27, dtype=np.float32)
    assert _rel(lucid.from_numpy(x).sum().item(), x.sum(dtype=np.float64)) <= 1e-6
    del x
    a = np.random.default_rng(1).standard_normal((32, 4, 512, 512), dtype=np.float32)
    assert _rel(F.mse_loss(lucid.from_numpy(a), lucid.zeros(a.shape)).item(), (a.astype(np.float64) ** 2).mean()) <= 1e-6


def test_clip_grad_norm_past_2_to_the_24():
    p = lucid.nn.Parameter(lucid.zeros(N))
    p.grad = lucid.ones(N)
    assert _rel(lucid.nn.utils.clip_grad_norm_([p], max_norm=1.0).item(), math.sqrt(N)) <= 1e-6
    assert _rel(p.grad.norm().item(), 1.0) <= 1e-6


# ---------------------------------------------------------------------------------------------------- structure
@pytest.fixture
def tiny_blocks(monkeypatch):
    """Block every reduction over more than 8 elements in blocks of 4: the blocked path on small inputs."""
    from lucid import _sums
    monkeypatch.setattr(_sums, "THRESHOLD", 8)
    monkeypatch.setattr(_sums, "BLOCK", 4)


SHAPES_DIMS = [((37,), None), ((3, 13, 7), None), ((3, 13, 7), (0, 1)), ((3, 13, 7), 1), ((3, 13, 7), (0, 2)),
               ((3, 13, 7), (-1,)), ((64, 5), 0), ((2, 3, 4, 5), (0, 2, 3)), ((5, 0, 9), 2), ((16, 33), (0, 1)),
               ((1, 40, 1), (0, 1, 2))]


@pytest.mark.parametrize("shape, dim", SHAPES_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_blocked_path_matches_float64_reference(tiny_blocks, shape, dim, keepdim):
    a = np.random.default_rng(5).uniform(-1, 1, shape)
    x = lucid.tensor(a, dtype=lucid.float64)
    axis = None if dim is None else dim
    np.testing.assert_allclose(x.sum(dim, keepdim=keepdim).numpy(), a.sum(axis, keepdims=keepdim), rtol=1e-12,
                               atol=1e-12)
    if a.size:
        np.testing.assert_allclose(x.mean(dim, keepdim=keepdim).numpy(), a.mean(axis, keepdims=keepdim),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(x.var(dim, keepdim=keepdim, correction=0).numpy(),
                                   a.var(axis, keepdims=keepdim), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(x.norm(2, dim, keepdim=keepdim).numpy(),
                                   np.sqrt((a * a).sum(axis, keepdims=keepdim)), rtol=1e-12)
        ls = lucid.logsumexp(x.float(), () if dim is None else dim, keepdim=keepdim).double().numpy()
        np.testing.assert_allclose(ls, np.log(np.exp(a).sum(axis, keepdims=keepdim)), rtol=1e-6)
    # float32 through the blocked path too (MLX's own float32 sums, then the levels)
    got32 = x.float().sum(dim, keepdim=keepdim).double().numpy()
    np.testing.assert_allclose(got32, a.sum(axis, keepdims=keepdim), rtol=1e-5, atol=1e-5)


def test_blocked_path_with_infinities_and_nan(tiny_blocks):
    x = lucid.tensor([0.0] * 20 + [float("-inf")] * 20).reshape(2, 20)
    assert lucid.logsumexp(x, 1).tolist() == [pytest.approx(math.log(20)), float("-inf")]
    assert lucid.tensor([1.0] * 19 + [float("inf")]).sum().item() == float("inf")
    assert math.isnan(lucid.tensor([1.0] * 19 + [float("nan")]).sum().item())


@pytest.mark.parametrize("fn", [
    lambda x: x.sum(), lambda x: x.sum((0, 2), keepdim=True), lambda x: x.mean(1), lambda x: x.var((0, 1)),
    lambda x: x.std(2), lambda x: x.norm(), lambda x: x.norm(3, (0, 1)), lambda x: lucid.logsumexp(x, (1, 2)),
    lambda x: F.layer_norm(x, (5, 3)), lambda x: F.mse_loss(x, lucid.zeros_like(x)),
    lambda x: lucid.softmax(x.reshape(2, 15), 1),
])
def test_blocked_path_gradients(tiny_blocks, fn):
    x = lucid.tensor(np.random.default_rng(6).uniform(0.5, 1.5, (2, 5, 3)), dtype=lucid.float64,
                     requires_grad=True)
    assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))
