"""Parametric layers (Linear, Bilinear, LazyLinear, convolutions, pooling, batch/instance/layer/group/RMS norm):
forward values against numpy formulas or the functional op with the same parameters, parameter names and shapes,
PyTorch's initialisation bounds and statistics, train/eval behaviour (running statistics against numpy), loading
old checkpoints, and float64 gradient checks of the module's parameters.

Activations, dropout, embedding, resampling, reprs and the PyTorch oracle are in test_nn_layers_misc.py."""
import math

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


def shapes(module):
    return [(k, tuple(v.shape)) for k, v in module.state_dict().items()]


def param_fn(module):
    """fn(x, *params) calling ``module`` with its (direct) parameters replaced by ``params``: gradcheck perturbs
    copies of its inputs, so the parameters have to come in as arguments."""
    names = [n for n, p in module._parameters.items() if p is not None]

    def fn(x, *params):
        saved = dict(module._parameters)
        module._parameters.update(zip(names, params))
        try:
            return module(x)
        finally:
            module._parameters.update(saved)

    return fn, [module._parameters[n] for n in names]


# ---------------------------------------------------------------------------------------------------- linear
def test_linear_forward_is_x_wt_plus_b_on_any_batch_shape():
    m = nn.Linear(3, 2)
    x = np.random.randn(4, 5, 3).astype(np.float32)
    y = m(tensor(x))
    assert y.shape == (4, 5, 2)
    np.testing.assert_allclose(npa(y), x @ npa(m.weight).T + npa(m.bias), rtol=1e-5, atol=1e-6)
    assert m(tensor(x[0, 0])).shape == (2,)


def test_linear_parameters_names_shapes_and_no_bias():
    assert shapes(nn.Linear(3, 2)) == [("weight", (2, 3)), ("bias", (2,))]
    m = nn.Linear(3, 2, bias=False)
    assert m.bias is None and shapes(m) == [("weight", (2, 3))]
    np.testing.assert_allclose(npa(m(lucid.ones(1, 3))), npa(m.weight).sum(1)[None], rtol=1e-6)


def test_linear_init_bounds_and_statistics():
    m = nn.Linear(100, 400)
    w, b = npa(m.weight), npa(m.bias)
    bound = 1 / math.sqrt(100)  # kaiming_uniform_(a=sqrt(5)): gain sqrt(1/3), times sqrt(3 / fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.03 * bound and abs(w.mean()) < 0.02 * bound
    assert np.abs(b).max() <= bound and b.std() > 0.4 * bound


def test_linear_dtype_argument_and_double():
    m = nn.Linear(2, 3, dtype=lucid.float64)
    assert m.weight.dtype == lucid.float64 and m.bias.dtype == lucid.float64
    assert nn.Linear(2, 3).double()(leaf(4, 2)).dtype == lucid.float64


def test_bilinear_forward_against_einsum():
    m = nn.Bilinear(3, 4, 2)
    assert shapes(m) == [("weight", (2, 3, 4)), ("bias", (2,))]
    a, b = np.random.randn(5, 3).astype(np.float32), np.random.randn(5, 4).astype(np.float32)
    ref = np.einsum("ni,oij,nj->no", a, npa(m.weight), b) + npa(m.bias)
    np.testing.assert_allclose(npa(m(tensor(a), tensor(b))), ref, rtol=1e-5, atol=1e-5)
    bound = 1 / math.sqrt(3)
    assert np.abs(npa(m.weight)).max() <= bound and np.abs(npa(m.bias)).max() <= bound


def test_lazy_linear_takes_in_features_from_the_first_input_keeping_its_parameters():
    m = nn.LazyLinear(4)
    w, b = m.weight, m.bias
    assert repr(m) == "LazyLinear(in_features=0, out_features=4, bias=True)"
    y = m(lucid.randn(2, 7))
    assert y.shape == (2, 4) and type(m) is nn.Linear and m.in_features == 7
    assert m.weight is w and m.bias is b and w.shape == (4, 7)
    assert np.abs(npa(w)).max() <= 1 / math.sqrt(7)
    fresh = nn.LazyLinear(4)
    fresh.load_state_dict(m.state_dict())
    np.testing.assert_array_equal(npa(fresh.weight), npa(w))
    assert type(fresh) is nn.LazyLinear  # as in PyTorch: the loaded module becomes a Linear at its first call
    fresh(lucid.randn(1, 7))
    assert type(fresh) is nn.Linear and fresh.in_features == 7
    np.testing.assert_array_equal(npa(fresh.weight), npa(w))  # the call keeps the loaded values


