"""lucid.vision.ops against torchvision's Python implementations (box ops, focal loss, roi_align's reference for
boxes inside the image) and, where torchvision needs its compiled kernels (nms, roi_pool, roi_align for boxes
reaching past the image), against plain loops written from the kernels' definitions; roi_align's and roi_pool's
gradients against float64 finite differences."""
import math

import numpy as np
import pytest

import lucid
from helpers import torchvision_or_skip
from lucid.autograd import gradcheck
from lucid.vision import ops

RNG = np.random.default_rng(0)


def random_boxes(n, seed=0, scale=50.0):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, scale, (n, 2))
    return np.concatenate([xy, xy + rng.uniform(1, scale / 2, (n, 2))], 1).astype(np.float32)


def _tv_ops():
    return torchvision_or_skip().ops


def test_box_area_iou_convert_and_clip_are_torchvisions():
    import torch
    tv = _tv_ops()
    a, b = random_boxes(20, 1), random_boxes(7, 2)
    np.testing.assert_allclose(ops.box_area(lucid.tensor(a)).numpy(), tv.box_area(torch.tensor(a)).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ops.box_iou(lucid.tensor(a), lucid.tensor(b)).numpy(),
                               tv.box_iou(torch.tensor(a), torch.tensor(b)).numpy(), rtol=1e-5, atol=1e-7)
    ints = (a * 10).astype(np.int32)
    assert ops.box_area(lucid.tensor(ints)).dtype == lucid.int32
    np.testing.assert_array_equal(ops.box_area(lucid.tensor(ints)).numpy(), tv.box_area(torch.tensor(ints)).numpy())
    formats = ("xyxy", "xywh", "cxcywh")
    for i in formats:
        for o in formats:
            np.testing.assert_allclose(ops.box_convert(lucid.tensor(a), i, o).numpy(),
                                       tv.box_convert(torch.tensor(a), i, o).numpy(), rtol=1e-6, atol=1e-5)
    with pytest.raises(ValueError, match="Unsupported Bounding Box Conversions for given in_fmt and out_fmt"):
        ops.box_convert(lucid.tensor(a), "xyxy", "yxyx")
    np.testing.assert_array_equal(ops.clip_boxes_to_image(lucid.tensor(a), (30, 40)).numpy(),
                                  tv.clip_boxes_to_image(torch.tensor(a), (30, 40)).numpy())
    np.testing.assert_array_equal(ops.remove_small_boxes(lucid.tensor(a), 12.0).numpy(),
                                  tv.remove_small_boxes(torch.tensor(a), 12.0).numpy())


def naive_nms(boxes, scores, threshold):
    """torchvision's kernel, one pair at a time: visit boxes by decreasing score; keep one unless a kept box
    overlaps it by IoU > threshold."""
    keep = []
    for i in sorted(range(len(scores)), key=lambda i: -scores[i]):
        ok = True
        for j in keep:
            xx1, yy1 = max(boxes[i][0], boxes[j][0]), max(boxes[i][1], boxes[j][1])
            xx2, yy2 = min(boxes[i][2], boxes[j][2]), min(boxes[i][3], boxes[j][3])
            inter = max(0.0, xx2 - xx1) * max(0.0, yy2 - yy1)
            area = lambda b: (b[2] - b[0]) * (b[3] - b[1])  # noqa: E731
            if inter / (area(boxes[i]) + area(boxes[j]) - inter) > threshold:
                ok = False
                break
        if ok:
            keep.append(i)
    return keep


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.7])
def test_nms_and_batched_nms_follow_the_greedy_definition(threshold):
    boxes, scores = random_boxes(60, 3), RNG.uniform(size=60).astype(np.float32)
    kept = ops.nms(lucid.tensor(boxes), lucid.tensor(scores), threshold)
    assert kept.dtype == lucid.int64
    assert kept.tolist() == naive_nms(boxes.tolist(), scores.tolist(), threshold)
    idxs = RNG.integers(0, 3, 60)
    expected = [i for c in range(3) for i in np.flatnonzero(idxs == c)[
        naive_nms(boxes[idxs == c].tolist(), scores[idxs == c].tolist(), threshold)]]
    expected.sort(key=lambda i: -scores[i])
    got = ops.batched_nms(lucid.tensor(boxes), lucid.tensor(scores), lucid.tensor(idxs), threshold)
    assert got.tolist() == expected


