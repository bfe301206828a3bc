"""lucid.vision.transforms' rotate/affine, the colour ops and the augmentation transforms (RandomRotation,
RandomAffine, AutoAugment, RandAugment, TrivialAugmentWide...) against torchvision on the same PIL images and
tensors: the functional forms exactly (float tensors to float32 rounding), the random transforms by the
distribution of their draws and exactly for a fixed draw (lucid's draws replayed into torchvision's)."""
import collections
import re

import numpy as np
import pytest

import lucid
from helpers import torchvision_or_skip
from lucid.vision import transforms as T
from lucid.vision.transforms import autoaugment
from lucid.vision.transforms import functional as F

Image = pytest.importorskip("PIL.Image")
RNG = np.random.default_rng(0)
PIXELS = RNG.integers(0, 256, (3, 13, 17), dtype=np.uint8)


@pytest.fixture(scope="module")
def tv():
    return torchvision_or_skip()


def images(kind: str):
    """The same image as (lucid's, torchvision's) input: a PIL image, a uint8 tensor or a float tensor."""
    import torch
    if kind == "pil":
        img = Image.fromarray(PIXELS.transpose(1, 2, 0))
        return img, img
    arr = PIXELS if kind == "uint8" else (PIXELS / 255.0).astype(np.float32)
    return lucid.from_numpy(arr.copy()), torch.from_numpy(arr.copy())


def pixels(img) -> np.ndarray:
    return np.asarray(img).astype(np.float64) if not hasattr(img, "numpy") else img.numpy().astype(np.float64)


def assert_same(got, want, kind, byte_atol=0):
    assert type(got).__name__ in ("Image", "Tensor") and (kind == "pil") == (not hasattr(got, "numpy"))
    if kind != "pil":
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    g, w = pixels(got), pixels(want)
    assert g.shape == w.shape
    if kind == "float32":
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=3e-6)
    elif kind == "uint8" and byte_atol:  # nearly every byte equal, the rest off by the rounding of a few ops
        assert np.abs(g - w).max() <= byte_atol and (g != w).mean() < 0.02
    else:
        np.testing.assert_array_equal(g, w)


def interp(module, name):
    return getattr(module.InterpolationMode, name)


GEOMETRY = [
    ("rotate", (30.0,), {}),
    ("rotate", (90,), {}),
    ("rotate", (33.0,), {"interpolation": "BILINEAR", "expand": True, "fill": [10, 20, 30]}),
    ("rotate", (-17.0,), {"center": [3, 4], "fill": 5}),
    ("rotate", (200.0,), {"expand": True}),
    ("affine", (10.0, [2, -3], 1.2, [5.0, 3.0]), {}),
    ("affine", (0.0, [0, 0], 0.7, 12.0), {"interpolation": "BILINEAR", "fill": 1}),
    ("affine", (-25.0, [1, 1], 1.0, [0.0]), {"center": [0, 0], "fill": [0, 255, 0]}),
]
COLOUR = [("invert", ()), ("posterize", (3,)), ("solarize", (128,)), ("adjust_sharpness", (1.7,)),
          ("adjust_sharpness", (0.0,)), ("autocontrast", ()), ("equalize", ()), ("adjust_gamma", (0.6, 1.1))]


@pytest.mark.parametrize("kind", ["pil", "uint8", "float32"])
@pytest.mark.parametrize("name, args, kwargs", GEOMETRY, ids=[f"{n}{a}{sorted(k)}" for n, a, k in GEOMETRY])
def test_rotate_and_affine_match_torchvision(tv, kind, name, args, kwargs):
    ours, theirs = images(kind)
    kw, tv_kw = dict(kwargs), dict(kwargs)
    if "interpolation" in kwargs:
        kw["interpolation"] = interp(F, kwargs["interpolation"])
        tv_kw["interpolation"] = interp(tv.transforms.functional, kwargs["interpolation"])
    if kind != "pil" and isinstance(kw.get("fill"), int):
        kw["fill"] = tv_kw["fill"] = kw["fill"] / (255 if kind == "float32" else 1)
    assert_same(getattr(F, name)(ours, *args, **kw), getattr(tv.transforms.functional, name)(theirs, *args, **tv_kw),
                kind)


