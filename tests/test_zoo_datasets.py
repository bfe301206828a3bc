"""lucid.datasets for the zoo: the bundled tiny Shakespeare corpus (size, vocabulary, split, encode/decode), the
generated shapes (shapes, dtypes, ranges, determinism, class balance, that each class is drawn as its shape) and
two-moons points (their half circles, noise and determinism)."""
import gzip
from importlib import resources

import numpy as np
import pytest

import lucid
from lucid.datasets import SHAPE_CLASSES, load_tinyshakespeare, make_moons, make_shapes
from lucid.datasets._shapes import _inside_distance


# ------------------------------------------------------------------------------------------- tiny Shakespeare
@pytest.fixture(scope="module")
def corpus():
    return load_tinyshakespeare()


def test_tinyshakespeare_text(corpus):
    assert len(corpus.text) == 1_115_394 and corpus.text.count("\n") == 40_000
    assert corpus.text.startswith("First Citizen:\nBefore we proceed any further, hear me speak.")
    assert corpus.text.endswith("Whiles thou art waking.\n")


def test_tinyshakespeare_vocabulary(corpus):
    assert corpus.chars == sorted(set(corpus.text)) and corpus.vocab_size == len(corpus.chars) == 65
    assert corpus.chars[:2] == ["\n", " "] and corpus.chars[-1] == "z"
    assert all(corpus.stoi[c] == i and corpus.itos[i] == c for i, c in enumerate(corpus.chars))
    assert corpus.encode("hello") == [corpus.stoi[c] for c in "hello"]
    assert corpus.decode(corpus.encode("To be, or not to be")) == "To be, or not to be"
    assert corpus.decode(lucid.tensor(corpus.encode("Romeo"))) == "Romeo"
    with pytest.raises(KeyError, match="'@' is not in the vocabulary"):
        corpus.encode("a@b")


def test_tinyshakespeare_split(corpus):
    n = len(corpus.text)
    assert corpus.train.dtype == corpus.val.dtype == lucid.int64
    assert corpus.train.shape == (int(0.9 * n),) and corpus.train.shape[0] + corpus.val.shape[0] == n
    assert corpus.decode(corpus.train[:100]) == corpus.text[:100]
    split = corpus.train.shape[0]
    assert corpus.decode(corpus.val[:100]) == corpus.text[split:split + 100]
    assert corpus.decode(corpus.val[-50:]) == corpus.text[-50:]
    ids = np.concatenate([corpus.train.numpy(), corpus.val.numpy()])
    assert ids.min() == 0 and ids.max() == 64
    np.testing.assert_array_equal(np.bincount(ids, minlength=65),
                                  [corpus.text.count(c) for c in corpus.chars])


def test_tinyshakespeare_other_split():
    corpus = load_tinyshakespeare(train_fraction=0.5)
    assert corpus.train.shape[0] == 557_697
    with pytest.raises(ValueError, match="train_fraction"):
        load_tinyshakespeare(train_fraction=1.0)


def test_tinyshakespeare_ships_with_notice():
    data = resources.files("lucid.datasets").joinpath("data")
    notice = data.joinpath("NOTICE.txt").read_text()
    assert "tinyshakespeare" in notice and "karpathy/char-rnn" in notice and "public domain" in notice
    assert len(gzip.decompress(data.joinpath("tinyshakespeare.txt.gz").read_bytes())) == 1_115_394


# ------------------------------------------------------------------------------------------------- shapes
def test_make_shapes_shapes_and_ranges():
    images, labels = make_shapes(60, size=24, seed=3)
    assert images.shape == (60, 3, 24, 24) and images.dtype == lucid.float32
    assert labels.shape == (60,) and labels.dtype == lucid.int64
    x = images.numpy()
    assert x.min() >= 0.0 and x.max() <= 1.0 and x.std() > 0.1
    assert set(labels.tolist()) <= set(range(len(SHAPE_CLASSES)))
    assert SHAPE_CLASSES == ["circle", "square", "triangle", "star", "cross", "ring"]
    empty_images, empty_labels = make_shapes(0)
    assert empty_images.shape == (0, 3, 32, 32) and empty_labels.shape == (0,)


