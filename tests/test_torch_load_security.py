"""lucid.compat.torch.load on hostile PyTorch checkpoints: pickles written opcode by opcode inside valid zip
containers. The weights-only unpickler builds only instances of allow-listed types (never a class, never a dunder
attribute), so no file can change lucid's own tables; a storage record must be exactly its storage's size before
it is read; a stride-0 view stays a broadcast; and random or mutated opcode streams end in the right data or a
clear error, with nothing of lucid's changed."""
import collections
import io
import pickle
import struct
import zipfile

import mlx.core as mx
import numpy as np
import pytest

import lucid
import lucid.compat.torch as torch
from lucid.compat.torch import _rebuild

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402


# ----------------------------------------------------------------------------------------------- pickle opcodes
def text(s: str) -> bytes:  # BINUNICODE
    return b"X" + struct.pack("<I", len(s.encode())) + s.encode()


def small_int(n: int) -> bytes:  # BININT1 / BININT
    return b"K" + bytes([n]) if 0 <= n < 256 else b"J" + struct.pack("<i", n)


def global_(module: str, name: str) -> bytes:  # GLOBAL
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def tuple_(*items: bytes) -> bytes:  # MARK ... TUPLE
    return b"(" + b"".join(items) + b"t"


def tensor_ops(key: str, numel: int, offset: int, size, stride, storage: str = "FloatStorage") -> bytes:
    """_rebuild_tensor_v2(('storage', torch.<storage>, key, 'cpu', numel), offset, size, stride, False, {})."""
    pid = tuple_(text("storage"), global_("torch", storage), text(key), text("cpu"), small_int(numel)) + b"Q"
    return (global_("torch._utils", "_rebuild_tensor_v2")
            + tuple_(pid, small_int(offset), tuple_(*map(small_int, size)), tuple_(*map(small_int, stride)),
                     b"\x89}") + b"R")


def program(body: bytes) -> bytes:
    return b"\x80\x02" + body + b"."


def checkpoint(pickled: bytes, storages: dict = {}, compression=zipfile.ZIP_STORED) -> bytes:  # noqa: B006
    """PyTorch's zip layout: archive/data.pkl, archive/byteorder, archive/version, archive/data/<key>."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as z:
        z.writestr("archive/data.pkl", pickled)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
        for key, data in storages.items():
            z.writestr(f"archive/data/{key}", data)
    return buffer.getvalue()


def load(data: bytes, **kwargs):
    return torch.load(io.BytesIO(data), **kwargs)


FLOATS = np.array([1.5, -2.0, 3.25, 4.0], dtype="<f4")
GOOD = checkpoint(program(tensor_ops("0", 4, 0, (4,), (1,))), {"0": FLOATS.tobytes()})
IDENTITY = global_("torch.serialization", "_get_layout")  # allow-listed, and returns its argument


def set_attribute(target: bytes, name: str, value: bytes) -> bytes:
    """BUILD on ``target`` with the state (None, {name: value}): plain pickle setattr()s the slot state."""
    return target + b"N}" + text(name) + value + b"s\x86b"


# ------------------------------------------------------------------------------- lucid's tables stay lucid's
class Canary:
    """A user class allow-listed with add_safe_globals: instances may be built, the class must stay as it is."""

    kind = "canary"

    def __init__(self):
        self.value = 0


def _snapshot():
    return (dict(vars(lucid.Tensor)), dict(vars(lucid.nn.Parameter)), dict(vars(collections.Counter)),
            dict(vars(collections.OrderedDict)), dict(vars(Canary)), dict(_rebuild.ALLOWED),
            {k: tuple(v) for k, v in _rebuild.ALLOWED.items() if isinstance(v, _rebuild.StorageType)},
            torch.serialization.get_safe_globals())


@pytest.fixture
def tables_unchanged():
    """Asserts, after the test, that lucid's classes, the allow-list and the storage types are as before; restores
    them either way so that a failing test can't poison the others."""
    before = _snapshot()
    torch.serialization.add_safe_globals([Canary])
    yield
    for cls, attrs in zip((lucid.Tensor, lucid.nn.Parameter, collections.Counter, collections.OrderedDict, Canary),
                          before[:5]):
        for name in set(vars(cls)) - set(attrs):
            delattr(cls, name)
        for name, value in attrs.items():
            if vars(cls).get(name) is not value and name not in ("__dict__", "__weakref__", "__doc__"):
                setattr(cls, name, value)
    torch.serialization._remove_safe_globals([Canary])
    assert _snapshot() == before


