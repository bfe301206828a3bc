"""lucid.save / lucid.load: safetensors files written by hand-checked rules, exact round trips of nested
state_dicts in every dtype, interoperability with the safetensors package, and clear errors for truncated,
corrupt and foreign files."""
import io
import json
import math
import struct
from collections import OrderedDict

import mlx.core as mx
import numpy as np
import pytest

import lucid

ALL_DTYPES = [lucid.float32, lucid.float64, lucid.float16, lucid.bfloat16, lucid.int64, lucid.int32, lucid.int16,
              lucid.int8, lucid.uint8, lucid.uint16, lucid.uint32, lucid.uint64, lucid.bool, lucid.complex64]


def sample(dtype, shape=(2, 3)):
    n = int(np.prod(shape))
    if dtype == lucid.bool:
        values = np.arange(n) % 3 == 0
    elif dtype == lucid.complex64:
        values = np.arange(n) - 1j * np.arange(n)
    else:
        values = np.arange(n) * 7 % 11 - (0 if "uint" in str(dtype) else 4)
        if "float" in str(dtype):
            values = values / 4
    with mx.stream(mx.cpu):  # (the cast may be to float64, which a GPU lacks)
        return lucid.tensor(mx.array(values.reshape(shape)).astype(dtype))


def same(a, b):
    """Same type, dtype, shape and values (bit-exact through float32 for bfloat16)."""
    assert type(a) is type(b) and a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def round_trip(obj):
    buf = io.BytesIO()
    lucid.save(obj, buf)
    return lucid.load(io.BytesIO(buf.getvalue()))


def file_bytes(header: dict, data: bytes = b"", raw_header: bytes | None = None) -> bytes:
    text = json.dumps(header).encode() if raw_header is None else raw_header
    return struct.pack("<Q", len(text)) + text + data


def load_bytes(raw: bytes):
    return lucid.load(io.BytesIO(raw))


# ---------------------------------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: str(d).split(".")[-1])
def test_every_dtype_round_trips(dtype):
    tensors = {"matrix": sample(dtype), "scalar": sample(dtype, ()), "empty": sample(dtype, (0, 4))}
    loaded = round_trip(tensors)
    assert list(loaded) == list(tensors)
    for k in tensors:
        same(loaded[k], tensors[k])


def test_bfloat16_bits_are_exact():
    x = lucid.tensor([1.0, -2.5, 3.0e38, 1e-40, float("inf"), float("nan")], dtype=lucid.bfloat16)
    y = round_trip({"x": x})["x"]
    assert y.dtype == lucid.bfloat16
    assert np.array_equal(np.array(mx.view(x.mlx, mx.uint16)), np.array(mx.view(y.mlx, mx.uint16)))


def test_optimizer_like_state_dict_round_trips_exactly():
    state = {
        "state": {0: {"step": lucid.tensor(3.0), "exp_avg": sample(lucid.float32), "exp_avg_sq": sample(lucid.float64)},
                  1: {"step": lucid.tensor(3.0), "momentum_buffer": None}},
        "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0, "amsgrad": False,
                          "maximize": False, "foreach": None, "params": [0, 1], "name": "decoder",
                          "max_lr": float("inf"), "bad": float("nan"), "big": 2 ** 70, "neg": -float("inf")}],
    }
    loaded = round_trip(state)
    assert list(loaded["state"]) == [0, 1] and all(isinstance(k, int) for k in loaded["state"])
    for k in ("step", "exp_avg", "exp_avg_sq"):
        same(loaded["state"][0][k], state["state"][0][k])
    assert loaded["state"][1]["momentum_buffer"] is None
    group, original = loaded["param_groups"][0], state["param_groups"][0]
    assert isinstance(loaded["param_groups"], list) and isinstance(group["betas"], tuple)
    assert math.isnan(group.pop("bad")) and math.isnan(original.pop("bad"))
    assert group == original
    assert [type(v) for v in group.values()] == [type(v) for v in original.values()]


