"""lucid.vision.utils (make_grid, save_image, draw_bounding_boxes) against torchvision's on the same tensors, and
lucid.vision.io against Pillow (torchvision.io decodes with its compiled ops, which do not load beside this torch)."""
import io

import numpy as np
import pytest

import lucid
from helpers import torchvision_or_skip
from lucid.vision import io as vio
from lucid.vision import utils

Image = pytest.importorskip("PIL.Image")
RNG = np.random.default_rng(0)


def both(arr):
    import torch
    return lucid.from_numpy(arr.copy()), torch.from_numpy(arr.copy())


@pytest.mark.parametrize("shape, kwargs", [
    ((5, 3, 4, 6), {}),
    ((5, 3, 4, 6), {"nrow": 2, "padding": 1, "pad_value": 0.5}),
    ((7, 1, 5, 5), {"nrow": 3, "normalize": True}),
    ((4, 3, 4, 4), {"normalize": True, "scale_each": True, "padding": 0}),
    ((4, 3, 4, 4), {"normalize": True, "value_range": (-1, 1), "nrow": 4}),
    ((1, 3, 4, 4), {}),
    ((2, 4, 4), {}),
    ((3, 7), {"padding": 3}),
])
def test_make_grid_matches_torchvision(shape, kwargs):
    tv = torchvision_or_skip()
    arr = RNG.standard_normal(shape).astype(np.float32)
    ours, theirs = both(arr)
    got, want = utils.make_grid(ours, **kwargs), tv.utils.make_grid(theirs, **kwargs)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)


def test_make_grid_lists_gradients_and_errors():
    tv = torchvision_or_skip()
    arr = RNG.random((3, 3, 5, 4)).astype(np.float32)
    ours, theirs = both(arr)
    np.testing.assert_array_equal(utils.make_grid(list(ours.unbind(0)), nrow=2).numpy(),
                                  tv.utils.make_grid(list(theirs.unbind(0)), nrow=2).numpy())
    x = lucid.from_numpy(arr).requires_grad_()
    utils.make_grid(x, nrow=2).sum().backward()  # every pixel appears once in the grid
    np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(arr))
    with pytest.raises(TypeError, match="tensor or list of tensors expected, got <class 'numpy.ndarray'>"):
        utils.make_grid(arr)
    with pytest.raises(TypeError, match="value_range has to be a tuple"):
        utils.make_grid(ours, normalize=True, value_range=[0, 1])


@pytest.mark.parametrize("kwargs", [{}, {"nrow": 2, "normalize": True}])
def test_save_image_writes_torchvisions_png(tmp_path, kwargs):
    tv = torchvision_or_skip()
    arr = RNG.uniform(-0.2, 1.2, (5, 3, 8, 8)).astype(np.float32)
    ours, theirs = both(arr)
    utils.save_image(ours, tmp_path / "ours.png", **kwargs)
    tv.utils.save_image(theirs, tmp_path / "theirs.png", **kwargs)
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "ours.png")),
                                  np.asarray(Image.open(tmp_path / "theirs.png")))
    buf, tv_buf = io.BytesIO(), io.BytesIO()
    utils.save_image(ours, buf, format="png", **kwargs)
    tv.utils.save_image(theirs, tv_buf, format="png", **kwargs)
    assert buf.getvalue() == tv_buf.getvalue()


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
@pytest.mark.parametrize("kwargs", [
    {},
    {"labels": ["a", "bb", "c"], "colors": "red", "width": 2},
    {"colors": [(0, 255, 0), "blue", "#ff00ff"], "fill": True},
    {"labels": ["x", "y", "z"], "fill_labels": True, "label_background_colors": "white"},
])
def test_draw_bounding_boxes_matches_torchvision(dtype, kwargs):
    tv = torchvision_or_skip()
    import torch
    pixels = RNG.integers(0, 256, (3, 30, 40), dtype=np.uint8)
    arr = pixels if dtype == "uint8" else (pixels / 255.0).astype(np.float32)
    boxes = np.array([[1, 2, 20, 15], [5, 5, 39, 29], [10, 0, 12, 3]], dtype=np.float32)
    got = utils.draw_bounding_boxes(lucid.from_numpy(arr), lucid.from_numpy(boxes), **kwargs)
    want = tv.utils.draw_bounding_boxes(torch.from_numpy(arr), torch.from_numpy(boxes), **kwargs)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-6)