# ------------------------------------------------------------------------------------------- the three attacks
ATTACKS = {
    # -tensor([1., 2.]) would be tensor([1., 2.]) for the rest of the process
    "Tensor.__neg__": program(set_attribute(global_("torch", "Tensor"), "__neg__", IDENTITY)),
    # every float32 checkpoint loaded afterwards would come back as int32 bit patterns
    "FloatStorage.dtype": program(set_attribute(global_("torch", "FloatStorage"), "dtype", text("I32"))),
    # an allow-listed stdlib class patched for the whole process
    "Counter.most_common": program(set_attribute(global_("collections", "Counter"), "most_common", IDENTITY)),
}


@pytest.mark.parametrize("name", ATTACKS)
def test_a_checkpoint_cannot_patch_a_class_or_lucids_tables(name, tables_unchanged):
    with pytest.raises(pickle.UnpicklingError, match="Can only build Tensor, Parameter, OrderedDict or types "
                                                     "allowlisted via `add_safe_globals`, but got"):
        load(checkpoint(ATTACKS[name]))
    np.testing.assert_array_equal((-lucid.tensor([1.0, 2.0])).numpy(), [-1.0, -2.0])
    back = load(GOOD)
    assert back.dtype == lucid.float32
    np.testing.assert_array_equal(back.numpy(), FLOATS)
    assert collections.Counter("aab").most_common(1) == [("a", 2)]


def test_an_attack_inside_a_real_looking_state_dict_is_refused_before_anything_is_returned(tables_unchanged):
    body = (global_("collections", "OrderedDict") + b")R" + text("weight") + tensor_ops("0", 4, 0, (4,), (1,))
            + b"s" + text("x") + set_attribute(global_("torch", "Tensor"), "__add__", IDENTITY) + b"s")
    with pytest.raises(pickle.UnpicklingError, match="but got the class"):
        load(checkpoint(program(body), {"0": FLOATS.tobytes()}))


def test_class_attributes_are_refused_on_an_allow_listed_users_class(tables_unchanged):
    with pytest.raises(pickle.UnpicklingError, match="but got the class"):
        load(checkpoint(program(set_attribute(global_(__name__, "Canary"), "kind", text("patched")))))


def test_instances_of_allow_listed_types_are_built_but_never_given_dunder_attributes(tables_unchanged):
    new_canary = global_(__name__, "Canary") + b")\x81"  # NEWOBJ: Canary.__new__(Canary)
    built = load(checkpoint(program(new_canary + b"}" + text("value") + small_int(7) + b"sb")))
    assert type(built) is Canary and built.value == 7 and Canary.kind == "canary"
    for state in (b"}" + text("__class__") + global_("collections", "OrderedDict") + b"s",  # the instance's dict
                  b"N}" + text("__class__") + global_("collections", "OrderedDict") + b"s\x86"):  # its slots
        with pytest.raises(pickle.UnpicklingError, match="dunder attribute '__class__'"):
            load(checkpoint(program(new_canary + state + b"b")))


def test_build_of_a_type_outside_the_allow_list_is_refused():
    # bytes made by an allow-listed function: only instances of allow-listed *types* are built
    with pytest.raises(pickle.UnpicklingError, match="but got <class 'bytes'>"):
        load(checkpoint(program(global_("_codecs", "encode") + tuple_(text("ab"), text("latin1")) + b"R}b")))


def test_bytearray_loads_from_its_bytes_but_is_never_allocated_from_a_count():
    stream = io.BytesIO()
    pickle.dump(bytearray(b"\x00ab"), stream, protocol=2)
    assert load(checkpoint(stream.getvalue())) == bytearray(b"\x00ab")
    with pytest.raises(pickle.UnpicklingError, match="bytearray of a int"):
        load(checkpoint(program(global_("builtins", "bytearray") + tuple_(b"J" + struct.pack("<i", 2**31 - 1))
                                + b"R")))


