"""The device the suite runs on: ``LUCID_TEST_DEVICE`` = ``cpu`` (the default), ``gpu`` or ``simgpu``.

- ``cpu``: MLX's CPU device. The tests run on the reference BLAS bundled with mlx[cpu] on every Linux machine,
  OpenBLAS installed or not, so that the suite computes the same numbers everywhere (the training tests' thresholds
  were measured so); the processes they start inherit the setting. test_blas.py checks, in fresh processes without
  it, that ``import lucid`` loads OpenBLAS.
- ``gpu``: MLX's GPU (Metal, or CUDA with mlx[cuda13]) is the default device, as on a Mac. float64 has no GPU
  kernels: lucid runs it on the CPU stream, so gradcheck tests run unchanged. The whole run is skipped, saying why,
  when this MLX has no GPU.
- ``simgpu``: a simulated GPU on a CPU-only MLX (tests/simgpu.py): MLX refuses float64 off the CPU stream as a GPU
  does, so the suite checks lucid's float64 routing on any machine (slower: every MLX call is wrapped).

Markers say what a test needs beyond a default device: ``cpu_only`` (it is about MLX's CPU device itself: skipped
in the GPU modes) and ``cpu_kernels`` (a tolerance or threshold measured on MLX's CPU kernels: in the GPU modes a
failure is reported as an expected failure, xfail, not an error).
"""
import os

os.environ["LUCID_BLAS"] = "reference"  # before lucid or mlx.core is imported

import mlx.core as mx  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

DEVICE = os.environ.get("LUCID_TEST_DEVICE", "cpu")
if DEVICE not in ("cpu", "gpu", "simgpu"):
    raise pytest.UsageError(f"LUCID_TEST_DEVICE={DEVICE!r}: expected cpu, gpu or simgpu")
NO_GPU = DEVICE == "gpu" and not mx.is_available(mx.gpu)

if DEVICE == "simgpu":
    import simgpu  # noqa: E402  (tests/ is on sys.path: pytest's rootdir conftest)

    simgpu.install()  # before lucid is imported, so that lucid's references to MLX functions are the wrapped ones
    mx.set_default_device(mx.gpu)
elif DEVICE == "gpu" and not NO_GPU:
    mx.set_default_device(mx.gpu)
else:
    mx.set_default_device(mx.cpu)


def pytest_report_header(config):
    return f"lucid test device: {DEVICE} (MLX default device {mx.default_device()})"


def pytest_collection_modifyitems(config, items):
    if NO_GPU:
        skip = pytest.mark.skip(reason="LUCID_TEST_DEVICE=gpu but this MLX has no GPU backend (mx.is_available(mx.gpu) "
                                       "is False): install mlx on a Mac or mlx[cuda13] on an NVIDIA machine")
        for item in items:
            item.add_marker(skip)
        return
    if DEVICE == "cpu":
        return
    for item in items:
        m = item.get_closest_marker("cpu_only")
        if m is not None:
            item.add_marker(pytest.mark.skip(reason=f"needs MLX's CPU device: {m.args[0] if m.args else ''}"))
        m = item.get_closest_marker("cpu_kernels")
        if m is not None:
            item.add_marker(pytest.mark.xfail(reason=f"measured on MLX's CPU kernels: {m.args[0] if m.args else ''}",
                                              strict=False))


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    mx.random.seed(0)
