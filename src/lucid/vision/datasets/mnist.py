"""torchvision's MNIST family: ``MNIST``, ``FashionMNIST``, ``KMNIST``, ``EMNIST``, read from the IDX files in
torchvision's layout ``root/<ClassName>/raw/`` (raw or gzipped)."""
from __future__ import annotations

import os
import shutil
import string
import warnings

import lucid
from lucid.datasets.idx import read_idx

from .utils import check_integrity, download_from_mirrors, extract_archive, verify_str_arg
from .vision import _ImageArrays

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "EMNIST", "read_image_file", "read_label_file"]


def _idx_path(path: str) -> str | None:
    """``path`` or ``path.gz``, whichever exists."""
    for candidate in (path, path + ".gz"):
        if os.path.isfile(candidate):
            return candidate
    return None


def read_image_file(path) -> lucid.Tensor:
    """An IDX image file (``...-idx3-ubyte``, raw or gzipped) as a uint8 (N, H, W) tensor."""
    x = read_idx(_idx_path(os.fspath(path)) or path)
    if x.dtype != lucid.uint8 or x.ndim != 3:
        raise ValueError(f"{path}: expected uint8 images of 3 dimensions, got {x.dtype} of shape {list(x.shape)}")
    return x


def read_label_file(path) -> lucid.Tensor:
    """An IDX label file (``...-idx1-ubyte``) as an int64 (N,) tensor."""
    x = read_idx(_idx_path(os.fspath(path)) or path)
    if x.dtype != lucid.uint8 or x.ndim != 1:
        raise ValueError(f"{path}: expected uint8 labels of 1 dimension, got {x.dtype} of shape {list(x.shape)}")
    return x.long()


class MNIST(_ImageArrays):
    """MNIST from ``root/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte`` (or ``.gz``): items are
    ``(PIL image 'L' 28x28, int)``; ``data`` is uint8 (N, 28, 28), ``targets`` int64 (N,)."""
    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    training_file = "training.pt"
    test_file = "test.pt"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]

    def __init__(self, root, train: bool = True, transform=None, target_transform=None, download: bool = False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if self._check_legacy_exist():
            self.data, self.targets = self._load_legacy_data()
            return
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError(f"Dataset not found. You can use download=True to download it (or {self._files_hint()})")
        self.data, self.targets = self._load_data()

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def processed_folder(self) -> str:
        return os.path.join(self.root, type(self).__name__, "processed")

    @property
    def class_to_idx(self) -> dict:
        return {c: i for i, c in enumerate(self.classes)}

    def _raw_files(self) -> list[str]:
        """The IDX files this dataset reads (without ``.gz``)."""
        return [os.path.join(self.raw_folder, name[:-3]) for name, _ in self.resources]

    def _files_hint(self) -> str:
        names = ", ".join(os.path.basename(f) for f in self._raw_files())
        return f"place the files {names} (each may be gzipped, ending .gz) in {self.raw_folder}"

    def _check_exists(self) -> bool:
        return all(_idx_path(f) is not None for f in self._raw_files())

    def _check_legacy_exist(self) -> bool:
        return all(check_integrity(os.path.join(self.processed_folder, f))
                   for f in (self.training_file, self.test_file))

    def _load_legacy_data(self):
        # the (data, targets) pair older torchvision versions saved with torch.save
        return lucid.load(os.path.join(self.processed_folder, self.training_file if self.train else self.test_file),
                          weights_only=True)

    def _load_data(self):
        split = "train" if self.train else "t10k"
        return (read_image_file(os.path.join(self.raw_folder, f"{split}-images-idx3-ubyte")),
                read_label_file(os.path.join(self.raw_folder, f"{split}-labels-idx1-ubyte")))

    def download(self) -> None:
        """Fetch the gzipped files from the mirrors (md5-checked) into ``raw_folder`` and decompress them."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        hint = f"No mirror answered: download the files elsewhere and {self._files_hint()}."
        for filename, md5 in self.resources:
            download_from_mirrors(self.mirrors, filename, self.raw_folder, md5, extract=True, place_hint=hint)

    @property
    def train_labels(self):
        warnings.warn("train_labels has been renamed targets")
        return self.targets

    @property
    def test_labels(self):
        warnings.warn("test_labels has been renamed targets")
        return self.targets

    @property
    def train_data(self):
        warnings.warn("train_data has been renamed data")
        return self.data

    @property
    def test_data(self):
        warnings.warn("test_data has been renamed data")
        return self.data


class FashionMNIST(MNIST):
    """Fashion-MNIST from ``root/FashionMNIST/raw/`` (MNIST's file names)."""
    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class KMNIST(MNIST):
    """Kuzushiji-MNIST from ``root/KMNIST/raw/`` (MNIST's file names)."""
    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
                 ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
                 ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
                 ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134")]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class EMNIST(MNIST):
    """EMNIST from ``root/EMNIST/raw/emnist-<split>-{train,test}-{images-idx3,labels-idx1}-ubyte`` (or ``.gz``);
    ``split`` is one of byclass, bymerge, balanced, letters, digits, mnist. The images are stored transposed, as
    NIST wrote them (torchvision does not transpose them either)."""
    url = "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"
    md5 = "58c8d27c78d21e728a6bc7b3cc06412e"
    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    _merged_classes = {"c", "i", "j", "k", "l", "m", "o", "p", "s", "u", "v", "w", "x", "y", "z"}
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        "byclass": sorted(_all_classes),
        "bymerge": sorted(_all_classes - _merged_classes),
        "balanced": sorted(_all_classes - _merged_classes),
        "letters": ["N/A"] + list(string.ascii_lowercase),
        "digits": list(string.digits),
        "mnist": list(string.digits),
    }

    def __init__(self, root, split: str, **kwargs):
        self.split = verify_str_arg(split, "split", self.splits)
        self.training_file = f"training_{split}.pt"
        self.test_file = f"test_{split}.pt"
        super().__init__(root, **kwargs)
        self.classes = self.classes_split_dict[self.split]

    @property
    def _file_prefix(self) -> str:
        return f"emnist-{self.split}-{'train' if self.train else 'test'}"

    @property
    def images_file(self) -> str:
        return os.path.join(self.raw_folder, f"{self._file_prefix}-images-idx3-ubyte")

    @property
    def labels_file(self) -> str:
        return os.path.join(self.raw_folder, f"{self._file_prefix}-labels-idx1-ubyte")

    def _raw_files(self) -> list[str]:
        return [self.images_file, self.labels_file]

    def _load_data(self):
        return read_image_file(self.images_file), read_label_file(self.labels_file)

    def download(self) -> None:
        """Fetch NIST's gzip.zip (md5-checked), unzip it and decompress its .gz files into ``raw_folder``."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        hint = f"No mirror answered: download the files elsewhere and {self._files_hint()}."
        download_from_mirrors([self.url[:-len("gzip.zip")]], "gzip.zip", self.raw_folder, self.md5, extract=True,
                              place_hint=hint)
        gzip_folder = os.path.join(self.raw_folder, "gzip")
        for name in os.listdir(gzip_folder):
            if name.endswith(".gz"):
                extract_archive(os.path.join(gzip_folder, name), self.raw_folder)
        shutil.rmtree(gzip_folder)