def test_legacy_tensor_state_is_set_as_pytorchs_tensor_setstate_does(tables_unchanged):
    # NEWOBJ Tensor, then BUILD with (requires_grad, _, backward_hooks)
    body = global_("torch", "Tensor") + tuple_(b"]G" + struct.pack(">d", 2.5) + b"a") + b"\x81"
    back = load(checkpoint(program(body + tuple_(b"\x88N}") + b"b")))
    assert type(back) is lucid.Tensor and back.requires_grad and back.tolist() == [2.5]
    with pytest.raises(pickle.UnpicklingError, match="Tensor state"):
        load(checkpoint(program(body + tuple_(text("x")) + b"b")))


def test_pytorch_refuses_the_same_attacks(tmp_path):
    real = pytest.importorskip("torch")
    for name, pickled in ATTACKS.items():
        (tmp_path / "a.pt").write_bytes(checkpoint(pickled))
        with pytest.raises(pickle.UnpicklingError, match="Can only build Tensor, Parameter, OrderedDict"):
            real.load(tmp_path / "a.pt")
    (tmp_path / "good.pt").write_bytes(GOOD)
    np.testing.assert_array_equal(real.load(tmp_path / "good.pt").numpy(), FLOATS)


def test_blocked_modules_stay_blocked_even_when_allow_listed(tables_unchanged):
    import os
    torch.serialization.add_safe_globals([os.system])
    try:
        with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL (posix|nt)\.system whose module \w+ is blocked"):
            load(checkpoint(program(global_(os.system.__module__, "system") + tuple_(text("true")) + b"R")))
    finally:
        torch.serialization._remove_safe_globals([os.system])


def _same_as_pytorch(ours, theirs, real, path=""):
    if isinstance(theirs, real.Tensor):
        assert isinstance(ours, lucid.Tensor) and tuple(ours.shape) == tuple(theirs.shape), path
        assert isinstance(ours, lucid.nn.Parameter) == isinstance(theirs, real.nn.Parameter), path
        assert ours.requires_grad == theirs.requires_grad and str(ours.dtype)[9:] == str(theirs.dtype)[6:], path
        if theirs.dtype == real.bfloat16:  # numpy has no bfloat16
            ours, theirs = ours.float(), theirs.float()
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy(), err_msg=path)
    elif isinstance(theirs, dict):
        assert type(ours).__name__ == type(theirs).__name__ and list(ours) == list(theirs), path
        for key in theirs:
            _same_as_pytorch(ours[key], theirs[key], real, f"{path}.{key}")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _same_as_pytorch(a, b, real, f"{path}[{i}]")
    else:
        assert ours == theirs, path


def test_checkpoints_pytorch_writes_load_to_its_values():
    real = pytest.importorskip("torch")
    base = real.arange(24, dtype=real.float32)
    model = real.nn.Linear(2, 3)
    optimizer = real.optim.Adam(model.parameters())
    model(real.ones(1, 2)).sum().backward()
    optimizer.step()
    obj = {"view": base[3:15].reshape(3, 4).t(), "expanded": real.tensor([1.0, 2.0, 3.0]).expand(4, 3),
           "unfolded": base.unfold(0, 5, 2), "empty": real.zeros(0, 3), "scalar": real.tensor(2.5, dtype=real.float64),
           "every_third": base[::3], "bf16": real.randn(3, 2).bfloat16(), "f16": real.randn(2).half(),
           "bool": real.tensor([True, False]), "i8": real.tensor([-3, 4], dtype=real.int8),
           "u8": real.tensor([200], dtype=real.uint8), "c64": real.tensor([1 + 2j]), "i64": real.tensor([2**40]),
           "frozen": real.nn.Parameter(real.ones(2), requires_grad=False), "nested": [(1, 2.5, "s", None, True)],
           "bytes": b"\x00\xff", "set": {1, 2}, "complex": 3 - 1j, "size": real.Size([2, 3]),
           "counter": collections.Counter("aab"), "model": model.state_dict(), "optimizer": optimizer.state_dict()}
    buffer = io.BytesIO()
    real.save(obj, buffer)
    theirs = real.load(io.BytesIO(buffer.getvalue()))
    for weights_only in (True, False):
        ours = load(buffer.getvalue(), weights_only=weights_only)
        _same_as_pytorch(ours, theirs, real)
        assert ours["model"]._metadata == theirs["model"]._metadata  # an OrderedDict's BUILD state


