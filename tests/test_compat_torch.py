"""lucid.compat.torch: PyTorch's API on lucid - its submodules, the tuple-returning autograd.grad, devices and
backends flags, what fails only when used, torch.compile, and torch.save/torch.load (PyTorch checkpoints read
without running their pickle)."""
import importlib
import io
import os
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import lucid
import lucid.compat.torch as torch

SUBMODULES = ["nn", "nn.functional", "nn.init", "nn.utils", "nn.parallel", "optim", "optim.lr_scheduler",
              "utils", "utils.data", "utils.checkpoint", "autograd", "autograd.functional", "linalg", "func",
              "cuda", "cuda.amp", "backends", "backends.cudnn", "backends.mps", "backends.cuda", "accelerator",
              "distributed", "onnx", "amp", "testing", "jit", "serialization"]
TINY_PT = Path(__file__).parent / "data" / "tiny_state_dict.pt"


@pytest.mark.parametrize("name", SUBMODULES)
def test_every_submodule_a_pytorch_program_imports_is_importable(name):
    module = importlib.import_module(f"lucid.compat.torch.{name}")
    parent, _, leaf = f"lucid.compat.torch.{name}".rpartition(".")
    assert getattr(importlib.import_module(parent), leaf) is module


def test_names_are_lucids_own_objects():
    assert torch.Tensor is lucid.Tensor and torch.nn.Linear is lucid.nn.Linear
    assert torch.nn.functional is lucid.nn.functional and torch.optim.lr_scheduler is lucid.optim.lr_scheduler
    assert torch.utils.data.DataLoader is lucid.utils.data.DataLoader and torch.linalg is lucid.linalg
    import lucid.compat.torch.nn.init as init  # an aliased module keeps its own spec (reload, pickling by name)
    assert init is lucid.nn.init and init.__spec__.name == "lucid.nn.init"


def test_autograd_grad_returns_a_tuple_for_a_single_input_where_lucid_returns_the_tensor():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    g = torch.autograd.grad((x * x).sum(), x)
    assert isinstance(g, tuple) and len(g) == 1
    np.testing.assert_array_equal(g[0].numpy(), 2 * x.detach().numpy())
    bare = lucid.autograd.grad((x * x).sum(), x)
    assert isinstance(bare, lucid.Tensor)
    np.testing.assert_array_equal(bare.numpy(), g[0].numpy())
    # the PINN idiom: [0] is the whole gradient here, and the first row under lucid's convention
    np.testing.assert_array_equal(torch.autograd.grad((x * x).sum(), x)[0].numpy(), [[2, 4], [6, 8]])
    np.testing.assert_array_equal(lucid.autograd.grad((x * x).sum(), x)[0].numpy(), [2, 4])


def test_autograd_grad_takes_any_sequence_of_inputs_and_higher_order():
    a, b = torch.tensor(2.0, requires_grad=True), torch.tensor(3.0, requires_grad=True)
    da, db = torch.autograd.grad(a * a * b, iter([a, b]), create_graph=True)
    assert (da.item(), db.item()) == (12.0, 4.0)
    (dda,) = torch.autograd.grad(da, a)
    assert dda.item() == 6.0


def test_cuda_is_unavailable_unless_mlx_runs_on_cuda():
    import mlx.core as mx
    on_cuda = hasattr(mx, "cuda") and mx.cuda.is_available()
    assert torch.cuda.is_available() is on_cuda and torch.cuda.device_count() == int(on_cuda)
    assert torch.backends.mps.is_available() is mx.metal.is_available()
    assert torch.accelerator.is_available() is mx.is_available(mx.gpu)
    if not on_cuda:
        with pytest.raises(AssertionError, match="CUDA is not available"):
            torch.cuda.current_device()
        assert torch.cuda.memory_allocated() == 0
    torch.cuda.empty_cache()
    torch.cuda.synchronize()


def test_device_strings_map_to_mlx_devices():
    assert torch.device("cuda" if torch.cuda.is_available() else "cpu") == lucid.get_default_device() or \
        torch.device("cpu").type == "cpu"
    assert torch.device("mps").type == torch.device("cuda:0").type == "gpu"
    x = torch.ones(2).to(torch.device("cpu"))
    assert x.device.type in ("cpu", "gpu")
    model = torch.nn.Linear(2, 2).to("cpu")
    assert model(torch.ones(1, 2)).shape == (1, 2)