def test_container_and_key_types_are_kept():
    obj = OrderedDict([("b", [1, (2, 3.0), [lucid.ones(2)]]), ("a", {1: "x", "1": "y", False: None, 2.5: 0,
                                                                     None: ()})])
    loaded = round_trip(obj)
    assert isinstance(loaded, OrderedDict) and list(loaded) == ["b", "a"]
    assert loaded["b"][:2] == [1, (2, 3.0)] and isinstance(loaded["b"][1][1], float)
    same(loaded["b"][2][0], lucid.ones(2))
    assert loaded["a"] == {1: "x", "1": "y", False: None, 2.5: 0, None: ()}
    assert [type(k) for k in loaded["a"]] == [int, str, bool, float, type(None)]
    assert round_trip([]) == [] and round_trip(()) == () and round_trip({}) == {} and round_trip(5) == 5
    same(round_trip(lucid.arange(3)), lucid.arange(3))


def test_numpy_and_mlx_arrays_keep_their_type():
    obj = {"np": np.arange(4, dtype=np.int16).reshape(2, 2), "np_be": np.arange(3, dtype=">f8"),
           "scalar": np.float32(2.5), "mx": mx.array([True, False]), "np_bool": np.array([True, False])}
    loaded = round_trip(obj)
    assert isinstance(loaded["np"], np.ndarray) and loaded["np"].dtype == np.int16
    np.testing.assert_array_equal(loaded["np"], obj["np"])
    assert loaded["np_be"].dtype == np.float64 and loaded["np_be"].tolist() == [0.0, 1.0, 2.0]
    assert isinstance(loaded["scalar"], np.float32) and loaded["scalar"] == 2.5
    assert isinstance(loaded["mx"], mx.array) and loaded["mx"].tolist() == [True, False]
    assert loaded["np_bool"].dtype == np.bool_ and loaded["np_bool"].tolist() == [True, False]


def test_colliding_path_names_stay_apart():
    obj = {"a.b": lucid.tensor([1.0]), "a": {"b": lucid.tensor([2.0])}, "__metadata__": lucid.tensor([3.0])}
    loaded = round_trip(obj)
    assert loaded["a.b"].tolist() == [1.0] and loaded["a"]["b"].tolist() == [2.0]
    assert loaded["__metadata__"].tolist() == [3.0]


def test_loaded_tensors_are_fresh_leaves():
    w = lucid.ones(3, requires_grad=True)
    y = w * 2
    loaded = round_trip({"w": w, "y": y, "t": y.t() if y.ndim == 2 else y})
    for t in loaded.values():
        assert t.is_leaf and not t.requires_grad and t.grad_fn is None
    assert loaded["y"].tolist() == [2.0, 2.0, 2.0]


def test_non_contiguous_tensor():
    x = lucid.arange(12).reshape(3, 4)
    xt = x.transpose(0, 1)
    same(round_trip({"xt": xt})["xt"], xt)


