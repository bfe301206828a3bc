"""lucid.vision.transforms: torchvision's v1 transforms. torchvision does not install beside the torch used here,
so the oracles are closed forms, numpy, and PIL's own operations (a PIL image resized by the transform equals
PIL's resize; crops equal numpy slices; ToTensor equals the bytes / 255)."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as NF
from lucid.vision import transforms as T
from lucid.vision.transforms import functional as F

Image = pytest.importorskip("PIL.Image")

RNG = np.random.default_rng(0)
RGB = RNG.integers(0, 256, (13, 17, 3), dtype=np.uint8)


def pil_rgb():
    return Image.fromarray(RGB, "RGB")


def tensor_rgb():
    return lucid.from_numpy(RGB.transpose(2, 0, 1).astype(np.float32) / 255)


def chw(img) -> np.ndarray:
    """A PIL image's pixels as (C, H, W)."""
    return np.asarray(img).reshape(img.height, img.width, -1).transpose(2, 0, 1)


# ---- conversions -------------------------------------------------------------------------------------------------

def test_to_tensor_pil_and_ndarray():
    out = T.ToTensor()(pil_rgb())
    assert out.dtype == lucid.float32 and tuple(out.shape) == (3, 13, 17)
    np.testing.assert_allclose(out.numpy(), RGB.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    gray = T.ToTensor()(Image.fromarray(RGB[..., 0], "L"))
    assert tuple(gray.shape) == (1, 13, 17)
    floats = RNG.standard_normal((4, 5, 2)).astype(np.float64)
    kept = T.ToTensor()(floats)  # not bytes: values and dtype kept
    assert kept.dtype == lucid.float64
    np.testing.assert_array_equal(kept.numpy(), floats.transpose(2, 0, 1))
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        T.ToTensor()([1, 2])


def test_pil_to_tensor_keeps_bytes():
    out = T.PILToTensor()(pil_rgb())
    assert out.dtype == lucid.uint8
    np.testing.assert_array_equal(out.numpy(), RGB.transpose(2, 0, 1))


def test_to_pil_image_roundtrip_and_modes():
    img = T.ToPILImage()(T.PILToTensor()(pil_rgb()))
    assert img.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(img), RGB)
    # a float tensor is scaled by 255 and truncated, as PyTorch's .byte()
    x = lucid.tensor([[[0.0, 0.5, 0.999, 1.0]]])
    g = T.ToPILImage()(x)
    assert g.mode == "L" and np.asarray(g).tolist() == [[0, 127, 254, 255]]
    assert T.ToPILImage()(lucid.zeros(4, 2, 2)).mode == "RGBA"
    assert F.to_pil_image(np.zeros((2, 2, 1), np.float32)).mode == "F"
    with pytest.raises(ValueError, match="pic should not have > 4 channels"):
        F.to_pil_image(lucid.zeros(5, 2, 2))


# ---- Normalize ---------------------------------------------------------------------------------------------------

def test_normalize_closed_form_and_errors():
    x = tensor_rgb()
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    want = (RGB.transpose(2, 0, 1) / np.float32(255) - np.array(mean, np.float32)[:, None, None]) / \
        np.array(std, np.float32)[:, None, None]
    np.testing.assert_allclose(T.Normalize(mean, std)(x).numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.numpy(), RGB.transpose(2, 0, 1) / np.float32(255))  # not in place by default
    y = x.clone()
    assert F.normalize(y, mean, std, inplace=True) is y
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="Input tensor should be a float tensor"):
        F.normalize(T.PILToTensor()(pil_rgb()), mean, std)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        F.normalize(x, mean, [1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"Expected tensor to be a tensor image of size \(..., C, H, W\)"):
        F.normalize(lucid.zeros(3, 4), [0.0], [1.0])


# ---- Resize ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode,pil_filter", [(T.InterpolationMode.BILINEAR, Image.BILINEAR),
                                             (T.InterpolationMode.NEAREST, Image.NEAREST),
                                             (T.InterpolationMode.BICUBIC, Image.BICUBIC),
                                             (T.InterpolationMode.LANCZOS, Image.LANCZOS)])
def test_resize_pil_equals_pils_resize(mode, pil_filter):
    img = pil_rgb()
    out = T.Resize((7, 9), interpolation=mode)(img)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(img.resize((9, 7), pil_filter)))