def test_cuda_manual_seed_seeds_lucids_generator():
    torch.cuda.manual_seed_all(5)
    a = torch.randn(3)
    torch.manual_seed(5)
    np.testing.assert_array_equal(a.numpy(), torch.randn(3).numpy())


def test_backends_flags_are_accepted():
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.set_float32_matmul_precision("high")
    torch.use_deterministic_algorithms(True)
    assert torch.get_float32_matmul_precision() == "high" and torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(False)
    torch.set_float32_matmul_precision("highest")
    assert torch.backends.cudnn.is_available() is False


@pytest.mark.parametrize("call", [lambda: torch.onnx.export(None, None, "m.onnx"), lambda: torch.jit.script(len),
                                  lambda: torch.cuda.Stream(), lambda: torch.distributed.new_group([0]),
                                  lambda: torch.distributed.send(torch.zeros(1), 1)])
def test_what_mlx_lacks_fails_when_used_with_a_clear_message(call):
    with pytest.raises(NotImplementedError, match="not supported by lucid"):
        call()


def test_distributed_is_lucids_own():
    import lucid.distributed
    import lucid.nn.parallel
    assert torch.distributed.all_reduce is lucid.distributed.all_reduce and not torch.distributed.is_initialized()
    assert torch.nn.parallel.DistributedDataParallel is lucid.nn.parallel.DistributedDataParallel


def test_amp_is_lucids_autocast_and_gradscaler():
    assert torch.autocast is torch.amp.autocast
    model = torch.nn.Linear(3, 1)
    with torch.amp.autocast(device_type="cpu", dtype=torch.bfloat16):
        out = model(torch.ones(2, 3))
    assert out.dtype == torch.bfloat16  # linear is on PyTorch's lower-precision list, on CPU too
    scaler = torch.amp.GradScaler("cpu")
    assert scaler.is_enabled()
    loss = model(torch.ones(2, 3)).sum()
    assert scaler.scale(loss).item() == loss.item() * 2.0 ** 16


def test_amp_on_cuda_without_cuda_warns_and_disables_itself_as_pytorch():
    """What a GPU program meets on a CPU: PyTorch's warnings, full precision, a scaler that passes through."""
    if torch.cuda.is_available():
        pytest.skip("this MLX build has CUDA")
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available.  Disabling."):
        scaler = torch.cuda.amp.GradScaler()
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported. Disabling autocast."):
        ctx = torch.autocast("cuda", dtype=torch.float16)
    with ctx:
        loss = model(torch.ones(2, 3)).sum()
    assert loss.dtype == torch.float32 and not scaler.is_enabled()
    scaled = scaler.scale(loss)
    assert scaled is loss
    scaled.backward()
    before = model.weight.detach().numpy().copy()
    scaler.step(opt)
    scaler.update()
    assert not np.array_equal(before, model.weight.detach().numpy())
    real = pytest.importorskip("torch")
    if not real.cuda.is_available():  # PyTorch's own CPU build says the same
        with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
            assert not real.amp.GradScaler("cuda").is_enabled()


def test_data_parallel_calls_its_module_and_prefixes_state_dict():
    inner = torch.nn.Linear(2, 3)
    dp = torch.nn.DataParallel(inner)
    assert torch.nn.DataParallel is torch.nn.parallel.DataParallel
    x = torch.ones(4, 2)
    np.testing.assert_array_equal(dp(x).detach().numpy(), inner(x).detach().numpy())
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]


def test_compile_returns_a_module_like_object():
    model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Dropout(0.5))
    compiled = torch.compile(model)
    assert compiled.eval() is compiled and not model.training
    compiled.train()
    assert model.training
    assert list(compiled.parameters()) == list(model.parameters())
    model.block_size = 16
    assert compiled.block_size == 16 and compiled._orig_mod is model  # attribute access reaches the model
    assert list(compiled.state_dict()) == ["_orig_mod.0.weight", "_orig_mod.0.bias"]  # as PyTorch's
    compiled.eval()
    x = torch.ones(1, 2)
    np.testing.assert_array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    fn = lambda t: t * 2  # noqa: E731
    assert torch.compile(fn) is fn and torch.compile(mode="max-autotune")(fn) is fn


