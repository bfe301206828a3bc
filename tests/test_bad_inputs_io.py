"""Bad input to optimizers, lucid.save and lucid.load: PyTorch's exception type, a message naming the problem, and
nothing changed (parameters, .grad, optimizer state and step counts, files)."""
import io
import json
import os
import stat

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lucid
from lucid import optim

ALL = ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad", "Adadelta", "Lion"]


def make(name, n=2, **options):
    params = [lucid.tensor([1.0, -2.0], requires_grad=True) for _ in range(n)]
    options.setdefault("lr", 0.1)
    if name == "SGD":
        options.setdefault("momentum", 0.9)
    return params, getattr(optim, name)(params, **options)


def set_grads(params, value=1.0):
    for p in params:
        p.grad = lucid.full(tuple(p.shape), value)


def snapshot(opt):
    """Every value the optimizer could change, as numpy copies (plus the state's keys and the groups' options)."""
    params = [p for g in opt.param_groups for p in g["params"]]
    return {
        "params": [(p.detach().numpy().copy(), p._version) for p in params],
        "grads": [None if p.grad is None else p.grad.numpy().copy() for p in params],
        "state": [{k: (v.numpy().copy() if isinstance(v, lucid.Tensor) else v) for k, v in opt.state[p].items()}
                  if p in opt.state else None for p in params],
        "groups": [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups],
    }


def assert_same(a, b):
    assert len(a["params"]) == len(b["params"])
    for (x, vx), (y, vy) in zip(a["params"], b["params"]):
        np.testing.assert_array_equal(x, y)
        assert vx == vy
    for x, y in zip(a["grads"], b["grads"]):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_array_equal(x, y)
    for x, y in zip(a["state"], b["state"]):
        assert (x is None) == (y is None)
        if x is not None:
            assert list(x) == list(y)
            for k in x:
                np.testing.assert_array_equal(x[k], y[k])
    assert a["groups"] == b["groups"]


# ---------------------------------------------------------------------------------------------------- optimizers
@pytest.mark.parametrize("name", ALL)
def test_step_failing_on_the_second_parameter_changes_nothing(name):
    params, opt = make(name)
    set_grads(params)
    opt.step()  # state exists now: the failing step must not advance its counts either
    set_grads(params, 0.5)
    params[1].grad.data = lucid.ones(3)  # a gradient of the wrong shape, set behind the grad setter's back
    before = snapshot(opt)
    with pytest.raises(RuntimeError, match=r"gradient of parameter 1 of param group 0 has shape \[3\]"):
        opt.step()
    assert_same(before, snapshot(opt))
    params[1].grad = lucid.full((2,), 0.5)
    opt.step()  # and the optimizer still works afterwards


@pytest.mark.parametrize("name", ["Adam", "RMSprop", "SGD"])
def test_first_step_failing_creates_no_state(name):
    params, opt = make(name)
    set_grads(params)
    params[1].grad.data = lucid.ones(2, dtype=lucid.float64)
    with pytest.raises(RuntimeError, match="has dtype float64, but the parameter has dtype float32"):
        opt.step()
    assert all(p not in opt.state or not opt.state[p] for p in params)
    np.testing.assert_array_equal(params[0].detach().numpy(), [1.0, -2.0])


def test_parameter_resized_after_its_state_was_made():
    params, opt = make("Adam")
    set_grads(params)
    opt.step()
    params[1].data = lucid.zeros(3)  # e.g. an embedding grown after the optimizer was made
    params[1].grad = lucid.ones(3)
    before = snapshot(opt)
    with pytest.raises(RuntimeError, match=r"parameter 1 of param group 0 \(shape \[3\]\) doesn't match its "
                                           r"optimizer state \(step \[\], exp_avg \[2\]"):
        opt.step()
    assert_same(before, snapshot(opt))