def test_nms_edge_cases():
    empty = ops.nms(lucid.zeros(0, 4), lucid.zeros(0), 0.5)
    assert empty.dtype == lucid.int64 and tuple(empty.shape) == (0,)
    assert ops.batched_nms(lucid.zeros(0, 4), lucid.zeros(0), lucid.zeros(0, dtype=lucid.int64), 0.5).tolist() == []
    same = lucid.tensor([[0.0, 0, 10, 10], [0, 0, 10, 10], [20, 20, 30, 30]])
    assert ops.nms(same, lucid.tensor([0.5, 0.9, 0.1]), 0.5).tolist() == [1, 2]
    with pytest.raises(RuntimeError, match=r"boxes should have shape \[N, 4\]"):
        ops.nms(lucid.zeros(3, 5), lucid.zeros(3), 0.5)
    with pytest.raises(RuntimeError, match="same number of elements in dimension 0, got 3 and 2"):
        ops.nms(lucid.zeros(3, 4), lucid.zeros(2), 0.5)


def naive_roi_align(x, rois, ph, pw, scale, sampling_ratio, aligned):
    """torchvision's CPU kernel written out: each bin averages bilinear samples; a sample past [-1, size] is 0."""
    n, c, h, w = x.shape
    out = np.zeros((len(rois), c, ph, pw))

    def bilinear(img, y, xx):
        if y < -1.0 or y > h or xx < -1.0 or xx > w:
            return np.zeros(c)
        y, xx = max(y, 0.0), max(xx, 0.0)
        yl, xl = int(y), int(xx)
        yh, xh = (yl + 1, xl + 1)
        if yl >= h - 1:
            yl = yh = h - 1
            y = float(yl)
        if xl >= w - 1:
            xl = xh = w - 1
            xx = float(xl)
        ly, lx = y - yl, xx - xl
        return ((1 - ly) * (1 - lx) * img[:, yl, xl] + (1 - ly) * lx * img[:, yl, xh]
                + ly * (1 - lx) * img[:, yh, xl] + ly * lx * img[:, yh, xh])

    off = 0.5 if aligned else 0.0
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        sx, sy = x1 * scale - off, y1 * scale - off
        rw, rh = x2 * scale - off - sx, y2 * scale - off - sy
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = sampling_ratio if sampling_ratio > 0 else math.ceil(rh / ph)
        gw = sampling_ratio if sampling_ratio > 0 else math.ceil(rw / pw)
        count = max(gh * gw, 1)
        for i in range(ph):
            for j in range(pw):
                acc = np.zeros(c)
                for iy in range(gh):
                    for ix in range(gw):
                        y = sy + i * bh + (iy + 0.5) * bh / gh
                        acc += bilinear(x[int(b)], y, sx + j * bw + (ix + 0.5) * bw / gw)
                out[k, :, i, j] = acc / count
    return out


X = RNG.standard_normal((2, 3, 10, 12)).astype(np.float32)
INSIDE = np.array([[0, 1.2, 0.5, 7.3, 8.8], [1, 0, 0.2, 4, 3], [1, 3.3, 2.2, 10.9, 8.9], [0, 5, 5, 5.2, 5.1]],
                  np.float32)
OUTSIDE = np.array([[1, -2, -1, 4, 3], [1, 8, 6, 20, 14], [0, -30, -30, -20, -20], [0, 0, 0, 0, 0]], np.float32)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [-1, 2])
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_roi_align_is_torchvisions_for_boxes_inside_the_image(aligned, sampling_ratio, scale):
    import torch
    _tv_ops()
    import sys
    # its Python reference, without the torch.compile around it
    reference = sys.modules["torchvision.ops.roi_align"]._roi_align.__wrapped__
    expected = reference(torch.tensor(X), torch.tensor(INSIDE), scale, 3, 4, sampling_ratio, aligned).numpy()
    got = ops.roi_align(lucid.tensor(X), lucid.tensor(INSIDE), (3, 4), scale, sampling_ratio, aligned)
    assert tuple(got.shape) == (4, 3, 3, 4)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [-1, 3])
