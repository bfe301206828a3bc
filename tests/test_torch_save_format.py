"""``torch.save`` on lucid writes PyTorch's own zip format: real PyTorch opens it with
``torch.load(weights_only=True)``, and lucid loads what either library writes. ``torch.serialization.safe_globals``
& co. follow PyTorch."""
import collections
import io
import pickle
import struct
import zipfile

import numpy as np
import pytest

import lucid
import lucid.compat.torch as torch

DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "bool"]


def _values(dtype: str) -> np.ndarray:
    if dtype == "bool":
        return np.array([[True, False, True], [False, False, True]])
    return np.array([[0, 1, 2], [3, 4, 255]] if dtype.startswith("uint") else [[0, 1, -2], [3, 4, 5]],
                    dtype=np.complex64 if dtype == "complex64" else np.float64)


def _lucid_tensor(dtype: str):
    return lucid.tensor(_values(dtype).tolist(), dtype=getattr(lucid, dtype))


def _numpy(t) -> np.ndarray:
    """A tensor of either library as float64 (or complex) numpy: bfloat16 has no numpy dtype."""
    return t.detach().numpy() if t.is_complex() else t.detach().double().numpy()


def _checkpoint():
    """A training checkpoint as programs save it: model and optimizer state, numbers, lists, an OrderedDict."""
    model = _model(torch)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.8, 0.9))
    model(torch.randn(5, 3)).square().mean().backward()
    opt.step()
    norm = torch.nn.BatchNorm1d(4)  # float and int64 buffers
    norm(torch.randn(5, 4))
    return model, opt, {"model": model.state_dict(), "optimizer": opt.state_dict(), "norm": norm.state_dict(),
                        "epoch": 3, "loss": 0.25, "history": [1.5, 0.5], "names": ("a", "b"), "best": None,
                        "extra": collections.OrderedDict(scale=lucid.tensor(2.0), flag=True)}


def _model(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))


