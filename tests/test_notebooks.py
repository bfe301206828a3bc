"""The notebooks in examples/notebooks run headless from top to bottom without an error (issue 13), so they never
rot. Each runs in a Jupyter kernel started from this interpreter, with this lucid first on its path (the tests may
run against a source tree that is not installed), matplotlib's Agg backend and the notebook's folder as the
working directory, as Jupyter would."""
import json
import os
import sys
from pathlib import Path

import pytest

import lucid

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
from jupyter_client import KernelManager  # noqa: E402 (after the skips: jupyter_client comes with nbclient)
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402

NOTEBOOKS = sorted((Path(__file__).parents[1] / "examples" / "notebooks").glob("*.ipynb"))
LUCID_SRC = str(Path(lucid.__file__).resolve().parents[1])


@pytest.fixture(scope="module")
def kernel_specs(tmp_path_factory):
    """A kernelspec for this interpreter, with this lucid importable."""
    kernels = tmp_path_factory.mktemp("kernels")
    spec = kernels / "lucid-test"
    spec.mkdir()
    path = os.pathsep.join([LUCID_SRC, *filter(None, [os.environ.get("PYTHONPATH")])])
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "lucid under test", "language": "python",
        "env": {"PYTHONPATH": path, "MPLBACKEND": "module://matplotlib_inline.backend_inline"}}))
    return KernelSpecManager(kernel_dirs=[str(kernels)], ensure_native_kernel=False)


def test_there_are_four_notebooks_stored_without_outputs():
    assert [p.name for p in NOTEBOOKS] == ["01_autograd_tour.ipynb", "02_digits_cnn.ipynb", "03_char_gpt.ipynb",
                                           "04_higher_order.ipynb"]
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(not c.outputs and c.execution_count is None for c in code), f"{path.name} has stored outputs"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, kernel_specs):
    nb = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_name="lucid-test", kernel_spec_manager=kernel_specs)
    client = nbclient.NotebookClient(nb, km=km, timeout=600, resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on any error
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
