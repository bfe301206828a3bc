"""Under ``lucid run`` tensors and dtypes print as PyTorch's (compared text for text with real PyTorch running the
same script, tests/compat_scripts/printing.py), and lucid's own face is unchanged outside the run."""
import json
import runpy
import sys
from pathlib import Path

import pytest

import lucid
from lucid.compat.run import run_script

SCRIPT = Path(__file__).parent / "compat_scripts" / "printing.py"


def test_tensors_and_dtypes_print_as_pytorchs(tmp_path):
    pytest.importorskip("torch")
    run_script(SCRIPT, [tmp_path / "lucid.json"])
    saved = sys.argv[:]
    sys.argv = [str(SCRIPT), str(tmp_path / "torch.json")]
    try:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    finally:
        sys.argv[:] = saved
    ours = json.loads((tmp_path / "lucid.json").read_text())
    theirs = json.loads((tmp_path / "torch.json").read_text())
    assert len(ours) == len(theirs) > 30
    for a, b in zip(ours, theirs):
        assert a == b


def test_print_options_of_the_torch_face(tmp_path):
    script = tmp_path / "opts.py"
    script.write_text("import json, sys, torch\n"
                      "torch.set_printoptions(precision=2)\n"
                      "a = repr(torch.tensor([1.23456, 2.0]))\n"
                      "torch.set_printoptions(profile='default')\n"
                      "json.dump([a, repr(torch.tensor([1.23456, 2.0]))], open(sys.argv[1], 'w'))\n")
    run_script(script, [tmp_path / "out.json"])
    assert json.loads((tmp_path / "out.json").read_text()) == ["tensor([1.23, 2.00])", "tensor([1.2346, 2.0000])"]
    lucid.set_printoptions(profile="default")


def test_lucids_own_face_is_unchanged_outside_the_run(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text("import torch\nassert repr(torch.tensor([1.0])) == 'tensor([1.])'\n")
    run_script(script)
    assert repr(lucid.tensor([1.0, 2.0])) == "Tensor([1., 2.])"
    assert str(lucid.float32) == "mlx.core.float32"
    assert repr(lucid.tensor([1, 2], dtype=lucid.int32)) == "Tensor([1, 2], dtype=lucid.int32)"