def _assert_same(ours, theirs, real, path="obj"):
    """``ours`` (lucid's) holds what ``theirs`` (PyTorch's) holds, tensor by tensor."""
    if isinstance(theirs, real.Tensor):
        assert isinstance(ours, lucid.Tensor), path
        assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype).split(".")[-1] == \
            str(theirs.dtype).split(".")[-1], path
        assert ours.requires_grad == theirs.requires_grad, path
        assert isinstance(ours, lucid.nn.Parameter) == isinstance(theirs, real.nn.Parameter), path
        np.testing.assert_array_equal(_numpy(ours), _numpy(theirs), err_msg=path)
    elif isinstance(theirs, dict):
        assert type(ours).__name__ == type(theirs).__name__ and list(ours) == list(theirs), path
        for k in theirs:
            _assert_same(ours[k], theirs[k], real, f"{path}[{k!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same(a, b, real, f"{path}[{i}]")
    else:
        assert ours == theirs and type(ours) is type(theirs), path


# ------------------------------------------------------------------------------------------------ the format
def test_archive_has_pytorchs_records_aligned_as_pytorch_writes_them(tmp_path):
    torch.save({"w": lucid.ones(3), "b": lucid.zeros(2, dtype=lucid.int64)}, tmp_path / "model.best.pt")
    raw = (tmp_path / "model.best.pt").read_bytes()
    archive = zipfile.ZipFile(io.BytesIO(raw))
    assert archive.namelist() == [f"model.best/{name}" for name in (
        "data.pkl", ".format_version", ".storage_alignment", "byteorder", "data/0", "data/1", "version",
        ".data/serialization_id")]
    assert archive.read("model.best/data.pkl")[:2] == b"\x80\x02"  # protocol 2
    assert archive.read("model.best/byteorder") == b"little" and archive.read("model.best/version") == b"3\n"
    assert archive.read("model.best/.storage_alignment") == b"64" and archive.read("model.best/.format_version") == b"1"
    sid = archive.read("model.best/.data/serialization_id")
    assert len(sid) == 40 and sid.isdigit()
    assert np.frombuffer(archive.read("model.best/data/0"), "<f4").tolist() == [1.0, 1.0, 1.0]
    for info in archive.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename


def test_a_file_object_gets_the_archive_name_archive():
    buffer = io.BytesIO()
    torch.save(lucid.ones(2), buffer)
    assert zipfile.ZipFile(io.BytesIO(buffer.getvalue())).namelist()[0] == "archive/data.pkl"


def test_tensors_sharing_lucids_storage_share_one_record_and_others_get_their_own():
    x = lucid.tensor([[0.0, 1, 2], [3, 4, 5]])
    p = lucid.nn.Parameter(x)
    buffer = io.BytesIO()
    torch.save({"x": x, "alias": x.detach(), "p": p, "t": x.t(), "row": x[1]}, buffer)
    names = zipfile.ZipFile(io.BytesIO(buffer.getvalue())).namelist()
    assert [n for n in names if "/data/" in n] == ["archive/data/0", "archive/data/1", "archive/data/2"]
    back = torch.load(io.BytesIO(buffer.getvalue()))
    assert back["t"].tolist() == [[0, 3], [1, 4], [2, 5]] and back["row"].tolist() == [3, 4, 5]
    assert back["alias"].tolist() == back["x"].tolist() == back["p"].tolist()


def test_optimizer_counters_stay_separate_tensors_in_pytorch():
    real = pytest.importorskip("torch")
    _, _, checkpoint = _checkpoint()
    buffer = io.BytesIO()
    torch.save(checkpoint["optimizer"], buffer)
    state = real.load(io.BytesIO(buffer.getvalue()), weights_only=True)["state"]
    steps = [s["step"] for s in state.values()]
    assert len({s.untyped_storage().data_ptr() for s in steps}) == len(steps) == 4


def test_an_object_that_cant_be_pickled_leaves_the_file_as_it_was(tmp_path):
    target = tmp_path / "ckpt.pt"
    torch.save({"w": lucid.ones(1)}, target)
    before = target.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        torch.save({"w": lucid.ones(2), "fn": lambda: 0}, target)
    assert target.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]


def test_lucid_save_stays_safetensors(tmp_path):
    lucid.save({"w": lucid.ones(2)}, tmp_path / "w.safetensors")
    assert (tmp_path / "w.safetensors").read_bytes()[8:9] == b"{"


# ----------------------------------------------------------------------------------- lucid -> lucid, both ways
@pytest.mark.parametrize("dtype", DTYPES)
def test_lucid_loads_what_it_writes_weights_only(dtype):
    t = _lucid_tensor(dtype)
    buffer = io.BytesIO()
    torch.save({"t": t, "t_T": t.t(), "scalar": t[1, 2]}, buffer)
    back = torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)
    for key, want in (("t", t), ("t_T", t.t()), ("scalar", t[1, 2])):
        assert back[key].dtype == want.dtype and back[key].shape == want.shape
        np.testing.assert_array_equal(_numpy(back[key]), _numpy(want))