def test_testing_assert_close():
    torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
    with pytest.raises(AssertionError, match="not close"):
        torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1]))


# ---------------------------------------------------------------------------------------------------- save / load
def test_save_writes_pytorch_zip_and_load_reads_it_back(tmp_path):
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters())
    model(torch.ones(1, 3)).sum().backward()
    opt.step()
    checkpoint = {"model": model.state_dict(), "optimizer": opt.state_dict(), "iter": 3, "config": {"lr": 1e-3}}
    torch.save(checkpoint, tmp_path / "ckpt.pt")
    assert (tmp_path / "ckpt.pt").read_bytes()[:4] == b"PK\x03\x04"  # PyTorch's zip (tests/test_torch_save_format.py)
    back = torch.load(tmp_path / "ckpt.pt")
    assert back["iter"] == 3 and back["config"] == {"lr": 1e-3}
    fresh = torch.nn.Linear(3, 2)
    fresh.load_state_dict(back["model"])
    np.testing.assert_array_equal(fresh.weight.detach().numpy(), model.weight.detach().numpy())
    torch.optim.Adam(fresh.parameters()).load_state_dict(back["optimizer"])


def test_whole_module_pickles_load_only_with_weights_only_false(tmp_path):
    model = torch.nn.Linear(3, 2)
    torch.save(model, tmp_path / "model.pt")
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False"):
        torch.load(tmp_path / "model.pt")
    back = torch.load(tmp_path / "model.pt", weights_only=False)
    assert isinstance(back, lucid.nn.Linear)
    np.testing.assert_array_equal(back.weight.detach().numpy(), model.weight.detach().numpy())


def _check_tiny(state):
    assert list(state) == ["weight", "tail", "param", "half", "steps", "mask", "meta"]
    np.testing.assert_array_equal(state["weight"].numpy(), np.arange(6, dtype=np.float32).reshape(2, 3).T)
    np.testing.assert_array_equal(state["tail"].numpy(), [8, 9, 10, 11])
    assert isinstance(state["param"], lucid.nn.Parameter) and state["param"].requires_grad
    np.testing.assert_array_equal(state["param"].detach().numpy(), [0.5, -1.5])
    assert state["half"].dtype == lucid.bfloat16 and state["half"].float().tolist() == [1.0, 2.5]
    assert state["steps"].dtype == lucid.int64 and state["steps"].shape == () and state["steps"].item() == 7
    assert state["mask"].tolist() == [True, False]
    assert state["meta"] == {"epoch": 3, "name": "tiny", "sizes": (2, 3)}


def test_load_reads_a_pytorch_checkpoint_fixture_without_pytorch():
    _check_tiny(torch.load(TINY_PT))
    with open(TINY_PT, "rb") as f:
        _check_tiny(torch.load(f, map_location="cpu"))