def test_bad_option_in_a_later_group_changes_the_earlier_group_nothing():
    a, b = lucid.ones(2, requires_grad=True), lucid.ones(2, requires_grad=True)
    opt = optim.Adam([{"params": [a]}, {"params": [b]}], lr=0.1)
    set_grads([a, b])
    opt.step()
    opt.param_groups[1]["lr"] = None  # PyTorch: TypeError from the arithmetic
    before = snapshot(opt)
    with pytest.raises(TypeError, match="NoneType"):
        opt.step()
    assert_same(before, snapshot(opt))
    del opt.param_groups[1]["eps"]
    opt.param_groups[1]["lr"] = 0.1
    before = snapshot(opt)
    with pytest.raises(KeyError, match="eps"):
        opt.step()
    assert_same(before, snapshot(opt))


def test_closure_raising_changes_nothing():
    params, opt = make("Adam")
    set_grads(params)
    before = snapshot(opt)

    def closure():
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        opt.step(closure)
    assert_same(before, snapshot(opt))


@pytest.mark.parametrize("bad", ["shape", "broadcastable shape", "missing key"])
def test_step_after_loading_a_mismatched_state(bad):
    params, opt = make("Adam")
    set_grads(params)
    opt.step()
    sd = opt.state_dict()
    if bad == "missing key":
        del sd["state"][1]["exp_avg"]  # PyTorch: KeyError at the step
    else:
        sd["state"][1]["exp_avg"] = lucid.zeros(3 if bad == "shape" else 1)  # MLX would broadcast a [1] silently
    opt.load_state_dict(sd)
    before = snapshot(opt)
    error, match = ((KeyError, "exp_avg") if bad == "missing key" else
                    (RuntimeError, r"loaded state 'exp_avg' of parameter 1 of param group 0 has shape"))
    with pytest.raises(error, match=match):
        opt.step()
    assert_same(before, snapshot(opt))


@pytest.mark.parametrize("state_dict, error, match", [
    ({"state": {}, "param_groups": []}, ValueError, "different number of parameter groups"),
    ({"state": {}, "param_groups": [{"params": [0, 1, 2], "lr": 1.0}]}, ValueError,
     "doesn't match the size of optimizer's group"),
    ({"state": {}}, KeyError, "param_groups"),
    ({"state": {}, "param_groups": [{"lr": 1.0}]}, KeyError, "params"),
])
def test_load_state_dict_that_does_not_fit_changes_nothing(state_dict, error, match):
    params, opt = make("Adam")
    set_grads(params)
    opt.step()
    before = snapshot(opt)
    with pytest.raises(error, match=match):
        opt.load_state_dict(state_dict)
    assert_same(before, snapshot(opt))


def test_integer_and_complex_parameters():
    p = lucid.tensor([1, 2])
    p.grad = lucid.tensor([1, 1])
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(RuntimeError, match="has dtype int64, and lucid's SGD updates floating-point and complex"):
        opt.step()  # (PyTorch raises a RuntimeError too; lucid used to round the update to 0 silently)
    assert p.tolist() == [1, 2]

    z = lucid.tensor([1 + 1j], requires_grad=True)
    z.grad = lucid.tensor([1 + 2j])
    opt = optim.Adam([z], lr=0.1)
    with pytest.raises(RuntimeError, match="has dtype complex64, and lucid's Adam updates real floating-point"):
        opt.step()  # its squares and square roots would be wrong on complex numbers (PyTorch uses the real view)
    assert z.detach().tolist() == [1 + 1j] and not opt.state[z]
    optim.SGD([z], lr=0.1).step()  # SGD's update is linear: exact
    np.testing.assert_allclose(z.detach().numpy(), [1 + 1j - 0.1 * (1 + 2j)], rtol=1e-6)


