"""The API reference (mkdocs.yml, docs/) builds with warnings as errors, and its generated list of ops is complete."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.mark.slow
def test_api_reference_builds_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is in the test extra: pip install -e '.[test]'")
    pytest.importorskip("mkdocstrings")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    ops = (tmp_path / "site" / "ops" / "index.html").read_text()
    for shown in ("sin(input, *, out=None)", "Sine of each element", "conv2d(input, weight", "Tensor methods",
                  "add_(self, other, *, alpha=1)"):
        assert shown in ops, shown
    for page in ("api/tensors", "api/autograd", "api/nn", "api/optim", "api/data", "api/datasets", "api/models",
                 "api/serialization", "api/compile", "api/config", "autograd"):
        assert (tmp_path / "site" / page / "index.html").is_file(), page


def test_op_table_lists_every_public_function():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import op_table
    finally:
        sys.path.remove(str(ROOT / "docs"))
    table = op_table.op_table()
    for name in ("sin", "sum", "matmul", "where", "cat", "cross_entropy", "solve", "rfft"):
        assert f"| `{name}(" in table, name
    for namespace in ("lucid", "lucid.nn.functional", "lucid.linalg", "lucid.fft"):
        assert f"## `{namespace}`" in table
    assert "| `relu_(self" in table  # the Tensor methods, attached at import, are listed too