@pytest.mark.parametrize("kind", ["pil", "uint8", "float32"])
@pytest.mark.parametrize("name, args", COLOUR, ids=[f"{n}{a}" for n, a in COLOUR])
def test_colour_ops_match_torchvision(tv, kind, name, args):
    ours, theirs = images(kind)
    tv_fn = getattr(tv.transforms.functional, name)
    try:
        want = tv_fn(theirs, *args)
    except TypeError as e:  # uint8-only ops on a float image; solarize's threshold above 1
        with pytest.raises(TypeError, match=re.escape(str(e).split(", but")[0])):
            getattr(F, name)(ours, *args)
        return
    assert_same(getattr(F, name)(ours, *args), want, kind)


def test_colour_ops_on_batches_and_gray(tv):
    import torch
    batch = RNG.integers(0, 256, (2, 1, 9, 8), dtype=np.uint8)
    for name, args in COLOUR:
        got = getattr(F, name)(lucid.from_numpy(batch.copy()), *args)
        want = getattr(tv.transforms.functional, name)(torch.from_numpy(batch.copy()), *args)
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=name)


def test_functional_errors_match_torchvision(tv):
    import torch
    ours, theirs = lucid.zeros(3, 4, 4), torch.zeros(3, 4, 4)
    for call in (lambda f, x: f.rotate(x, "30"), lambda f, x: f.affine(x, 0.0, [1], 1.0, 0.0),
                 lambda f, x: f.affine(x, 0.0, [0, 0], 0.0, 0.0), lambda f, x: f.posterize(x, 9),
                 lambda f, x: f.adjust_sharpness(x, -1.0), lambda f, x: f.rotate(x, 1.0, fill=[1.0, 2.0]),
                 lambda f, x: f.rotate(x, 1.0, interpolation=f.InterpolationMode.BICUBIC)):
        with pytest.raises(Exception) as want:
            call(tv.transforms.functional, theirs)
        with pytest.raises(type(want.value)) as got:
            call(F, ours)
        assert str(got.value) == str(want.value)


# ---- random transforms ----------------------------------------------------------------------------------------------

class Replay:
    """Records lucid's draws (rand, randint) while a lucid transform runs, then feeds the same values to
    torchvision's transform through torch.rand / torch.randint, so both take the same random path."""

    def __init__(self, monkeypatch):
        self.monkeypatch, self.draws = monkeypatch, []

    def record(self):
        for name in ("rand", "randint"):
            original = getattr(lucid, name)

            def wrapped(*args, _original=original, _name=name, **kwargs):
                out = _original(*args, **kwargs)
                self.draws.append((_name, out.tolist()))
                return out
            self.monkeypatch.setattr(lucid, name, wrapped)

    def replay(self):
        import torch
        self.monkeypatch.undo()
        draws = iter(self.draws)

        def fake(name):
            def draw(*args, **kwargs):
                kind, value = next(draws)
                assert kind == name, f"lucid drew {kind} where torchvision draws {name}"
                return torch.tensor(value, dtype=torch.float32 if name == "rand" else torch.int64)
            return draw
        for name in ("rand", "randint"):
            self.monkeypatch.setattr(torch, name, fake(name))
        # RandomRotation/RandomAffine draw with torch.empty(1).uniform_(low, high)
        self.monkeypatch.setattr(torch.Tensor, "uniform_", lambda t, low=0.0, high=1.0: t.fill_(
            low + (high - low) * next(draws)[1][0]))
        return draws


def run_both(monkeypatch, make, tv, kind, seeds=range(6)):
    """``make(transforms_module, interpolation)`` built from lucid's and from torchvision's module, run on the same
    image with the same draws. Tensor images are resampled bilinearly and bytes compared to +-3 (at most 2%
    of them differing): torch's sampling
    grid comes from its BLAS's float32 matmul, whose last bit varies with the BLAS loaded (the tests load
    reference BLAS); with nearest sampling, a last-bit change at a pixel boundary moves a whole pixel. PIL images,
    resampled by Pillow, are compared exactly with nearest sampling."""
    mode = "NEAREST" if kind == "pil" else "BILINEAR"
    for seed in seeds:
        lucid.manual_seed(seed)
        ours, theirs = images(kind)
        replay = Replay(monkeypatch)
        replay.record()
        got = make(T, interp(T, mode))(ours)
        left = replay.replay()
        want = make(tv.transforms, interp(tv.transforms, mode))(theirs)
        monkeypatch.undo()
        assert next(left, None) is None  # torchvision used every draw lucid made
        assert_same(got, want, kind, byte_atol=3)