def test_resize_smaller_edge_and_max_size():
    img = pil_rgb()  # 17 wide, 13 high
    assert T.Resize(10)(img).size == (int(10 * 17 / 13), 10)
    assert T.Resize(10, max_size=12)(img).size == (12, int(12 * 10 / 13))
    assert F.resize(img, 13) is img  # already the size: unchanged, as torchvision
    x = tensor_rgb()
    assert tuple(T.Resize([5])(x).shape) == (3, 5, int(5 * 17 / 13))
    with pytest.raises(ValueError, match="max_size = 10 must be strictly greater"):
        F.resize(img, 10, max_size=10)
    with pytest.raises(ValueError, match="max_size should only be passed"):
        F.resize(img, [4, 5], max_size=10)
    with pytest.raises(TypeError, match="Size should be int or sequence"):
        T.Resize(2.5)


def test_resize_tensor_is_interpolate_and_uint8_rounds():
    x = tensor_rgb()
    want = NF.interpolate(x.unsqueeze(0), size=[6, 8], mode="bilinear", align_corners=False, antialias=True)[0]
    np.testing.assert_allclose(T.Resize((6, 8))(x).numpy(), want.numpy(), rtol=1e-6)
    batch = lucid.stack([x, x * 0.5])
    assert tuple(T.Resize((6, 8))(batch).shape) == (2, 3, 6, 8)
    u8 = T.PILToTensor()(pil_rgb())
    out = T.Resize((6, 8), interpolation=T.InterpolationMode.BICUBIC)(u8)
    assert out.dtype == lucid.uint8
    ref = NF.interpolate(u8.to(lucid.float32).unsqueeze(0), size=[6, 8], mode="bicubic", align_corners=False,
                         antialias=True)[0].clamp(0, 255).round()
    np.testing.assert_array_equal(out.numpy(), ref.numpy().astype(np.uint8))
    nearest = T.Resize((26, 34), interpolation=T.InterpolationMode.NEAREST)(x)  # exactly 2x: each pixel twice
    np.testing.assert_array_equal(nearest.numpy(), np.repeat(np.repeat(x.numpy(), 2, 1), 2, 2))
    with pytest.raises(ValueError, match="Tensor images support only"):
        T.Resize(4, interpolation=T.InterpolationMode.LANCZOS)(x)


# ---- crops, flips, padding ---------------------------------------------------------------------------------------

