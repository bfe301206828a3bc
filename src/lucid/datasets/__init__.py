"""lucid.datasets: the bundled UCI handwritten digits (``load_digits``) and tiny Shakespeare
(``load_tinyshakespeare``), generated data (shape images: ``make_shapes``; two-moons points: ``make_moons``), and
readers for MNIST-format IDX files that users download themselves (``read_idx``, ``load_mnist``)."""
from ._digits import Bunch, load_digits
from ._moons import make_moons
from ._shakespeare import CharCorpus, load_tinyshakespeare
from ._shapes import SHAPE_CLASSES, make_shapes
from .idx import load_mnist, parse_idx, read_idx

__all__ = ["Bunch", "CharCorpus", "SHAPE_CLASSES", "load_digits", "load_mnist", "load_tinyshakespeare",
           "make_moons", "make_shapes", "parse_idx", "read_idx"]
