"""Activation modules, dropout, Embedding, Upsample, PixelShuffle: values against numpy formulas, options,
train/eval behaviour, PReLU's parameter and gradients; repr strings as PyTorch prints them; and PyTorch as an
optional oracle: the same state_dict gives the same outputs, input gradients, parameter gradients and running
statistics, and the same repr and state_dict keys."""
import math
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from helpers import check_grads, leaf


def npa(t):
    return t.detach().numpy()


def tensor(a):
    return lucid.tensor(np.asarray(a, dtype=np.float32))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


_erf = np.vectorize(math.erf)
_SELU_A, _SELU_S = 1.6732632423543772, 1.0507009873554805

# ---------------------------------------------------------------------------------------------------- activations
ACTIVATIONS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (nn.CELU(0.5), lambda x: np.maximum(x, 0) + np.minimum(0, 0.5 * np.expm1(x / 0.5))),
    (nn.SELU(), lambda x: _SELU_S * np.where(x > 0, x, _SELU_A * np.expm1(x))),
    (nn.GELU(), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x * sigmoid(x)),
    (nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), sigmoid),
    (nn.Softplus(2.0, 1.0), lambda x: np.where(2 * x > 1, x, np.log1p(np.exp(2 * x)) / 2)),
    (nn.Hardtanh(-2.0, 1.0), lambda x: np.clip(x, -2, 1)),
    (nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.Hardsigmoid(), lambda x: np.clip(x + 3, 0, 6) / 6),
    (nn.LogSigmoid(), lambda x: -np.log1p(np.exp(-x))),
    (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    (nn.Threshold(0.1, 20.0), lambda x: np.where(x > 0.1, x, 20.0)),
    (nn.Hardshrink(0.5), lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    (nn.Softshrink(0.5), lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0))),
    (nn.GLU(), lambda x: x[..., :3] * sigmoid(x[..., 3:])),
    (nn.GLU(1), lambda x: x[:, :2] * sigmoid(x[:, 2:4])),
    (nn.Softmax(1), lambda x: softmax(x, 1)),
    (nn.LogSoftmax(-1), lambda x: np.log(softmax(x, -1))),
    (nn.Softmin(0), lambda x: softmax(-x, 0)),
    (nn.Softmax2d(), lambda x: softmax(x, -3)),
    (nn.PReLU(), lambda x: np.where(x > 0, x, 0.25 * x)),
    (nn.RReLU(0.1, 0.3).eval(), lambda x: np.where(x >= 0, x, 0.2 * x)),
]


@pytest.mark.parametrize("module, ref", ACTIVATIONS, ids=[repr(m) for m, _ in ACTIVATIONS])
def test_activation_values(module, ref):
    x = (np.random.randn(5, 4, 6) * 3).astype(np.float32)
    np.testing.assert_allclose(npa(module(tensor(x))), ref(x.astype(np.float64)), rtol=1e-5, atol=1e-5)


def test_inplace_activations_write_into_their_input():
    for module in (nn.ReLU(True), nn.LeakyReLU(0.1, True), nn.ELU(inplace=True), nn.Hardtanh(inplace=True),
                   nn.SiLU(True), nn.ReLU6(True)):
        x = lucid.randn(3, 4)
        ref = npa(type(module)()(x) if not isinstance(module, nn.LeakyReLU) else nn.LeakyReLU(0.1)(x))
        out = module(x)
        assert out is x
        np.testing.assert_allclose(npa(x), ref, rtol=1e-6)


def test_prelu_parameter_init_and_per_channel_slopes():
    m = nn.PReLU(3, init=0.1)
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == [("weight", (3,))]
    np.testing.assert_allclose(npa(m.weight), 0.1)
    with lucid.no_grad():
        m.weight.copy_(tensor([0.1, 0.5, -1.0]))
    x = np.random.randn(2, 3, 4).astype(np.float32)
    np.testing.assert_allclose(npa(m(tensor(x))), np.where(x > 0, x, np.array([0.1, 0.5, -1.0])[:, None] * x),
                               rtol=1e-6)
    assert isinstance(nn.ReLU6(), nn.Hardtanh) and nn.ReLU6().max_val == 6.0


def test_prelu_gradients_float64():
    m = nn.PReLU(2).double()
    with lucid.no_grad():
        m.weight.copy_(lucid.tensor([0.3, -0.7]))
    x = leaf(3, 2, 2)
    check_grads(lambda x, w: F.prelu(x, w), x, m.weight)
    x.grad = None
    m(x).sum().backward()
    xs = npa(x)
    np.testing.assert_allclose(npa(m.weight.grad), np.where(xs > 0, 0, xs).sum((0, 2)), rtol=1e-12)