def test_learning_rate_given_as_a_tensor():
    params, opt = make("SGD", n=1, momentum=0)
    set_grads(params)
    opt.param_groups[0]["lr"] = lucid.tensor(0.5)  # PyTorch allows a Tensor learning rate
    opt.step()
    np.testing.assert_allclose(params[0].detach().numpy(), [0.5, -2.5])
    opt.param_groups[0]["lr"] = lucid.tensor([0.5, 0.1])
    before = snapshot(opt)
    with pytest.raises(TypeError, match=r"1-element Tensors, but got a Tensor of shape \[2\]"):
        opt.step()
    assert_same(before, snapshot(opt))


def test_pytorch_raises_the_same_types():
    torch = pytest.importorskip("torch")
    a, b = torch.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    a.grad, b.grad = torch.ones(2), torch.ones(2)
    opt = torch.optim.Adam([a, b], lr=0.1)
    opt.step()
    b.data, b.grad = torch.zeros(3), torch.ones(3)
    with pytest.raises(RuntimeError):
        opt.step()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    opt.param_groups[0]["lr"] = None
    with pytest.raises(TypeError):
        opt.step()


# ---------------------------------------------------------------------------------------------------- save
def write_file(path, value=0.0):
    lucid.save({"w": lucid.full((2,), value)}, path)
    return path.read_bytes()


def test_save_over_a_read_only_file_raises_permission_error(tmp_path):
    target = tmp_path / "ro.safetensors"
    old = write_file(target)
    os.chmod(target, 0o444)
    with pytest.raises(PermissionError, match="Permission denied"):
        lucid.save({"w": lucid.ones(2)}, target)
    assert target.read_bytes() == old and stat.S_IMODE(target.stat().st_mode) == 0o444
    assert sorted(os.listdir(tmp_path)) == ["ro.safetensors"]  # no temporary file left


def test_save_through_a_symlink_writes_its_target_and_keeps_the_mode(tmp_path):
    target = tmp_path / "real.safetensors"
    write_file(target)
    os.chmod(target, 0o640)
    link = tmp_path / "link.safetensors"
    link.symlink_to("real.safetensors")
    lucid.save({"w": lucid.ones(3)}, link)
    assert link.is_symlink() and os.readlink(link) == "real.safetensors"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert lucid.load(target)["w"].tolist() == [1.0, 1.0, 1.0]
    assert sorted(os.listdir(tmp_path)) == ["link.safetensors", "real.safetensors"]


def test_save_to_a_directory_or_a_missing_folder(tmp_path):
    with pytest.raises(RuntimeError, match="Is a directory"):
        lucid.save({"w": lucid.ones(1)}, tmp_path)
    with pytest.raises(RuntimeError, match=r"Parent directory .*missing does not exist"):
        lucid.save({"w": lucid.ones(1)}, tmp_path / "missing" / "a.safetensors")
    with pytest.raises(RuntimeError, match="invalid file name"):
        lucid.save({"w": lucid.ones(1)}, "")
    with pytest.raises(AttributeError, match="expected 'f' to be string, path, or a file-like object"):
        lucid.save({"w": lucid.ones(1)}, 3.5)
    assert os.listdir(tmp_path) == []


def test_save_of_an_unsupported_object_keeps_the_old_file(tmp_path):
    target = tmp_path / "a.safetensors"
    old = write_file(target)
    with pytest.raises(TypeError, match="can't store an object of type function"):
        lucid.save({"w": lucid.ones(2), "f": lambda: 1}, target)
    assert target.read_bytes() == old and os.listdir(tmp_path) == ["a.safetensors"]


# ---------------------------------------------------------------------------------------------------- load
def file_with(header, data=b""):
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + data


def structure(obj_json: str):
    return file_with({"__metadata__": {"lucid.structure": obj_json}})


def f32(shape, offsets):
    return {"dtype": "F32", "shape": shape, "data_offsets": offsets}