def test_center_crop_is_the_central_slice():
    img, x = pil_rgb(), tensor_rgb()
    top, left = int(round((13 - 5) / 2)), int(round((17 - 6) / 2))
    np.testing.assert_array_equal(chw(T.CenterCrop((5, 6))(img)), RGB.transpose(2, 0, 1)[:, top:top + 5,
                                                                                     left:left + 6])
    np.testing.assert_array_equal(T.CenterCrop((5, 6))(x).numpy(), x.numpy()[:, top:top + 5, left:left + 6])
    big = T.CenterCrop(20)(x)  # larger than the image: zero-padded around it
    assert tuple(big.shape) == (3, 20, 20)
    want = np.pad(x.numpy(), [(0, 0), ((20 - 13) // 2, (20 - 13 + 1) // 2), ((20 - 17) // 2, (20 - 17 + 1) // 2)])
    np.testing.assert_array_equal(big.numpy(), want)
    np.testing.assert_array_equal(chw(T.CenterCrop(20)(img)), (want * 255).round().astype(np.uint8))


@pytest.mark.parametrize("mode,np_mode", [("constant", "constant"), ("edge", "edge"), ("reflect", "reflect"),
                                          ("symmetric", "symmetric")])
def test_pad_matches_numpy(mode, np_mode):
    spec = [(0, 0), (2, 4), (1, 3)]  # (left, top, right, bottom) = (1, 2, 3, 4)
    x = tensor_rgb()
    np.testing.assert_array_equal(T.Pad((1, 2, 3, 4), padding_mode=mode)(x).numpy(), np.pad(x.numpy(), spec,
                                                                                             mode=np_mode))
    out = T.Pad((1, 2, 3, 4), padding_mode=mode)(pil_rgb())
    np.testing.assert_array_equal(chw(out), np.pad(RGB.transpose(2, 0, 1), spec, mode=np_mode))


def test_pad_forms_fill_and_errors():
    x = tensor_rgb()
    assert tuple(T.Pad(2)(x).shape) == (3, 17, 21)
    assert tuple(T.Pad((1, 2))(x).shape) == (3, 17, 19)
    assert np.asarray(T.Pad(1, fill=(10, 20, 30))(pil_rgb()))[0, 0].tolist() == [10, 20, 30]
    assert float(T.Pad(1, fill=7)(x)[0, 0, 0]) == 7.0
    # negative padding crops (tensor and PIL alike)
    np.testing.assert_array_equal(F.pad(x, [-1, 2, 3, -2], padding_mode="edge").numpy(),
                                  np.pad(x.numpy()[:, :-2, 1:], [(0, 0), (2, 0), (0, 3)], mode="edge"))
    np.testing.assert_array_equal(chw(F.pad(pil_rgb(), [-1, 2, 3, -2], padding_mode="edge")),
                                  np.pad(RGB.transpose(2, 0, 1)[:, :-2, 1:], [(0, 0), (2, 0), (0, 3)], mode="edge"))
    with pytest.raises(ValueError, match="Padding mode should be either"):
        T.Pad(1, padding_mode="wrap")
    with pytest.raises(ValueError, match="Padding must be an int or a 1, 2, or 4 element tuple, not a 3"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(TypeError, match="Got inappropriate padding arg"):
        T.Pad("1")
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        F.pad(x, 13, padding_mode="reflect")


def test_flips_are_numpy_flips():
    x, img = tensor_rgb(), pil_rgb()
    np.testing.assert_array_equal(F.hflip(x).numpy(), np.flip(x.numpy(), -1))
    np.testing.assert_array_equal(F.vflip(x).numpy(), np.flip(x.numpy(), -2))
    np.testing.assert_array_equal(np.asarray(F.hflip(img)), np.flip(RGB, 1))
    np.testing.assert_array_equal(np.asarray(F.vflip(img)), np.flip(RGB, 0))
    assert T.RandomHorizontalFlip(p=1.0)(x).numpy().tolist() == np.flip(x.numpy(), -1).tolist()
    assert T.RandomVerticalFlip(p=0.0)(x) is x


def test_random_flip_rate_draws_from_lucids_generator():
    x = tensor_rgb()
    flipped = [not np.array_equal(T.RandomHorizontalFlip()(x).numpy(), x.numpy()) for _ in range(400)]
    assert 140 < sum(flipped) < 260  # Binomial(400, 0.5): mean 200, sd 10
    lucid.manual_seed(3)
    first = [T.RandomHorizontalFlip()(x) is x for _ in range(20)]
    lucid.manual_seed(3)
    assert [T.RandomHorizontalFlip()(x) is x for _ in range(20)] == first


def test_random_crop_is_a_slice_of_the_padded_image_and_reproducible():
    x, img = tensor_rgb(), pil_rgb()
    padded = np.pad(x.numpy(), [(0, 0), (4, 4), (4, 4)])
    lucid.manual_seed(0)
    out = T.RandomCrop(10, padding=4)(x)
    assert tuple(out.shape) == (3, 10, 10)
    hits = [(i, j) for i in range(padded.shape[1] - 9) for j in range(padded.shape[2] - 9)
            if np.array_equal(padded[:, i:i + 10, j:j + 10], out.numpy())]
    assert hits
    lucid.manual_seed(0)
    np.testing.assert_array_equal(T.RandomCrop(10, padding=4)(x).numpy(), out.numpy())
    # the same draw on the PIL image gives the same region
    lucid.manual_seed(0)
    np.testing.assert_array_equal(chw(T.RandomCrop(10, padding=4)(img)), (out.numpy() * 255).round())
    # offsets cover the whole range uniformly
    lucid.manual_seed(1)
    offs = [T.RandomCrop.get_params(x, (10, 10))[:2] for _ in range(300)]
    assert {i for i, _ in offs} == set(range(4)) and {j for _, j in offs} == set(range(8))
    with pytest.raises(ValueError, match="Required crop size"):
        T.RandomCrop(20)(x)
    assert tuple(T.RandomCrop(20, pad_if_needed=True)(x).shape) == (3, 20, 20)
    assert T.RandomCrop(20, pad_if_needed=True, padding_mode="edge")(img).size == (20, 20)


# ---- colour ------------------------------------------------------------------------------------------------------

def test_grayscale():
    img, u8 = pil_rgb(), T.PILToTensor()(pil_rgb())
    np.testing.assert_array_equal(np.asarray(T.Grayscale()(img)), np.asarray(img.convert("L")))
    three = T.Grayscale(3)(img)
    assert three.mode == "RGB" and np.array_equal(np.asarray(three)[..., 1], np.asarray(img.convert("L")))
    r, g, b = (RGB[..., c].astype(np.float32) for c in range(3))
    want = (np.float32(0.2989) * r + np.float32(0.587) * g + np.float32(0.114) * b).astype(np.uint8)
    out = T.Grayscale()(u8)
    assert out.dtype == lucid.uint8 and tuple(out.shape) == (1, 13, 17)
    assert np.abs(out.numpy()[0].astype(int) - want).max() <= 1  # float32 rounding before the truncation
    assert tuple(T.Grayscale(3)(tensor_rgb()).shape) == (3, 13, 17)
    with pytest.raises(ValueError, match="num_output_channels should be either 1 or 3"):
        F.rgb_to_grayscale(img, 2)
    assert T.RandomGrayscale(p=1.0)(img).mode == "RGB"  # keeps the channel count
    assert np.array_equal(T.RandomGrayscale(p=1.0)(u8).numpy()[2], T.Grayscale()(u8).numpy()[0])


def test_lambda_and_compose():
    pipe = T.Compose([T.CenterCrop(10), T.ToTensor(), T.Lambda(lambda t: t * 2)])
    out = pipe(pil_rgb())
    np.testing.assert_allclose(out.numpy(), 2 * T.ToTensor()(T.CenterCrop(10)(pil_rgb())).numpy())
    assert "CenterCrop(size=(10, 10))" in repr(pipe)
    with pytest.raises(TypeError, match="Argument lambd should be callable"):
        T.Lambda(3)


def test_random_resized_crop_params_and_output():
    x = tensor_rgb()
    lucid.manual_seed(0)
    scale, ratio = (0.3, 0.9), (0.5, 2.0)
    for _ in range(100):
        i, j, h, w = T.RandomResizedCrop.get_params(x, scale, ratio)
        assert 0 <= i and 0 <= j and i + h <= 13 and j + w <= 17
        assert 0.3 * 221 * 0.6 <= h * w <= 0.9 * 221 * 1.6  # area in scale, up to the rounding of h and w
    lucid.manual_seed(5)
    out = T.RandomResizedCrop((6, 7))(x)
    lucid.manual_seed(5)
    i, j, h, w = T.RandomResizedCrop.get_params(x, (0.08, 1.0), (3 / 4, 4 / 3))
    assert tuple(out.shape) == (3, 6, 7)
    np.testing.assert_allclose(out.numpy(), F.resize(x[:, i:i + h, j:j + w], [6, 7]).numpy(), rtol=1e-6)
    lucid.manual_seed(5)
    pil_out = T.RandomResizedCrop((6, 7))(pil_rgb())  # the same draw: PIL's crop and bilinear resize
    want = pil_rgb().crop((j, i, j + w, i + h)).resize((7, 6), Image.BILINEAR)
    np.testing.assert_array_equal(np.asarray(pil_out), np.asarray(want))
    # no crop of the area and ratio found in 10 tries: the central crop of the nearest ratio
    assert T.RandomResizedCrop.get_params(x, (2.0, 2.0), (5.0, 6.0)) == ((13 - 3) // 2, 0, 3, 17)
    assert T.RandomResizedCrop.get_params(x, (2.0, 2.0), (0.1, 0.2)) == (0, (17 - 3) // 2, 13, 3)


def test_tensor_inputs_need_no_pillow():
    import subprocess
    import sys
    code = ("import sys; sys.modules['PIL'] = None; sys.modules['PIL.Image'] = None\n"
            "import lucid; from lucid.vision import transforms as T\n"
            "x = lucid.rand(3, 8, 8)\n"
            "y = T.Compose([T.RandomResizedCrop(4), T.RandomHorizontalFlip(), T.Normalize([0.5]*3, [0.5]*3)])(x)\n"
            "assert tuple(y.shape) == (3, 4, 4)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# ---- colour jitter, blur, erasing --------------------------------------------------------------------------------

def _gray(x: np.ndarray) -> np.ndarray:
    return np.float32(0.2989) * x[0] + np.float32(0.587) * x[1] + np.float32(0.114) * x[2]


def test_brightness_contrast_saturation_closed_forms():
    x = tensor_rgb()
    a = x.numpy()
    np.testing.assert_allclose(F.adjust_brightness(x, 1.7).numpy(), np.clip(1.7 * a, 0, 1), rtol=1e-6)
    mean = _gray(a).mean()
    np.testing.assert_allclose(F.adjust_contrast(x, 0.4).numpy(), np.clip(0.4 * a + 0.6 * mean, 0, 1),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(F.adjust_saturation(x, 1.5).numpy(), np.clip(1.5 * a - 0.5 * _gray(a), 0, 1),
                               rtol=1e-5, atol=1e-6)
    u8 = T.PILToTensor()(pil_rgb())
    out = F.adjust_brightness(u8, 0.5)
    assert out.dtype == lucid.uint8
    assert np.abs(out.numpy().astype(int) - (0.5 * RGB.transpose(2, 0, 1)).astype(int)).max() <= 1
    for fn, name in ((F.adjust_brightness, "brightness_factor"), (F.adjust_contrast, "contrast_factor"),
                     (F.adjust_saturation, "saturation_factor")):
        with pytest.raises(ValueError, match=rf"{name} \(-1\) is not non-negative"):
            fn(x, -1)
    # PIL images go through Pillow's ImageEnhance: factor 1 is the image, 0 brightness is black
    assert np.array_equal(np.asarray(F.adjust_brightness(pil_rgb(), 1.0)), RGB)
    assert not np.asarray(F.adjust_brightness(pil_rgb(), 0.0)).any()
    gray = np.asarray(F.adjust_saturation(pil_rgb(), 0.0))
    assert np.array_equal(gray[..., 0], gray[..., 2])


def test_adjust_hue_against_colorsys():
    import colorsys
    x = tensor_rgb()
    a = x.numpy()
    want = np.empty_like(a)
    for i in range(a.shape[1]):
        for j in range(a.shape[2]):
            h, s, v = colorsys.rgb_to_hsv(*a[:, i, j])
            want[:, i, j] = colorsys.hsv_to_rgb((h + 0.3) % 1.0, s, v)
    np.testing.assert_allclose(F.adjust_hue(x, 0.3).numpy(), want, atol=1e-5)
    np.testing.assert_allclose(F.adjust_hue(x, 0.0).numpy(), a, atol=1e-5)
    u8 = F.adjust_hue(T.PILToTensor()(pil_rgb()), -0.2)
    assert u8.dtype == lucid.uint8
    with pytest.raises(ValueError, match=r"hue_factor \(0.7\) is not in \[-0.5, 0.5\]"):
        F.adjust_hue(x, 0.7)
    pil_out = np.asarray(F.adjust_hue(pil_rgb(), 0.3)).astype(float)  # Pillow's 8-bit HSV: close, not equal
    assert np.abs(pil_out - want.transpose(1, 2, 0) * 255).mean() < 4


def test_color_jitter_draws_and_applies():
    x = tensor_rgb()
    np.testing.assert_allclose(T.ColorJitter(brightness=(0.5, 0.5))(x).numpy(), F.adjust_brightness(x, 0.5).numpy())
    jitter = T.ColorJitter(0.4, 0.4, 0.4, 0.1)
    assert jitter.brightness == [0.6, 1.4] and jitter.hue == [-0.1, 0.1]
    assert T.ColorJitter().brightness is None  # the identity is not drawn
    lucid.manual_seed(2)
    draws = [T.ColorJitter.get_params(jitter.brightness, None, jitter.saturation, jitter.hue) for _ in range(200)]
    assert all(sorted(order) == [0, 1, 2, 3] for order, *_ in draws)
    assert all(0.6 <= b <= 1.4 and c is None and -0.1 <= h <= 0.1 for _, b, c, s, h in draws)
    assert len({tuple(order) for order, *_ in draws}) > 12  # many of the 24 orders
    lucid.manual_seed(2)
    first = jitter(x).numpy()
    lucid.manual_seed(2)
    np.testing.assert_array_equal(jitter(x).numpy(), first)
    assert jitter(pil_rgb()).size == (17, 13)
    with pytest.raises(ValueError, match="If brightness is a single number, it must be non negative"):
        T.ColorJitter(brightness=-0.1)
    with pytest.raises(ValueError, match=r"hue values should be between \(-0.5, 0.5\)"):
        T.ColorJitter(hue=0.6)


def test_gaussian_blur_is_the_reflect_padded_convolution():
    x = tensor_rgb()
    a = x.numpy()
    kx, ky, sx, sy = 5, 3, 1.2, 0.7

    def kernel(k, s):
        t = np.arange(k) - (k - 1) / 2
        g = np.exp(-0.5 * (t / s) ** 2)
        return g / g.sum()
    k2 = np.outer(kernel(ky, sy), kernel(kx, sx))
    padded = np.pad(a, [(0, 0), (ky // 2, ky // 2), (kx // 2, kx // 2)], mode="reflect")
    want = np.zeros_like(a, dtype=np.float64)
    for di in range(ky):
        for dj in range(kx):
            want += k2[di, dj] * padded[:, di:di + 13, dj:dj + 17]
    np.testing.assert_allclose(F.gaussian_blur(x, [kx, ky], [sx, sy]).numpy(), want, atol=1e-5)
    u8 = T.PILToTensor()(pil_rgb())
    blurred = F.gaussian_blur(u8, [kx, ky], [sx, sy])
    assert blurred.dtype == lucid.uint8
    ref = np.zeros_like(want)
    p8 = np.pad(RGB.transpose(2, 0, 1).astype(np.float64), [(0, 0), (1, 1), (2, 2)], mode="reflect")
    for di in range(ky):
        for dj in range(kx):
            ref += k2[di, dj] * p8[:, di:di + 13, dj:dj + 17]
    assert np.abs(blurred.numpy().astype(float) - ref).max() <= 0.51
    np.testing.assert_array_equal(chw(F.gaussian_blur(pil_rgb(), [kx, ky], [sx, sy])), blurred.numpy())
    lucid.manual_seed(0)
    sigmas = [T.GaussianBlur.get_params(0.1, 2.0) for _ in range(200)]
    assert all(0.1 <= s <= 2.0 for s in sigmas) and 0.9 < np.mean(sigmas) < 1.2
    with pytest.raises(ValueError, match="Kernel size value should be an odd and positive number"):
        T.GaussianBlur(4)
    with pytest.raises(ValueError, match="sigma values should be positive and of the form"):
        T.GaussianBlur(3, sigma=(2.0, 1.0))
    with pytest.raises(ValueError, match="kernel_size should have odd and positive integers"):
        F.gaussian_blur(x, [2, 3])


def test_random_erasing_erases_one_rectangle():
    x = tensor_rgb()
    lucid.manual_seed(4)
    out = T.RandomErasing(p=1.0, value=(0.25, 0.5, 0.75))(x)
    changed = np.argwhere((out.numpy() != x.numpy()).any(0))
    rows, cols = changed[:, 0], changed[:, 1]
    i, j, h, w = rows.min(), cols.min(), rows.max() - rows.min() + 1, cols.max() - cols.min() + 1
    region = out.numpy()[:, i:i + h, j:j + w]
    np.testing.assert_array_equal(region, np.broadcast_to(np.array([0.25, 0.5, 0.75], np.float32)[:, None, None],
                                                          region.shape))
    assert 0.02 * 221 * 0.5 <= h * w <= 0.33 * 221 * 1.5
    lucid.manual_seed(4)
    np.testing.assert_array_equal(T.RandomErasing(p=1.0, value=(0.25, 0.5, 0.75))(x).numpy(), out.numpy())
    assert T.RandomErasing(p=0.0)(x) is x
    noisy = T.RandomErasing(p=1.0, value="random")(x)
    assert tuple(noisy.shape) == (3, 13, 17) and (noisy.numpy() != x.numpy()).any()
    y = x.clone()
    assert T.RandomErasing(p=1.0, inplace=True)(y) is y
    with pytest.raises(ValueError, match="If value is str, it should be 'random'"):
        T.RandomErasing(value="noise")
    with pytest.raises(ValueError, match="Scale should be between 0 and 1"):
        T.RandomErasing(scale=(0.1, 1.5))
    with pytest.raises(ValueError, match="it should have either a single value or 3"):
        T.RandomErasing(p=1.0, value=(1, 2))(x)
    with pytest.raises(TypeError, match="img should be Tensor Image"):
        T.RandomErasing()(pil_rgb())


def test_module_transforms_are_modules_as_in_torchvision():
    x = tensor_rgb()
    assert isinstance(T.Resize(4), lucid.nn.Module) and isinstance(T.RandomHorizontalFlip(), lucid.nn.Module)
    assert not isinstance(T.ToTensor(), lucid.nn.Module) and not isinstance(T.Compose([]), lucid.nn.Module)
    seq = lucid.nn.Sequential(T.CenterCrop(5), T.Normalize([0.5] * 3, [0.5] * 3))
    np.testing.assert_allclose(seq(x).numpy(), (x.numpy()[:, 4:9, 6:11] - 0.5) / 0.5, rtol=1e-6)
    flip = T.RandomHorizontalFlip(p=1.0).to(lucid.float32)  # Module.to reaches no transform method
    assert np.array_equal(flip(x).numpy(), np.flip(x.numpy(), -1))
    assert repr(T.RandomHorizontalFlip(0.3)) == "RandomHorizontalFlip(p=0.3)"