def test_rrelu_training_draws_slopes_in_range():
    x = -lucid.rand(1000) - 0.1
    ratio = npa(nn.RReLU(0.1, 0.3)(x)) / npa(x)
    assert ratio.min() >= 0.1 and ratio.max() <= 0.3 and ratio.std() > 0.03


def test_softmax_without_dim_warns_and_picks_pytorchs_dim():
    x = np.random.randn(2, 3, 4).astype(np.float32)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        y = nn.Softmax()(tensor(x))
    np.testing.assert_allclose(npa(y), softmax(x, 0), rtol=1e-5)  # 3-D: dim 0
    with pytest.warns(UserWarning, match="log_softmax"):
        y = nn.LogSoftmax()(tensor(x[0]))
    np.testing.assert_allclose(npa(y), np.log(softmax(x[0], 1)), rtol=1e-5)  # 2-D: dim 1
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(lucid.randn(2, 3))


# ---------------------------------------------------------------------------------------------------- dropout
def test_dropout_training_zeroes_a_fraction_p_and_scales_the_rest():
    m = nn.Dropout(0.3)
    y = npa(m(lucid.ones(200000)))
    assert abs((y == 0).mean() - 0.3) < 0.01
    np.testing.assert_allclose(y[y != 0], 1 / 0.7, rtol=1e-6)
    m.eval()
    x = lucid.randn(10)
    np.testing.assert_array_equal(npa(m(x)), npa(x))


@pytest.mark.parametrize("cls, shape", [(nn.Dropout1d, (16, 32, 5)), (nn.Dropout2d, (16, 32, 3, 3)),
                                        (nn.Dropout3d, (8, 32, 2, 2, 2))])
def test_feature_dropout_zeroes_whole_channels(cls, shape):
    y = npa(cls(0.5)(lucid.ones(*shape))).reshape(shape[0], shape[1], -1)
    assert np.all((y == 0).all(-1) | (y == 2).all(-1))
    assert 0.4 < (y[..., 0] == 0).mean() < 0.6
    x = lucid.randn(*shape)
    np.testing.assert_array_equal(npa(cls(0.5).eval()(x)), npa(x))


def test_alpha_dropout_keeps_mean_and_variance_and_is_identity_in_eval():
    x = lucid.randn(200000)
    y = npa(nn.AlphaDropout(0.2)(x))
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    np.testing.assert_array_equal(npa(nn.AlphaDropout(0.2).eval()(x)), npa(x))
    assert nn.FeatureAlphaDropout(0.2)(lucid.randn(4, 8, 3)).shape == (4, 8, 3)


def test_dropout_probability_must_be_in_0_1():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        nn.Dropout2d(-0.1)


# ---------------------------------------------------------------------------------------------------- embedding
def test_embedding_lookup_init_and_padding_idx():
    m = nn.Embedding(1000, 16)
    w = npa(m.weight)
    assert w.shape == (1000, 16) and abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02  # N(0, 1)
    idx = lucid.tensor([[1, 5, 5], [0, 999, 2]])
    np.testing.assert_array_equal(npa(m(idx)), w[npa(idx)])
    m = nn.Embedding(5, 3, padding_idx=-2)
    assert m.padding_idx == 3
    np.testing.assert_array_equal(npa(m.weight)[3], 0)
    m(lucid.tensor([3, 1, 3, 1])).sum().backward()
    g = npa(m.weight.grad)
    np.testing.assert_array_equal(g[3], 0)
    np.testing.assert_array_equal(g[1], 2)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=5)


def test_embedding_max_norm_renormalizes_looked_up_rows():
    m = nn.Embedding(4, 3, max_norm=1.0)
    with lucid.no_grad():
        m.weight.copy_(tensor([[3.0, 4.0, 0.0], [0.1, 0.2, 0.2], [6.0, 0.0, 8.0], [1.0, 1.0, 1.0]]))
    y = npa(m(lucid.tensor([0, 1])))
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), [1.0, 0.3], rtol=1e-5)
    np.testing.assert_allclose(npa(m.weight)[0], [0.6, 0.8, 0.0], rtol=1e-5)
    np.testing.assert_array_equal(npa(m.weight)[2], [6.0, 0.0, 8.0])  # not looked up: untouched