def test_roi_align_follows_the_kernel_past_the_image_and_takes_box_lists(aligned, sampling_ratio):
    rois = np.concatenate([INSIDE, OUTSIDE])
    expected = naive_roi_align(X.astype(np.float64), rois, 2, 3, 1.0, sampling_ratio, aligned)
    got = ops.roi_align(lucid.tensor(X), lucid.tensor(rois), (2, 3), 1.0, sampling_ratio, aligned)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)
    as_list = [lucid.tensor(rois[rois[:, 0] == i, 1:]) for i in range(2)]
    order = np.argsort(rois[:, 0], kind="stable")
    layer = ops.RoIAlign((2, 3), 1.0, sampling_ratio, aligned)
    np.testing.assert_allclose(layer(lucid.tensor(X), as_list).numpy(), expected[order], rtol=1e-5, atol=1e-5)


def test_roi_align_gradient_matches_finite_differences():
    x = lucid.tensor(RNG.standard_normal((2, 1, 5, 6)), dtype=lucid.float64, requires_grad=True)
    rois = lucid.tensor(np.array([[0, 0.4, 0.7, 9.1, 8.2], [1, 2.0, 1.0, 13.0, 12.0], [1, -3, -2, 4, 5]]),
                        dtype=lucid.float64)
    assert gradcheck(lambda t: ops.roi_align(t, rois, (2, 3), 0.5, -1, False), (x,))
    assert gradcheck(lambda t: ops.roi_align(t, rois, 2, 0.5, 2, True), (x,))


def test_roi_align_bad_boxes():
    with pytest.raises(AssertionError, match=r"Tensor\[K, 5\]"):
        ops.roi_align(lucid.tensor(X), lucid.zeros(3, 4), 2)
    with pytest.raises(AssertionError, match=r"List\[Tensor\[L, 4\]\]"):
        ops.roi_align(lucid.tensor(X), [lucid.zeros(3, 5)], 2)
    assert tuple(ops.roi_align(lucid.tensor(X), lucid.zeros(0, 5), (2, 2)).shape) == (0, 3, 2, 2)


def naive_roi_pool(x, rois, ph, pw, scale):
    """torchvision's CPU kernel written out: boxes rounded (half away from zero) to pixels, each bin's maximum,
    0 for an empty bin (in float32, as the kernel computes for a float32 input)."""
    n, c, h, w = x.shape
    out = np.zeros((len(rois), c, ph, pw), x.dtype)
    rnd = lambda v: math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)  # noqa: E731
    for k, r in enumerate(rois):
        sw, sh, ew, eh = (rnd(np.float32(r[i]) * np.float32(scale)) for i in (1, 2, 3, 4))
        bin_h = np.float32(max(eh - sh + 1, 1)) / np.float32(ph)
        bin_w = np.float32(max(ew - sw + 1, 1)) / np.float32(pw)
        for i in range(ph):
            for j in range(pw):
                hs, he = (min(max(math.floor(i * bin_h) + sh, 0), h), min(max(math.ceil((i + 1) * bin_h) + sh, 0), h))
                ws, we = (min(max(math.floor(j * bin_w) + sw, 0), w), min(max(math.ceil((j + 1) * bin_w) + sw, 0), w))
                if he > hs and we > ws:
                    out[k, :, i, j] = x[int(r[0]), :, hs:he, ws:we].max(axis=(1, 2))
    return out


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_roi_pool_follows_the_kernel(scale):
    rois = np.concatenate([INSIDE, OUTSIDE])
    got = ops.roi_pool(lucid.tensor(X), lucid.tensor(rois), (3, 2), scale)
    np.testing.assert_array_equal(got.numpy(), naive_roi_pool(X, rois, 3, 2, scale))
    as_list = [lucid.tensor(rois[rois[:, 0] == i, 1:]) for i in range(2)]
    order = np.argsort(rois[:, 0], kind="stable")
    np.testing.assert_array_equal(ops.RoIPool((3, 2), scale)(lucid.tensor(X), as_list).numpy(),
                                  naive_roi_pool(X, rois, 3, 2, scale)[order])


