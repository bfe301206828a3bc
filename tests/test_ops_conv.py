"""Convolutions, transposed convolutions and unfold/fold: values against direct numpy loops, gradcheck +
gradgradcheck in float64 over the main option combinations, MLX's float32 kernels against the exact float64 route,
adjointness, argument forms and errors, and PyTorch as an optional oracle.

The tables are (name, fn, input shape, weight shape, keyword arguments); a row adds its forward, gradient and
oracle tests."""
import itertools

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from helpers import check_grads, leaf


# ---------------------------------------------------------------------------------------------------- numpy references
def _pairs(padding, x, w, dilation):
    n = x.ndim - 2
    if padding == "valid":
        return [(0, 0)] * n
    if padding == "same":
        total = [d * (k - 1) for d, k in zip(dilation, w.shape[2:])]
        return [(t // 2, t - t // 2) for t in total]
    return [(p, p) for p in padding]


def _tup(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


def np_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct definition: out[n, o, p] = sum_{c, k} xpad[n, g*Cg + c, p*stride + k*dilation] * w[o, c, k]."""
    n = x.ndim - 2
    stride, dilation = _tup(stride, n), _tup(dilation, n)
    pads = _pairs(padding if isinstance(padding, str) else _tup(padding, n), x, w, dilation)
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    ksize, (o_ch, cg) = w.shape[2:], w.shape[:2]
    out = [(xp.shape[2 + d] - dilation[d] * (ksize[d] - 1) - 1) // stride[d] + 1 for d in range(n)]
    y = np.zeros((x.shape[0], o_ch, *out))
    for o in range(o_ch):
        g = o // (o_ch // groups)
        for p in np.ndindex(*out):
            for k in np.ndindex(*ksize):
                pos = tuple(p[d] * stride[d] + k[d] * dilation[d] for d in range(n))
                window = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + pos]
                y[(slice(None), o) + p] += window @ w[(o, slice(None)) + k]
    return y if b is None else y + b.reshape(-1, *(1,) * n)


def np_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Direct definition: every input element scatters its weighted kernel to i*stride + k*dilation, then the
    padding is cropped from both ends (output_padding adds to the far end)."""
    n = x.ndim - 2
    s, p, op, d = (_tup(v, n) for v in (stride, padding, output_padding, dilation))
    ksize, cin, coutg = w.shape[2:], x.shape[1], w.shape[1]
    full = [(x.shape[2 + i] - 1) * s[i] + d[i] * (ksize[i] - 1) + 1 + op[i] for i in range(n)]
    y = np.zeros((x.shape[0], coutg * groups, *full))
    for c in range(cin):
        g = c // (cin // groups)
        for i in np.ndindex(*x.shape[2:]):
            for k in np.ndindex(*ksize):
                pos = tuple(i[j] * s[j] + k[j] * d[j] for j in range(n))
                y[(slice(None), slice(g * coutg, (g + 1) * coutg)) + pos] += np.outer(x[(slice(None), c) + i],
                                                                                     w[(c, slice(None)) + k])
    out = [full[i] - 2 * p[i] for i in range(n)]
    y = y[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + out[i]) for i in range(n))]
    return y if b is None else y + b.reshape(-1, *(1,) * n)


def _blocks(spatial, k, d, p, s):
    """The number of sliding blocks along each of the 2 dims."""
    return [(spatial[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]


def np_unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    k, d, p, s = (_tup(v, 2) for v in (kernel_size, dilation, padding, stride))
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    out = _blocks(x.shape[2:], k, d, p, s)
    cols = np.zeros((x.shape[0], x.shape[1], k[0], k[1], out[0] * out[1]))
    for bi, bj in np.ndindex(*out):
        for ki, kj in np.ndindex(*k):
            cols[:, :, ki, kj, bi * out[1] + bj] = xp[:, :, bi * s[0] + ki * d[0], bj * s[1] + kj * d[1]]
    return cols.reshape(x.shape[0], -1, out[0] * out[1])


def np_fold(cols, output_size, kernel_size, dilation=1, padding=0, stride=1):
    k, d, p, s = (_tup(v, 2) for v in (kernel_size, dilation, padding, stride))
    size = _tup(output_size, 2)
    out = _blocks(size, k, d, p, s)
    n, c = cols.shape[0], cols.shape[1] // (k[0] * k[1])
    cols = cols.reshape(n, c, k[0], k[1], -1)
    img = np.zeros((n, c, size[0] + 2 * p[0], size[1] + 2 * p[1]))
    for bi, bj in np.ndindex(*out):
        for ki, kj in np.ndindex(*k):
            img[:, :, bi * s[0] + ki * d[0], bj * s[1] + kj * d[1]] += cols[:, :, ki, kj, bi * out[1] + bj]
    return img[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]


# ---------------------------------------------------------------------------------------------------- cases
CONV = [
    ("1d", F.conv1d, (2, 2, 5), (2, 2, 3), {}),
    ("1d_stride2_pad1", F.conv1d, (1, 2, 5), (2, 2, 3), dict(stride=2, padding=1)),
    ("1d_dilation2_groups2", F.conv1d, (1, 4, 5), (2, 2, 2), dict(dilation=2, groups=2)),
    ("1d_same_even_kernel", F.conv1d, (1, 1, 5), (2, 1, 4), dict(padding="same", dilation=1)),
    ("2d", F.conv2d, (2, 1, 4, 4), (2, 1, 3, 3), {}),
    ("2d_stride2_pad1", F.conv2d, (1, 2, 4, 4), (2, 2, 3, 2), dict(stride=2, padding=1)),
    ("2d_tuples", F.conv2d, (1, 1, 5, 5), (1, 1, 2, 3), dict(stride=(2, 1), padding=(0, 1), dilation=(1, 2))),
    ("2d_depthwise_stride2", F.conv2d, (1, 2, 4, 4), (2, 1, 3, 3), dict(stride=2, padding=1, groups=2)),
    ("2d_groups_dilation", F.conv2d, (1, 2, 4, 4), (2, 1, 2, 2), dict(dilation=2, groups=2, padding=1)),
    ("2d_same_dilation", F.conv2d, (1, 1, 4, 4), (1, 1, 2, 3), dict(padding="same", dilation=2)),
    ("2d_valid_stride3", F.conv2d, (1, 1, 5, 5), (1, 1, 2, 2), dict(padding="valid", stride=3)),
    ("3d", F.conv3d, (1, 1, 2, 3, 3), (1, 1, 2, 2, 2), dict(stride=(1, 2, 1), padding=(1, 0, 1))),
    ("3d_groups_dilation", F.conv3d, (1, 2, 3, 3, 2), (2, 1, 2, 2, 1), dict(dilation=(2, 1, 1), groups=2)),
]
CONV_T = [
    ("t1d", F.conv_transpose1d, (1, 2, 4), (2, 3, 3), {}),
    ("t1d_stride2_outpad1", F.conv_transpose1d, (2, 1, 3), (1, 2, 3), dict(stride=2, padding=1, output_padding=1)),
    ("t1d_groups_dilation", F.conv_transpose1d, (1, 4, 3), (4, 1, 2), dict(stride=2, groups=2, dilation=2)),
    ("t1d_output_between_inputs", F.conv_transpose1d, (1, 1, 2), (1, 2, 3), dict(stride=5, padding=3)),
    ("t2d", F.conv_transpose2d, (1, 2, 2, 2), (2, 1, 3, 3), {}),
    ("t2d_stride2_pad1_outpad1", F.conv_transpose2d, (1, 1, 2, 2), (1, 2, 3, 3),
     dict(stride=2, padding=1, output_padding=1)),
    ("t2d_padding_beyond_kernel", F.conv_transpose2d, (1, 1, 4, 4), (1, 1, 2, 2), dict(stride=2, padding=2)),
    ("t2d_groups_dilation_tuples", F.conv_transpose2d, (1, 2, 2, 2), (2, 1, 2, 2),
     dict(stride=(2, 1), output_padding=(1, 0), groups=2, dilation=(2, 1))),
    ("t3d", F.conv_transpose3d, (1, 1, 1, 2, 2), (1, 1, 2, 2, 2), dict(stride=2, padding=(0, 1, 0))),
]
UNFOLD = [
    ("k2", (1, 2, 3, 3), dict(kernel_size=2)),
    ("k3_pad1_stride2", (1, 1, 5, 4), dict(kernel_size=3, padding=1, stride=2)),
    ("tuples_dilation", (1, 1, 5, 5), dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 0), stride=(1, 2))),
]


def _ids(table):
    return [c[0] for c in table]


def _args(shape_x, shape_w, bias_len):
    return leaf(*shape_x, seed=1), leaf(*shape_w, seed=2), leaf(bias_len, seed=3)


# ---------------------------------------------------------------------------------------------------- forward values
@pytest.mark.parametrize("name, fn, sx, sw, kw", CONV, ids=_ids(CONV))
def test_conv_values_match_numpy(name, fn, sx, sw, kw):
    x, w, b = _args(sx, sw, sw[0])
    out = fn(x, w, b, **kw)
    expected = np_conv(x.detach().numpy(), w.detach().numpy(), b.detach().numpy(), **kw)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, fn, sx, sw, kw", CONV_T, ids=_ids(CONV_T))
def test_conv_transpose_values_match_numpy(name, fn, sx, sw, kw):
    x, w, b = _args(sx, sw, sw[1] * kw.get("groups", 1))
    out = fn(x, w, b, **kw)
    expected = np_conv_transpose(x.detach().numpy(), w.detach().numpy(), b.detach().numpy(), **kw)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, shape, kw", UNFOLD, ids=_ids(UNFOLD))
def test_unfold_fold_values_match_numpy(name, shape, kw):
    x = leaf(*shape)
    cols = F.unfold(x, **kw)
    np.testing.assert_array_equal(cols.detach().numpy(), np_unfold(x.detach().numpy(), **kw))
    c = leaf(*cols.shape, seed=4)
    img = F.fold(c, shape[2:], **kw)
    np.testing.assert_allclose(img.detach().numpy(), np_fold(c.detach().numpy(), shape[2:], **kw), rtol=1e-14)


# ---------------------------------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("name, fn, sx, sw, kw", CONV, ids=_ids(CONV))
def test_conv_gradients(name, fn, sx, sw, kw):
    check_grads(lambda x, w, b: fn(x, w, b, **kw), *_args(sx, sw, sw[0]))


@pytest.mark.parametrize("name, fn, sx, sw, kw", CONV_T, ids=_ids(CONV_T))
def test_conv_transpose_gradients(name, fn, sx, sw, kw):
    check_grads(lambda x, w, b: fn(x, w, b, **kw), *_args(sx, sw, sw[1] * kw.get("groups", 1)))


@pytest.mark.parametrize("name, shape, kw", UNFOLD, ids=_ids(UNFOLD))
def test_unfold_fold_gradients(name, shape, kw):
    check_grads(lambda x: F.unfold(x, **kw) ** 2, leaf(*shape))
    cols = F.unfold(leaf(*shape), **kw)
    check_grads(lambda c: F.fold(c, shape[2:], **kw) ** 2, leaf(*cols.shape, seed=5))


def test_gradient_with_only_the_weight_requiring_grad():
    x, w = leaf(1, 2, 4, 4, requires_grad=False), leaf(3, 2, 2, 2, seed=1)
    check_grads(lambda w: F.conv2d(x, w, stride=2), w)
    F.conv2d(x, w, stride=2).sum().backward()
    # d sum / d w[o, c, i, j] = sum of the inputs that kernel element (i, j) meets: x[c, i::2, j::2]
    expected = np.array([[[x.numpy()[0, c, i::2, j::2].sum() for j in range(2)] for i in range(2)] for c in range(2)])
    np.testing.assert_allclose(w.grad.numpy(), np.broadcast_to(expected, (3, 2, 2, 2)), rtol=1e-12)


def test_second_derivative_through_a_conv_net():
    """A two-layer conv net: the Hessian-vector product needs the VJP of the VJP of both convolutions."""
    x, w1, w2 = leaf(1, 1, 4, 4), leaf(2, 1, 3, 3, seed=1), leaf(1, 2, 2, 2, seed=2)
    check_grads(lambda x, w1, w2: F.conv2d(F.conv2d(x, w1, padding=1).tanh(), w2, stride=2).sum(), x, w1, w2)


# ---------------------------------------------------------------------------------------------------- properties
def _inner(a, b):
    return float((a * b).sum().detach().numpy())


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(stride=(2, 1), dilation=2, groups=2)])
def test_conv_transpose_is_the_adjoint_of_conv(kw):
    x, w = leaf(1, 2, 6, 5), leaf(4, 1 if kw.get("groups") else 2, 3, 2, seed=1)
    y = F.conv2d(x, w, **kw)
    v = leaf(*y.shape, seed=2)
    out_pad = tuple(a - b for a, b in zip(x.shape[2:], F.conv_transpose2d(v, w, **kw).shape[2:]))
    back = F.conv_transpose2d(v, w, output_padding=out_pad, **kw)
    assert back.shape == x.shape
    assert abs(_inner(y, v) - _inner(x, back)) < 1e-12