@pytest.mark.parametrize("kind", ["pil", "uint8", "float32"])
def test_random_rotation_and_affine_give_torchvisions_output_for_the_same_draws(tv, monkeypatch, kind):
    fill = 7 if kind != "float32" else 0.5
    cases = [(lambda m, i: m.RandomRotation(40, interpolation=i, fill=fill)),
             (lambda m, i: m.RandomRotation((10, 80), interpolation=i, expand=True)),
             (lambda m, i: m.RandomAffine(20, translate=(0.2, 0.1), scale=(0.8, 1.2), shear=(-5, 5, -3, 3),
                                          interpolation=i, fill=fill)),
             (lambda m, i: m.RandomAffine(0, shear=10, interpolation=i))]
    for make in cases:
        run_both(monkeypatch, make, tv, kind, seeds=range(3))


@pytest.mark.parametrize("kind", ["pil", "uint8"])
@pytest.mark.parametrize("policy", ["IMAGENET", "CIFAR10", "SVHN"])
def test_autoaugment_gives_torchvisions_output_for_the_same_draws(tv, monkeypatch, kind, policy):
    run_both(monkeypatch, lambda m, i: m.AutoAugment(getattr(m.AutoAugmentPolicy, policy), interpolation=i,
                                                     fill=[9, 9, 9]), tv, kind, seeds=range(8))


@pytest.mark.parametrize("kind", ["pil", "uint8"])
def test_randaugment_and_trivialaugment_give_torchvisions_output_for_the_same_draws(tv, monkeypatch, kind):
    run_both(monkeypatch, lambda m, i: m.RandAugment(num_ops=3, magnitude=12, interpolation=i), tv, kind,
             seeds=range(8))
    run_both(monkeypatch, lambda m, i: m.TrivialAugmentWide(interpolation=i), tv, kind, seeds=range(8))


def test_magnitude_bins_are_torchvisions(tv):
    ours = T.TrivialAugmentWide()._augmentation_space(31)
    theirs = tv.transforms.TrivialAugmentWide()._augmentation_space(31)
    assert list(ours) == list(theirs)
    for name, (bins, signed) in theirs.items():
        assert ours[name][1] == signed
        if bins.ndim:
            np.testing.assert_array_equal(ours[name][0], bins.numpy(), err_msg=name)
    ours = T.RandAugment()._augmentation_space(31, (13, 17))
    theirs = tv.transforms.RandAugment()._augmentation_space(31, (13, 17))
    assert list(ours) == list(theirs)
    np.testing.assert_array_equal(ours["TranslateY"][0], theirs["TranslateY"][0].numpy())
    np.testing.assert_array_equal(ours["Posterize"][0], theirs["Posterize"][0].numpy())
    assert list(T.AutoAugment()._augmentation_space(10, (5, 5))) == \
        list(tv.transforms.AutoAugment()._augmentation_space(10, (5, 5)))


def chosen(monkeypatch, transform, n):
    """The (op, magnitude) pairs ``transform`` applies over ``n`` calls (the ops themselves skipped)."""
    seen = []
    monkeypatch.setattr(autoaugment, "_apply_op", lambda img, op, magnitude, **kw: seen.append((op, magnitude)))
    img = lucid.zeros(3, 8, 8, dtype=lucid.uint8)
    for _ in range(n):
        transform(img)
    return seen


def test_the_draws_are_uniform(monkeypatch):
    lucid.manual_seed(0)
    seen = chosen(monkeypatch, T.TrivialAugmentWide(), 1400)
    ops = collections.Counter(op for op, _ in seen)
    assert len(ops) == 14 and all(60 <= c <= 140 for c in ops.values())  # 100 expected each
    rotations = [m for op, m in seen if op == "Rotate"]
    assert min(rotations) >= -135 and max(rotations) <= 135 and abs(np.mean(np.sign(rotations))) < 0.4
    seen = chosen(monkeypatch, T.RandAugment(num_ops=2, magnitude=30), 700)
    assert len(seen) == 1400 and len(collections.Counter(op for op, _ in seen)) == 14
    angles = np.array([T.RandomRotation((-30, 30)).get_params([-30.0, 30.0]) for _ in range(2000)])
    assert angles.min() >= -30 and angles.max() < 30
    assert abs(angles.mean()) < 1.5 and abs(angles.var() - 300) < 30  # U(-30, 30): mean 0, variance 300
    policies = collections.Counter(T.AutoAugment.get_params(25)[0] for _ in range(2500))
    assert len(policies) == 25 and all(60 <= c <= 140 for c in policies.values())


