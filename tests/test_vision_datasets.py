"""lucid.vision.datasets: fixture files written here in the real formats (IDX, CIFAR's python pickles, image
folders), read by lucid and - where it can read them - by torchvision (tests/helpers.torchvision_or_skip); the
network is never used (downloads are served by a monkeypatched urlopen)."""
import gzip
import hashlib
import io
import os
import pickle
import struct
import urllib.error
import urllib.request

import numpy as np
import pytest

import lucid
from helpers import idx_bytes, torchvision_or_skip, write_mnist
from lucid.utils.data import DataLoader
from lucid.vision import datasets, transforms

Image = pytest.importorskip("PIL.Image")


def both_raise(exc, ours, theirs) -> tuple[str, str]:
    """The messages of the ``exc`` that lucid's and torchvision's calls raise."""
    with pytest.raises(exc) as e:
        ours()
    with pytest.raises(exc) as e_tv:
        theirs()
    return str(e.value), str(e_tv.value)


# ---- MNIST family -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", ["MNIST", "FashionMNIST", "KMNIST"])
def test_mnist_family_matches_torchvision_on_the_same_files(tmp_path, cls):
    tv = torchvision_or_skip()
    written = write_mnist(tmp_path / cls / "raw")
    for train, split in ((True, "train"), (False, "t10k")):
        ours = getattr(datasets, cls)(str(tmp_path), train=train)
        theirs = getattr(tv.datasets, cls)(str(tmp_path), train=train)
        assert ours.data.dtype == lucid.uint8 and ours.targets.dtype == lucid.int64
        np.testing.assert_array_equal(ours.data.numpy(), theirs.data.numpy())
        np.testing.assert_array_equal(ours.targets.numpy(), theirs.targets.numpy())
        np.testing.assert_array_equal(ours.data.numpy(), written[split][0])
        assert len(ours) == len(theirs) and ours.classes == theirs.classes
        assert ours.class_to_idx == theirs.class_to_idx and ours.raw_folder == theirs.raw_folder
        img, target = ours[3]
        their_img, their_target = theirs[3]
        assert img.mode == their_img.mode == "L" and target == their_target and type(target) is int
        np.testing.assert_array_equal(np.asarray(img), np.asarray(their_img))
        assert repr(ours) == repr(theirs)


def test_mnist_reads_gzipped_files_and_transforms_and_repr(tmp_path):
    tv = torchvision_or_skip()
    written = write_mnist(tmp_path / "MNIST" / "raw", gz=True)
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    ds = datasets.MNIST(tmp_path, train=True, transform=tf, target_transform=lambda t: t + 100)
    x, y = ds[2]
    assert tuple(x.shape) == (1, 28, 28) and x.dtype == lucid.float32
    np.testing.assert_allclose(x.numpy()[0], (written["train"][0][2] / 255.0 - 0.1307) / 0.3081, rtol=1e-5)
    assert y == int(written["train"][1][2]) + 100
    tv_tf = tv.transforms.Compose([tv.transforms.ToTensor(), tv.transforms.Normalize((0.1307,), (0.3081,))])
    write_mnist(tmp_path / "tv" / "MNIST" / "raw")  # torchvision reads uncompressed files only
    theirs = tv.datasets.MNIST(str(tmp_path / "tv"), transform=tv_tf)
    ours = datasets.MNIST(str(tmp_path / "tv"), transform=tf)
    assert repr(ours) == repr(theirs)
    np.testing.assert_allclose(ours[1][0].numpy(), theirs[1][0].numpy(), rtol=1e-6)


def test_mnist_subsetting_by_assignment_and_the_dataloader(tmp_path):
    write_mnist(tmp_path / "MNIST" / "raw", n=(10, 3))
    ds = datasets.MNIST(tmp_path, transform=transforms.ToTensor())
    full = ds[5][0].numpy()
    ds.data, ds.targets = ds.data[4:], ds.targets[4:]  # how people subset torchvision's datasets
    assert len(ds) == 6
    np.testing.assert_array_equal(ds[1][0].numpy(), full)
    x, y = next(iter(DataLoader(ds, batch_size=4, shuffle=False)))
    assert tuple(x.shape) == (4, 1, 28, 28) and tuple(y.shape) == (4,) and y.dtype == lucid.int64
    with pytest.warns(UserWarning, match="train_data has been renamed data"):
        assert ds.train_data is ds.data