def test_fold_is_the_adjoint_of_unfold():
    x = leaf(1, 2, 5, 5)
    kw = dict(kernel_size=3, padding=1, stride=2, dilation=1)
    cols = F.unfold(x, **kw)
    v = leaf(*cols.shape, seed=1)
    assert abs(_inner(cols, v) - _inner(x, F.fold(v, (5, 5), **kw))) < 1e-12


def test_fold_of_unfold_counts_block_overlaps():
    ones = lucid.ones(1, 1, 4, 4)
    counts = F.fold(F.unfold(ones, 2, stride=1), (4, 4), 2, stride=1)
    np.testing.assert_array_equal(counts.numpy()[0, 0], [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2], [1, 2, 2, 1]])


@pytest.mark.parametrize("name, fn, sx, sw, kw", CONV + CONV_T, ids=_ids(CONV + CONV_T))
def test_float32_kernels_agree_with_float64(name, fn, sx, sw, kw):
    """float32 runs MLX's convolution (with its own handling of groups, dilation and cropping), float64 the exact
    im2col route: values and both gradients agree to float32 precision."""
    x64, w64, _ = _args(sx, sw, 1)
    x32, w32 = (lucid.tensor(t.detach().numpy(), dtype=lucid.float32, requires_grad=True) for t in (x64, w64))
    results = []
    for x, w in ((x64, w64), (x32, w32)):
        out = fn(x, w, **kw)
        v = lucid.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)), dtype=out.dtype)
        results.append([out, *lucid.autograd.grad(out, [x, w], v)])
    for a, b in zip(*results):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_unbatched_input():
    x, w, b = leaf(2, 5, 5), leaf(3, 2, 3, 3, seed=1), leaf(3, seed=2)
    out = F.conv2d(x, w, b, padding=1)
    assert out.shape == (3, 5, 5)
    np.testing.assert_allclose(out.detach().numpy(), F.conv2d(x.unsqueeze(0), w, b, padding=1)[0].detach().numpy())
    assert F.conv_transpose1d(leaf(2, 3), leaf(2, 1, 2)).shape == (1, 4)
    assert F.unfold(leaf(2, 3, 3), 2).shape == (8, 4)
    assert F.fold(leaf(8, 4), (3, 3), 2).shape == (2, 3, 3)