def test_embedding_from_pretrained_freezes_by_default():
    w = tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    m = nn.Embedding.from_pretrained(w, padding_idx=1)
    assert not m.weight.requires_grad and m.num_embeddings == 3 and m.embedding_dim == 2
    np.testing.assert_array_equal(npa(m(lucid.tensor([1]))), [[3.0, 4.0]])  # the padding row is kept
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    assert repr(m) == "Embedding(3, 2, padding_idx=1)"
    with pytest.raises(AssertionError, match="Shape of weight does not match num_embeddings and embedding_dim"):
        nn.Embedding(2, 2, _weight=w)


# ---------------------------------------------------------------------------------------------------- resampling
def test_upsample_nearest_repeats_pixels():
    x = np.random.randn(2, 3, 4, 5).astype(np.float32)
    ref = x.repeat(2, 2).repeat(2, 3)
    np.testing.assert_array_equal(npa(nn.Upsample(scale_factor=2)(tensor(x))), ref)
    np.testing.assert_array_equal(npa(nn.UpsamplingNearest2d(size=(8, 10))(tensor(x))), ref)
    assert nn.Upsample(scale_factor=2).scale_factor == 2.0


def test_upsample_bilinear_align_corners_keeps_the_corners():
    x = np.random.randn(1, 2, 3, 4).astype(np.float32)
    m = nn.UpsamplingBilinear2d(size=(9, 10))
    y = npa(m(tensor(x)))
    np.testing.assert_allclose(y[..., ::4, ::3], x, rtol=1e-5, atol=1e-6)  # (9 - 1) / (3 - 1), (10 - 1) / (4 - 1)
    ref = F.interpolate(tensor(x), size=(9, 10), mode="bilinear", align_corners=True)
    np.testing.assert_allclose(y, npa(ref), rtol=1e-6)
    z = np.random.randn(2, 3, 4).astype(np.float32)
    np.testing.assert_allclose(npa(nn.Upsample(size=7, mode="linear", align_corners=True)(tensor(z)))[..., ::2], z,
                               rtol=1e-5, atol=1e-6)


def test_pixel_shuffle_against_numpy_and_unshuffle_inverts_it():
    x = np.random.randn(2, 12, 3, 4).astype(np.float32)
    ref = x.reshape(2, 3, 2, 2, 3, 4).transpose(0, 1, 4, 2, 5, 3).reshape(2, 3, 6, 8)
    y = nn.PixelShuffle(2)(tensor(x))
    np.testing.assert_array_equal(npa(y), ref)
    np.testing.assert_array_equal(npa(nn.PixelUnshuffle(2)(y)), x)


