"""lucid.datasets: the bundled UCI handwritten digits (``load_digits``) and readers for MNIST-format IDX files
that users download themselves (``read_idx``, ``load_mnist``)."""
from ._digits import Bunch, load_digits
from .idx import load_mnist, parse_idx, read_idx

__all__ = ["Bunch", "load_digits", "load_mnist", "parse_idx", "read_idx"]