def test_load_reads_a_checkpoint_pytorch_saves_now(tmp_path):
    real = pytest.importorskip("torch")
    model = real.nn.Sequential(real.nn.Conv2d(1, 2, 3), real.nn.BatchNorm2d(2), real.nn.Flatten(),
                               real.nn.Linear(8, 4))
    real.save({"model": model.state_dict(), "step": 10}, tmp_path / "real.pt")
    back = torch.load(tmp_path / "real.pt")
    ours = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.Flatten(),
                               torch.nn.Linear(8, 4))
    ours.load_state_dict(back["model"])
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    model.eval(), ours.eval()
    np.testing.assert_allclose(ours(torch.tensor(x)).detach().numpy(),
                               model(real.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert back["step"] == 10


class _Evil:
    def __reduce__(self):
        return os.system, ("touch pwned",)


def _zip_checkpoint(pickled: bytes, storages: dict = {}) -> bytes:  # noqa: B006  (read only)
    """PyTorch's zip layout around a pickle: archive/data.pkl, archive/byteorder, archive/data/<key>."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("archive/data.pkl", pickled)
        z.writestr("archive/byteorder", "little")
        for key, data in storages.items():
            z.writestr(f"archive/data/{key}", data)
    return buffer.getvalue()


def test_load_refuses_a_malicious_pickle_without_running_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    payload = pickle.dumps({"weights": _Evil()}, protocol=2)
    (tmp_path / "evil.pt").write_bytes(_zip_checkpoint(payload))
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system|nt.system"):
        torch.load("evil.pt")
    (tmp_path / "evil.pkl").write_bytes(payload)
    for weights_only in (True, False):  # a bare pickle is never unpickled
        with pytest.raises(pickle.UnpicklingError, match="bare pickle"):
            torch.load("evil.pkl", weights_only=weights_only)
    assert not (tmp_path / "pwned").exists()


def _one_tensor_checkpoint(size: int, numel: int) -> bytes:
    """A PyTorch zip checkpoint written by hand: _rebuild_tensor_v2 over a float storage of ``numel`` elements,
    viewed with size (size,), stride (1,)."""
    def short(text: str) -> bytes:  # pickle's BINUNICODE
        return b"X" + len(text).to_bytes(4, "little") + text.encode()

    pickled = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(("
               + short("storage") + b"ctorch\nFloatStorage\n" + short("0") + short("cpu") + b"K" + bytes([numel])
               + b"tQK\x00K" + bytes([size]) + b"\x85K\x01\x85\x89}tR.")
    return _zip_checkpoint(pickled, {"0": np.arange(numel, dtype="<f4").tobytes()})


def test_load_refuses_a_checkpoint_whose_view_reaches_past_its_storage():
    np.testing.assert_array_equal(torch.load(io.BytesIO(_one_tensor_checkpoint(4, 4))).numpy(), [0, 1, 2, 3])
    with pytest.raises(pickle.UnpicklingError, match="reaches past its storage"):
        torch.load(io.BytesIO(_one_tensor_checkpoint(9, 4)))


def test_load_keeps_ordered_dicts():
    assert isinstance(torch.load(TINY_PT), OrderedDict)


def test_importing_a_submodule_keeps_the_function_of_the_same_name():
    # `from torch.autograd.gradcheck import X` must not turn torch.autograd.gradcheck into the module
    from lucid.compat.torch.autograd.gradcheck import GradcheckError  # noqa: F401
    assert callable(torch.autograd.gradcheck) and torch.autograd.gradcheck is lucid.autograd.gradcheck
    from lucid.compat.run import torch_is_lucid
    with torch_is_lucid():
        import torch as aliased
        from torch.autograd.gradcheck import GradcheckError  # noqa: F401,F811
        assert aliased.autograd.gradcheck is lucid.autograd.gradcheck
        x = aliased.tensor([1.0, 2.0], dtype=aliased.float64, requires_grad=True)
        assert aliased.autograd.gradcheck(lambda t: (t * t).sum(), (x,))


def test_size_prints_as_torch_size_while_torch_is_lucid():
    # a PyTorch program run on lucid sees its own name for shapes, in reprs and in error messages
    from lucid.compat.run import torch_is_lucid
    x = lucid.ones(2, 3, requires_grad=True)
    assert repr(x.shape) == "lucid.Size([2, 3])"
    with torch_is_lucid():
        import torch as aliased
        assert repr(x.shape) == "torch.Size([2, 3])" and aliased.Size is lucid.Size
        with pytest.raises(RuntimeError, match=r"should be torch\.Size\(\[2, 3\]\) but got torch\.Size\(\[3\]\)"):
            aliased.autograd.functional.vjp(lambda t: t * 2, x, aliased.ones(3))
    assert repr(x.shape) == "lucid.Size([2, 3])"


def test_set_warn_always_is_accepted_and_reported():
    assert torch.is_warn_always_enabled() is False
    torch.set_warn_always(True)
    try:
        assert torch.is_warn_always_enabled() is True
    finally:
        torch.set_warn_always(False)


def test_volatile_is_always_false_with_a_removal_warning():
    import lucid.compat.torch as torch
    v = torch.autograd.torch.randn(3, 3)
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert v.volatile is False
