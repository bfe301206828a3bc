"""finfo/iinfo, promote_types, result_type, can_cast, broadcast_shapes, scalar_tensor, tril/triu_indices and the
window functions, against torch."""
import numpy as np
import pytest

import lucid
from lucid._dtype import _ALL_DTYPES, dtype_name

torch = pytest.importorskip("torch")


def _torch_dtype(d):
    return getattr(torch, dtype_name(d))


FLOATS = [lucid.float16, lucid.bfloat16, lucid.float32, lucid.float64, lucid.complex64]
INTS = [lucid.uint8, lucid.int8, lucid.int16, lucid.int32, lucid.int64]


@pytest.mark.parametrize("d", FLOATS, ids=dtype_name)
def test_finfo_matches_torch(d):
    ours, theirs = lucid.finfo(d), torch.finfo(_torch_dtype(d))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("d", INTS, ids=dtype_name)
def test_iinfo_matches_torch(d):
    ours, theirs = lucid.iinfo(d), torch.iinfo(_torch_dtype(d))
    assert (ours.bits, ours.min, ours.max, ours.dtype) == (theirs.bits, theirs.min, theirs.max, theirs.dtype)
    assert repr(ours) == repr(theirs)


def test_info_errors_are_torchs():
    assert lucid.finfo().dtype == "float32"
    for ours, theirs in ((lambda: lucid.finfo(lucid.int32), lambda: torch.finfo(torch.int32)),
                         (lambda: lucid.iinfo(lucid.float32), lambda: torch.iinfo(torch.float32)),
                         (lambda: lucid.iinfo(lucid.bool), lambda: torch.iinfo(torch.bool))):
        with pytest.raises(TypeError) as want:
            theirs()
        with pytest.raises(TypeError, match=want.value.args[0].replace(".", r"\.").replace("(", r"\(")
                           .replace(")", r"\)")):
            ours()


def test_promote_types_and_can_cast_match_torch_wherever_torch_defines_them():
    for a in _ALL_DTYPES:
        for b in _ALL_DTYPES:
            assert lucid.can_cast(a, b) == torch.can_cast(_torch_dtype(a), _torch_dtype(b)), (a, b)
            try:
                want = torch.promote_types(_torch_dtype(a), _torch_dtype(b))
            except RuntimeError:  # uint16/32/64 with another dtype: PyTorch refuses, lucid promotes as MLX
                continue
            if want == torch.complex128:  # MLX has no complex128
                assert lucid.promote_types(a, b) == lucid.complex64
                continue
            assert dtype_name(lucid.promote_types(a, b)) == str(want).split(".")[1], (a, b)


@pytest.mark.parametrize("x, y", [
    ([1], 1.0), ([1], 2), ([1.0], 2.0), (1.0, [1]), ([True], 2), ([True], False), ([1], 1j), ("0d-f64", [1.0]),
    ("0d-f64", [1]), ("0d-i32", [1.0]), (2, 3.0), (True, 2), ("0d-i32", 2.5), ([1.0], 1j), ("0d-c64", [1]),
])
def test_result_type_matches_torch(x, y):
    def make(v, lib):
        if v == "0d-f64":
            return lib.tensor(1.0, dtype=lib.float64)
        if v == "0d-i32":
            return lib.tensor(1, dtype=lib.int32)
        if v == "0d-c64":
            return lib.tensor(1j, dtype=lib.complex64)
        return lib.tensor(v) if isinstance(v, list) else v
    want = torch.result_type(make(x, torch), make(y, torch))
    got = lucid.result_type(make(x, lucid), make(y, lucid))
    assert dtype_name(got) == str(want).split(".")[1]


def test_broadcast_shapes_matches_torch():
    assert lucid.broadcast_shapes((2, 1), (3,), 1) == torch.broadcast_shapes((2, 1), (3,), 1)
    assert lucid.broadcast_shapes() == torch.broadcast_shapes() and isinstance(lucid.broadcast_shapes(2), lucid.Size)
    with pytest.raises(RuntimeError) as want:
        torch.broadcast_shapes((2, 3), (3, 2))
    with pytest.raises(RuntimeError) as got:
        lucid.broadcast_shapes((2, 3), (3, 2))
    assert str(got.value) == str(want.value)


def test_scalar_tensor():
    for s in (3, 2.5, True):
        ours, theirs = lucid.scalar_tensor(s), torch.scalar_tensor(s)
        assert ours.shape == () and ours.dtype == lucid.float32 and ours.item() == theirs.item()
    assert lucid.scalar_tensor(3, dtype=lucid.int32).dtype == lucid.int32


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices_match_torch(name):
    for row, col, offset in ((3, 4, 0), (4, 3, 1), (4, 4, -2), (0, 3, 0), (3, 3, 10), (3, 3, -10)):
        ours, theirs = getattr(lucid, name)(row, col, offset), getattr(torch, name)(row, col, offset)
        assert ours.dtype == lucid.int64 and np.array_equal(ours.numpy(), theirs.numpy())
    assert getattr(lucid, name)(3, 3, dtype=lucid.int32).dtype == lucid.int32
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        getattr(lucid, name)(-1, 3)


@pytest.mark.parametrize("name, extra", [("hann_window", {}), ("hamming_window", {}), ("hamming_window",
                         {"alpha": 0.5, "beta": 0.3}), ("blackman_window", {}), ("bartlett_window", {}),
                         ("kaiser_window", {}), ("kaiser_window", {"beta": 3.0})])
def test_windows_match_torch(name, extra):
    for n in (0, 1, 2, 5, 16):
        for periodic in (True, False):
            ours = getattr(lucid, name)(n, periodic, dtype=lucid.float64, **extra)
            theirs = getattr(torch, name)(n, periodic, dtype=torch.float64, **extra)
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)
    assert getattr(lucid, name)(4).dtype == lucid.float32
    with pytest.raises(RuntimeError, match=f"{name} requires non-negative window_length, got window_length=-1"):
        getattr(lucid, name)(-1)