def test_mnist_missing_files_and_bad_arguments(tmp_path):
    with pytest.raises(RuntimeError, match="Dataset not found. You can use download=True to download it") as e:
        datasets.MNIST(tmp_path)
    msg = str(e.value)
    assert "train-images-idx3-ubyte" in msg and "t10k-labels-idx1-ubyte" in msg
    assert os.path.join(str(tmp_path), "MNIST", "raw") in msg
    with pytest.raises(ValueError, match="transforms or transform/target_transform"):
        datasets.vision.VisionDataset(tmp_path, transforms=lambda a, b: (a, b), transform=lambda a: a)
    folder = tmp_path / "MNIST" / "raw"
    write_mnist(folder)
    (folder / "train-labels-idx1-ubyte").write_bytes(idx_bytes(np.zeros((7, 2), np.uint8)))
    with pytest.raises(ValueError, match="expected uint8 labels of 1 dimension"):
        datasets.MNIST(tmp_path)


def test_mnist_legacy_processed_files(tmp_path):
    processed = tmp_path / "MNIST" / "processed"
    processed.mkdir(parents=True)
    images = lucid.from_numpy(np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28))
    for name in ("training.pt", "test.pt"):
        lucid.save((images, lucid.tensor([3, 4])), processed / name)
    ds = datasets.MNIST(tmp_path, train=False)
    assert ds.targets.tolist() == [3, 4] and ds[1][1] == 4


def test_emnist_split_files_and_classes_match_torchvision(tmp_path):
    tv = torchvision_or_skip()
    raw = tmp_path / "EMNIST" / "raw"
    write_mnist(raw, prefix=("emnist-letters-train", "emnist-letters-test"))
    ours = datasets.EMNIST(tmp_path, split="letters", train=False)
    theirs = tv.datasets.EMNIST(str(tmp_path), split="letters", train=False)
    np.testing.assert_array_equal(ours.data.numpy(), theirs.data.numpy())
    assert ours.classes == theirs.classes and len(ours.classes) == 27 and ours[0][1] == theirs[0][1]
    ours, theirs = both_raise(ValueError, lambda: datasets.EMNIST(tmp_path, split="nope"),
                              lambda: tv.datasets.EMNIST(str(tmp_path), split="nope"))
    assert ours == theirs and "Unknown value 'nope' for argument split" in ours


# ---- downloads (the network is a monkeypatched urlopen) -----------------------------------------------------------