def test_roi_pool_gradient_and_bad_batch_index():
    x = lucid.tensor(RNG.standard_normal((2, 2, 5, 6)), dtype=lucid.float64, requires_grad=True)
    rois = lucid.tensor(np.concatenate([INSIDE, OUTSIDE]), dtype=lucid.float64)
    assert gradcheck(lambda t: ops.roi_pool(t, rois, (2, 2), 0.5), (x,))
    with pytest.raises(IndexError, match="batch index is outside"):
        ops.roi_pool(x, lucid.tensor([[2.0, 0, 0, 3, 3]], dtype=lucid.float64), 2)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("alpha, gamma", [(0.25, 2), (-1, 1.5)])
def test_sigmoid_focal_loss_is_torchvisions(reduction, alpha, gamma):
    import torch
    tv = _tv_ops()
    logits = RNG.standard_normal((4, 5)).astype(np.float32) * 3
    targets = (RNG.uniform(size=(4, 5)) > 0.6).astype(np.float32)
    expected = tv.sigmoid_focal_loss(torch.tensor(logits), torch.tensor(targets), alpha, gamma, reduction).numpy()
    got = ops.sigmoid_focal_loss(lucid.tensor(logits), lucid.tensor(targets), alpha, gamma, reduction)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="Invalid Value for arg 'reduction': 'max"):
        ops.sigmoid_focal_loss(lucid.tensor(logits), lucid.tensor(targets), reduction="max")


def test_sigmoid_focal_loss_gradient():
    logits = lucid.tensor(RNG.standard_normal((3, 4)), dtype=lucid.float64, requires_grad=True)
    targets = lucid.tensor((RNG.uniform(size=(3, 4)) > 0.5).astype(np.float64))
    assert gradcheck(lambda t: ops.sigmoid_focal_loss(t, targets, reduction="mean"), (logits,))


def test_stochastic_depth():
    x = lucid.ones(64, 3, 2, 2)
    assert ops.stochastic_depth(x, 0.5, "row", training=False) is x
    lucid.manual_seed(0)
    rows = ops.stochastic_depth(x, 0.25, "row").numpy()
    per_sample = rows.reshape(64, -1)
    assert np.isclose(per_sample, 0).sum() + np.isclose(per_sample, 1 / 0.75).sum() == per_sample.size
    assert (per_sample == per_sample[:, :1]).all()
    assert 0 < (per_sample[:, 0] == 0).sum() < 64
    batch = ops.stochastic_depth(x, 0.5, "batch").numpy()
    assert len(np.unique(batch)) == 1
    assert (ops.stochastic_depth(x, 1.0, "row").numpy() == 0).all()
    with pytest.raises(ValueError, match="drop probability has to be between 0 and 1, but got 1.5"):
        ops.stochastic_depth(x, 1.5, "row")
    with pytest.raises(ValueError, match="mode has to be either 'batch' or 'row', but got col"):
        ops.StochasticDepth(0.1, "col")(x)


def test_building_blocks_have_torchvisions_keys():
    tv = _tv_ops()
    pairs = [(tv.Conv2dNormActivation(3, 8, 3, stride=2), ops.Conv2dNormActivation(3, 8, 3, stride=2)),
             (tv.Conv2dNormActivation(3, 8, norm_layer=None), ops.Conv2dNormActivation(3, 8, norm_layer=None)),
             (tv.SqueezeExcitation(8, 2), ops.SqueezeExcitation(8, 2)),
             (tv.MLP(4, [8, 8, 2], norm_layer=torchvision_or_skip().models.resnet.nn.LayerNorm),
              ops.MLP(4, [8, 8, 2], norm_layer=lucid.nn.LayerNorm))]
    for theirs, ours in pairs:
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