def test_checkpoint_round_trips_in_lucid_and_restores_training():
    model, opt, checkpoint = _checkpoint()
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    back = torch.load(io.BytesIO(buffer.getvalue()))
    assert back["epoch"] == 3 and back["history"] == [1.5, 0.5] and back["names"] == ("a", "b")
    assert back["best"] is None and type(back["extra"]) is collections.OrderedDict and back["extra"]["flag"] is True
    fresh = _model(torch)
    fresh.load_state_dict(back["model"])
    opt2 = torch.optim.Adam(fresh.parameters())
    opt2.load_state_dict(back["optimizer"])
    assert opt2.param_groups[0]["betas"] == (0.8, 0.9) and opt2.param_groups[0]["lr"] == 1e-2
    x = torch.randn(4, 3)
    for m, o in ((model, opt), (fresh, opt2)):  # one more step from the same state gives the same weights
        o.zero_grad()
        m(x).square().mean().backward()
        o.step()
    for a, b in zip(model.parameters(), fresh.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


# ------------------------------------------------------------------------------------ lucid <-> real PyTorch
@pytest.mark.parametrize("dtype", DTYPES)
def test_pytorch_loads_each_dtype_lucid_writes(dtype):
    real = pytest.importorskip("torch")
    t = _lucid_tensor(dtype)
    buffer = io.BytesIO()
    torch.save({"t": t, "t_T": t.t(), "scalar": t[1, 2], "empty": t[:0], "dtype": t.dtype}, buffer)
    back = real.load(io.BytesIO(buffer.getvalue()), weights_only=True)
    assert back["t"].dtype == getattr(real, dtype) and back["dtype"] == getattr(real, dtype)
    np.testing.assert_array_equal(_numpy(back["t"]), _values(dtype).astype(_numpy(back["t"]).dtype))
    np.testing.assert_array_equal(_numpy(back["t_T"]), _numpy(back["t"]).T)
    assert back["t_T"].is_contiguous() and back["scalar"].shape == () and back["empty"].shape == (0, 3)


def test_pytorch_loads_a_lucid_checkpoint_and_trains_on_from_it(tmp_path):
    real = pytest.importorskip("torch")
    model, opt, checkpoint = _checkpoint()
    checkpoint["param"] = lucid.nn.Parameter(lucid.ones(2))
    checkpoint["size"], checkpoint["device"] = lucid.Size([2, 3]), lucid.device("cpu")
    torch.save(checkpoint, tmp_path / "ckpt.pt")
    back = real.load(tmp_path / "ckpt.pt", weights_only=True)
    assert isinstance(back["param"], real.nn.Parameter) and back["param"].requires_grad
    assert back["size"] == real.Size([2, 3]) and back["device"] == real.device("cpu")
    assert back["epoch"] == 3 and back["loss"] == 0.25 and back["history"] == [1.5, 0.5]
    assert type(back["extra"]) is collections.OrderedDict and back["extra"]["scale"].item() == 2.0
    twin = _model(real)
    real.nn.BatchNorm1d(4).load_state_dict(back["norm"])
    assert back["norm"]["num_batches_tracked"].dtype == real.int64 and back["norm"]["num_batches_tracked"].item() == 1
    twin.load_state_dict(back["model"])
    real_opt = real.optim.Adam(twin.parameters())
    real_opt.load_state_dict(back["optimizer"])
    assert real_opt.param_groups[0]["betas"] == (0.8, 0.9)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    for m, o, lib in ((model, opt, torch), (twin, real_opt, real)):
        o.zero_grad()
        m(lib.tensor(x)).square().mean().backward()
        o.step()
    for a, b in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_pytorch_opens_a_lucid_file_memory_mapped(tmp_path):
    real = pytest.importorskip("torch")
    torch.save({"w": lucid.arange(12.0).reshape(3, 4), "i": lucid.arange(5)}, tmp_path / "w.pt")
    back = real.load(tmp_path / "w.pt", weights_only=True, mmap=True)  # needs the storages' alignment
    assert back["w"].tolist() == np.arange(12.0).reshape(3, 4).tolist() and back["i"].tolist() == list(range(5))


def test_lucid_loads_what_pytorch_writes_including_views_of_one_storage(tmp_path):
    real = pytest.importorskip("torch")
    base = real.arange(12.0).reshape(3, 4)
    obj = {"base": base, "col": base[:, 1], "t": base.t(), "bf": base.to(real.bfloat16), "mask": base > 5,
           "p": real.nn.Parameter(real.ones(2)), "od": collections.OrderedDict(k=real.tensor([1, 2], dtype=real.int16)),
           "u16": real.tensor([[1, 65535]], dtype=real.uint16).t(), "u64": real.tensor([2 ** 63], dtype=real.uint64),
           "n": 4, "f": 0.5, "l": [1, "x"]}
    real.save(obj, tmp_path / "real.pt")
    _assert_same(torch.load(tmp_path / "real.pt", weights_only=True), obj, real)


# ---------------------------------------------------------------------------------------------- safe globals
class Config:
    """A user class saved whole in a checkpoint."""

    def __init__(self, width):
        self.width = width


def _saved_config() -> bytes:
    buffer = io.BytesIO()
    torch.save({"config": Config(7), "w": lucid.ones(2)}, buffer)
    return buffer.getvalue()


def test_safe_globals_allows_a_class_inside_the_block_only():
    data = _saved_config()
    with pytest.raises(pickle.UnpicklingError, match="Config"):
        torch.load(io.BytesIO(data))
    with torch.serialization.safe_globals([Config]):
        assert torch.serialization.get_safe_globals() == [Config]
        assert torch.load(io.BytesIO(data))["config"].width == 7
    assert torch.serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError, match="Config"):
        torch.load(io.BytesIO(data))