def test_padding_same_keeps_the_size_and_odd_kernels_pad_symmetrically():
    x, w = leaf(1, 1, 6, 5), leaf(1, 1, 3, 5, seed=1)
    same = F.conv2d(x, w, padding="same")
    assert same.shape == x.shape
    np.testing.assert_allclose(same.detach().numpy(), F.conv2d(x, w, padding=(1, 2)).detach().numpy())


def test_node_names():
    x, w = leaf(1, 1, 3, 3), leaf(1, 1, 2, 2)
    assert type(F.conv2d(x, w).grad_fn).__name__ == "ConvolutionBackward0"
    assert type(F.conv_transpose2d(x, w).grad_fn).__name__ == "ConvolutionBackward0"


def test_float32_in_float32_out():
    x, w = lucid.randn(1, 2, 4, 4), lucid.randn(3, 2, 3, 3)
    assert F.conv2d(x, w).dtype == lucid.float32
    assert F.conv_transpose2d(x, w.transpose(0, 1)).dtype == lucid.float32


# ---------------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call, exc, match", [
    (lambda: F.conv2d(lucid.zeros(1, 3, 5, 5), lucid.zeros(2, 2, 3, 3)), RuntimeError, "to have 2 channels, but got 3"),
    (lambda: F.conv2d(lucid.zeros(1, 2, 5, 5), lucid.zeros(3, 1, 3, 3), groups=2), RuntimeError, "divisible by 2"),
    (lambda: F.conv2d(lucid.zeros(5, 5), lucid.zeros(1, 1, 3, 3)), RuntimeError, "Expected 3D .*or 4D"),
    (lambda: F.conv2d(lucid.zeros(1, 1, 2, 2), lucid.zeros(1, 1, 3, 3)), RuntimeError, "Kernel size can't be"),
    (lambda: F.conv2d(lucid.zeros(1, 1, 5, 5), lucid.zeros(1, 1, 3, 3), stride=2, padding="same"), ValueError,
     "not supported for strided"),
    (lambda: F.conv2d(lucid.zeros(1, 1, 5, 5), lucid.zeros(1, 1, 3, 3), padding="full"), ValueError,
     "Invalid padding string"),
    (lambda: F.conv2d(lucid.zeros(1, 1, 5, 5), lucid.zeros(1, 1, 3, 3), padding=-1), RuntimeError,
     "negative padding"),
    (lambda: F.conv2d(lucid.zeros(1, 1, 5, 5), lucid.zeros(2, 1, 3, 3), lucid.zeros(3)), RuntimeError, "bias"),
    (lambda: F.conv2d(lucid.zeros(1, 1, 5, 5), lucid.zeros(1, 1, 3, 3), stride=(1, 1, 1)), RuntimeError,
     "expected stride to be a single integer value or a list of 2 values"),
    (lambda: F.conv_transpose2d(lucid.zeros(1, 1, 3, 3), lucid.zeros(1, 1, 3, 3), output_padding=1), RuntimeError,
     "output padding must be smaller than either stride or dilation"),
    (lambda: F.conv_transpose2d(lucid.zeros(1, 2, 3, 3), lucid.zeros(1, 1, 3, 3)), RuntimeError,
     "to have 1 channels, but got 2"),
    (lambda: F.fold(lucid.zeros(1, 4, 5), (3, 3), 2), RuntimeError, "calculated number of sliding blocks"),
    (lambda: F.unfold(lucid.zeros(1, 1, 2, 2), 3), RuntimeError, "must be at least one"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---------------------------------------------------------------------------------------------------- PyTorch oracle
def _torch_compare(torch, lucid_fn, torch_fn, arrays):
    """Values, first derivatives and the derivative of the gradient's squared norm (second order) agree."""
    ls = [lucid.tensor(a, dtype=lucid.float64, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    lo, to = lucid_fn(*ls), torch_fn(*ts)
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    v = np.random.default_rng(7).uniform(-1, 1, tuple(to.shape))
    lg = lucid.autograd.grad(lo, ls, lucid.tensor(v, dtype=lucid.float64), create_graph=True)
    tg = torch.autograd.grad(to, ts, torch.tensor(v), create_graph=True)
    for a, b in zip(lg, tg):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    lgg = lucid.autograd.grad(sum((g * g).sum() for g in lg), ls, allow_unused=True)
    tgg = torch.autograd.grad(sum((g * g).sum() for g in tg), ts, allow_unused=True)
    for a, b in zip(lgg, tgg):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("name, fn, sx, sw, kw", CONV + CONV_T, ids=_ids(CONV + CONV_T))
def test_matches_torch(name, fn, sx, sw, kw):
    torch = pytest.importorskip("torch")
    tfn = getattr(torch.nn.functional, fn.__name__)
    rng = np.random.default_rng(0)
    out_c = sw[0] if fn in (F.conv1d, F.conv2d, F.conv3d) else sw[1] * kw.get("groups", 1)
    arrays = [rng.uniform(-1, 1, sx), rng.uniform(-1, 1, sw), rng.uniform(-1, 1, (out_c,))]
    _torch_compare(torch, lambda x, w, b: fn(x, w, b, **kw), lambda x, w, b: tfn(x, w, b, **kw), arrays)


@pytest.mark.parametrize("name, shape, kw", UNFOLD, ids=_ids(UNFOLD))
def test_unfold_fold_match_torch(name, shape, kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, shape)
    _torch_compare(torch, lambda x: F.unfold(x, **kw) ** 2, lambda x: torch.nn.functional.unfold(x, **kw) ** 2, [x])
    cols = rng.uniform(-1, 1, tuple(F.unfold(lucid.tensor(x), **kw).shape))
    _torch_compare(torch, lambda c: F.fold(c, shape[2:], **kw) ** 2,
                   lambda c: torch.nn.functional.fold(c, shape[2:], **kw) ** 2, [cols])


def test_conv_options_sweep_matches_numpy():
    """A wider sweep of option combinations (forward only; the gradient rows above cover each option)."""
    rng = np.random.default_rng(3)
    for stride, padding, dilation, groups in itertools.product((1, 2), (0, 1, "same"), (1, 2), (1, 2)):
        if padding == "same" and stride > 1:
            continue
        x, w = rng.uniform(-1, 1, (1, 2, 6, 5)), rng.uniform(-1, 1, (2, 2 // groups, 3, 2))
        out = F.conv2d(lucid.tensor(x), lucid.tensor(w), None, stride, padding, dilation, groups)
        np.testing.assert_allclose(out.numpy(), np_conv(x, w, None, stride, padding, dilation, groups), rtol=1e-12,
                                   atol=1e-12)


def test_convolution_with_bias_is_one_node_as_in_pytorch():
    x, w, b = leaf(1, 2, 5, 5), leaf(3, 2, 3, 3), leaf(3)
    out = F.conv2d(x, w, b)
    assert out.grad_fn.name() == "ConvolutionBackward0"
    assert all(f.variable is t for (f, _), t in zip(out.grad_fn.next_functions[:3], (x, w, b)))
    assert F.conv_transpose2d(x, leaf(2, 3, 3, 3), b).grad_fn.name() == "ConvolutionBackward0"


# -------------------------------------------------------------------------------------------------- strided x-gradients
def _strided_cases():
    """DCGAN's 4x4 stride 2 pad 1, ResNet's 3x3 and 1x1 stride 2, strides past the kernel (empty phases), kernel
    dilation and groups: the x-gradient of each is computed phase by phase (col2im), never over inserted zeros."""
    for k, s, p, d, g in [(4, 2, 1, 1, 1), (3, 2, 1, 1, 1), (1, 2, 0, 1, 1), (2, 3, 0, 1, 1), (3, 2, 2, 2, 1),
                          (3, 3, 1, 1, 2), (5, 2, 2, 1, 1), (4, 4, 3, 2, 2)]:
        yield k, s, p, d, g


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_strided_conv_input_gradient_sweep_matches_numpy(dtype):
    rng = np.random.default_rng(4)
    for k, s, p, d, g in _strided_cases():
        for size in (7, 8):
            x = lucid.tensor(rng.uniform(-1, 1, (2, 2 * g, size, size + 1)), dtype=getattr(lucid, dtype),
                             requires_grad=True)
            w = rng.uniform(-1, 1, (2 * g, 2, k, k))
            y = F.conv2d(x, lucid.tensor(w, dtype=x.dtype), stride=s, padding=p, dilation=d, groups=g)
            v = rng.uniform(-1, 1, tuple(y.shape))
            (gx,) = lucid.autograd.grad(y, [x], lucid.tensor(v, dtype=x.dtype))
            op = [n - ((m - 1) * s - 2 * p + d * (k - 1) + 1) for n, m in zip(x.shape[2:], y.shape[2:])]
            want = np_conv_transpose(v, w, None, s, p, op, g, d)
            tol = 1e-12 if dtype == "float64" else 1e-5
            np.testing.assert_allclose(gx.numpy(), want, rtol=tol, atol=tol, err_msg=f"k{k} s{s} p{p} d{d} g{g}")


def test_strided_conv_input_gradient_under_compile_and_create_graph():
    """The same x-gradient eagerly, inside lucid.compile, and as a graph of its own (create_graph, then its
    gradient w.r.t. the weight: the VJP of the col2im path)."""
    rng = np.random.default_rng(5)
    x0, w0 = rng.uniform(-1, 1, (2, 3, 8, 8)), rng.uniform(-1, 1, (4, 3, 4, 4))

    def input_grad(x, w):
        (gx,) = lucid.autograd.grad(F.conv2d(x, w, stride=2, padding=1).square().sum(), [x], create_graph=True)
        return gx

    x, w = (lucid.tensor(a, requires_grad=True) for a in (x0, w0))
    eager = input_grad(x, w)
    compiled = lucid.compile(input_grad)(x, w)
    np.testing.assert_allclose(compiled.detach().numpy(), eager.detach().numpy(), rtol=1e-10, atol=1e-12)
    check_grads(lambda w: input_grad(lucid.tensor(x0, requires_grad=True), w).square().sum(),
                lucid.tensor(w0, requires_grad=True))


@pytest.mark.parametrize("n, cin, cout, kw", [
    (2, 8, 2, dict(stride=2, padding=1)), (2, 2, 8, dict(stride=2, padding=1, output_padding=1)),
    (2, 6, 4, dict(stride=3, padding=2, groups=2, dilation=2)), (1, 4, 6, dict(stride=2, groups=2, dilation=3)),
    (3, 4, 2, dict(stride=(2, 1, 3), padding=(1, 0, 1))), (2, 9, 3, dict(stride=4, padding=0))])
def test_conv_transpose_weight_gradient_matches_torch(n, cin, cout, kw):
    """conv_transpose's weight gradient, phase by phase, with its columns taken of the side with fewer channels
    (both sides appear: wide-to-narrow as in DCGAN's generator, and narrow-to-wide)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    g = kw.get("groups", 1)
    x, w = rng.uniform(-1, 1, (2, cin) + (5, 4, 3)[:n]), rng.uniform(-1, 1, (cin, cout // g) + (3, 4, 2)[:n])
    fn = getattr(F, f"conv_transpose{n}d")
    out = fn(lucid.tensor(x), lucid.tensor(w), **kw)
    v = rng.uniform(-1, 1, tuple(out.shape))
    lw = lucid.tensor(w, requires_grad=True)
    (gw,) = lucid.autograd.grad(fn(lucid.tensor(x), lw, **kw), [lw], lucid.tensor(v))
    tw = torch.tensor(w, requires_grad=True)
    tout = getattr(torch.nn.functional, f"conv_transpose{n}d")(torch.tensor(x), tw, **kw)
    (want,) = torch.autograd.grad(tout, [tw], torch.tensor(v))
    np.testing.assert_allclose(gw.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