MALFORMED = {
    "empty": (b"", "too short"),
    "truncated header": (file_with({"w": f32([1], [0, 4])}, b"\0" * 4)[:20], "larger than the rest of the file"),
    "truncated data": (file_with({"w": f32([2], [0, 8])}, b"\0" * 4), "out of range"),
    "header not JSON": (b"\x08" + b"\0" * 7 + b"{notjson", "not valid JSON"),
    "header not UTF-8": (b"\x08" + b"\0" * 7 + b"\xff" * 8, "not valid JSON"),
    "header not an object": (file_with([1, 2]), "not a JSON object"),
    "number too long": (b"\x00\x14" + b"\0" * 6 + b"[" + b"1" * 5118 + b"]", "not valid JSON"),
    "metadata not str": (file_with({"__metadata__": {"a": 1}}), "__metadata__ must map strings"),
    "entry not a dict": (file_with({"w": [1]}), "needs dtype, shape and data_offsets"),
    "unknown dtype": (file_with({"w": {"dtype": "F8", "shape": [1], "data_offsets": [0, 1]}}, b"\0"),
                      "unknown dtype"),
    "unhashable dtype": (file_with({"w": {"dtype": ["F32"], "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
                         "unknown dtype"),
    "negative dim": (file_with({"w": f32([-1], [0, 4])}, b"\0" * 4), "invalid shape"),
    "huge empty shape": (file_with({"w": f32([0, 10**30], [0, 0])}), "invalid shape"),
    "huge shape": (file_with({"w": f32([2**31 - 1, 2**31 - 1], [0, 4])}, b"\0" * 4), "size mismatch"),
    "shape vs bytes": (file_with({"w": f32([3], [0, 8])}, b"\0" * 8), "size mismatch"),
    "offsets reversed": (file_with({"w": f32([0], [4, 0])}, b"\0" * 4), "invalid data_offsets"),
    "offsets overlap": (file_with({"a": f32([1], [0, 4]), "b": f32([1], [0, 4])}, b"\0" * 4), "overlaps"),
    "offsets gap": (file_with({"a": f32([1], [4, 8])}, b"\0" * 8), "belong to no tensor"),
    "trailing bytes": (file_with({"a": f32([1], [0, 4])}, b"\0" * 8), "after the last tensor"),
    "structure not JSON": (structure("{"), "not valid JSON"),
    "unhashable key": (structure(json.dumps({"D": [[{"L": []}, 1]]})), "a dict key is a list"),
    "nested 10^5 deep": (structure('{"L":[' * 100_000 + "]}" * 100_000), "nested too deeply"),
    "nested deep in decode": (structure('{"L":[' * 5_000 + "]}" * 5_000), "nested too deeply"),
    "missing tensor": (structure('{"T":"nope"}'), "not in the file"),
    "unknown node": (structure('{"X":[]}'), "unknown node"),
    "bad float": (structure('{"F":"1e5"}'), "float"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_file_raises_value_error_naming_the_file(case, tmp_path):
    raw, phrase = MALFORMED[case]
    path = tmp_path / "bad.safetensors"
    path.write_bytes(raw)
    with pytest.raises(ValueError, match=phrase) as info:
        lucid.load(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == raw


def reference_file() -> tuple[bytes, dict]:
    obj = {"w": lucid.tensor([[1.0, 2.0], [3.0, 4.0]]), "b": lucid.tensor([1, 2], dtype=lucid.int32),
           "meta": {1: ["x", 2.5, None, (True,)]}}
    buf = io.BytesIO()
    lucid.save(obj, buf)
    return buf.getvalue(), obj


RAW, OBJ = reference_file()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(RAW) - 1), st.integers(0, 255)), min_size=1, max_size=4),
       st.integers(0, len(RAW)))
def test_mutated_file_loads_or_raises_value_error(changes, keep):
    raw = bytearray(RAW)
    for position, value in changes:
        raw[position] = value
    raw = bytes(raw[:keep])
    try:
        loaded = lucid.load(io.BytesIO(raw))
    except ValueError:
        return
    if raw == RAW:  # unchanged (or changed back): the same object
        assert loaded["w"].tolist() == OBJ["w"].tolist() and loaded["b"].tolist() == [1, 2]
        assert loaded["meta"] == OBJ["meta"]
