"""torchvision's ``CIFAR10`` and ``CIFAR100``, read from the python-version files (``root/cifar-10-batches-py/``,
``root/cifar-100-python/``) with a reader that loads plain data and numpy arrays only (never arbitrary objects)."""
from __future__ import annotations

import os
import pickle

import numpy as np

from ._pickle import load_plain
from .utils import check_integrity, download_from_mirrors
from .vision import _ImageArrays

__all__ = ["CIFAR10", "CIFAR100"]


class CIFAR10(_ImageArrays):
    """CIFAR-10: items are ``(PIL image RGB 32x32, int)``; ``data`` is a uint8 (N, 32, 32, 3) numpy array and
    ``targets`` a list of ints, as torchvision's. Files: ``root/cifar-10-batches-py/{data_batch_1..5,
    test_batch, batches.meta}`` (what cifar-10-python.tar.gz holds). torchvision md5-checks them on every load;
    here the md5s are checked on download, and files placed by hand are read as they are, each checked for the
    format (a dict with a uint8 ``data`` array of N x 3072 and N labels)."""
    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [["data_batch_1", "c99cafc152244af753f735de768cd75f"],
                  ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
                  ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
                  ["data_batch_4", "634d18415352ddfa80567beed471001a"],
                  ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"]]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names", "md5": "5ff9c542aee3614f3951f8cda6e48888"}

    def __init__(self, root, train: bool = True, transform=None, target_transform=None, download: bool = False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it (or place "
                               f"{self.filename} extracted, the files {', '.join(self._file_names())}, in "
                               f"{os.path.join(self.root, self.base_folder)})")
        data, self.targets = [], []
        for name, _ in self.train_list if self.train else self.test_list:
            batch, labels = self._read_batch(os.path.join(self.root, self.base_folder, name))
            data.append(batch)
            self.targets.extend(labels)
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))  # to HWC
        self._load_meta()

    def _file_names(self) -> list[str]:
        return [name for name, _ in self.train_list + self.test_list] + [self.meta["filename"]]

    def _check_exists(self) -> bool:
        return all(os.path.isfile(os.path.join(self.root, self.base_folder, n)) for n in self._file_names())

    def _check_integrity(self) -> bool:
        """Whether every file is there with the md5 of the published data set."""
        return all(check_integrity(os.path.join(self.root, self.base_folder, name), md5)
                   for name, md5 in self.train_list + self.test_list + [[self.meta["filename"], self.meta["md5"]]])

    @staticmethod
    def _read_batch(path: str):
        entry = load_plain(path)
        labels = entry.get("labels", entry.get("fine_labels")) if isinstance(entry, dict) else None
        data = entry.get("data") if isinstance(entry, dict) else None
        if (not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3072
                or not isinstance(labels, list) or len(labels) != data.shape[0]
                or not all(isinstance(v, int) for v in labels)):
            raise pickle.UnpicklingError(f"{path}: not a CIFAR batch (a dict with 'data', a uint8 array of N x 3072, "
                                         "and N int 'labels' or 'fine_labels')")
        return data, labels

    def _load_meta(self) -> None:
        path = os.path.join(self.root, self.base_folder, self.meta["filename"])
        meta = load_plain(path)
        names = meta.get(self.meta["key"]) if isinstance(meta, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise pickle.UnpicklingError(f"{path}: no list of class names under '{self.meta['key']}'")
        self.classes = names
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def download(self) -> None:
        """Fetch and extract the archive (md5-checked) unless all the files are there with their md5s."""
        if self._check_integrity():
            return
        base, name = self.url.rsplit("/", 1)
        download_from_mirrors([base + "/"], name, self.root, self.tgz_md5, extract=True,
                              place_hint=f"No mirror answered: download {name} elsewhere and extract it in "
                                         f"{self.root} (giving {os.path.join(self.root, self.base_folder)}).")


class CIFAR100(CIFAR10):
    """CIFAR-100 (fine labels): ``root/cifar-100-python/{train, test, meta}``."""
    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"]]
    meta = {"filename": "meta", "key": "fine_label_names", "md5": "7973b15100ade9c7d40fb424638fde48"}
