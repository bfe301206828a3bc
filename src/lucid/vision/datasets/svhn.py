"""torchvision's ``SVHN`` (the cropped-digits .mat files ``root/{train,test,extra}_32x32.mat``), read with scipy
(an optional dependency, as in torchvision)."""
from __future__ import annotations

import os

import numpy as np

from .utils import download_from_mirrors, verify_str_arg
from .vision import VisionDataset

__all__ = ["SVHN"]


class SVHN(VisionDataset):
    """SVHN: items are ``(PIL image RGB 32x32, int)`` with the digit 0 labelled 0 (the files say 10); ``data`` is
    uint8 (N, 3, 32, 32) and ``labels`` int64 (N,), as torchvision's. The md5s are checked on download; a file
    placed by hand is read as it is."""
    split_list = {
        "train": ["http://ufldl.stanford.edu/housenumbers/train_32x32.mat", "train_32x32.mat",
                  "e26dedcc434d2e4c54c9b2d4a06d8373"],
        "test": ["http://ufldl.stanford.edu/housenumbers/test_32x32.mat", "test_32x32.mat",
                 "eb5a983be6a315427106f1b164d9cef3"],
        "extra": ["http://ufldl.stanford.edu/housenumbers/extra_32x32.mat", "extra_32x32.mat",
                  "a93ce644f1a588dc4d68dda5feec44a7"],
    }

    def __init__(self, root, split: str = "train", transform=None, target_transform=None, download: bool = False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", tuple(self.split_list))
        self.url, self.filename, self.file_md5 = self.split_list[split]
        if download:
            self.download()
        path = os.path.join(self.root, self.filename)
        if not os.path.isfile(path):
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it (or place "
                               f"{self.filename} in {self.root})")
        try:
            import scipy.io as sio
        except ImportError as e:
            raise ImportError("SVHN's .mat files are read with scipy, which is not installed: pip install scipy") from e
        loaded = sio.loadmat(path)
        self.data = np.transpose(loaded["X"], (3, 2, 0, 1))
        self.labels = loaded["y"].astype(np.int64).squeeze()
        np.place(self.labels, self.labels == 10, 0)

    def __getitem__(self, index):
        from lucid.vision.transforms._pil import pil
        img = pil().fromarray(np.transpose(self.data[index], (1, 2, 0)))
        return self._apply(img, int(self.labels[index]))

    def __len__(self):
        return len(self.data)

    def download(self) -> None:
        """Fetch the split's .mat file (md5-checked) into ``root``."""
        base, name = self.url.rsplit("/", 1)
        download_from_mirrors([base + "/"], name, self.root, self.file_md5, extract=False,
                              place_hint=f"No mirror answered: download {name} elsewhere and place it in {self.root}.")

    def extra_repr(self) -> str:
        return f"Split: {self.split}"