# ---------------------------------------------------------------------------------------------------- repr
REPRS = [
    (lambda: nn.Linear(2, 3), "Linear(in_features=2, out_features=3, bias=True)"),
    (lambda: nn.Bilinear(2, 3, 4, bias=False), "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=False)"),
    (lambda: nn.Conv2d(1, 6, 5), "Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))"),
    (lambda: nn.Conv1d(2, 4, 3, 2, padding=1, dilation=2, groups=2, bias=False, padding_mode="circular"),
     "Conv1d(2, 4, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), groups=2, bias=False, "
     "padding_mode=circular)"),
    (lambda: nn.Conv2d(2, 4, 3, padding="same"), "Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), padding=same)"),
    (lambda: nn.ConvTranspose2d(3, 2, 4, stride=2, output_padding=1),
     "ConvTranspose2d(3, 2, kernel_size=(4, 4), stride=(2, 2), output_padding=(1, 1))"),
    (lambda: nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (lambda: nn.MaxPool1d(3, 1, 1, ceil_mode=True),
     "MaxPool1d(kernel_size=3, stride=1, padding=1, dilation=1, ceil_mode=True)"),
    (lambda: nn.AvgPool2d(2), "AvgPool2d(kernel_size=2, stride=2, padding=0)"),
    (lambda: nn.AvgPool1d(3), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"),
    (lambda: nn.AdaptiveAvgPool2d((1, 1)), "AdaptiveAvgPool2d(output_size=(1, 1))"),
    (lambda: nn.AdaptiveMaxPool2d(2), "AdaptiveMaxPool2d(output_size=2)"),
    (lambda: nn.BatchNorm2d(6), "BatchNorm2d(6, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                                "track_running_stats=True)"),
    (lambda: nn.InstanceNorm1d(4), "InstanceNorm1d(4, eps=1e-05, momentum=0.1, affine=False, bias=False, "
                                   "track_running_stats=False)"),
    (lambda: nn.LayerNorm(4), "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"),
    (lambda: nn.GroupNorm(2, 4), "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"),
    (lambda: nn.RMSNorm([2, 3]), "RMSNorm((2, 3), eps=None, elementwise_affine=True)"),
    (lambda: nn.LocalResponseNorm(2), "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"),
    (lambda: nn.Dropout(), "Dropout(p=0.5, inplace=False)"),
    (lambda: nn.Dropout2d(0.2, True), "Dropout2d(p=0.2, inplace=True)"),
    (lambda: nn.Embedding(10, 3, max_norm=1.0, scale_grad_by_freq=True),
     "Embedding(10, 3, max_norm=1.0, scale_grad_by_freq=True)"),
    (lambda: nn.Upsample(scale_factor=2), "Upsample(scale_factor=2.0, mode='nearest')"),
    (lambda: nn.Upsample(size=(4, 5), mode="bilinear"), "Upsample(size=(4, 5), mode='bilinear')"),
    (lambda: nn.PixelShuffle(3), "PixelShuffle(upscale_factor=3)"),
    (lambda: nn.ReLU(), "ReLU()"),
    (lambda: nn.ReLU(inplace=True), "ReLU(inplace=True)"),
    (lambda: nn.ReLU6(), "ReLU6()"),
    (lambda: nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
    (lambda: nn.LeakyReLU(0.2, True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
    (lambda: nn.PReLU(), "PReLU(num_parameters=1)"),
    (lambda: nn.ELU(), "ELU(alpha=1.0)"),
    (lambda: nn.GELU(), "GELU(approximate='none')"),
    (lambda: nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"),
    (lambda: nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)"),
    (lambda: nn.Hardswish(), "Hardswish()"),
    (lambda: nn.Softmax(dim=1), "Softmax(dim=1)"),
    (lambda: nn.LogSoftmax(), "LogSoftmax(dim=None)"),
    (lambda: nn.Softshrink(), "Softshrink(0.5)"),
    (lambda: nn.Threshold(0.1, 20), "Threshold(threshold=0.1, value=20)"),
]


@pytest.mark.parametrize("make, expected", REPRS, ids=[e.split("(")[0] + str(i) for i, (_, e) in enumerate(REPRS)])
def test_repr_as_pytorch_prints_it(make, expected):
    assert repr(make()) == expected


def test_nested_repr_of_a_lenet():
    net = nn.Sequential(nn.Conv2d(1, 6, 5), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(24, 10))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))\n"
        "  (1): BatchNorm2d(6, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)\n"
        "  (2): ReLU()\n"
        "  (3): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n"
        "  (4): Flatten(start_dim=1, end_dim=-1)\n"
        "  (5): Linear(in_features=24, out_features=10, bias=True)\n"
        ")")
    assert list(net.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                                      "1.num_batches_tracked", "5.weight", "5.bias"]


# ---------------------------------------------------------------------------------------------------- PyTorch oracle
ORACLE = [  # (class name, args, kwargs, input shape, training)
    ("Linear", (4, 3), {}, (2, 5, 4), True),
    ("Bilinear", (3, 4, 2), {}, None, True),
    ("Conv1d", (2, 4, 3), {"stride": 2, "padding": 1, "padding_mode": "reflect"}, (2, 2, 9), True),
    ("Conv2d", (4, 6, (3, 2)), {"padding": "same", "dilation": 2, "groups": 2, "padding_mode": "circular"},
     (2, 4, 6, 5), True),
    ("Conv2d", (2, 3, 3), {"stride": 2, "padding": 2, "padding_mode": "replicate", "bias": False}, (1, 2, 7, 6), True),
    ("Conv3d", (2, 2, 2), {"padding": 1}, (1, 2, 3, 4, 3), True),
    ("ConvTranspose1d", (2, 4, 3), {"stride": 2, "output_padding": 1, "groups": 2}, (2, 2, 5), True),
    ("ConvTranspose2d", (3, 2, 3), {"stride": 2, "padding": 1, "dilation": 2}, (1, 3, 4, 5), True),
    ("MaxPool2d", (3, 2, 1), {"ceil_mode": True}, (2, 3, 7, 6), True),
    ("AvgPool2d", (3, 2, 1), {"count_include_pad": False}, (2, 3, 7, 6), True),
    ("AdaptiveAvgPool2d", ((3, 4),), {}, (2, 3, 7, 6), True),
    ("AdaptiveMaxPool2d", (3,), {}, (2, 3, 7, 6), True),
    ("BatchNorm1d", (3,), {"momentum": 0.2}, (6, 3, 4), True),
    ("BatchNorm2d", (3,), {}, (4, 3, 2, 3), True),
    ("BatchNorm2d", (3,), {"momentum": None}, (4, 3, 2, 3), True),
    ("BatchNorm2d", (3,), {}, (4, 3, 2, 3), False),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}, (2, 3, 4, 4), True),
    ("LayerNorm", ((3, 4),), {}, (2, 3, 4), True),
    ("GroupNorm", (2, 6), {}, (2, 6, 5), True),
    ("RMSNorm", (4,), {"eps": 1e-6}, (3, 4), True),
    ("PReLU", (3,), {}, (2, 3, 4), True),
    ("GELU", ("tanh",), {}, (3, 4), True),
    ("Softplus", (2.0, 1.0), {}, (3, 4), True),
    ("Upsample", (), {"scale_factor": 2, "mode": "bilinear"}, (1, 2, 3, 4), True),
    ("PixelShuffle", (2,), {}, (1, 8, 2, 3), True),
    ("Embedding", (7, 3), {"padding_idx": 2}, None, True),
]


@pytest.mark.parametrize("name, args, kwargs, shape, training", ORACLE,
                         ids=[f"{row[0]}{i}" for i, row in enumerate(ORACLE)])
def test_same_state_dict_gives_pytorchs_outputs_and_gradients(name, args, kwargs, shape, training):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kwargs).double().train(training)
    lm = getattr(nn, name)(*args, **kwargs).double().train(training)
    assert repr(lm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in lm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    if training and "running_mean" in tm.state_dict():  # start from non-trivial running statistics
        with torch.no_grad():
            tm.running_mean.uniform_(-1, 1)
            tm.running_var.uniform_(0.5, 2)
    lm.load_state_dict(tm.state_dict())
    rng = np.random.default_rng(1)
    if name == "Embedding":
        inputs = [rng.integers(0, 7, (4, 5))]
    elif name == "Bilinear":
        inputs = [rng.standard_normal((5, 3)), rng.standard_normal((5, 4))]
    else:
        inputs = [rng.standard_normal(shape)]
    t_in = [torch.tensor(a, requires_grad=a.dtype == np.float64) for a in inputs]
    l_in = [lucid.tensor(a, requires_grad=a.dtype == np.float64) for a in inputs]
    t_out, l_out = tm(*t_in), lm(*l_in)
    np.testing.assert_allclose(npa(l_out), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    seed = rng.standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(seed))
    l_out.backward(lucid.tensor(seed))
    for t, l in zip(t_in, l_in):
        if t.requires_grad:
            np.testing.assert_allclose(npa(l.grad), t.grad.numpy(), rtol=1e-9, atol=1e-12)
    for (key, tp), (_, lp) in zip(tm.named_parameters(), lm.named_parameters()):
        np.testing.assert_allclose(npa(lp.grad), tp.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=key)
    for key, tb in tm.state_dict().items():  # running statistics after the step
        np.testing.assert_allclose(npa(lm.state_dict()[key]), tb.numpy(), rtol=1e-10, atol=1e-12, err_msg=key)


def test_conv_transpose_output_size_as_pytorch():
    torch = pytest.importorskip("torch")
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=3)
    lm = nn.ConvTranspose2d(2, 3, 3, stride=3)
    lm.load_state_dict(tm.state_dict())
    x = np.random.randn(1, 2, 4, 4).astype(np.float32)
    out = lm(tensor(x), output_size=[13, 14])
    np.testing.assert_allclose(npa(out), tm(torch.tensor(x), output_size=[13, 14]).detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(ValueError) as lucid_error:
        lm(tensor(x), output_size=[15, 12])
    with pytest.raises(ValueError) as torch_error:
        tm(torch.tensor(x), output_size=[15, 12])
    assert str(lucid_error.value) == str(torch_error.value).replace("torch.Size(", "").replace("])", "]")


def test_init_matches_pytorchs_distributions():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)  # seeded: with 8 biases, an unseeded sample's maximum can fall below 0.9 of the other's
    lucid.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, args in (("Linear", (50, 200)), ("Conv2d", (8, 32, 3)), ("ConvTranspose2d", (8, 32, 3)),
                           ("Bilinear", (20, 30, 40))):
            tm, lm = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
            for (key, tp), (_, lp) in zip(tm.named_parameters(), lm.named_parameters()):
                t, lv = tp.detach().numpy(), npa(lp)
                bound = np.abs(t).max()
                assert np.abs(lv).max() <= bound * 1.02 and np.abs(lv).max() >= bound * 0.9, (name, key)
                # uniform(-b, b) has std b/sqrt(3); the sample std's relative spread is about sqrt(0.2 / n)
                assert abs(lv.std() / (bound / np.sqrt(3)) - 1) < 4 * np.sqrt(0.2 / lv.size) + 0.02, (name, key)
