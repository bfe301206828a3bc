"""lucid as a user gets it from a wheel: built from this tree and installed in a fresh venv, the ``lucid`` command
run from a directory outside the tree trains the zoo's MLP (the bundled data, the package data and the entry point
are in the wheel). The floors and the sdist are checked by .ci/run."""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


# The subprocesses see lucid only where the test puts it (the tests' PYTHONPATH may name a checkout's src/).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _run(args, **kwargs):
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, env=ENV, **kwargs)
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_wheel_installed_outside_the_tree_trains_the_mlp(tmp_path):
    # built from a copy of what the build reads, so that the build's own files (build/, *.egg-info) stay out of
    # the tree
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tree / name)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(tree)])
    (wheel,) = (tmp_path / "dist").glob("lucid_mlx-*.whl")

    env_dir = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(env_dir)])
    python = env_dir / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)])
    # The dependencies (mlx, numpy, tqdm) come from the environment running the tests, without a download: a .pth
    # file puts its site-packages after the venv's own. Only the venv's site-packages processes .pth files, so an
    # editable lucid installed in the running environment stays out of sight.
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    paths = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    (site / "running_env.pth").write_text("\n".join(sorted(paths)) + "\n")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run([str(python), "-c", "import lucid; print(lucid.__file__)"], cwd=elsewhere)
    assert Path(where.strip()).is_relative_to(env_dir)

    out = _run([str(env_dir / "bin" / "lucid"), "train", "mlp", "--steps", "20", "--out", "run", "--quiet"],
               cwd=elsewhere)
    assert "mlp: test_acc" in out and "after 20 steps" in out
    assert (elsewhere / "run" / "model.safetensors").is_file() and (elsewhere / "run" / "metrics.csv").is_file()
