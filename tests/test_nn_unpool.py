"""max_unpool, lp_pool, fractional_max_pool and the *_with_indices forms; multi_margin_loss,
multilabel_margin_loss, triplet_margin_with_distance_loss; gumbel_softmax; the fusion helpers and skip_init.
Values and indices against PyTorch (same random samples), errors as PyTorch's, gradients against finite
differences in float64."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from helpers import check_grads, leaf

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def L(t):
    return lucid.tensor(t.detach().numpy())


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------------------------------- fractional
@pytest.mark.parametrize("out", [(4, 3), (2, 5), (1, 1)])
def test_fractional_max_pool2d_matches_torch_windows_and_indices(out):
    x = torch.randn(2, 3, 9, 8, dtype=torch.float64)
    u = torch.rand(2, 3, 2, dtype=torch.float64)
    tv, ti = TF.fractional_max_pool2d(x, (3, 2), output_size=out, return_indices=True, _random_samples=u)
    lv, li = F.fractional_max_pool2d(L(x), (3, 2), output_size=out, return_indices=True, _random_samples=L(u))
    close(lv, tv, 0)
    assert (li.numpy() == ti.numpy()).all() and li.dtype == lucid.int64


def test_fractional_max_pool3d_float32_and_unbatched_match_torch():
    x = torch.randn(2, 3, 7, 9, 8)
    u = torch.rand(2, 3, 3)
    tv, ti = TF.fractional_max_pool3d(x, (2, 3, 2), output_size=(3, 4, 5), return_indices=True, _random_samples=u)
    lv, li = F.fractional_max_pool3d_with_indices(L(x), (2, 3, 2), output_size=(3, 4, 5), _random_samples=L(u))
    close(lv, tv, 0)
    assert (li.numpy() == ti.numpy()).all()
    tv = TF.fractional_max_pool2d(x[0, :, 0], 2, output_ratio=(0.5, 0.5), _random_samples=u[:1, :, :2])
    lv = F.fractional_max_pool2d(L(x[0, :, 0]), 2, output_ratio=(0.5, 0.5), _random_samples=L(u[:1, :, :2]))
    close(lv, tv, 0)


def test_fractional_max_pool_errors_are_torchs():
    x = lucid.randn(2, 3, 5, 5)
    with pytest.raises(RuntimeError, match="pool height 3 too large relative to input height 5"):
        F.fractional_max_pool2d(x, 3, output_size=4)
    with pytest.raises(RuntimeError, match="no less then input batch size"):
        F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=lucid.rand(1, 3, 2))
    with pytest.raises(RuntimeError, match=r"size\(2\) equals to 2; got 3"):
        F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=lucid.rand(2, 3, 3))
    with pytest.raises(RuntimeError, match="same dtype as input"):
        F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=lucid.rand(2, 3, 2, dtype=lucid.float64))
    with pytest.raises(ValueError, match="either an output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="fractional_max_pool3d_out\\(\\): pool time 2 too large"):
        F.fractional_max_pool3d(x.unsqueeze(0)[:, :, :3], 2, output_size=2)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)
    assert F.fractional_max_pool2d(x[:0], 2, output_size=2).shape == (0, 3, 2, 2)


def test_fractional_max_pool_module_draws_new_windows_and_has_gradients():
    m = nn.FractionalMaxPool2d(2, output_size=3, return_indices=True)
    v, i = m(lucid.randn(2, 3, 7, 7))
    assert v.shape == (2, 3, 3, 3) and i.shape == (2, 3, 3, 3)
    u = lucid.rand(1, 2, 2, dtype=lucid.float64)
    check_grads(lambda a: F.fractional_max_pool2d(a, 2, output_size=3, _random_samples=u), leaf(1, 2, 7, 7))
    u3 = lucid.rand(1, 1, 3, dtype=lucid.float64)
    check_grads(lambda a: F.fractional_max_pool3d(a, 2, output_size=2, _random_samples=u3), leaf(1, 1, 4, 4, 4),
                second=False)


# ---------------------------------------------------------------------------------------------------- unpool
@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_inverts_max_pool_as_torch(n):
    x = torch.randn(2, 3, *[6] * n)
    pool, unpool = getattr(TF, f"max_pool{n}d"), getattr(TF, f"max_unpool{n}d")
    v, i = pool(x, 3, 2, return_indices=True)
    size = [6] * n
    expected = unpool(v, i, 3, 2, output_size=size)
    got = getattr(F, f"max_unpool{n}d")(L(v), L(i), 3, 2, output_size=size)
    close(got, expected, 0)
    module = getattr(nn, f"MaxUnpool{n}d")(3, 2)
    close(module(L(v), L(i), output_size=size), expected, 0)
    lv, li = getattr(F, f"max_pool{n}d_with_indices")(L(x), 3, 2)
    assert (li.numpy() == i.numpy()).all()


def test_max_unpool_errors_and_gradients():
    v, i = F.max_pool2d(lucid.randn(1, 2, 8, 8, dtype=lucid.float64), 2, return_indices=True)
    bad = lucid.tensor(np.where(np.arange(32).reshape(1, 2, 4, 4) == 0, 99, i.numpy()))
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 99 \(output volumes are of size 8x8"):
        F.max_unpool2d(v, bad, 2)
    with pytest.raises(RuntimeError, match="elements in indices should be type int64 but got: Float"):
        F.max_unpool2d(v, i.float(), 2)
    with pytest.raises(RuntimeError, match="Expected shape of indices to be same"):
        F.max_unpool2d(v, i[..., :1], 2)
    with pytest.raises(ValueError, match='invalid output_size "\\[3, 3\\]"'):
        F.max_unpool2d(v, i, 2, output_size=(3, 3))
    with pytest.raises(RuntimeError, match="Input to max_unpooling2d should be a 3d or 4d Tensor"):
        F.max_unpool2d(v[0, 0], i[0, 0], 2)
    check_grads(lambda a: F.max_unpool2d(a, i, 2), v.detach().requires_grad_())


def test_with_indices_spellings_return_both():
    x = lucid.randn(1, 2, 6, 6)
    for n, fn in [(1, F.adaptive_max_pool1d_with_indices), (2, F.adaptive_max_pool2d_with_indices)]:
        v, i = fn(x if n == 2 else x[:, :, 0], 3)
        assert i.dtype == lucid.int64
    v, i = lucid.adaptive_max_pool1d(x[:, :, 0], 3)
    v2, i2 = lucid.max_pool1d_with_indices(x[:, :, 0], 3)
    tv, ti = torch.max_pool1d_with_indices(torch.tensor(x[:, :, 0].numpy()), 3)
    assert (i2.numpy() == ti.numpy()).all()


# ---------------------------------------------------------------------------------------------------- LP pool
@pytest.mark.parametrize("p", [2, 1.5, float("inf")])
def test_lp_pool_matches_torch(p):
    x = torch.rand(2, 3, 8, 8) + 0.1
    close(F.lp_pool2d(L(x), p, 3, 2), TF.lp_pool2d(x, p, 3, 2), 1e-5)
    close(F.lp_pool1d(L(x[0]), p, 3), TF.lp_pool1d(x[0], p, 3), 1e-5)
    close(nn.LPPool3d(p, 2)(L(x[None])), TF.lp_pool3d(x[None], p, 2), 1e-5)
    assert repr(nn.LPPool2d(p, 3)) == repr(torch.nn.LPPool2d(p, 3))


def test_lp_pool_gradients():
    a = (leaf(1, 2, 6, 6, low=0.1, high=1.0))
    check_grads(lambda t: F.lp_pool2d(t, 3, 2), a)


# ---------------------------------------------------------------------------------------------------- losses
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multi_margin_loss_matches_torch(p, reduction):
    x, y, w = torch.randn(5, 4, dtype=torch.float64), torch.tensor([0, 3, 1, 2, 2]), torch.rand(4, dtype=torch.float64)
    expected = TF.multi_margin_loss(x, y, p=p, margin=0.7, weight=w, reduction=reduction)
    close(F.multi_margin_loss(L(x), L(y), p=p, margin=0.7, weight=L(w), reduction=reduction), expected, 1e-12)
    close(nn.MultiMarginLoss(p=p, reduction=reduction)(L(x), L(y)), torch.nn.MultiMarginLoss(p=p, reduction=reduction)(x, y), 1e-12)
    close(F.multi_margin_loss(L(x[0]), L(y[0])), TF.multi_margin_loss(x[0], y[0]), 1e-12)
    for target in (y[:1], y[0]):  # a 1-D input's per-sample losses keep a 1-D target's dim (shape [1] or [])
        got = F.multi_margin_loss(L(x[0]), L(target), reduction=reduction)
        want = TF.multi_margin_loss(x[0], target, reduction=reduction)
        assert tuple(got.shape) == tuple(want.shape)
        close(got, want, 1e-12)


def test_multilabel_margin_loss_matches_torch():
    x = torch.randn(5, 4, dtype=torch.float64)
    t = torch.tensor([[0, 3, -1, 1], [1, -1, 2, 2], [3, 2, 1, 0], [-1, 0, 0, 0], [0, 0, -1, 2]])
    for reduction in ("mean", "sum", "none"):
        close(F.multilabel_margin_loss(L(x), L(t), reduction=reduction),
              TF.multilabel_margin_loss(x, t, reduction=reduction), 1e-12)
    close(nn.MultiLabelMarginLoss()(L(x[0]), L(t[0])), TF.multilabel_margin_loss(x[0], t[0]), 1e-12)
    check_grads(lambda a: F.multilabel_margin_loss(a, L(t)), L(x).requires_grad_())


def test_margin_loss_errors_and_gradients():
    x = leaf(3, 4)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, lucid.tensor([0, 4, 1]))
    with pytest.raises(RuntimeError, match="Expected target size \\[3\\], but got \\[2\\]"):
        F.multi_margin_loss(x, lucid.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="inconsistent weight size, expected 4 but got \\[3\\]"):
        F.multi_margin_loss(x, lucid.tensor([0, 1, 2]), weight=lucid.ones(3))
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(x, lucid.tensor([0, 1, 2]), p=3)
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.multi_margin_loss(x, lucid.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(RuntimeError, match="argument #2 'target' is out of range"):
        F.multilabel_margin_loss(x, lucid.tensor([[0, 1, -1, 5]] * 3))
    with pytest.raises(RuntimeError, match="inconsistent target size: \\[3, 2\\] for input of size: \\[3, 4\\]"):
        F.multilabel_margin_loss(x, lucid.tensor([[0, 1]] * 3))
    with pytest.raises(RuntimeError, match="Expected non-empty vector or matrix"):
        F.multi_margin_loss(x[None], lucid.tensor([1, 1, 1]))
    y = lucid.tensor([0, 3, 1])
    check_grads(lambda a: F.multi_margin_loss(a, y, p=2, weight=lucid.tensor([1.0, 2.0, 0.5, 1.5],
                                                                                dtype=lucid.float64)), x)


def test_triplet_margin_with_distance_loss_matches_torch():
    a, p, n = torch.randn(3, 4, 5, dtype=torch.float64).unbind(0)
    dist_t = lambda u, v: 1 - TF.cosine_similarity(u, v)  # noqa: E731
    dist_l = lambda u, v: 1 - F.cosine_similarity(u, v)  # noqa: E731
    close(F.triplet_margin_with_distance_loss(L(a), L(p), L(n), distance_function=dist_l, swap=True),
          TF.triplet_margin_with_distance_loss(a, p, n, distance_function=dist_t, swap=True), 1e-12)
    close(nn.TripletMarginWithDistanceLoss(reduction="sum")(L(a), L(p), L(n)),
          torch.nn.TripletMarginWithDistanceLoss(reduction="sum")(a, p, n), 1e-12)
    with pytest.raises(ValueError, match="expected margin to be greater than 0, got 0 instead"):
        nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(L(a), L(p), L(n[0]))
    check_grads(lambda u: F.triplet_margin_with_distance_loss(u, L(p), L(n), margin=3.0), L(a).requires_grad_())


# ---------------------------------------------------------------------------------------------------- gumbel
def test_gumbel_softmax_soft_is_a_distribution_and_hard_is_one_hot_with_soft_gradient():
    x = lucid.randn(64, 5, requires_grad=True)
    y = F.gumbel_softmax(x, tau=0.5)
    np.testing.assert_allclose(y.sum(-1).detach().numpy(), 1, rtol=1e-5)
    h = F.gumbel_softmax(x, hard=True, dim=0)
    assert set(np.unique(h.detach().numpy())) <= {0.0, 1.0}
    np.testing.assert_allclose(h.sum(0).detach().numpy(), 1)
    (h * lucid.arange(5.0)).sum().backward()
    assert x.grad is not None and np.abs(x.grad.numpy()).sum() > 0
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(x, eps=1e-3)


def test_gumbel_softmax_samples_the_categorical_of_the_logits():
    lucid.manual_seed(0)
    logits = lucid.log(lucid.tensor([0.1, 0.2, 0.7])).expand(20000, 3)
    counts = F.gumbel_softmax(logits, hard=True).sum(0).numpy() / 20000
    np.testing.assert_allclose(counts, [0.1, 0.2, 0.7], atol=0.02)


# ---------------------------------------------------------------------------------------------------- fusion
def _bn(n, cls):
    bn = cls(n)
    bn.running_mean.copy_(lucid.randn(n))
    bn.running_var.copy_(lucid.rand(n) + 0.5)
    with lucid.no_grad():
        bn.weight.copy_(lucid.randn(n))
        bn.bias.copy_(lucid.randn(n))
    return bn.eval()


def test_fuse_conv_and_linear_with_batchnorm_equal_the_pair():
    from lucid.nn.utils import fuse_conv_bn_eval, fuse_linear_bn_eval, fuse_conv_bn_weights
    bn = _bn(4, nn.BatchNorm2d)
    conv, tconv = nn.Conv2d(3, 4, 3).eval(), nn.ConvTranspose2d(3, 4, 3, bias=False).eval()
    x = lucid.randn(2, 3, 6, 6)
    close(fuse_conv_bn_eval(conv, bn)(x), bn(conv(x)), 1e-5)
    close(fuse_conv_bn_eval(tconv, bn, transpose=True)(x), bn(tconv(x)), 1e-5)
    lin, bn1 = nn.Linear(3, 4).eval(), _bn(4, nn.BatchNorm1d)
    x = lucid.randn(5, 3)
    close(fuse_linear_bn_eval(lin, bn1)(x), bn1(lin(x)), 1e-5)
    w, b = fuse_conv_bn_weights(conv.weight, None, bn.running_mean, bn.running_var, bn.eps, None, None)
    assert isinstance(w, nn.Parameter) and w.requires_grad and b.shape == (4,)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fuse_conv_bn_eval(conv.train(), bn)
    with pytest.raises(AssertionError, match="To fuse, linear.out_features == bn.num_features"):
        fuse_linear_bn_eval(lin, _bn(3, nn.BatchNorm1d))


def test_skip_init_builds_without_initialising():
    from lucid.nn.utils import skip_init
    m = skip_init(nn.Linear, 3, 4, dtype=lucid.float64)
    assert m.weight.shape == (4, 3) and m.weight.dtype == lucid.float64 and m.weight.requires_grad
    assert (m.weight.detach().numpy() == 0).all()  # lucid allocates zeros; nothing drew into them
    assert nn.Linear(3, 4).weight.abs().sum().item() > 0  # the switch is off again
    with pytest.raises(RuntimeError, match="Expected a Module"):
        skip_init(int)
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        skip_init(nn.ReLU)


# ---------------------------------------------------------------------------------------------------- huge outputs
@pytest.mark.parametrize("call", [
    lambda F, x: F.adaptive_avg_pool2d(x, (2 ** 40, 2 ** 40)),
    lambda F, x: F.adaptive_max_pool2d(x, (2 ** 40, 2 ** 40)),
    lambda F, x: F.adaptive_avg_pool1d(x[0], 2 ** 62),
    lambda F, x: F.adaptive_max_pool1d(x[0], 2 ** 62),
    lambda F, x: F.adaptive_avg_pool3d(x[None], (2 ** 30, 2 ** 30, 2 ** 30)),
    lambda F, x: F.interpolate(x, size=(2 ** 40, 2 ** 40)),
    lambda F, x: F.interpolate(x, scale_factor=1e12),
], ids=["avg2d", "max2d", "avg1d", "max1d", "avg3d", "interp_size", "interp_scale"])
def test_outputs_whose_size_overflows_raise_torchs_error_without_allocating(call):
    with pytest.raises(RuntimeError) as expected:
        call(TF, torch.randn(1, 1, 4, 4))
    with pytest.raises(RuntimeError) as got:
        call(F, lucid.randn(1, 1, 4, 4))
    assert str(got.value) == str(expected.value)


def test_an_output_larger_than_memory_is_refused_before_it_is_built():
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator: can't allocate memory"):
        F.interpolate(lucid.randn(1, 1, 4, 4), size=(2 ** 26, 2 ** 26))


# ---------------------------------------------------------------------------------------------------- small forms
@pytest.mark.parametrize("name, args", [("gelu", ()), ("softplus", ()), ("logsigmoid", ()), ("softshrink", (0.3,)),
                                        ("hardshrink", (0.3,))])
def test_activations_take_out_as_torchs(name, args):
    x = torch.randn(6)
    expected = torch.empty(6)
    getattr(TF, name)(x, *args, out=expected)
    out = lucid.empty(6)
    assert getattr(F, name)(L(x), *args, out=out) is out
    close(out, expected, 1e-6)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        getattr(F, name)(lucid.randn(3, requires_grad=True), *args, out=lucid.empty(3))


def test_threshold_out_conv_tbc_and_constant_pad_nd_match_torch():
    x = torch.randn(7, 2, 3, dtype=torch.float64)
    w, b = torch.randn(3, 3, 4, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
    close(lucid.conv_tbc(L(x), L(w), L(b), 1), torch.conv_tbc(x, w, b, 1), 1e-12)
    close(F.conv_tbc(L(x), L(w), L(b)), TF.conv_tbc(x, w, b), 1e-12)
    check_grads(lambda a, c: lucid.conv_tbc(a, c, L(b), 1), L(x).requires_grad_(), L(w).requires_grad_(), second=False)
    with pytest.raises(RuntimeError, match="Input must have 3 dims: time, batch, in_channel"):
        lucid.conv_tbc(L(x[0]), L(w), L(b))
    close(lucid.constant_pad_nd(L(x), (1, -1, 2, 0), 3.0), torch.constant_pad_nd(x, (1, -1, 2, 0), 3.0), 0)
    expected = torch.empty(7, 2, 3, dtype=torch.float64)
    torch.threshold(x, 0.1, 2.0, out=expected)
    out = lucid.empty(7, 2, 3, dtype=lucid.float64)
    lucid.threshold(L(x), 0.1, 2.0, out=out)
    close(out, expected, 0)


# ---------------------------------------------------------------------------------------------------- empty inputs
def test_empty_batches_and_empty_outputs_as_torch():
    for n in (1, 2, 3):
        pool = getattr(nn, f"MaxPool{n}d")(2, stride=2, return_indices=True)
        x = lucid.randn(0, 10, *[10] * n, requires_grad=True)
        values, idx = pool(x)
        out = getattr(nn, f"MaxUnpool{n}d")(2, stride=2)(values, idx)
        out.sum().backward()
        assert out.shape == x.shape and x.grad.shape == x.shape
    x = lucid.ones(0, 16, 50, 32, requires_grad=True)
    nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))(x).sum().backward()
    assert x.grad.shape == x.shape
    assert nn.FractionalMaxPool2d([2, 2], output_size=[0, 1])(lucid.rand(16, 50, 32, 32)).shape == (16, 50, 0, 1)
    assert nn.FractionalMaxPool3d([3, 2, 2], output_size=[0, 1, 1])(lucid.rand(16, 50, 32, 32)).shape == (16, 0, 1, 1)
    for module, shape in [(nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5)), (1, 0, 50, 32)),
                          (nn.FractionalMaxPool3d(3, output_ratio=(0.5, 0.5, 0.5)), (1, 0, 50, 32, 32))]:
        with pytest.raises(RuntimeError) as expected:
            getattr(torch.nn, type(module).__name__)(3, output_ratio=module.output_ratio)(torch.randn(*shape))
        with pytest.raises(RuntimeError) as got:
            module(lucid.randn(*shape))
        assert str(got.value) == str(expected.value)
    samples = lucid.rand(0, 16, 2)
    m = nn.FractionalMaxPool2d([2, 2], output_size=[1, 1], _random_samples=samples)
    assert m(lucid.randn(0, 16, 32, 32)).shape == (0, 16, 1, 1)
    with pytest.raises(RuntimeError, match="Expect _random_samples"):
        m(lucid.randn(1, 16, 32, 32))


@pytest.mark.parametrize("name, kernel, shape, index, fails", [
    ("MaxUnpool2d", (2, 2), (1, 3, 4, 5), -1, True), ("MaxUnpool2d", (2, 2), (1, 3, 4, 5), 80, True),
    ("MaxUnpool2d", (2, 2), (1, 3, 4, 5), 79, False), ("MaxUnpool2d", (2, 3), (2, 1, 4, 2), 48, True),
    ("MaxUnpool3d", (2, 2, 2), (1, 3, 4, 5), 480, True), ("MaxUnpool3d", (2, 2, 2), (2, 3, 4, 1), 95, False)])
def test_unpool_index_bounds_per_plane(name, kernel, shape, index, fails):
    unpool = getattr(nn, name)(kernel)
    indices = lucid.zeros(*shape, dtype=lucid.int64)
    indices.flatten()[0] = index  # (written after creation: the check waits for the values, then raises)
    if fails:
        with pytest.raises(RuntimeError, match=f"Found an invalid max index: {index}"):
            unpool(lucid.rand(*shape), indices).sum().item()
    else:
        unpool(lucid.rand(*shape), indices).sum().item()


def test_margin_losses_of_an_empty_batch_are_zero_with_zero_gradients():
    for loss, target in [(nn.MultiMarginLoss(), lucid.ones(0).long()), (nn.MultiLabelMarginLoss(), lucid.ones(0, 10).long())]:
        x = lucid.randn(0, 10, requires_grad=True)
        out = loss(x, target)
        out.backward()
        assert out.item() == 0 and x.grad.shape == (0, 10)