class _Response(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def test_download_with_no_network_names_the_files_to_place(tmp_path, monkeypatch):
    def offline(request, timeout=None):
        raise urllib.error.URLError("no network")
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(RuntimeError) as e:
        datasets.FashionMNIST(tmp_path, download=True)
    msg = str(e.value)
    assert msg.startswith("Error downloading train-images-idx3-ubyte.gz")
    assert "no network" in msg and "t10k-labels-idx1-ubyte" in msg
    assert os.path.join(str(tmp_path), "FashionMNIST", "raw") in msg
    assert not any(p.is_file() for p in tmp_path.rglob("*"))  # nothing half-written left behind
    with pytest.raises(RuntimeError, match="cifar-10-python.tar.gz"):
        datasets.CIFAR10(tmp_path, download=True)


def test_download_fetches_verifies_md5_and_decompresses(tmp_path, monkeypatch):
    served = {}
    rng = np.random.default_rng(1)
    for split, count in (("train", 4), ("t10k", 2)):
        served[f"{split}-images-idx3-ubyte.gz"] = gzip.compress(idx_bytes(rng.integers(0, 256, (count, 28, 28),
                                                                                        dtype=np.uint8)))
        served[f"{split}-labels-idx1-ubyte.gz"] = gzip.compress(idx_bytes(np.arange(count, dtype=np.uint8)))
    urls = []

    def urlopen(request, timeout=None):
        urls.append(request.full_url)
        if request.full_url.startswith(datasets.MNIST.mirrors[0]):  # the first mirror is down
            raise urllib.error.URLError("mirror down")
        return _Response(served[request.full_url.rsplit("/", 1)[1]])
    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    resources = [(name, hashlib.md5(data).hexdigest()) for name, data in served.items()]
    monkeypatch.setattr(datasets.MNIST, "resources", resources)
    ds = datasets.MNIST(tmp_path, train=False, download=True)
    assert ds.targets.tolist() == [0, 1] and (tmp_path / "MNIST" / "raw" / "t10k-images-idx3-ubyte").is_file()
    assert urls[:2] == [datasets.MNIST.mirrors[0] + resources[0][0], datasets.MNIST.mirrors[1] + resources[0][0]]
    calls = len(urls)
    datasets.MNIST(tmp_path, download=True)  # already there: no download
    assert len(urls) == calls
    monkeypatch.setattr(datasets.MNIST, "resources", [(n, "0" * 32) for n, _ in resources])
    with pytest.raises(RuntimeError, match="does not have the md5 0{32}"):
        datasets.MNIST(tmp_path / "other", download=True)
    assert not list((tmp_path / "other").rglob("*.gz"))  # the corrupt download is removed


# ---- CIFAR ---------------------------------------------------------------------------------------------------------

class _Python2Pickler(pickle._Pickler):
    """Writes bytes as Python 2 ``str`` (BINSTRING), as the published CIFAR files (pickled by Python 2) hold them."""
    dispatch = dict(pickle._Pickler.dispatch)

    def _save_py2_str(self, obj):
        self.write(pickle.BINSTRING + struct.pack("<i", len(obj)) + obj)
        self.memoize(obj)
    dispatch[bytes] = _save_py2_str


def dump(obj, path, python2: bool):
    with open(path, "wb") as f:
        if python2:
            _Python2Pickler(f, protocol=2).dump(obj)
        else:
            pickle.dump(obj, f, protocol=2)  # Python 3: bytes as _codecs.encode(str, 'latin1')


def write_cifar(root, hundred=False, python2=True, n=4, seed=0):
    rng = np.random.default_rng(seed)
    folder = root / ("cifar-100-python" if hundred else "cifar-10-batches-py")
    folder.mkdir(parents=True, exist_ok=True)
    names = ["train", "test"] if hundred else [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    key = "fine_labels" if hundred else "labels"
    for name in names:
        batch = {"batch_label": "fixture " + name, key: [int(v) for v in rng.integers(0, 10, n)],
                 "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8), "filenames": [f"{i}.png" for i in range(n)]}
        if hundred:
            batch["coarse_labels"] = [0] * n
        dump(batch, folder / name, python2)
    classes = [f"class{i}" for i in range(10)]
    dump({"fine_label_names" if hundred else "label_names": classes}, folder / ("meta" if hundred else "batches.meta"),
         python2)
    return folder, names


def torchvision_way(folder, names, key):
    """What torchvision's CIFAR does with the files: plain pickle.load (latin1), stack, reshape, to HWC."""
    data, targets = [], []
    for name in names:
        with open(folder / name, "rb") as f:
            entry = pickle.load(f, encoding="latin1")
        data.append(entry["data"])
        targets.extend(entry[key])
    return np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1)), targets


@pytest.mark.parametrize("python2", [True, False], ids=["python2-pickles", "python3-pickles"])
def test_cifar10_reads_the_pickles_as_the_format_says(tmp_path, python2):
    folder, names = write_cifar(tmp_path, python2=python2)
    for train, split_names in ((True, names[:5]), (False, names[5:])):
        ds = datasets.CIFAR10(tmp_path, train=train)
        data, targets = torchvision_way(folder, split_names, "labels")
        assert ds.data.dtype == np.uint8 and ds.data.shape == data.shape and ds.targets == targets
        np.testing.assert_array_equal(ds.data, data)
        img, target = ds[1]
        assert img.mode == "RGB" and img.size == (32, 32) and target == targets[1]
        np.testing.assert_array_equal(np.asarray(img), data[1])
    assert ds.classes == [f"class{i}" for i in range(10)] and ds.class_to_idx["class3"] == 3
    assert repr(ds).splitlines()[:2] == ["Dataset CIFAR10", "    Number of datapoints: 4"]
    x, y = next(iter(DataLoader(datasets.CIFAR10(tmp_path, transform=transforms.ToTensor()), batch_size=8)))
    assert tuple(x.shape) == (8, 3, 32, 32) and y.tolist() == torchvision_way(folder, names[:2], "labels")[1]


def test_cifar100_fine_labels(tmp_path):
    folder, names = write_cifar(tmp_path, hundred=True)
    ds = datasets.CIFAR100(tmp_path, train=False)
    data, targets = torchvision_way(folder, ["test"], "fine_labels")
    np.testing.assert_array_equal(ds.data, data)
    assert ds.targets == targets and len(ds) == 4


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned > pwned.txt",))


def test_cifar_refuses_pickles_that_run_code(tmp_path, monkeypatch):
    folder, _ = write_cifar(tmp_path)
    monkeypatch.chdir(tmp_path)
    dump({"data": _Boom(), "labels": []}, folder / "data_batch_3", python2=False)
    with pytest.raises(pickle.UnpicklingError, match="refusing to load (posix|nt).system"):
        datasets.CIFAR10(tmp_path)
    assert not (tmp_path / "pwned.txt").exists()
    dump({"data": np.array([object()] * 3), "labels": [0, 1, 2]}, folder / "data_batch_3", python2=False)
    with pytest.raises(pickle.UnpicklingError):
        datasets.CIFAR10(tmp_path)
    dump({"data": np.zeros((2, 5), np.uint8), "labels": [0, 1]}, folder / "data_batch_3", python2=False)
    with pytest.raises(pickle.UnpicklingError, match="not a CIFAR batch"):
        datasets.CIFAR10(tmp_path)
    (folder / "data_batch_3").unlink()
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted.*data_batch_3"):
        datasets.CIFAR10(tmp_path)


# ---- folders, FakeData, SVHN --------------------------------------------------------------------------------------

def write_image_folder(root):
    rng = np.random.default_rng(0)
    for path in ("dog/b.png", "dog/a.JPG", "cat/x/deep.png", "cat/c.bmp", "bird/readme.txt", "cat/notes.txt"):
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        if path.endswith(".txt"):
            full.write_text("not an image")
        else:
            Image.fromarray(rng.integers(0, 256, (5, 6, 3), dtype=np.uint8)).save(full)


def test_image_folder_matches_torchvision(tmp_path):
    tv = torchvision_or_skip()
    write_image_folder(tmp_path)
    ours, theirs = both_raise(FileNotFoundError, lambda: datasets.ImageFolder(str(tmp_path)),
                              lambda: tv.datasets.ImageFolder(str(tmp_path)))
    assert ours == theirs and "Found no valid file for the classes bird" in ours
    ours = datasets.ImageFolder(str(tmp_path), allow_empty=True)
    theirs = tv.datasets.ImageFolder(str(tmp_path), allow_empty=True)
    assert ours.samples == theirs.samples == ours.imgs and ours.targets == theirs.targets
    assert ours.classes == theirs.classes == ["bird", "cat", "dog"] and ours.class_to_idx == theirs.class_to_idx
    for i in range(len(ours)):
        np.testing.assert_array_equal(np.asarray(ours[i][0]), np.asarray(theirs[i][0]))
        assert ours[i][1] == theirs[i][1]
    pngs = datasets.ImageFolder(str(tmp_path), is_valid_file=lambda p: p.endswith(".png"), allow_empty=True)
    assert [os.path.basename(p) for p, _ in pngs.samples] == ["deep.png", "b.png"]


def test_dataset_folder_with_a_loader_and_extensions(tmp_path):
    tv = torchvision_or_skip()
    for cls, n in (("neg", 2), ("pos", 3)):
        (tmp_path / cls).mkdir()
        for i in range(n):
            np.save(tmp_path / cls / f"{i}.npy", np.full(3, i))
    ours = datasets.DatasetFolder(str(tmp_path), loader=np.load, extensions=(".npy",))
    theirs = tv.datasets.DatasetFolder(str(tmp_path), loader=np.load, extensions=(".npy",))
    assert ours.samples == theirs.samples and len(ours) == 5
    np.testing.assert_array_equal(ours[4][0], theirs[4][0])
    with pytest.raises(ValueError, match="Both extensions and is_valid_file cannot be None or not None"):
        datasets.DatasetFolder(str(tmp_path), loader=np.load)
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder in"):
        datasets.ImageFolder(str(tmp_path / "neg"))


def test_fake_data_repeats_per_index_and_leaves_the_generator_alone():
    ds = datasets.FakeData(size=5, image_size=(3, 12, 10), num_classes=4, transform=transforms.ToTensor())
    lucid.manual_seed(7)
    before = lucid.rand(3).numpy()
    lucid.manual_seed(7)
    x, y = ds[2]
    assert tuple(x.shape) == (3, 12, 10) and x.dtype == lucid.float32 and 0 <= y < 4 and type(y) is int
    np.testing.assert_array_equal(lucid.rand(3).numpy(), before)
    np.testing.assert_array_equal(ds[2][0].numpy(), x.numpy())
    assert not np.array_equal(ds[3][0].numpy(), x.numpy())
    with pytest.raises(IndexError, match="FakeData index out of range"):
        ds[5]
    assert len(ds) == 5 and repr(ds).startswith("Dataset FakeData\n    Number of datapoints: 5\n")


def test_svhn_messages(tmp_path):
    with pytest.raises(ValueError, match="Unknown value 'val' for argument split"):
        datasets.SVHN(tmp_path, split="val")
    with pytest.raises(RuntimeError, match="test_32x32.mat"):
        datasets.SVHN(tmp_path, split="test")
    (tmp_path / "test_32x32.mat").write_bytes(b"")
    try:
        import scipy  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install scipy"):
            datasets.SVHN(tmp_path, split="test")