def test_draw_bounding_boxes_oriented_gray_and_errors():
    tv = torchvision_or_skip()
    import torch
    gray = RNG.integers(0, 256, (1, 20, 20), dtype=np.uint8)
    boxes = np.array([[2, 2, 15, 4, 13, 17, 0, 15]], dtype=np.float32)
    got = utils.draw_bounding_boxes(lucid.from_numpy(gray), lucid.from_numpy(boxes), colors="yellow", fill=True)
    want = tv.utils.draw_bounding_boxes(torch.from_numpy(gray), torch.from_numpy(boxes), colors="yellow", fill=True)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    img = lucid.zeros(3, 8, 8, dtype=lucid.uint8)
    with pytest.raises(ValueError, match="Boxes need to be in \\(xmin, ymin, xmax, ymax\\) format"):
        utils.draw_bounding_boxes(img, lucid.tensor([[5.0, 0, 1, 3]]))
    with pytest.raises(ValueError, match="Pass individual images, not batches"):
        utils.draw_bounding_boxes(img.unsqueeze(0), lucid.tensor([[0.0, 0, 1, 3]]))
    with pytest.raises(ValueError, match="Number of boxes \\(1\\) and labels \\(2\\) mismatch"):
        utils.draw_bounding_boxes(img, lucid.tensor([[0.0, 0, 1, 3]]), labels=["a", "b"])
    with pytest.warns(UserWarning, match="No box was drawn"):
        assert utils.draw_bounding_boxes(img, lucid.zeros(0, 4)) is img


@pytest.mark.parametrize("mode, channels", [("UNCHANGED", 4), ("GRAY", 1), ("GRAY_ALPHA", 2), ("RGB", 3),
                                            ("RGB_ALPHA", 4)])
def test_read_image_modes_match_pillow(tmp_path, mode, channels):
    rgba = RNG.integers(0, 256, (6, 9, 4), dtype=np.uint8)
    Image.fromarray(rgba, "RGBA").save(tmp_path / "a.png")
    got = vio.read_image(tmp_path / "a.png", getattr(vio.ImageReadMode, mode))
    pil_mode = {"UNCHANGED": "RGBA", "GRAY": "L", "GRAY_ALPHA": "LA", "RGB": "RGB", "RGB_ALPHA": "RGBA"}[mode]
    want = np.asarray(Image.open(tmp_path / "a.png").convert(pil_mode)).reshape(6, 9, -1).transpose(2, 0, 1)
    assert got.dtype == lucid.uint8 and tuple(got.shape) == (channels, 6, 9)
    np.testing.assert_array_equal(got.numpy(), want)


def test_encode_decode_round_trips_and_errors(tmp_path):
    rgb = lucid.from_numpy(RNG.integers(0, 256, (3, 7, 5), dtype=np.uint8))
    vio.write_png(rgb, tmp_path / "x.png")
    np.testing.assert_array_equal(vio.read_image(str(tmp_path / "x.png")).numpy(), rgb.numpy())
    data = vio.encode_jpeg(rgb, quality=90)
    assert data.dtype == lucid.uint8 and data.ndim == 1 and bytes(data.numpy()[:2]) == b"\xff\xd8"
    jpeg = vio.decode_image(data)
    want = np.asarray(Image.open(io.BytesIO(data.numpy().tobytes()))).transpose(2, 0, 1)
    np.testing.assert_array_equal(jpeg.numpy(), want)
    with pytest.raises(RuntimeError, match="Could not decode the image"):
        vio.decode_image(lucid.from_numpy(np.frombuffer(b"not an image", np.uint8).copy()))
    with pytest.raises(ValueError, match="Compression level should be between 0 and 9"):
        vio.encode_png(rgb, compression_level=10)
