"""tools/gpu_check.sh's CPU half: its dry run on MLX's CPU device (GPU_CHECK_DEVICE=cpu) writes the report with each
stage's status, a stage over its time limit is cut off and reported as such without stopping the others, and a
wheel that comes in parts is joined and installed. (The GPU half needs an NVIDIA machine: docs/gpu.md.)"""
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tools", "gpu_check.sh")


def _stand_in_wheel(folder: str) -> str:
    """A minimal pure-Python wheel (one module), written in two parts as a large wheel is carried."""
    name = "gpucheckstandin-0.1-py3-none-any.whl"
    path = os.path.join(folder, name)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("gpucheckstandin/__init__.py", "VALUE = 42\n")
        z.writestr("gpucheckstandin-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: gpucheckstandin\n"
                                                             "Version: 0.1\n")
        z.writestr("gpucheckstandin-0.1.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\n"
                                                          "Root-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr("gpucheckstandin-0.1.dist-info/RECORD", "")
    data = open(path, "rb").read()
    os.remove(path)
    half = len(data) // 2
    for i, part in enumerate((data[:half], data[half:]), 1):
        with open(f"{path}.part{i}", "wb") as f:
            f.write(part)
    return name


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash and timeout")
def test_dry_run_writes_the_report_with_every_stage_status(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _stand_in_wheel(str(wheels))
    out = tmp_path / "out"
    env = dict(os.environ, PYTHON=sys.executable, GPU_CHECK_DEVICE="cpu", GPU_CHECK_INSTALL="1", GPU_CHECK_STEPS="3",
               GPU_CHECK_TESTS="tests/test_grad_mode.py::test_grad_mode_is_thread_local",
               GPU_CHECK_T_GPT="1", GPU_CHECK_T_BENCH="1")  # these two cannot finish in 1 s: cut off, reported
    env.pop("LUCID_TEST_DEVICE", None)
    run = subprocess.run(["bash", SCRIPT, str(out), str(wheels)], env=env, capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    status = {row.split("\t")[0]: row.split("\t")[1] for row in (out / "status.tsv").read_text().splitlines()}
    assert status == {"install": "ok", "env": "ok", "tests": "ok", "train_mlp": "ok", "train_lenet5": "ok",
                      "train_gpt": "timeout (1 s)", "bench": "timeout (1 s)"}, status
    assert (out / "site" / "gpucheckstandin" / "__init__.py").read_text() == "VALUE = 42\n"  # joined and installed
    report = (out / "report.md").read_text()
    for stage in status:
        assert f"| {stage} | {status[stage]} |" in report
    assert "1 passed" in report  # the test stage's count, from pytest's -v lines
    assert "mlp: test_acc" in report and "after 3 steps" in report
    assert "## train_gpt: timeout (1 s), last lines of logs/train_gpt.log" in report
    for name in ("env", "tests", "train_mlp", "train_lenet5", "train_gpt", "bench", "install"):
        assert (out / "logs" / f"{name}.log").exists(), name