def test_paths_and_file_objects(tmp_path):
    sd = {"w": sample(lucid.float32)}
    for target in (tmp_path / "a.safetensors", str(tmp_path / "b.safetensors")):
        lucid.save(sd, target)
        same(lucid.load(target)["w"], sd["w"])
    with open(tmp_path / "c.safetensors", "wb") as f:
        lucid.save(sd, f)
    with open(tmp_path / "c.safetensors", "rb") as f:
        same(lucid.load(f, map_location="cpu")["w"], sd["w"])
    lucid.save({"w": lucid.zeros(1)}, tmp_path / "a.safetensors")  # overwrite
    assert lucid.load(tmp_path / "a.safetensors")["w"].tolist() == [0.0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.safetensors", "b.safetensors", "c.safetensors"]


def test_unsupported_objects_are_refused():
    with pytest.raises(TypeError, match="can't store an object of type object .*state_dict"):
        lucid.save({"x": object()}, io.BytesIO())
    with pytest.raises(TypeError, match="dict key of type tuple"):
        lucid.save({(1, 2): 3}, io.BytesIO())
    with pytest.raises(TypeError, match="numpy array of dtype"):
        lucid.save({"x": np.array(["a"])}, io.BytesIO())


def same_structure(a, b):
    assert type(a) is type(b)
    if isinstance(a, (lucid.Tensor, mx.array, np.ndarray)):
        same(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            same_structure(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same_structure(x, y)
    else:
        assert a == b or (a != a and b != b)


def _linear():
    if not hasattr(lucid.nn, "Linear"):
        pytest.skip("lucid.nn.Linear not available yet")
    return lucid.nn.Linear


def test_module_state_dict_round_trip():
    Linear = _linear()
    a, b = Linear(4, 3), Linear(4, 3)
    sd = a.state_dict()
    loaded = round_trip(sd)
    same_structure({k: v.detach() for k, v in sd.items()}, {k: v for k, v in loaded.items()})
    b.load_state_dict(loaded)
    x = lucid.randn(2, 4)
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())


def test_optimizer_state_dict_round_trip():
    Linear = _linear()
    optim = pytest.importorskip("lucid.optim")
    if not hasattr(optim, "Adam"):
        pytest.skip("lucid.optim.Adam not available yet")
    model = Linear(3, 2)
    opt = optim.Adam(model.parameters(), lr=0.1, betas=(0.8, 0.9))
    model(lucid.randn(4, 3)).sum().backward()
    opt.step()
    sd = opt.state_dict()
    loaded = round_trip(sd)
    same_structure(sd, loaded)
    fresh = optim.Adam(Linear(3, 2).parameters(), lr=0.5)
    fresh.load_state_dict(loaded)
    assert fresh.param_groups[0]["lr"] == 0.1 and fresh.param_groups[0]["betas"] == (0.8, 0.9)


# ---------------------------------------------------------------------------------------------------- the format
def test_flat_state_dict_is_a_standard_safetensors_file():
    sd = {"layer.weight": sample(lucid.float32), "layer.bias": sample(lucid.int64, (3,))}
    buf = io.BytesIO()
    lucid.save(sd, buf)
    raw = buf.getvalue()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0
    header = json.loads(raw[8:8 + n])
    assert header["__metadata__"]["format"] == "pt"
    assert header["layer.weight"] == {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}
    assert header["layer.bias"] == {"dtype": "I64", "shape": [3], "data_offsets": [24, 48]}
    data = raw[8 + n:]
    assert len(data) == 48
    np.testing.assert_array_equal(np.frombuffer(data[:24], "<f4").reshape(2, 3), sd["layer.weight"].numpy())
    np.testing.assert_array_equal(np.frombuffer(data[24:], "<i8"), sd["layer.bias"].numpy())


def test_bfloat16_is_stored_as_the_top_half_of_float32():
    values = np.array([1.5, -2.0, 0.15625, 2.0 ** 100], np.float32)  # exactly representable in bfloat16
    buf = io.BytesIO()
    lucid.save({"x": lucid.tensor(values).to(lucid.bfloat16)}, buf)
    raw = buf.getvalue()
    (n,) = struct.unpack("<Q", raw[:8])
    assert json.loads(raw[8:8 + n])["x"] == {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}
    np.testing.assert_array_equal(np.frombuffer(raw[8 + n:], "<u2"), values.view("<u4") >> 16)


def test_safetensors_package_reads_and_writes_compatible_files():
    st = pytest.importorskip("safetensors.numpy")
    sd = {"w": sample(lucid.float64), "m": sample(lucid.bool), "e": sample(lucid.int8, (0,)),
          "h": sample(lucid.float16)}
    buf = io.BytesIO()
    lucid.save(sd, buf)
    read = st.load(buf.getvalue())
    assert set(read) == set(sd)
    for k, t in sd.items():
        assert read[k].dtype == t.numpy().dtype
        np.testing.assert_array_equal(read[k], t.numpy())
    # nested files are valid safetensors too (the structure rides in the metadata)
    buf = io.BytesIO()
    lucid.save({"state": {0: {"x": lucid.ones(2)}}}, buf)
    assert list(st.load(buf.getvalue())) == ["state.0.x"]
    written = st.save({"a": np.arange(6, dtype=np.uint8).reshape(2, 3), "b": np.ones(2, np.float64)},
                      metadata={"note": "from safetensors"})
    loaded = load_bytes(written)
    assert loaded["a"].dtype == lucid.uint8 and loaded["a"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert loaded["b"].dtype == lucid.float64


def test_torch_reads_bfloat16_files():
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("safetensors.torch")
    x = lucid.tensor([1.5, -2.0, 3.0e38], dtype=lucid.bfloat16)
    buf = io.BytesIO()
    lucid.save({"x": x}, buf)
    y = st.load(buf.getvalue())["x"]
    assert y.dtype == torch.bfloat16 and y.float().tolist() == x.float().tolist()


def test_foreign_file_without_structure_loads_as_a_flat_dict():
    data = np.array([1, 2, 3], "<i4").tobytes() + np.array([0.5], "<f8").tobytes()
    raw = file_bytes({"__metadata__": {"format": "pt"},
                      "x": {"dtype": "I32", "shape": [3], "data_offsets": [0, 12]},
                      "y": {"dtype": "F64", "shape": [], "data_offsets": [12, 20]}}, data)
    loaded = load_bytes(raw)
    assert loaded["x"].dtype == lucid.int32 and loaded["x"].tolist() == [1, 2, 3]
    assert loaded["y"].dtype == lucid.float64 and loaded["y"].shape == () and loaded["y"].item() == 0.5


# ---------------------------------------------------------------------------------------------------- errors
GOOD = {"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
DATA = np.array([1.0, 2.0], "<f4").tobytes()


@pytest.mark.parametrize("raw, message", [
    (b"", "too short to hold the 8-byte header length"),
    (b"\x10\x00\x00", "too short"),
    (struct.pack("<Q", 1000) + b"{}", "header length 1000 is larger than the rest of the file"),
    (file_bytes({}, raw_header=b"{not json"), "not valid JSON"),
    (file_bytes({}, raw_header=b"\xff\xfe"), "not valid JSON"),
    (file_bytes({}, raw_header=b"[1, 2]"), "not a JSON object"),
    (file_bytes({"__metadata__": {"a": 1}}), "__metadata__ must map strings to strings"),
    (file_bytes({"x": {"dtype": "F32", "shape": [2]}}, DATA), "needs dtype, shape and data_offsets"),
    (file_bytes({"x": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 8]}}, DATA),
     "tensor 'x' has unknown dtype 'F8_E4M3'"),
    (file_bytes({"x": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, DATA), "invalid shape"),
    (file_bytes({"x": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, DATA), "invalid data_offsets"),
    (file_bytes({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}}, DATA),
     r"data_offsets \[0, 16\] out of range: the data section has 8 bytes"),
    (file_bytes({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, DATA),
     r"size mismatch: shape \[3\] of F32 needs 12 bytes"),
    (file_bytes(GOOD, DATA + b"\x00" * 4), "4 bytes after the last tensor's data"),
    (file_bytes({"__metadata__": {"lucid.structure": "{bad"}, **GOOD}, DATA), "lucid.structure metadata"),
    (file_bytes({"__metadata__": {"lucid.structure": '{"T": "nope"}'}, **GOOD}, DATA),
     "refers to tensor 'nope', which is not in the file"),
    (file_bytes({"__metadata__": {"lucid.structure": '{"Q": 1}'}, **GOOD}, DATA), "unknown node 'Q'"),
])
def test_corrupt_files_raise_value_error(raw, message):
    with pytest.raises(ValueError, match=message):
        load_bytes(raw)


def test_truncated_file_written_then_cut(tmp_path):
    path = tmp_path / "model.safetensors"
    lucid.save({"state": {0: {"w": sample(lucid.float32, (8, 8))}}, "step": 3}, path)
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size - 5)
    with pytest.raises(ValueError, match=r"model.safetensors: tensor 'state.0.w' has data_offsets \[0, 256\] out "
                                         r"of range: the data section has 251 bytes \(truncated file\?\)"):
        lucid.load(path)


def test_every_truncation_point_gives_a_clear_error():
    buf = io.BytesIO()
    lucid.save({"a": sample(lucid.float32), "b": [1, sample(lucid.int8, (5,))]}, buf)
    raw = buf.getvalue()
    for cut in range(0, len(raw), 7):
        with pytest.raises(ValueError):
            load_bytes(raw[:cut])


def test_torch_pickle_checkpoints_get_a_hint():
    with pytest.raises(ValueError, match="looks like a PyTorch torch.save checkpoint"):
        load_bytes(b"PK\x03\x04" + b"\x00" * 60)
    with pytest.raises(ValueError, match="pickle-based"):
        load_bytes(b"\x80\x02}q\x00(X\x01\x00\x00\x00aq\x01" + b"." * 20)


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        lucid.load("/nonexistent/model.safetensors")