# ------------------------------------------------------------------------------------------- storage records
def test_a_storage_record_larger_than_its_storage_is_refused_before_it_is_read(monkeypatch):
    # 4 float32 elements declared; the record inflates to 8 MiB from a few KiB of deflate
    big = checkpoint(program(tensor_ops("0", 4, 0, (4,), (1,))), {"0": bytes(8 << 20)}, zipfile.ZIP_DEFLATED)
    assert len(big) < 100_000
    opened = []
    real_open = zipfile.ZipFile.open
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda self, name, *a, **k: opened.append(
        getattr(name, "filename", name)) or real_open(self, name, *a, **k))
    with pytest.raises(RuntimeError, match=r"record size \(8388608 bytes\) does not match expected size "
                                           r"\(16 bytes = 4 elements \* 4 bytes/element\) for dtype FloatStorage"):
        load(big)
    assert "archive/data/0" not in opened  # refused from the zip directory, never inflated


@pytest.mark.parametrize("nbytes", [8, 15, 17, 32])
def test_a_storage_record_of_the_wrong_size_is_refused(nbytes):
    with pytest.raises(RuntimeError, match=rf"record size \({nbytes} bytes\) does not match expected size"):
        load(checkpoint(program(tensor_ops("0", 4, 0, (4,), (1,))), {"0": bytes(nbytes)}))


def test_pytorch_refuses_a_record_of_the_wrong_size(tmp_path):
    real = pytest.importorskip("torch")
    (tmp_path / "big.pt").write_bytes(checkpoint(program(tensor_ops("0", 4, 0, (4,), (1,))), {"0": bytes(64)}))
    with pytest.raises(RuntimeError, match="record size"):
        real.load(tmp_path / "big.pt")


# ----------------------------------------------------------------------------------------- stride-0 broadcasts
def _stride_zero_checkpoint(size, stride, offset=1):
    return checkpoint(program(tensor_ops("0", 4, offset, size, stride)), {"0": FLOATS.tobytes()})


def test_a_stride_zero_view_stays_a_broadcast():
    mx.eval(mx.zeros(1))
    before = mx.get_active_memory()
    back = load(_stride_zero_checkpoint((8192, 8192), (0, 0)))
    assert back.shape == (8192, 8192)
    mx.eval(back.mlx)
    assert mx.get_active_memory() - before < 1 << 20  # 256 MiB if it were materialized
    assert back[8191, 17].item() == -2.0 and back[0, 0].item() == -2.0


@pytest.mark.parametrize("size,stride,offset", [((3, 2), (0, 1), 1), ((2, 3), (1, 0), 2), ((3, 1, 2), (0, 7, 1), 0),
                                                 ((2, 3), (1, 1), 0), ((2, 2), (0, 0), 3), ((0, 5), (0, 0), 0)])
def test_zero_and_overlapping_strides_give_pytorchs_values(size, stride, offset):
    back = load(_stride_zero_checkpoint(size, stride, offset))
    expected = np.lib.stride_tricks.as_strided(FLOATS[offset:], size, [4 * s for s in stride])
    np.testing.assert_array_equal(back.numpy(), expected)
    real = pytest.importorskip("torch")
    np.testing.assert_array_equal(back.numpy(), real.as_strided(real.tensor(FLOATS), size, stride, offset).numpy())


def test_a_view_larger_than_memory_is_refused_as_a_factory_would_refuse_it():
    # MLX aborts the process when an allocation fails: the first op computing from such a view would
    with pytest.raises(RuntimeError, match="can't allocate memory: you tried to allocate"):
        load(_stride_zero_checkpoint((2**31 - 1,) * 3, (0, 0, 0)))