def test_seeded_pipelines_repeat_and_reprs(tv):
    pipeline = T.Compose([T.RandomAffine(15, translate=(0.1, 0.1)), T.TrivialAugmentWide(), T.RandomRotation(5)])
    img = images("uint8")[0]
    lucid.manual_seed(3)
    first = pipeline(img).numpy()
    lucid.manual_seed(3)
    np.testing.assert_array_equal(pipeline(img).numpy(), first)
    for make in (lambda m: m.RandomRotation(30, center=(1, 2)), lambda m: m.RandomAffine(10, scale=(0.5, 2)),
                 lambda m: m.RandomPosterize(4), lambda m: m.RandomSolarize(100, p=0.2),
                 lambda m: m.RandomAdjustSharpness(2), lambda m: m.RandomInvert(), lambda m: m.RandomEqualize(),
                 lambda m: m.AutoAugment(m.AutoAugmentPolicy.SVHN), lambda m: m.RandAugment(),
                 lambda m: m.TrivialAugmentWide()):
        assert repr(make(T)) == repr(make(tv.transforms))


@pytest.mark.parametrize("src, dst", [("uint8", "float32"), ("float32", "uint8"), ("uint8", "int16"),
                                      ("int16", "uint8"), ("float64", "int16"), ("int32", "float64"),
                                      ("float32", "float64")])
def test_convert_image_dtype_matches_torchvision(tv, src, dst):
    import torch
    arr = (RNG.random((2, 3, 5)) if src.startswith("float") else
           RNG.integers(0, np.iinfo(src).max, (2, 3, 5))).astype(src)
    got = F.convert_image_dtype(lucid.from_numpy(arr.copy()), getattr(lucid, dst))
    want = tv.transforms.functional.convert_image_dtype(torch.from_numpy(arr.copy()), getattr(torch, dst))
    assert str(got.dtype).split(".")[-1] == dst
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert repr(T.ConvertImageDtype(lucid.uint8))[:18] == "ConvertImageDtype("
    with pytest.raises(RuntimeError, match="cannot be performed safely"):
        F.convert_image_dtype(lucid.zeros(1, 2, 2), lucid.int32)


def test_random_apply_choice_and_order(tv, monkeypatch):
    import random
    run_both(monkeypatch, lambda m, i: m.RandomApply([m.RandomRotation(20, interpolation=i), m.RandomInvert(p=1.0)],
                                                     p=0.5), tv, "pil", seeds=range(6))
    ours = T.RandomChoice([T.RandomInvert(p=1.0), T.RandomEqualize(p=1.0), T.RandomAutocontrast(p=1.0)], p=[1, 2, 3])
    theirs = tv.transforms.RandomChoice([tv.transforms.RandomInvert(p=1.0), tv.transforms.RandomEqualize(p=1.0),
                                         tv.transforms.RandomAutocontrast(p=1.0)], p=[1, 2, 3])
    order_ours = T.RandomOrder([T.RandomPosterize(3, p=1.0), T.RandomSolarize(100, p=1.0)])
    order_theirs = tv.transforms.RandomOrder([tv.transforms.RandomPosterize(3, p=1.0),
                                              tv.transforms.RandomSolarize(100, p=1.0)])
    img = images("pil")[0]
    for seed in range(5):  # torchvision draws these from Python's random: the same seed, the same choice
        random.seed(seed)
        got = (ours(img), order_ours(img))
        random.seed(seed)
        want = (theirs(img), order_theirs(img))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert repr(ours) == repr(theirs) and repr(order_ours) == repr(order_theirs)
    with pytest.raises(TypeError, match="Argument transforms should be a sequence"):
        T.RandomOrder(T.RandomInvert())


PERSPECTIVE = [([[0, 0], [16, 0], [16, 12], [0, 12]], [[2, 1], [15, 0], [13, 11], [1, 12]]),
               ([[0, 0], [16, 0], [16, 12], [0, 12]], [[0, 3], [16, 0], [16, 12], [4, 9]])]


@pytest.mark.parametrize("kind", ["pil", "uint8", "float32"])
@pytest.mark.parametrize("points", PERSPECTIVE)
def test_perspective_matches_torchvision(tv, kind, points):
    ours, theirs = images(kind)
    fill = [5, 6, 7] if kind != "float32" else [0.5, 0.5, 0.5]
    got = F.perspective(ours, *points, fill=fill)
    want = tv.transforms.functional.perspective(theirs, *points, fill=fill)
    assert_same(got, want, kind, byte_atol=1)


@pytest.mark.parametrize("kind", ["pil", "uint8"])
def test_random_perspective_gives_torchvisions_output_for_the_same_draws(tv, monkeypatch, kind):
    run_both(monkeypatch, lambda m, i: m.RandomPerspective(0.6, p=0.7, interpolation=i, fill=3), tv, kind)