def test_linear_gradients_float64():
    m = nn.Linear(3, 2).double()
    fn, params = param_fn(m)
    check_grads(fn, leaf(4, 3), *params)


# ---------------------------------------------------------------------------------------------------- convolution
def test_conv2d_matches_functional_and_parameter_shapes():
    m = nn.Conv2d(4, 6, (3, 2), stride=2, padding=1, dilation=(1, 2), groups=2)
    assert shapes(m) == [("weight", (6, 2, 3, 2)), ("bias", (6,))]
    x = lucid.randn(2, 4, 9, 8)
    ref = F.conv2d(x, m.weight, m.bias, 2, 1, (1, 2), 2)
    np.testing.assert_allclose(npa(m(x)), npa(ref), rtol=1e-6)
    assert m(x).shape == (2, 6, 5, 4)


@pytest.mark.parametrize("mode, np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_conv2d_padding_modes_pad_the_input_like_numpy(mode, np_mode):
    m = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode)
    x = np.random.randn(1, 2, 5, 6).astype(np.float32)
    padded = np.pad(x, [(0, 0), (0, 0), (1, 1), (2, 2)], mode=np_mode)
    ref = F.conv2d(tensor(padded), m.weight, m.bias)
    np.testing.assert_allclose(npa(m(tensor(x))), npa(ref), rtol=1e-5, atol=1e-6)


