"""PyTorch's device conveniences on plain lucid (lucid.cuda, lucid.mps, lucid.backends, lucid.accelerator,
Tensor.cuda, Module.cuda): the same answers as lucid.compat.torch, and as PyTorch on a machine like this one."""
import mlx.core as mx
import numpy as np
import pytest

import lucid
import lucid.compat.torch as lt

ON_CUDA = hasattr(mx, "cuda") and mx.cuda.is_available()
ON_METAL = mx.metal.is_available()


def _raised(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
        return type(e), str(e)
    return None


@pytest.fixture
def torch_without_gpu():
    """Real PyTorch, where it has neither CUDA nor MPS (its CPU build on Linux), to compare errors with."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available() or torch.backends.mps.is_available():
        pytest.skip("PyTorch here has a GPU")
    return torch


def test_compat_serves_plain_lucids_device_modules():
    import lucid.compat.torch.backends.cudnn as cudnn
    assert lt.backends is lucid.backends and cudnn is lucid.backends.cudnn
    assert lt.accelerator is lucid.accelerator and lt.mps is lucid.mps
    for name in lucid.cuda.__all__:
        assert getattr(lt.cuda, name) is getattr(lucid.cuda, name), name
    assert lt.cuda.amp.GradScaler is not None  # torch.cuda.amp stays compat's own


def test_availability_is_mlxs():
    assert lucid.cuda.is_available() is lt.cuda.is_available() is ON_CUDA
    assert lucid.cuda.device_count() == int(ON_CUDA) and lucid.cuda.is_bf16_supported() is ON_CUDA
    assert lucid.backends.cuda.is_built() is ON_CUDA and lucid.backends.cudnn.is_available() is False
    assert lucid.backends.mps.is_available() is lucid.backends.mps.is_built() is lucid.mps.is_available() is ON_METAL
    assert lucid.mps.device_count() == int(ON_METAL)
    assert lucid.accelerator.is_available() is mx.is_available(mx.gpu)
    assert lucid.accelerator.device_count() == int(mx.is_available(mx.gpu))


@pytest.mark.skipif(mx.is_available(mx.gpu), reason="this machine has a GPU")
def test_without_a_gpu_the_answers_are_pytorchs_on_its_cpu_build(torch_without_gpu):
    torch = torch_without_gpu
    assert lucid.cuda.is_available() is torch.cuda.is_available() is False
    assert lucid.cuda.device_count() == torch.cuda.device_count() == 0
    assert lucid.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    assert lucid.backends.mps.is_available() is torch.backends.mps.is_available() is False
    assert lucid.mps.is_available() is torch.mps.is_available() is False
    assert lucid.mps.device_count() == torch.mps.device_count() == 0
    assert lucid.accelerator.current_accelerator() is torch.accelerator.current_accelerator() is None
    for name in ("current_device_index", "synchronize"):
        assert _raised(getattr(lucid.accelerator, name)) == _raised(getattr(torch.accelerator, name)), name
    for name in ("synchronize", "empty_cache", "current_allocated_memory", "driver_allocated_memory",
                 "recommended_max_memory", "seed", "get_rng_state"):
        ours, theirs = _raised(getattr(lucid.mps, name)), _raised(getattr(torch.mps, name))
        assert ours[0] is theirs[0] is RuntimeError and "without MPS backend" in ours[1] and "without MPS" in theirs[1]
    assert _raised(lambda: lucid.mps.manual_seed(1)) is _raised(lambda: torch.mps.manual_seed(1)) is None
    assert _raised(lucid.cuda.current_device)[0] is _raised(torch.cuda.current_device)[0] is AssertionError


@pytest.mark.skipif(ON_CUDA, reason="MLX runs on CUDA here")
def test_tensor_cuda_raises_pytorchs_errors_without_cuda():
    torch = pytest.importorskip("torch")
    x = lucid.tensor([1.0, 2.0])
    for dev in (None, "cuda", "cuda:0", lucid.device("cuda")):
        err = _raised(lambda: x.cuda(dev))
        assert err[0] is _raised(lambda: torch.ones(1).cuda(None if isinstance(dev, lucid.device) else dev))[0]
        assert err[0] is AssertionError and "CUDA is not available" in err[1]
    if not mx.is_available(mx.gpu) and not torch.backends.mps.is_available():  # an index, with no GPU at all
        assert _raised(lambda: x.cuda(0)) == _raised(lambda: torch.ones(1).cuda(0))
    for dev in ("cpu", "mps"):  # not a CUDA device: PyTorch's RuntimeError, word for word, before the CUDA check
        assert _raised(lambda: x.cuda(dev)) == _raised(lambda: torch.ones(1).cuda(dev))
    assert _raised(lambda: x.cuda(non_blocking=True)) == _raised(lucid.cuda.init)
    assert lt.Tensor.cuda is lucid.Tensor.cuda
    assert x.tolist() == [1.0, 2.0] and not x.is_cuda


@pytest.mark.skipif(ON_CUDA, reason="MLX runs on CUDA here")
def test_module_cuda_raises_as_pytorchs_and_leaves_the_module_as_it_was():
    torch = pytest.importorskip("torch")
    lucid.manual_seed(0)
    model = lucid.nn.Sequential(lucid.nn.Linear(2, 3), lucid.nn.BatchNorm1d(3))
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    err = _raised(model.cuda)
    assert err[0] is _raised(torch.nn.Linear(2, 3).cuda)[0] is AssertionError and "CUDA is not available" in err[1]
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])
    # a module without tensors has nothing to move, in PyTorch too
    relu = lucid.nn.ReLU()
    assert relu.cuda() is relu and isinstance(torch.nn.ReLU().cuda(), torch.nn.ReLU)
    assert model.cpu() is model


@pytest.mark.skipif(not ON_CUDA, reason="needs MLX on CUDA")
def test_on_cuda_tensor_and_module_cuda_are_lucids_gpu():
    x = lucid.tensor([1.0, 2.0])
    assert x.cuda() is x and x.cuda("cuda:0") is x and x.cuda(0) is x
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        x.cuda(1)
    model = lucid.nn.Linear(2, 2)
    assert model.cuda() is model
    assert lucid.cuda.current_device() == 0 and isinstance(lucid.cuda.get_device_name(), str)


def test_seeding_through_the_device_modules_seeds_lucids_generator():
    state = lucid.get_rng_state()
    try:
        lucid.cuda.manual_seed_all(7)
        a = lucid.randn(3)
        lucid.manual_seed(7)
        np.testing.assert_array_equal(a.numpy(), lucid.randn(3).numpy())
        s = lucid.seed()  # torch.seed(): from the OS, returned, and what initial_seed() reports
        assert isinstance(s, int) and 0 <= s < 2 ** 64 and lucid.initial_seed() == s
        lucid.cuda.seed_all()
        assert lucid.initial_seed() != s  # (a 64-bit draw from the OS: equal with probability 2**-64)
    finally:
        lucid.set_rng_state(state)


def test_backend_flags_are_plain_lucids_and_compats_alike():
    try:
        lucid.backends.cudnn.benchmark = True
        assert lt.backends.cudnn.benchmark is True
        with lucid.backends.cuda.sdp_kernel(enable_flash=False):
            pass
        assert lucid.backends.cuda.math_sdp_enabled() and not lucid.backends.cuda.flash_sdp_enabled()
    finally:
        lucid.backends.cudnn.benchmark = False


@pytest.mark.skipif(mx.is_available(mx.gpu), reason="this machine has a GPU")
def test_cuda_spelled_as_a_string_raises_as_pytorch_without_any_gpu():
    torch = pytest.importorskip("torch")
    x = lucid.ones(2)
    calls = [(lambda: x.to("cuda"), lambda: torch.ones(2).to("cuda")),
             (lambda: lucid.zeros(2, device="cuda:0"), lambda: torch.zeros(2, device="cuda:0")),
             (lambda: lucid.nn.Linear(1, 1).to("cuda"), lambda: torch.nn.Linear(1, 1).to("cuda"))]
    for ours, theirs in calls:
        err = _raised(ours)
        assert err[0] is _raised(theirs)[0] is AssertionError and "CUDA is not available" in err[1]
    with pytest.raises(RuntimeError, match="device 'gpu' is not available"):
        x.to("gpu")  # lucid's own name keeps lucid's error
