"""The bundled UCI handwritten digits (``load_digits``), so that examples and tests train offline."""
from __future__ import annotations

import functools
import gzip
import io
from importlib import resources

import numpy as np

from .. import _dtype
from .._creation import from_numpy, tensor

DESCR = """\
Optical recognition of handwritten digits
-----------------------------------------

1797 images of handwritten digits, 8x8 pixels each, 10 classes (0..9), about 180 images per class.
Each pixel is an integer in 0..16: the number of "on" pixels in a 4x4 block of the original 32x32 binary
bitmap (NIST preprocessing), which reduces dimensionality and gives invariance to small distortions.
The writers of these images (13 people) are distinct from those of the UCI training set (30 people).

Creators: E. Alpaydin and C. Kaynak, Bogazici University, 1998.
Source: UCI Machine Learning Repository, https://archive.ics.uci.edu/dataset/80 (DOI 10.24432/C50P49).
License: Creative Commons Attribution 4.0 International (CC BY 4.0). lucid ships the copy distributed with
scikit-learn, unchanged; see lucid/datasets/data/NOTICE.txt.

References:
  C. Kaynak (1995) Methods of Combining Multiple Classifiers and Their Applications to Handwritten Digit
  Recognition, MSc Thesis, Institute of Graduate Studies in Science and Engineering, Bogazici University.
  E. Alpaydin, C. Kaynak (1998) Cascading Classifiers, Kybernetika.
"""


class Bunch(dict):
    """A dict whose keys are also attributes (``bunch.data`` is ``bunch["data"]``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value

    def __dir__(self):
        return list(self.keys())


@functools.lru_cache(maxsize=1)
def _digits_table() -> np.ndarray:
    """The (1797, 65) int64 table: 64 pixels then the label; parsed once per process."""
    raw = resources.files(__package__).joinpath("data", "digits.csv.gz").read_bytes()
    table = np.loadtxt(io.StringIO(gzip.decompress(raw).decode("ascii")), delimiter=",", dtype=np.int64)
    table.setflags(write=False)
    return table


def load_digits(*, n_class: int = 10, return_X_y: bool = False, as_frame: bool = False):
    """The UCI optical recognition of handwritten digits data set (Alpaydin & Kaynak, 1998; CC BY 4.0).

    Returns a ``Bunch`` with
      - ``data``: float32 Tensor (n, 64), pixel counts 0..16, row-major 8x8;
      - ``images``: float32 Tensor (n, 8, 8), the same pixels as images;
      - ``target``: int64 Tensor (n,), the digit;
      - ``target_names`` (the classes, ``list(range(n_class))``), ``feature_names``, ``frame`` and ``DESCR``;
    or ``(data, target)`` with ``return_X_y=True``. ``n_class`` keeps the digits 0..n_class-1 (1797 images for
    10). ``as_frame=True`` gives pandas objects instead of tensors (pandas must be installed).

    Data: UCI Machine Learning Repository, https://archive.ics.uci.edu/dataset/80, licensed CC BY 4.0; see
    ``DESCR`` and lucid/datasets/data/NOTICE.txt.
    """
    if not 1 <= n_class <= 10:
        raise ValueError(f"n_class should be between 1 and 10, got {n_class}")
    table = _digits_table()
    table = table[table[:, -1] < n_class]
    pixels, labels = table[:, :-1].astype(np.float32), table[:, -1]
    feature_names = [f"pixel_{r}_{c}" for r in range(8) for c in range(8)]
    if as_frame:
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("load_digits(as_frame=True) needs pandas: pip install pandas") from e
        data = pd.DataFrame(pixels, columns=feature_names)
        target = pd.Series(labels, name="target")
        frame = pd.concat([data, target], axis=1)
    else:
        data, target, frame = from_numpy(pixels), tensor(labels, dtype=_dtype.int64), None
    if return_X_y:
        return data, target
    return Bunch(data=data, target=target, frame=frame, feature_names=feature_names,
                 target_names=list(range(n_class)), images=from_numpy(pixels.reshape(-1, 8, 8)), DESCR=DESCR)
