"""lucid.datasets: the bundled digits (shapes, dtypes, class counts, a few known values) and the IDX reader on
small files written here, including truncated and corrupt ones."""
import gzip
import io
import struct

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.datasets import load_digits, load_mnist, read_idx
from lucid.utils.data import DataLoader, Generator, TensorDataset, random_split


# ---------------------------------------------------------------------------------------------------- digits
def test_digits_shapes_and_dtypes():
    d = load_digits()
    assert d.data.shape == (1797, 64) and d.data.dtype == lucid.float32
    assert d.images.shape == (1797, 8, 8) and d.images.dtype == lucid.float32
    assert d.target.shape == (1797,) and d.target.dtype == lucid.int64
    assert d.target_names == list(range(10)) and len(d.feature_names) == 64 and d.frame is None
    assert "Alpaydin" in d.DESCR and "CC BY 4.0" in d.DESCR
    assert "CC BY 4.0" in load_digits.__doc__
    assert d["data"] is d.data
    np.testing.assert_array_equal(d.images.numpy().reshape(1797, 64), d.data.numpy())


def test_digits_values():
    X, y = load_digits(return_X_y=True)
    X, y = X.numpy(), y.numpy()
    assert np.bincount(y).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    assert X.sum() == 561718.0 and X.min() == 0.0 and X.max() == 16.0
    assert X[0, :8].tolist() == [0, 0, 5, 13, 9, 1, 0, 0]
    assert X[1796, :16].tolist() == [0, 0, 10, 14, 8, 1, 0, 0, 0, 2, 16, 14, 6, 1, 0, 0]
    assert y[:10].tolist() == list(range(10)) and y[-5:].tolist() == [9, 0, 8, 9, 8]


def test_digits_n_class():
    d = load_digits(n_class=3)
    assert d.data.shape == (537, 64) and sorted(set(d.target.tolist())) == [0, 1, 2]
    with pytest.raises(ValueError, match="n_class"):
        load_digits(n_class=11)


def test_digits_license_notice_is_shipped():
    from importlib import resources
    notice = resources.files("lucid.datasets").joinpath("data", "NOTICE.txt").read_text()
    assert "CC BY 4.0" in notice and "UCI" in notice


def test_digits_as_frame():
    pd = pytest.importorskip("pandas")
    X, y = load_digits(return_X_y=True, as_frame=True)
    assert isinstance(X, pd.DataFrame) and X.shape == (1797, 64) and y.name == "target"


def test_digits_train_softmax_regression_through_a_loader():
    X, y = load_digits(return_X_y=True)
    train, test = random_split(TensorDataset(X / 16.0, y), [0.8, 0.2], generator=Generator().manual_seed(0))
    W = lucid.zeros(64, 10, requires_grad=True)
    b = lucid.zeros(10, requires_grad=True)
    loader = DataLoader(train, batch_size=64, shuffle=True, generator=Generator().manual_seed(0))
    for _ in range(8):
        for xb, yb in loader:
            loss = -(F.log_softmax(xb @ W + b, dim=1) * F.one_hot(yb, 10)).sum(1).mean()
            loss.backward()
            with lucid.no_grad():
                W -= 0.5 * W.grad
                b -= 0.5 * b.grad
            W.grad = b.grad = None
    xt, yt = next(iter(DataLoader(test, batch_size=len(test))))
    accuracy = ((xt @ W + b).argmax(1) == yt).float().mean().item()
    assert accuracy > 0.9


# ---------------------------------------------------------------------------------------------------- IDX
IDX_CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D, np.float64: 0x0E}