def test_conv_same_and_valid_padding_and_padding_mode_with_same():
    x = lucid.randn(1, 2, 7, 8)
    assert nn.Conv2d(2, 3, (3, 4), padding="same", dilation=2)(x).shape == (1, 3, 7, 8)
    assert nn.Conv2d(2, 3, 3, padding="valid")(x).shape == (1, 3, 5, 6)
    assert nn.Conv2d(2, 3, 4, padding="same", padding_mode="reflect")(x).shape == (1, 3, 7, 8)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv2d(2, 3, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        nn.Conv2d(2, 3, 3, padding="full")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(2, 3, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="groups must be a positive integer"):
        nn.Conv2d(3, 4, 3, groups=0)


def test_conv_init_bounds_use_fan_in_of_one_group():
    m = nn.Conv2d(8, 64, 3, groups=2)
    bound = 1 / math.sqrt(4 * 9)  # fan_in = in_channels / groups * kH * kW
    w, b = npa(m.weight), npa(m.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert np.abs(b).max() <= bound
    assert nn.Conv2d(2, 3, 3, bias=False).bias is None


def test_conv1d_and_conv3d_shapes_and_values():
    c1 = nn.Conv1d(3, 5, 4, stride=2, padding=1)
    assert shapes(c1) == [("weight", (5, 3, 4)), ("bias", (5,))]
    x = lucid.randn(2, 3, 10)
    assert c1(x).shape == (2, 5, 5)
    np.testing.assert_allclose(npa(c1(x)), npa(F.conv1d(x, c1.weight, c1.bias, 2, 1)), rtol=1e-6)
    assert c1(lucid.randn(3, 10)).shape == (5, 5)  # unbatched
    c3 = nn.Conv3d(2, 4, (1, 2, 3), padding=(0, 1, 1))
    assert c3.weight.shape == (4, 2, 1, 2, 3) and c3(lucid.randn(1, 2, 3, 4, 5)).shape == (1, 4, 3, 5, 5)


def test_conv2d_gradients_float64():
    m = nn.Conv2d(2, 2, 2, stride=1, padding=1).double()
    fn, params = param_fn(m)
    check_grads(fn, leaf(1, 2, 3, 3), *params)


def test_conv_transpose2d_shape_formula_and_values():
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=1)
    assert shapes(m) == [("weight", (4, 3, 3, 3)), ("bias", (6,))]  # (in, out / groups, kH, kW)
    x = lucid.randn(2, 4, 5, 4)
    y = m(x)
    assert y.shape == (2, 6, 10, 8)  # (H - 1) * 2 - 2 + 2 + 1 + 1
    np.testing.assert_allclose(npa(y), npa(F.conv_transpose2d(x, m.weight, m.bias, 2, 1, 1, 2)), rtol=1e-6)
    bound = 1 / math.sqrt(3 * 9)  # fan_in of the (in, out/groups, k, k) weight: out/groups * k * k
    assert np.abs(npa(m.weight)).max() <= bound


def test_conv_transpose_output_size_picks_output_padding():
    m = nn.ConvTranspose2d(2, 3, 3, stride=3)
    x = lucid.randn(1, 2, 4, 4)
    assert m(x).shape == (1, 3, 12, 12)
    for size in ([13, 14], (1, 3, 14, 12)):
        assert m(x, output_size=size).shape[2:] == tuple(size[-2:])
    with pytest.raises(ValueError, match=r"requested an output size of \[15, 12\], but valid sizes range from "
                                         r"\[12, 12\] to \[14, 14\]"):
        m(x, output_size=[15, 12])
    c1 = nn.ConvTranspose1d(2, 3, 2, stride=2)
    assert c1(lucid.randn(2, 5)).shape == (3, 10) and c1(lucid.randn(1, 2, 5), output_size=[11]).shape == (1, 3, 11)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect")


# ---------------------------------------------------------------------------------------------------- pooling
def np_max_pool2d(x, k, s):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    out = np.empty((n, c, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = x[:, :, i * s:i * s + k, j * s:j * s + k].max((2, 3))
    return out


def test_max_pool2d_values_and_indices():
    x = np.random.randn(2, 3, 7, 6).astype(np.float32)
    np.testing.assert_array_equal(npa(nn.MaxPool2d(3, 2)(tensor(x))), np_max_pool2d(x, 3, 2))
    np.testing.assert_array_equal(npa(nn.MaxPool2d(2)(tensor(x))), np_max_pool2d(x, 2, 2))
    values, idx = nn.MaxPool2d(2, return_indices=True)(tensor(x))
    assert idx.dtype == lucid.int64
    flat = x.reshape(2, 3, -1)
    picked = np.take_along_axis(flat, npa(idx).reshape(2, 3, -1), 2)
    np.testing.assert_array_equal(picked, npa(values).reshape(2, 3, -1))
    assert nn.MaxPool2d(2, ceil_mode=True)(tensor(x)).shape == (2, 3, 4, 3)


def test_max_pool1d_and_avg_pool1d_against_numpy():
    x = np.random.randn(2, 3, 8).astype(np.float32)
    np.testing.assert_array_equal(npa(nn.MaxPool1d(2)(tensor(x))), x.reshape(2, 3, 4, 2).max(-1))
    np.testing.assert_allclose(npa(nn.AvgPool1d(2)(tensor(x))), x.reshape(2, 3, 4, 2).mean(-1), rtol=1e-6)
    y = npa(nn.AvgPool1d(3, 1, padding=1, count_include_pad=False)(tensor(x)))
    np.testing.assert_allclose(y[..., 0], x[..., :2].mean(-1), rtol=1e-6)
    np.testing.assert_allclose(y[..., 3], x[..., 2:5].mean(-1), rtol=1e-6)


def test_avg_pool2d_against_numpy_and_divisor_override():
    x = np.random.randn(2, 3, 6, 4).astype(np.float32)
    tiles = x.reshape(2, 3, 3, 2, 2, 2)
    np.testing.assert_allclose(npa(nn.AvgPool2d(2)(tensor(x))), tiles.mean((3, 5)), rtol=1e-6)
    np.testing.assert_allclose(npa(nn.AvgPool2d(2, divisor_override=3)(tensor(x))), tiles.sum((3, 5)) / 3,
                               rtol=1e-6)
    y = nn.AvgPool2d(3, stride=1, padding=1)(tensor(x))  # count_include_pad: corners divide by 9
    np.testing.assert_allclose(npa(y)[..., 0, 0], x[..., :2, :2].sum((2, 3)) / 9, rtol=1e-5)


def test_adaptive_pools_against_numpy():
    x = np.random.randn(2, 3, 6, 4).astype(np.float32)
    np.testing.assert_allclose(npa(nn.AdaptiveAvgPool2d((3, 2))(tensor(x))),
                               x.reshape(2, 3, 3, 2, 2, 2).mean((3, 5)), rtol=1e-5)
    np.testing.assert_allclose(npa(nn.AdaptiveAvgPool2d(1)(tensor(x))), x.mean((2, 3), keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(npa(nn.AdaptiveAvgPool2d((None, 1))(tensor(x))), x.mean(3, keepdims=True),
                               rtol=1e-5)
    np.testing.assert_array_equal(npa(nn.AdaptiveMaxPool2d((3, 2))(tensor(x))),
                                  x.reshape(2, 3, 3, 2, 2, 2).max((3, 5)))
    values, idx = nn.AdaptiveMaxPool2d(2, return_indices=True)(tensor(x))
    assert values.shape == idx.shape == (2, 3, 2, 2)
    # uneven windows: [floor(o*L/out), ceil((o+1)*L/out)) -> [0, 3), [2, 5), [4, 7) for L=7, out=3
    z = np.random.randn(1, 2, 7).astype(np.float32)
    ref = np.stack([z[..., 0:3].mean(-1), z[..., 2:5].mean(-1), z[..., 4:7].mean(-1)], -1)
    np.testing.assert_allclose(npa(nn.AdaptiveAvgPool1d(3)(tensor(z))), ref, rtol=1e-5)
    np.testing.assert_array_equal(npa(nn.AdaptiveMaxPool1d(3)(tensor(z)))[..., 1], z[..., 2:5].max(-1))


# ---------------------------------------------------------------------------------------------------- batch norm
def test_batchnorm_parameters_buffers_and_init():
    m = nn.BatchNorm2d(3)
    assert shapes(m) == [("weight", (3,)), ("bias", (3,)), ("running_mean", (3,)), ("running_var", (3,)),
                         ("num_batches_tracked", ())]
    assert [n for n, _ in m.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    assert m.num_batches_tracked.dtype == lucid.int64 and int(m.num_batches_tracked) == 0
    np.testing.assert_array_equal(npa(m.weight), 1)
    np.testing.assert_array_equal(npa(m.bias), 0)
    np.testing.assert_array_equal(npa(m.running_mean), 0)
    np.testing.assert_array_equal(npa(m.running_var), 1)
    m = nn.BatchNorm1d(3, affine=False, track_running_stats=False)
    assert m.weight is None and m.running_mean is None and m.num_batches_tracked is None and shapes(m) == []
    assert nn.BatchNorm2d(3, bias=False).bias is None


def test_batchnorm_training_normalizes_with_batch_stats_and_updates_running_stats():
    m = nn.BatchNorm2d(3, momentum=0.3)
    with lucid.no_grad():
        m.weight.copy_(tensor([1.0, 2.0, 0.5]))
        m.bias.copy_(tensor([0.0, -1.0, 1.0]))
    rm, rv = np.zeros(3), np.ones(3)
    for step in range(3):
        x = (np.random.randn(4, 3, 2, 5) * 2 + 1).astype(np.float32)
        y = npa(m(tensor(x)))
        mean, var = x.mean((0, 2, 3)), x.var((0, 2, 3))
        ref = (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5) * npa(m.weight)[:, None, None] \
            + npa(m.bias)[:, None, None]
        np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)
        rm = 0.7 * rm + 0.3 * mean
        rv = 0.7 * rv + 0.3 * x.var((0, 2, 3), ddof=1)  # unbiased
        np.testing.assert_allclose(npa(m.running_mean), rm, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(npa(m.running_var), rv, rtol=1e-5)
        assert int(m.num_batches_tracked) == step + 1


def test_batchnorm_eval_uses_running_stats_and_leaves_them():
    m = nn.BatchNorm1d(3)
    m(lucid.randn(8, 3) * 3 + 2)
    m.eval()
    rm, rv = npa(m.running_mean).copy(), npa(m.running_var).copy()
    x = np.random.randn(5, 3, 4).astype(np.float32)
    ref = (x - rm[:, None]) / np.sqrt(rv[:, None] + 1e-5)
    np.testing.assert_allclose(npa(m(tensor(x))), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(npa(m.running_mean), rm)
    assert int(m.num_batches_tracked) == 1


def test_batchnorm_momentum_none_is_a_cumulative_average():
    m = nn.BatchNorm1d(2, momentum=None)
    xs = [np.random.randn(6, 2).astype(np.float32) + i for i in range(3)]
    for x in xs:
        m(tensor(x))
    np.testing.assert_allclose(npa(m.running_mean), np.mean([x.mean(0) for x in xs], 0), rtol=1e-5)
    np.testing.assert_allclose(npa(m.running_var), np.mean([x.var(0, ddof=1) for x in xs], 0), rtol=1e-5)
    assert repr(m) == "BatchNorm1d(2, eps=1e-05, momentum=None, affine=True, bias=True, track_running_stats=True)"


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval():
    m = nn.BatchNorm2d(2, track_running_stats=False).eval()
    x = np.random.randn(3, 2, 2, 2).astype(np.float32)
    mean, var = x.mean((0, 2, 3), keepdims=True), x.var((0, 2, 3), keepdims=True)
    np.testing.assert_allclose(npa(m(tensor(x))), (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)


def test_batchnorm_input_rank_errors():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(2)(lucid.randn(2, 2, 3))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(2)(lucid.randn(2, 2, 3, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(2)(lucid.randn(1, 2))
    assert nn.BatchNorm1d(2).eval()(lucid.randn(1, 2)).shape == (1, 2)


def test_batchnorm_loads_an_old_checkpoint_without_num_batches_tracked():
    src = nn.BatchNorm2d(3)
    src(lucid.randn(4, 3, 2, 2))
    old = {k: v for k, v in src.state_dict().items() if k != "num_batches_tracked"}
    dst = nn.BatchNorm2d(3)
    result = dst.load_state_dict(old)
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(npa(dst.running_mean), npa(src.running_mean))
    assert int(dst.num_batches_tracked) == 0
    # a current checkpoint (version 2 in its metadata) must have the key
    current = src.state_dict()
    del current["num_batches_tracked"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "num_batches_tracked"'):
        dst.load_state_dict(current)
    seq = nn.Sequential(nn.BatchNorm1d(2))
    seq.load_state_dict({"0.weight": lucid.ones(2), "0.bias": lucid.zeros(2), "0.running_mean": lucid.ones(2),
                         "0.running_var": lucid.ones(2)})
    np.testing.assert_array_equal(npa(seq[0].running_mean), 1)


def test_batchnorm_training_gradients_float64():
    m = nn.BatchNorm2d(2).double()
    with lucid.no_grad():
        m.weight.copy_(lucid.tensor([0.5, 2.0]))
        m.bias.copy_(lucid.tensor([0.1, -0.3]))
    fn, params = param_fn(m)
    check_grads(fn, leaf(3, 2, 2, 1), *params)


# ---------------------------------------------------------------------------------------------------- instance norm
def test_instance_norm_defaults_and_values():
    m = nn.InstanceNorm2d(3)
    assert shapes(m) == [] and m.weight is None and m.running_mean is None
    x = np.random.randn(2, 3, 4, 5).astype(np.float32)
    mean, var = x.mean((2, 3), keepdims=True), x.var((2, 3), keepdims=True)
    np.testing.assert_allclose(npa(m(tensor(x))), (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(npa(m(tensor(x[0]))), npa(m(tensor(x)))[0], rtol=1e-5, atol=1e-6)  # unbatched
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        m(lucid.randn(3, 4))
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        m(lucid.randn(1, 5, 2, 2))


def test_instance_norm_running_stats_and_affine():
    m = nn.InstanceNorm1d(2, affine=True, track_running_stats=True, momentum=0.5)
    assert shapes(m) == [("weight", (2,)), ("bias", (2,)), ("running_mean", (2,)), ("running_var", (2,)),
                         ("num_batches_tracked", ())]
    x = np.random.randn(3, 2, 6).astype(np.float32)
    m(tensor(x))
    np.testing.assert_allclose(npa(m.running_mean), 0.5 * x.mean(2).mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(npa(m.running_var), 0.5 + 0.5 * x.var(2, ddof=1).mean(0), rtol=1e-5)
    m.eval()
    rm, rv = npa(m.running_mean)[:, None], npa(m.running_var)[:, None]
    np.testing.assert_allclose(npa(m(tensor(x))), (x - rm) / np.sqrt(rv + 1e-5), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(2\), but got: 3"):
        m(lucid.randn(1, 3, 4))


def test_instance_norm_rejects_old_running_stats_without_tracking():
    m = nn.InstanceNorm1d(2)
    with pytest.raises(RuntimeError, match='Unexpected running stats buffer\\(s\\) "running_mean" and "running_var" '
                                           'for InstanceNorm1d with track_running_stats=False'):
        m.load_state_dict({"running_mean": lucid.zeros(2), "running_var": lucid.ones(2)})


# ---------------------------------------------------------------------------------------------------- layer, group, rms
def test_layer_norm_values_parameters_and_options():
    m = nn.LayerNorm([3, 4])
    assert shapes(m) == [("weight", (3, 4)), ("bias", (3, 4))]
    with lucid.no_grad():
        m.weight.copy_(lucid.randn(3, 4))
        m.bias.copy_(lucid.randn(3, 4))
    x = np.random.randn(2, 5, 3, 4).astype(np.float32)
    mean, var = x.mean((2, 3), keepdims=True), x.var((2, 3), keepdims=True)
    ref = (x - mean) / np.sqrt(var + 1e-5) * npa(m.weight) + npa(m.bias)
    np.testing.assert_allclose(npa(m(tensor(x))), ref, rtol=1e-4, atol=1e-5)
    assert shapes(nn.LayerNorm(4, elementwise_affine=False)) == []
    assert shapes(nn.LayerNorm(4, bias=False)) == [("weight", (4,))]
    assert nn.LayerNorm(4).normalized_shape == (4,)


def test_layer_norm_gradients_float64():
    m = nn.LayerNorm(3).double()
    with lucid.no_grad():
        m.weight.copy_(lucid.tensor([0.5, 1.5, -1.0]))
        m.bias.copy_(lucid.tensor([0.1, 0.2, 0.3]))
    fn, params = param_fn(m)
    check_grads(fn, leaf(2, 3), *params)


def test_group_norm_values():
    m = nn.GroupNorm(2, 4)
    assert shapes(m) == [("weight", (4,)), ("bias", (4,))]
    x = np.random.randn(3, 4, 5).astype(np.float32)
    g = x.reshape(3, 2, 10)
    ref = ((g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + 1e-5)).reshape(x.shape)
    np.testing.assert_allclose(npa(m(tensor(x))), ref, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match=r"num_channels \(5\) must be divisible by num_groups \(2\)"):
        nn.GroupNorm(2, 5)
    assert shapes(nn.GroupNorm(2, 4, affine=False)) == []


def test_rms_norm_values_and_default_eps():
    m = nn.RMSNorm(4)
    assert shapes(m) == [("weight", (4,))] and m.eps is None
    x = np.random.randn(3, 4).astype(np.float32)
    eps = np.finfo(np.float32).eps
    np.testing.assert_allclose(npa(m(tensor(x))), x / np.sqrt((x * x).mean(-1, keepdims=True) + eps), rtol=1e-5)
    m = nn.RMSNorm((2, 2), eps=0.5, elementwise_affine=False)
    z = x.reshape(3, 2, 2)
    np.testing.assert_allclose(npa(m(tensor(z))), z / np.sqrt((z * z).mean((1, 2), keepdims=True) + 0.5),
                               rtol=1e-5)


def test_local_response_norm_matches_functional():
    x = lucid.randn(2, 5, 3)
    np.testing.assert_allclose(npa(nn.LocalResponseNorm(3)(x)), npa(F.local_response_norm(x, 3)), rtol=1e-6)
