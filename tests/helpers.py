"""Shared test helpers: float64 leaves, the gradcheck + gradgradcheck pair every op gets, the real torchvision as
an oracle, and MNIST- and CIFAR-format fixture files."""
import gzip
import os
import pickle
import struct
from pathlib import Path

import numpy as np

import lucid
from lucid.autograd import gradcheck, gradgradcheck


def leaf(*shape, low=-1.0, high=1.0, seed=0, requires_grad=True):
    """A float64 leaf with uniform values in [low, high)."""
    rng = np.random.default_rng(seed)
    return lucid.tensor(rng.uniform(low, high, shape), dtype=lucid.float64, requires_grad=requires_grad)


def error_of(fn):
    """``(type name, message)`` of what ``fn()`` raises, or None: compared between lucid and PyTorch."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the type and message are what is compared)
        return type(e).__name__, str(e)
    return None


def check_grads(fn, *inputs, atol=1e-5, rtol=1e-3, second=True):
    """First and second derivatives of fn at inputs against central finite differences."""
    assert gradcheck(fn, inputs, atol=atol, rtol=rtol)
    if second:
        assert gradgradcheck(fn, inputs, atol=atol, rtol=rtol)


def op_table_tests(ops, low=-2.0, high=2.0):
    """The two tests every entry of an op table gets: its float64 forward against the numpy reference, and
    gradcheck + gradgradcheck. ``ops``: (name, lucid fn, numpy ref, input shapes). Use as
    ``test_forward_matches_numpy, test_gradients = op_table_tests(OPS)``."""
    import pytest

    cases = [pytest.param(fn, ref, shapes, id=name) for name, fn, ref, shapes in ops]

    def inputs(shapes):
        return [leaf(*s, low=low, high=high, seed=i) for i, s in enumerate(shapes)]

    @pytest.mark.parametrize("fn, ref, shapes", cases)
    def test_forward_matches_numpy(fn, ref, shapes):
        xs = inputs(shapes)
        out = fn(*xs)
        expected = ref(*[x.detach().numpy() for x in xs])
        assert tuple(out.shape) == expected.shape and out.dtype == lucid.float64
        np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)

    @pytest.mark.parametrize("fn, ref, shapes", cases)
    def test_gradients(fn, ref, shapes):
        check_grads(fn, *inputs(shapes))

    return test_forward_matches_numpy, test_gradients


def torchvision_or_skip():
    """The real torchvision as a test oracle, or a pytest skip. torchvision 0.28's import registers fake kernels of
    its compiled ops through ``torch.library.register_fake``, which fails beside this torch; made a no-op first,
    its Python parts (transforms, datasets, utils) import and work."""
    import pytest
    torch = pytest.importorskip("torch")
    if "torchvision" not in __import__("sys").modules:
        register_fake = torch.library.register_fake
        torch.library.register_fake = lambda *a, **k: (lambda f: f)
        try:
            import torchvision  # noqa: F401
        except Exception as e:  # a broken install: skip rather than fail every vision test
            pytest.skip(f"torchvision does not import: {e}")
        finally:
            torch.library.register_fake = register_fake
    return pytest.importorskip("torchvision")


def idx_bytes(arr: np.ndarray) -> bytes:
    code = {np.uint8: 0x08, np.int32: 0x0C}[arr.dtype.type]
    return struct.pack(">HBB", 0, code, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape) + \
        arr.astype(arr.dtype.newbyteorder(">")).tobytes()


def write_mnist(folder, n=(7, 5), size=28, gz=False, prefix=("train", "t10k"), seed=0):
    """MNIST-format files in ``folder``; returns {split: (images, labels)}."""
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    out = {}
    for split, count in zip(prefix, n):
        images = rng.integers(0, 256, (count, size, size), dtype=np.uint8)
        labels = rng.integers(0, 10, count).astype(np.uint8)
        for kind, arr in (("images-idx3-ubyte", images), ("labels-idx1-ubyte", labels)):
            raw = idx_bytes(arr)
            name = os.path.join(folder, f"{split}-{kind}")
            with open(name + ".gz" if gz else name, "wb") as f:
                f.write(gzip.compress(raw) if gz else raw)
        out[split] = (images, labels)
    return out


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
    """CIFAR-10 (or -100) python-pickle batches and meta under ``root``, as cifar-10-python.tar.gz unpacks;
    returns (folder, batch file names)."""
    root = Path(root)
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
