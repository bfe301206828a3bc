"""Pooling, interpolation, padding and pixel (un)shuffle: values (and max-pool indices) against direct numpy
references, gradcheck + gradgradcheck in float64 over the main option combinations, PyTorch's conventions (first
maximum wins ties, NaN propagates, its interpolation index rules), errors, and PyTorch as an optional oracle.

Each table row is (name, fn, input shape, arguments); a row adds its forward, gradient and oracle tests. Max-pool
inputs have distinct values far apart (no ties within the finite-difference step)."""
import math

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from helpers import check_grads, leaf


def distinct(*shape, seed=0, requires_grad=True):
    """A float64 leaf whose values are a shuffled grid with spacing 1/numel: no ties."""
    n = math.prod(shape)
    values = np.random.default_rng(seed).permutation(n) / n - 0.5
    return lucid.tensor(values.reshape(shape), dtype=lucid.float64, requires_grad=requires_grad)


def _tup(v, n):
    return (v,) * n if isinstance(v, (int, float)) else tuple(v)


# ---------------------------------------------------------------------------------------------------- numpy references
def _out_size(size, k, s, p, d, ceil_mode):
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    return out - 1 if ceil_mode and (out - 1) * s >= size + p else out


def np_max_pool(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Values and flat per-plane indices: scan each window row-major over its in-bounds elements, keep the first
    maximum."""
    n = x.ndim - 2
    k, p, d = _tup(kernel_size, n), _tup(padding, n), _tup(dilation, n)
    s = k if stride is None else _tup(stride, n)
    sp = x.shape[2:]
    out = [_out_size(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(n)]
    vals, idx = np.zeros(x.shape[:2] + tuple(out)), np.zeros(x.shape[:2] + tuple(out), dtype=np.int64)
    for b, c in np.ndindex(*x.shape[:2]):
        for o in np.ndindex(*out):
            best, where = -np.inf, None
            for j in np.ndindex(*k):
                pos = tuple(o[i] * s[i] - p[i] + j[i] * d[i] for i in range(n))
                if all(0 <= pos[i] < sp[i] for i in range(n)) and (where is None or x[(b, c) + pos] > best):
                    best, where = x[(b, c) + pos], pos
            vals[(b, c) + o], idx[(b, c) + o] = best, np.ravel_multi_index(where, sp)
    return vals, idx


def np_avg_pool(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                divisor_override=None):
    n = x.ndim - 2
    k, p = _tup(kernel_size, n), _tup(padding, n)
    s = k if stride is None else _tup(stride, n)
    sp = x.shape[2:]
    out = [_out_size(sp[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(n)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for o in np.ndindex(*out):
        start = [o[i] * s[i] - p[i] for i in range(n)]
        end = [min(start[i] + k[i], sp[i] + p[i]) for i in range(n)]
        padded_count = math.prod(e - b for b, e in zip(start, end))
        lo, hi = [max(b, 0) for b in start], [min(e, size) for e, size in zip(end, sp)]
        window = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(lo, hi))]
        count = divisor_override or (padded_count if count_include_pad else window[0, 0].size)
        y[(slice(None), slice(None)) + o] = window.sum(tuple(range(2, 2 + n))) / count
    return y


def np_adaptive(x, output_size, reduce):
    n = x.ndim - 2
    sp = x.shape[2:]
    out = [sp[i] if o is None else o for i, o in enumerate(_tup(output_size, n))]
    y = np.zeros(x.shape[:2] + tuple(out))
    for o in np.ndindex(*out):
        key = tuple(slice(o[i] * sp[i] // out[i], -(-(o[i] + 1) * sp[i] // out[i])) for i in range(n))
        y[(slice(None), slice(None)) + o] = reduce(x[(slice(None), slice(None)) + key], axis=tuple(range(2, 2 + n)))
    return y


def _cubic(t):
    a = -0.75
    near = lambda v: ((a + 2) * v - (a + 3)) * v * v + 1  # noqa: E731
    far = lambda v: ((a * v - 5 * a) * v + 8 * a) * v - 4 * a  # noqa: E731
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def np_interp_matrix(mode, size, out, scale_factor, align_corners, ndim):
    """(out, size) matrix of one dim's interpolation weights, from PyTorch's formulas (index math of 'nearest'
    in float32, as PyTorch does; its 2-D nearest kernel copies equal and doubled sizes)."""
    m = np.zeros((out, size))
    if mode in ("nearest", "nearest-exact"):
        if mode == "nearest" and ndim == 2 and out in (size, 2 * size):
            src = np.arange(out) * size // out
        else:
            scale = np.float32(1.0 / scale_factor) if scale_factor else np.float32(size) / np.float32(out)
            dst = np.arange(out, dtype=np.float32) + np.float32(0.5 if mode == "nearest-exact" else 0)
            src = np.minimum(np.floor(dst * scale).astype(int), size - 1)
        m[np.arange(out), src] = 1
        return m
    if out == size and mode != "bicubic":
        return np.eye(size)
    if align_corners:
        src = np.arange(out) * ((size - 1) / (out - 1) if out > 1 else 0.0)
    else:
        scale = 1.0 / scale_factor if scale_factor else size / out
        src = (np.arange(out) + 0.5) * scale - 0.5
        if mode != "bicubic":
            src = np.maximum(src, 0)
    for o, r in enumerate(src):
        i0 = int(np.floor(r))
        if mode == "bicubic":
            for j, wt in enumerate(_cubic(r - i0)):
                m[o, min(max(i0 - 1 + j, 0), size - 1)] += wt
        else:
            i0 = min(i0, size - 1)
            lam = min(max(r - i0, 0.0), 1.0)
            m[o, i0] += 1 - lam
            m[o, min(i0 + 1, size - 1)] += lam
    return m


def np_interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None,
                   recompute_scale_factor=None):
    n = x.ndim - 2
    if mode == "area":
        return np_adaptive(x, size, np.mean)
    factors = _tup(scale_factor, n) if scale_factor is not None else (None,) * n
    sizes = _tup(size, n) if size is not None else [math.floor(s * f) for s, f in zip(x.shape[2:], factors)]
    if recompute_scale_factor:
        factors = (None,) * n
    for d in reversed(range(n)):
        m = np_interp_matrix(mode, x.shape[2 + d], sizes[d], factors[d], align_corners, n)
        x = np.moveaxis(np.tensordot(x, m, axes=([2 + d], [1])), -1, 2 + d)
    return x


def np_pad(x, pad, mode="constant", value=None):
    """np.pad of the positive amounts; negative amounts crop (circular crops before it wraps, as PyTorch)."""
    m = len(pad) // 2
    pairs = [(0, 0)] * (x.ndim - m) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(m))]
    crop = tuple(slice(max(-a, 0), x.shape[i] - max(-b, 0)) for i, (a, b) in enumerate(pairs))
    grow = [(max(a, 0), max(b, 0)) for a, b in pairs]
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    kw = {"constant_values": value or 0} if mode == "constant" else {}
    if mode == "circular":
        return np.pad(x[crop], grow, np_mode)
    out = np.pad(x, grow, np_mode, **kw)
    return out[tuple(slice(g[0] - max(a, 0) + max(-a, 0), out.shape[i] - max(-b, 0))
                     for i, ((a, b), g) in enumerate(zip(pairs, grow)))]


def np_pixel_shuffle(x, r):
    *batch, c, h, w = x.shape
    out = np.zeros((*batch, c // (r * r), h * r, w * r))
    for ch, i, j in np.ndindex(c // (r * r), r, r):
        out[..., ch, i::r, j::r] = x[..., ch * r * r + i * r + j, :, :]
    return out


# ---------------------------------------------------------------------------------------------------- cases
MAX_POOL = [
    ("1d_k2", F.max_pool1d, (1, 2, 6), dict(kernel_size=2)),
    ("1d_k3_s2_p1", F.max_pool1d, (1, 1, 7), dict(kernel_size=3, stride=2, padding=1)),
    ("1d_dilation_ceil", F.max_pool1d, (1, 1, 8), dict(kernel_size=2, stride=2, padding=1, dilation=2,
                                                      ceil_mode=True)),
    ("2d_k2", F.max_pool2d, (2, 1, 4, 4), dict(kernel_size=2)),
    # kernel == stride, no padding: the tiled path (a reshape and one max); the edge past the last tile is dropped
    ("2d_tiles_crop_the_edge", F.max_pool2d, (1, 2, 5, 7), dict(kernel_size=(2, 3))),
    ("3d_tiles", F.max_pool3d, (1, 1, 4, 2, 5), dict(kernel_size=2)),
    ("2d_k3_s2_p1", F.max_pool2d, (1, 2, 5, 5), dict(kernel_size=3, stride=2, padding=1)),
    ("2d_tuples_ceil", F.max_pool2d, (1, 1, 5, 6), dict(kernel_size=(2, 3), stride=2, ceil_mode=True)),
    ("2d_dilation_pad", F.max_pool2d, (1, 1, 5, 5), dict(kernel_size=2, stride=1, padding=1, dilation=2)),
    ("3d_ceil", F.max_pool3d, (1, 1, 3, 4, 3), dict(kernel_size=2, stride=(2, 1, 2), ceil_mode=True)),
]
ADAPTIVE = [
    ("1d", 1, (1, 2, 7), 3),
    ("2d", 2, (1, 1, 5, 6), (3, 4)),
    ("2d_none_and_upsampling", 2, (1, 1, 4, 3), (None, 5)),
    ("2d_global", 2, (2, 2, 3, 3), 1),
    ("3d", 3, (1, 1, 3, 4, 3), (2, 3, 2)),
]
AVG_POOL = [
    ("1d_k2", F.avg_pool1d, (1, 2, 6), dict(kernel_size=2)),
    ("1d_k3_s2_p1_exclude_pad", F.avg_pool1d, (1, 1, 7), dict(kernel_size=3, stride=2, padding=1,
                                                             count_include_pad=False)),
    ("1d_ceil", F.avg_pool1d, (1, 1, 6), dict(kernel_size=4, stride=3, padding=1, ceil_mode=True)),
    ("2d_k2_crops_the_edge", F.avg_pool2d, (2, 1, 4, 5), dict(kernel_size=2)),
    ("2d_k3_s2_p1", F.avg_pool2d, (1, 2, 5, 5), dict(kernel_size=3, stride=2, padding=1)),
    ("2d_ceil_exclude_pad", F.avg_pool2d, (1, 1, 5, 6), dict(kernel_size=(2, 3), stride=2, padding=1,
                                                            ceil_mode=True, count_include_pad=False)),
    ("2d_ceil_include_pad", F.avg_pool2d, (1, 1, 5, 5), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("2d_divisor_override", F.avg_pool2d, (1, 1, 5, 5), dict(kernel_size=3, stride=2, padding=1, divisor_override=4)),
    ("2d_k2_divisor_override", F.avg_pool2d, (1, 1, 4, 4), dict(kernel_size=2, divisor_override=3)),
    ("3d_ceil", F.avg_pool3d, (1, 1, 3, 4, 3), dict(kernel_size=2, stride=(2, 1, 2), ceil_mode=True)),
]
INTERP = [
    ("nearest_1d_scale2", (1, 2, 4), dict(scale_factor=2)),
    ("nearest_1d_size", (1, 1, 5), dict(size=7)),
    ("nearest_2d_scale", (1, 1, 3, 4), dict(scale_factor=1.7)),
    ("nearest_2d_down_and_same", (1, 1, 5, 3), dict(size=(3, 3))),
    ("nearest_exact_2d", (1, 1, 3, 4), dict(size=(5, 7), mode="nearest-exact")),
    ("nearest_3d", (1, 1, 2, 3, 2), dict(scale_factor=(2, 1.5, 1.3))),
    ("linear", (1, 2, 4), dict(size=7, mode="linear")),
    ("linear_align_corners", (1, 1, 4), dict(scale_factor=2.5, mode="linear", align_corners=True)),
    ("linear_down", (1, 1, 7), dict(size=3, mode="linear")),
    ("linear_recompute_scale", (1, 1, 5), dict(scale_factor=1.7, mode="linear", recompute_scale_factor=True)),
    ("bilinear_scale2", (1, 1, 3, 4), dict(scale_factor=2, mode="bilinear")),
    ("bilinear_align_corners", (2, 1, 3, 3), dict(size=(5, 4), mode="bilinear", align_corners=True)),
    ("bilinear_scale_tuple", (1, 1, 4, 3), dict(scale_factor=(0.6, 1.7), mode="bilinear")),
    ("bilinear_same_size_copies", (1, 1, 3, 3), dict(scale_factor=1.3, mode="bilinear")),
    ("bicubic", (1, 1, 3, 4), dict(size=(5, 6), mode="bicubic")),
    ("bicubic_align_corners", (1, 1, 4, 3), dict(scale_factor=1.5, mode="bicubic", align_corners=True)),
    ("trilinear", (1, 1, 2, 3, 2), dict(size=(3, 4, 3), mode="trilinear")),
    ("area", (1, 1, 5, 6), dict(size=(2, 3), mode="area")),
]
PAD = [
    ("constant_1d", (1, 2, 4), (1, 2), "constant", None),
    ("constant_value_2d", (1, 1, 3, 3), (1, 0, 2, 1), "constant", 1.5),
    ("constant_negative_crops", (1, 1, 4, 5), (-1, 2, 0, -2), "constant", None),
    ("constant_every_dim", (3, 4), (1, 1, 2, 0), "constant", None),
    ("reflect_1d", (1, 2, 5), (2, 3), "reflect", None),
    ("reflect_2d", (1, 1, 4, 4), (1, 2, 3, 0), "reflect", None),
    ("reflect_negative", (1, 1, 5), (-1, 2), "reflect", None),
    ("replicate_2d", (1, 1, 3, 4), (2, 1, 0, 3), "replicate", None),
    ("replicate_3d", (1, 1, 2, 3, 2), (1, 1, 0, 1, 2, 0), "replicate", None),
    ("circular_unbatched_1d", (2, 4), (2, 1), "circular", None),
    ("circular_2d", (1, 1, 3, 4), (1, 2, 3, 1), "circular", None),
    ("circular_negative", (1, 1, 3, 5), (-1, 2, 0, 0), "circular", None),
]


def _ids(table):
    return [c[0] for c in table]


def _adaptive_fns(n):
    return (getattr(F, f"adaptive_max_pool{n}d"), getattr(F, f"adaptive_avg_pool{n}d"))


# ---------------------------------------------------------------------------------------------------- forward values
@pytest.mark.parametrize("name, fn, shape, kw", MAX_POOL, ids=_ids(MAX_POOL))
def test_max_pool_values_and_indices_match_numpy(name, fn, shape, kw):
    x = distinct(*shape)
    out, idx = fn(x, **kw, return_indices=True)
    values, expected_idx = np_max_pool(x.detach().numpy(), **kw)
    np.testing.assert_array_equal(out.detach().numpy(), values)
    assert idx.dtype == lucid.int64 and not idx.requires_grad
    np.testing.assert_array_equal(idx.numpy(), expected_idx)
    np.testing.assert_array_equal(fn(x, **kw).detach().numpy(), values)


@pytest.mark.parametrize("name, fn, shape, kw", AVG_POOL, ids=_ids(AVG_POOL))
def test_avg_pool_values_match_numpy(name, fn, shape, kw):
    x = leaf(*shape)
    expected = np_avg_pool(x.detach().numpy(), **kw)
    out = fn(x, **kw)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name, n, shape, size", ADAPTIVE, ids=_ids(ADAPTIVE))
def test_adaptive_pool_values_match_numpy(name, n, shape, size):
    max_fn, avg_fn = _adaptive_fns(n)
    x = distinct(*shape)
    np.testing.assert_array_equal(max_fn(x, size).detach().numpy(), np_adaptive(x.detach().numpy(), size, np.max))
    np.testing.assert_allclose(avg_fn(x, size).detach().numpy(), np_adaptive(x.detach().numpy(), size, np.mean),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name, shape, kw", INTERP, ids=_ids(INTERP))
def test_interpolate_values_match_numpy(name, shape, kw):
    x = leaf(*shape)
    expected = np_interpolate(x.detach().numpy(), **kw)
    out = F.interpolate(x, **kw)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name, shape, pad, mode, value", PAD, ids=_ids(PAD))
def test_pad_values_match_numpy(name, shape, pad, mode, value):
    x = leaf(*shape)
    out = F.pad(x, pad, mode=mode, value=value)
    np.testing.assert_array_equal(out.detach().numpy(), np_pad(x.detach().numpy(), pad, mode, value))


@pytest.mark.parametrize("r, shape", [(2, (1, 8, 2, 3)), (3, (9, 2, 2)), (2, (2, 1, 4, 1, 2))])
def test_pixel_shuffle_values_match_numpy(r, shape):
    x = leaf(*shape)
    out = F.pixel_shuffle(x, r)
    np.testing.assert_array_equal(out.detach().numpy(), np_pixel_shuffle(x.detach().numpy(), r))
    np.testing.assert_array_equal(F.pixel_unshuffle(out, r).detach().numpy(), x.detach().numpy())


# ---------------------------------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("name, fn, shape, kw", MAX_POOL, ids=_ids(MAX_POOL))
def test_max_pool_gradients(name, fn, shape, kw):
    check_grads(lambda x: fn(x, **kw), distinct(*shape))


@pytest.mark.parametrize("name, fn, shape, kw", AVG_POOL, ids=_ids(AVG_POOL))
def test_avg_pool_gradients(name, fn, shape, kw):
    check_grads(lambda x: fn(x, **kw), leaf(*shape))


@pytest.mark.parametrize("name, n, shape, size", ADAPTIVE, ids=_ids(ADAPTIVE))
def test_adaptive_pool_gradients(name, n, shape, size):
    max_fn, avg_fn = _adaptive_fns(n)
    check_grads(lambda x: max_fn(x, size), distinct(*shape))
    check_grads(lambda x: avg_fn(x, size), leaf(*shape))


@pytest.mark.parametrize("name, shape, kw", INTERP, ids=_ids(INTERP))
def test_interpolate_gradients(name, shape, kw):
    check_grads(lambda x: F.interpolate(x, **kw), leaf(*shape))


@pytest.mark.parametrize("name, shape, pad, mode, value", PAD, ids=_ids(PAD))
def test_pad_gradients(name, shape, pad, mode, value):
    check_grads(lambda x: F.pad(x, pad, mode=mode, value=value), leaf(*shape))


def test_pixel_shuffle_gradients():
    check_grads(lambda x: F.pixel_shuffle(x, 2), leaf(1, 4, 2, 3))
    check_grads(lambda x: F.pixel_unshuffle(x, 2), leaf(1, 1, 4, 2))


def test_second_derivative_depends_on_the_input():
    """Squared outputs make the Hessian depend on x, through the gathers' and scatters' own VJPs."""
    check_grads(lambda x: F.max_pool2d(x, 2, 1) ** 2, distinct(1, 1, 3, 3))
    check_grads(lambda x: F.max_pool2d(x, 2) ** 2, distinct(1, 1, 4, 5))
    check_grads(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear") ** 2, leaf(1, 1, 2, 2))
    check_grads(lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect") ** 2, leaf(1, 1, 2, 2))


# ---------------------------------------------------------------------------------------------------- conventions
def test_max_pool_ties_send_the_gradient_to_the_first_maximum():
    x = lucid.tensor([[[[1.0, 3.0, 3.0], [3.0, 0.0, 3.0], [2.0, 3.0, 1.0]]]], requires_grad=True)
    out, idx = F.max_pool2d(x, 2, stride=1, return_indices=True)
    assert idx.tolist() == [[[[1, 1], [3, 5]]]]
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[0, 2, 0], [1, 0, 1], [0, 0, 0]])


def test_tiled_max_pool_ties_and_node_name_follow_pytorch():
    x = lucid.tensor([[[[2.0, 2.0, 0.0, 5.0], [2.0, 1.0, 5.0, 5.0]]]], requires_grad=True)
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    assert out.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert idx.tolist() == [[[[0, 3]]]]
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[1, 0, 0, 1], [0, 0, 0, 0]])


def test_max_pool_padding_never_wins():
    x = lucid.full((1, 1, 3, 3), -math.inf)
    out, idx = F.max_pool2d(x, 2, stride=1, padding=1, return_indices=True)
    assert np.all(out.numpy() == -math.inf)
    # PyTorch's rule: a window of equal maxima (here all -inf) reports its first in-bounds element
    assert idx.tolist() == [[[[0, 0, 1, 2], [0, 0, 1, 2], [3, 3, 4, 5], [6, 6, 7, 8]]]]


def test_max_pool_propagates_nan():
    x = lucid.tensor([[[1.0, math.nan, 2.0, 0.0]]])
    assert np.isnan(F.max_pool1d(x, 2).numpy()[0, 0, 0])
    assert F.max_pool1d(x, 2).numpy()[0, 0, 1] == 2.0


def test_avg_pool_excluding_padding_averages_a_constant_to_itself():
    out = F.avg_pool2d(lucid.full((1, 1, 5, 5), 2.0), 3, stride=2, padding=1, ceil_mode=True,
                       count_include_pad=False)
    np.testing.assert_array_equal(out.numpy(), np.full((1, 1, 3, 3), 2.0))


def test_unbatched_inputs():
    x = distinct(2, 5, 5)
    for fn in (lambda t: F.max_pool2d(t, 2), lambda t: F.avg_pool2d(t, 3, 2, 1), lambda t: F.adaptive_avg_pool2d(t, 3),
               lambda t: F.adaptive_max_pool2d(t, (2, 4))):
        np.testing.assert_array_equal(fn(x).detach().numpy(), fn(x.unsqueeze(0))[0].detach().numpy())
    assert F.max_pool1d(distinct(3, 6), 2, return_indices=True)[1].shape == (3, 3)


def test_stride_defaults_to_the_kernel_size():
    x = leaf(1, 1, 6, 6)
    np.testing.assert_array_equal(F.max_pool2d(x, 3).detach().numpy(), F.max_pool2d(x, 3, 3).detach().numpy())
    np.testing.assert_array_equal(F.avg_pool2d(x, 2).detach().numpy(), F.avg_pool2d(x, 2, []).detach().numpy())


def test_float32_in_float32_out():
    x = lucid.randn(1, 2, 5, 5)
    for out in (F.max_pool2d(x, 2), F.avg_pool2d(x, 3, 2, 1), F.adaptive_avg_pool2d(x, 3),
                F.interpolate(x, scale_factor=2, mode="bilinear"), F.pad(x, (1, 1, 1, 1), mode="reflect")):
        assert out.dtype == lucid.float32


def test_ops_return_new_tensors_that_track_gradients():
    x = leaf(1, 1, 3, 3)
    for out in (F.pad(x, (0, 0)), F.pad(x, (0, 0, 0, 0), mode="reflect"), F.adaptive_avg_pool2d(x, 3),
                F.interpolate(x, size=3)):
        assert out is not x and out.requires_grad
        np.testing.assert_array_equal(out.detach().numpy(), x.detach().numpy())


# ---------------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call, exc, match", [
    (lambda: F.max_pool2d(lucid.zeros(1, 1, 3, 3), 3, padding=2), RuntimeError, "pad should be at most half"),
    (lambda: F.avg_pool2d(lucid.zeros(1, 1, 3, 3), 4), RuntimeError, "Output size is too small"),
    (lambda: F.max_pool2d(lucid.zeros(1, 1, 3, 3), 2, stride=0), RuntimeError, "stride should not be zero"),
    (lambda: F.max_pool2d(lucid.zeros(3, 3), 2), RuntimeError, "Expected 3D .*or 4D"),
    (lambda: F.avg_pool2d(lucid.zeros(1, 1, 4, 4), 2, divisor_override=0), RuntimeError, "divisor must be not zero"),
    (lambda: F.adaptive_avg_pool2d(lucid.zeros(1, 1, 3, 3), (2, 2, 2)), RuntimeError, "output_size must be 2"),
    (lambda: F.pad(lucid.zeros(1, 1, 3, 3), (1,)), RuntimeError, "divisible by 2"),
    (lambda: F.pad(lucid.zeros(2, 2), (1, 1, 1, 1, 1, 1)), RuntimeError, "less than or equal to two times"),
    (lambda: F.pad(lucid.zeros(1, 1, 3, 3), (3, 3, 0, 0), mode="reflect"), RuntimeError,
     "Padding size should be less than the corresponding input dimension"),
    (lambda: F.pad(lucid.zeros(1, 1, 3, 3), (4, 0, 0, 0), mode="circular"), RuntimeError, "wrapping around"),
    (lambda: F.pad(lucid.zeros(1, 1, 3, 3), (1, 1), mode="reflect"), NotImplementedError,
     "Padding size 2 is not supported for 4D input"),
    (lambda: F.interpolate(lucid.zeros(1, 1, 3, 3), size=4, scale_factor=2), ValueError, "only one of size"),
    (lambda: F.interpolate(lucid.zeros(1, 1, 3, 3)), ValueError, "either size or scale_factor"),
    (lambda: F.interpolate(lucid.zeros(1, 1, 3, 3), size=(2, 3, 4)), ValueError, "same number of spatial"),
    (lambda: F.interpolate(lucid.zeros(1, 1, 3, 3), size=4, mode="linear"), NotImplementedError,
     "Got 4D input, but linear mode needs 3D input"),
    (lambda: F.interpolate(lucid.zeros(1, 1, 3), size=4, align_corners=True), ValueError, "align_corners option"),
    (lambda: F.interpolate(lucid.zeros(3, 3), size=4), NotImplementedError, "Only 3D, 4D and 5D input"),
    (lambda: F.pixel_shuffle(lucid.zeros(1, 5, 2, 2), 2), RuntimeError, "is not divisible by 4"),
    (lambda: F.pixel_unshuffle(lucid.zeros(1, 1, 3, 2), 2), RuntimeError, "height to be divisible"),
    (lambda: F.pixel_shuffle(lucid.zeros(5, 2), 2), RuntimeError, "at least 3 dimensions"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---------------------------------------------------------------------------------------------------- PyTorch oracle
def _torch_compare(torch, lucid_fn, torch_fn, array, grads=True):
    x = lucid.tensor(array, dtype=lucid.float64, requires_grad=True)
    t = torch.tensor(array, requires_grad=True)
    lo, to = lucid_fn(x), torch_fn(t)
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    if not grads:
        return
    v = np.random.default_rng(7).uniform(-1, 1, tuple(to.shape))
    (lg,), (tg,) = lucid.autograd.grad(lo, [x], lucid.tensor(v, dtype=lucid.float64)), torch.autograd.grad(
        to, [t], torch.tensor(v))
    np.testing.assert_allclose(lg.numpy(), tg.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("table, i", [("max", i) for i in range(len(MAX_POOL))] +
                         [("avg", i) for i in range(len(AVG_POOL))] +
                         [("adaptive", i) for i in range(len(ADAPTIVE))] +
                         [("interp", i) for i in range(len(INTERP))] +
                         [("pad", i) for i in range(len(PAD))])
def test_matches_torch(table, i):
    torch = pytest.importorskip("torch")
    tF = torch.nn.functional
    if table in ("max", "avg"):
        _, fn, shape, kw = (MAX_POOL if table == "max" else AVG_POOL)[i]
        x = distinct(*shape, requires_grad=False).numpy()
        _torch_compare(torch, lambda t: fn(t, **kw), lambda t: getattr(tF, fn.__name__)(t, **kw), x)
        if table == "max":
            np.testing.assert_array_equal(fn(lucid.tensor(x), **kw, return_indices=True)[1].numpy(),
                                          getattr(tF, fn.__name__)(torch.tensor(x), **kw, return_indices=True)[1])
    elif table == "adaptive":
        _, n, shape, size = ADAPTIVE[i]
        x = distinct(*shape, requires_grad=False).numpy()
        for fn in _adaptive_fns(n):
            _torch_compare(torch, lambda t: fn(t, size), lambda t: getattr(tF, fn.__name__)(t, size), x)
        fn = _adaptive_fns(n)[0]
        np.testing.assert_array_equal(fn(lucid.tensor(x), size, True)[1].numpy(),
                                      getattr(tF, fn.__name__)(torch.tensor(x), size, True)[1])
    elif table == "interp":
        name, shape, kw = INTERP[i]
        x = np.random.default_rng(1).uniform(-1, 1, shape)
        # PyTorch's 3-D nearest backward short-cuts an unchanged size (1.3 * 2 -> 2) that its forward does not,
        # so its gradient is not the adjoint of its forward there; lucid's is (gradchecked above)
        grads = name != "nearest_3d"
        _torch_compare(torch, lambda t: F.interpolate(t, **kw), lambda t: tF.interpolate(t, **kw), x, grads)
    else:
        _, shape, pad, mode, value = PAD[i]
        x = np.random.default_rng(1).uniform(-1, 1, shape)
        _torch_compare(torch, lambda t: F.pad(t, pad, mode=mode, value=value),
                       lambda t: tF.pad(t, pad, mode=mode, value=value), x)


def test_pixel_shuffle_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).uniform(-1, 1, (2, 8, 2, 3))
    _torch_compare(torch, lambda t: F.pixel_shuffle(t, 2), lambda t: torch.nn.functional.pixel_shuffle(t, 2), x)
    _torch_compare(torch, lambda t: F.pixel_unshuffle(t, 2), lambda t: torch.nn.functional.pixel_unshuffle(t, 2),
                   np.random.default_rng(1).uniform(-1, 1, (2, 1, 4, 6)))
