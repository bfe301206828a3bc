"""On Linux, ``import lucid`` makes MLX's CPU matmuls use an installed OpenBLAS instead of the reference BLAS
bundled with mlx[cpu]. Proved from the process itself, not from timing: the library is mapped (/proc/self/maps) and
``cblas_sgemm`` resolves to it. Each case runs in a fresh process (the test session pins the reference BLAS)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.cpu_only("which BLAS MLX's CPU matmuls call")]
SRC = str(Path(__file__).parents[1] / "src")

PROBE = """
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    {imports}
import mlx.core as mx
mx.eval(mx.ones((64, 64)) @ mx.ones((64, 64)))  # MLX has bound and called its BLAS
from lucid import _blas
maps = open("/proc/self/maps").read()
print(json.dumps({{"mapped": "libopenblas" in maps, "provider": _blas.provider(), "describe": _blas.describe(),
                  "warnings": [str(w.message) for w in caught]}}))
"""


def _probe(imports: str, **env) -> dict:
    environ = {k: v for k, v in os.environ.items() if k != "LUCID_BLAS"}
    environ.update(PYTHONPATH=SRC, **env)
    code = PROBE.format(imports=imports.replace("\n", "\n    "))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


needs_openblas = pytest.mark.skipif(
    not sys.platform.startswith("linux") or __import__("lucid")._blas.openblas_path() is None,
    reason="Linux with OpenBLAS installed (apt-get install libopenblas0-pthread)")


@needs_openblas
def test_import_lucid_makes_mlx_use_openblas():
    r = _probe("import lucid")
    assert r["mapped"]
    assert "openblas" in r["provider"].lower() and "mlx_cpu.libs" not in r["provider"]
    assert r["describe"].startswith("OpenBLAS")
    assert r["warnings"] == []


@needs_openblas
def test_lucid_blas_reference_keeps_the_bundled_blas():
    r = _probe("import lucid", LUCID_BLAS="reference")
    assert not r["mapped"]
    assert "mlx_cpu.libs" in r["provider"] and "libblas" in r["provider"]
    assert "reference BLAS" in r["describe"]


@needs_openblas
def test_mlx_imported_first_warns_once_with_the_fix():
    r = _probe("import mlx.core\nimport lucid")
    assert "mlx_cpu.libs" in r["provider"]  # too late: MLX bound the bundled BLAS when it loaded
    assert len(r["warnings"]) == 1
    assert "import lucid before mlx" in r["warnings"][0] and "LD_PRELOAD=" in r["warnings"][0]
    assert "import lucid first" in r["describe"]


@needs_openblas
def test_ld_preload_before_mlx_needs_no_warning():
    path = __import__("lucid")._blas.openblas_path()
    r = _probe("import mlx.core\nimport lucid", LD_PRELOAD=path)
    assert r["mapped"] and "openblas" in r["provider"].lower()
    assert r["warnings"] == []


def test_show_config_names_the_blas(capsys):
    import lucid
    lucid.show_config()
    out = capsys.readouterr().out
    for key in ("lucid", "mlx", "python", "device", "float64", "BLAS", "compile"):
        assert f"\n{key} " in "\n" + out, key
    if sys.platform.startswith("linux"):  # this session pins the reference BLAS, which says how to get a fast one
        assert "reference BLAS" in out and ("libopenblas" in out or "LUCID_BLAS" in out)