def idx_bytes(arr: np.ndarray, code: int | None = None) -> bytes:
    """The IDX encoding of arr, written from the format's definition."""
    code = IDX_CODES[arr.dtype.type] if code is None else code
    head = struct.pack(">HBB", 0, code, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
    return head + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


@pytest.mark.parametrize("dtype", list(IDX_CODES))
@pytest.mark.parametrize("compress", [False, True])
def test_idx_round_trip(tmp_path, dtype, compress):
    arr = (np.arange(2 * 3 * 4) - 7).astype(dtype).reshape(2, 3, 4)
    if dtype in (np.float32, np.float64):
        arr = arr / 3
    raw = idx_bytes(arr)
    path = tmp_path / ("x.idx.gz" if compress else "x.idx")
    path.write_bytes(gzip.compress(raw) if compress else raw)
    t = read_idx(path)
    assert isinstance(t, lucid.Tensor) and t.shape == (2, 3, 4)
    assert t.dtype == lucid._dtype.from_numpy_dtype(np.dtype(dtype))
    np.testing.assert_array_equal(t.numpy(), arr)


def test_idx_from_file_object_and_str_path(tmp_path):
    arr = np.array([3, 1, 4, 1, 5], dtype=np.uint8)
    assert read_idx(io.BytesIO(idx_bytes(arr))).tolist() == [3, 1, 4, 1, 5]
    (tmp_path / "v").write_bytes(idx_bytes(arr))
    assert read_idx(str(tmp_path / "v")).tolist() == [3, 1, 4, 1, 5]


@pytest.mark.parametrize("raw, message", [
    (b"\x00\x00", "shorter than the 4-byte magic number"),
    (b"\x01\x02\x08\x01\x00\x00\x00\x01\x05", "bad magic number"),
    (b"\x00\x00\x0a\x01\x00\x00\x00\x01\x05", "unknown IDX data type code 0x0a"),
    (b"\x00\x00\x08\x03\x00\x00\x00\x01", "truncated IDX header"),
    (idx_bytes(np.zeros((4, 5), np.int32))[:-3], "truncated IDX data"),
    (idx_bytes(np.zeros(3, np.uint8)) + b"\x00", "1 bytes after the data"),
    (gzip.compress(idx_bytes(np.zeros(50, np.uint8)))[:-10], "corrupt or truncated gzip data"),
])
def test_idx_errors(tmp_path, raw, message):
    path = tmp_path / "bad"
    path.write_bytes(raw)
    with pytest.raises(ValueError, match=message):
        read_idx(path)


def test_idx_truncated_file_written_then_cut(tmp_path):
    path = tmp_path / "images"
    path.write_bytes(idx_bytes(np.ones((10, 28, 28), np.uint8)))
    with open(path, "r+b") as f:
        f.truncate(4 + 12 + 28 * 28 * 9)
    with pytest.raises(ValueError, match=r"shape \[10, 28, 28\] of uint8 needs 7840 bytes, the file has 7056"):
        read_idx(path)


def _write_mnist(folder, prefix, n, compress):
    images = np.arange(n * 28 * 28, dtype=np.int64).reshape(n, 28, 28).astype(np.uint8)
    labels = (np.arange(n) % 10).astype(np.uint8)
    folder.mkdir(parents=True, exist_ok=True)
    for stem, arr in ((f"{prefix}-images-idx3-ubyte", images), (f"{prefix}-labels-idx1-ubyte", labels)):
        raw = idx_bytes(arr)
        (folder / (stem + ".gz" if compress else stem)).write_bytes(gzip.compress(raw) if compress else raw)
    return images, labels


def test_load_mnist(tmp_path):
    images, labels = _write_mnist(tmp_path, "train", 6, compress=True)
    _write_mnist(tmp_path, "t10k", 3, compress=False)
    x, y = load_mnist(tmp_path)
    assert x.shape == (6, 28, 28) and x.dtype == lucid.uint8 and y.dtype == lucid.int64
    np.testing.assert_array_equal(x.numpy(), images)
    assert y.tolist() == labels.tolist()
    x, y = load_mnist(tmp_path, train=False)
    assert x.shape == (3, 28, 28) and y.shape == (3,)


def test_load_mnist_torchvision_layout(tmp_path):
    _write_mnist(tmp_path / "MNIST" / "raw", "t10k", 2, compress=False)
    x, _ = load_mnist(tmp_path, train=False)
    assert x.shape == (2, 28, 28)


def test_load_mnist_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        load_mnist(tmp_path)
    _write_mnist(tmp_path, "train", 4, compress=False)
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(idx_bytes(np.zeros(5, np.uint8)))
    with pytest.raises(ValueError, match="has 4 images but train-labels-idx1-ubyte has 5 labels"):
        load_mnist(tmp_path)