# ------------------------------------------------------------------------------------- random and mutated streams
STATE_DICT = program(global_("collections", "OrderedDict") + b")R" + b"q\x00("
                     + text("w") + tensor_ops("0", 4, 0, (2, 2), (2, 1)) + b"q\x01"
                     + text("b") + tensor_ops("0", 4, 1, (2,), (0,))
                     + text("meta") + b"}(" + text("epoch") + small_int(3) + text("lr") + b"G"
                     + struct.pack(">d", 0.5) + text("tags") + b"]" + text("a") + b"a" + b"u"
                     + text("again") + b"h\x01" + b"u")
EXPECTED = {"w": [[1.5, -2.0], [3.25, 4.0]], "b": [-2.0, -2.0], "meta": {"epoch": 3, "lr": 0.5, "tags": ["a"]},
            "again": [[1.5, -2.0], [3.25, 4.0]]}
OPCODES = b"cR\x81b.(taesu)]}\x85\x86\x87N\x88\x89JKMGXUQhjqr\x8a\x80\x8f\x95\x8c\x94"
FRAGMENTS = [global_("torch", "Tensor"), global_("collections", "Counter"), global_(__name__, "Canary"),
             global_("torch", "FloatStorage"), global_("torch._utils", "_rebuild_tensor_v2"), IDENTITY,
             global_("torch.nn.parameter", "Parameter"), global_("posix", "system"), text("__neg__"),
             text("storage"), text("0"), small_int(4), b"N}", b"\x86b", b"(t", b"Q", b"R", b"\x81"]


# bounded, so CI runs them in seconds; the fixture allow-lists Canary for all examples (each checks the tables)
FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _as_plain(value):
    """Tensors as lists (their values computed: nothing loaded may crash MLX), containers walked."""
    if isinstance(value, lucid.Tensor):
        return value.tolist() if value.numel() <= 1 << 16 else value.shape  # a mutated size can broadcast far
    if isinstance(value, dict):
        return {k: _as_plain(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(map(_as_plain, value))
    return value


def _load_checked(pickled: bytes):
    """Loads one stream: the result or one of the loader's clear errors; never anything else."""
    try:
        back = load(checkpoint(pickled, {"0": FLOATS.tobytes()}))
        _as_plain(back)
        return back
    except (pickle.UnpicklingError, RuntimeError, ValueError) as e:
        assert str(e)
        return e


def test_the_unmutated_stream_gives_the_right_data():
    back = _load_checked(STATE_DICT)
    assert isinstance(back, collections.OrderedDict) and _as_plain(back) == EXPECTED
    assert back["w"] is back["again"]  # the memo shares objects as pickle does


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(STATE_DICT) - 1), st.sampled_from(["set", "insert", "delete",
                                                                                "fragment"]),
                          st.integers(0, 255), st.sampled_from(FRAGMENTS)), min_size=1, max_size=4))
def test_mutated_streams_give_the_right_data_or_a_clear_error(tables_unchanged, edits):
    data = bytearray(STATE_DICT)
    for at, how, byte, fragment in edits:
        at = min(at, len(data))
        if how == "set" and at < len(data):
            data[at] = byte
        elif how == "insert":
            data[at:at] = bytes([byte])
        elif how == "delete":
            del data[at:at + 1]
        else:
            data[at:at] = fragment
    before = _snapshot()
    back = _load_checked(bytes(data))
    assert _snapshot() == before
    if bytes(data) == STATE_DICT:
        assert _as_plain(back) == EXPECTED


@FUZZ
@given(st.lists(st.one_of(st.sampled_from(list(OPCODES)).map(lambda op: bytes([op])), st.sampled_from(FRAGMENTS),
                          st.binary(max_size=3)), max_size=24))
def test_random_opcode_streams_give_a_clear_error_or_data(tables_unchanged, pieces):
    before = _snapshot()
    _load_checked(b"\x80\x02" + b"".join(pieces) + b".")
    assert _snapshot() == before