def test_make_shapes_deterministic_by_seed():
    a, la = make_shapes(20, seed=7)
    b, lb = make_shapes(20, seed=7)
    c, _ = make_shapes(20, seed=8)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(la.numpy(), lb.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())


def test_make_shapes_balanced():
    _, labels = make_shapes(3000, size=8)
    counts = np.bincount(labels.numpy(), minlength=6)
    assert counts.min() > 400 and counts.max() < 600


def test_make_shapes_noise_free_shape_area():
    """Without noise the shape's inside is one exact colour (the most frequent in the image: the background has a
    gradient) covering a share of the image that fits its radius (18-42% of the side)."""
    images, _ = make_shapes(30, size=32, seed=1, noise=0.0)
    for img in images.numpy():
        _, counts = np.unique(img.reshape(3, -1).T, axis=0, return_counts=True)
        assert 0.02 < counts.max() / 32 ** 2 < 0.6


@pytest.mark.parametrize("name, inside, outside", [
    ("circle", [(0, 0), (0.9, 0)], [(0.8, 0.8)]),
    ("ring", [(0.8, 0), (0, -0.7)], [(0, 0), (1.1, 0)]),
    ("square", [(0, 0), (0.65, 0.05)], [(0.8, 0.8)]),  # vertices at radius 1 on the axes: a diamond in its frame
    ("triangle", [(0, 0), (0.9, 0)], [(-0.6, 0)]),  # vertices at angles 0, 120, 240 degrees
    ("star", [(0, 0), (0.9, 0)], [(0.5 * np.cos(np.pi / 5), 0.5 * np.sin(np.pi / 5))]),  # between two points
    ("cross", [(0, 0), (0.9, 0), (0, -0.9)], [(0.6, 0.6)]),
])
def test_each_class_is_drawn_as_its_shape(name, inside, outside):
    u, v = (np.array(c, dtype=np.float32) for c in zip(*inside))
    assert (_inside_distance(name, u, v) > 0).all()
    u, v = (np.array(c, dtype=np.float32) for c in zip(*outside))
    assert (_inside_distance(name, u, v) < 0).all()


@pytest.mark.parametrize("kwargs, match", [
    (dict(n=-1), "non-negative integer"), (dict(n=2.5), "non-negative integer"),
    (dict(n=4, size=4), "at least 8"), (dict(n=4, noise=-0.1), "noise"),
])
def test_make_shapes_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_shapes(**kwargs)


# ------------------------------------------------------------------------------------------------- moons
def test_make_moons_shapes_and_determinism():
    points, labels = make_moons(500, seed=3)
    assert points.shape == (500, 2) and points.dtype == lucid.float32
    assert labels.shape == (500,) and labels.dtype == lucid.int64 and set(labels.tolist()) == {0, 1}
    again, _ = make_moons(500, seed=3)
    np.testing.assert_array_equal(points.numpy(), again.numpy())
    assert not np.array_equal(points.numpy(), make_moons(500, seed=4)[0].numpy())
    assert make_moons(0)[0].shape == (0, 2)


def test_make_moons_noise_free_points_lie_on_their_half_circles():
    """Moon 0 on the upper unit half circle, moon 1 on the lower one centred at (1, 0.5); about half each."""
    points, labels = make_moons(2000, noise=0.0, seed=1)
    p, upper = points.numpy().astype(np.float64), labels.numpy() == 0
    np.testing.assert_allclose(np.hypot(p[upper, 0], p[upper, 1]), 1.0, rtol=1e-6)
    assert (p[upper, 1] >= 0).all()
    np.testing.assert_allclose(np.hypot(p[~upper, 0] - 1, p[~upper, 1] - 0.5), 1.0, rtol=1e-6)
    assert (p[~upper, 1] <= 0.5 + 1e-6).all()
    assert 900 < upper.sum() < 1100
    noisy, _ = make_moons(2000, noise=0.1, seed=1)  # the same angles and moons, plus N(0, 0.1^2) per coordinate
    assert np.std(noisy.numpy() - p) == pytest.approx(0.1, rel=0.05)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n=-1), "non-negative integer"), (dict(n=2.0), "non-negative integer"), (dict(n=True), "non-negative"),
    (dict(n=4, noise=-0.1), "noise"), (dict(n=4, noise=float("nan")), "noise"),
])
def test_make_moons_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_moons(**kwargs)