def test_add_get_clear_safe_globals_and_the_named_form():
    data = _saved_config()
    try:
        torch.serialization.add_safe_globals([(Config, f"{Config.__module__}.Config")])
        torch.serialization.add_safe_globals([(Config, f"{Config.__module__}.Config")])  # a set: added once
        assert torch.serialization.get_safe_globals() == [(Config, f"{Config.__module__}.Config")]
        assert torch.load(io.BytesIO(data))["config"].width == 7
        torch.serialization.clear_safe_globals()
        assert torch.serialization.get_safe_globals() == []
        torch.serialization.add_safe_globals([(Config, "a.b", "c")])
        with pytest.raises(ValueError, match="Expected tuple of length 2"):
            torch.load(io.BytesIO(data))
        torch.serialization.clear_safe_globals()
        torch.serialization.add_safe_globals([(Config, 3)])
        with pytest.raises(TypeError, match="Expected second item in tuple to be str"):
            torch.load(io.BytesIO(data))
    finally:
        torch.serialization.clear_safe_globals()


def test_safe_globals_match_pytorchs():
    real = pytest.importorskip("torch")
    for lib in (torch, real):
        with lib.serialization.safe_globals([Config]):
            inside = lib.serialization.get_safe_globals()
        assert Config in inside and Config not in lib.serialization.get_safe_globals()



def test_byte_storages_are_checked_before_they_are_read_as_another_dtype():
    """``_rebuild_tensor_v3`` takes its arguments from the file: the storage must be bytes, the dtype lucid's, the
    byte count a whole number of elements, and the view inside the storage."""
    import mlx.core as mx

    from lucid.compat.torch import _rebuild
    rebuild = _rebuild.ALLOWED[("torch._utils", "_rebuild_tensor_v3")]
    untyped = _rebuild.ALLOWED[("torch.storage", "UntypedStorage")]
    storage = _rebuild.Storage(mx.array([1, 0, 2, 0, 3, 0], dtype=mx.uint8), 6, untyped.dtype)
    assert rebuild(storage, 1, (2,), (1,), False, None, lucid.uint16).tolist() == [2, 3]
    odd = _rebuild.Storage(mx.zeros(5, dtype=mx.uint8), 5, untyped.dtype)
    floats = _rebuild.Storage(mx.zeros(2), 2, "F32")
    for args, message in (((odd, 0, (2,), (1,), False, None, lucid.uint16), "5 bytes read as"),
                          ((storage, 0, (1,), (1,), False, None, "uint16"), "corrupt checkpoint"),
                          ((floats, 0, (1,), (1,), False, None, lucid.uint16), "corrupt checkpoint"),
                          ((storage, 2, (2,), (1,), False, None, lucid.uint16), "reaches past its storage")):
        with pytest.raises(pickle.UnpicklingError, match=message):
            rebuild(*args)
