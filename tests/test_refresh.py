"""The README's and docs' numbers, tables and figures are the ones `python -m docs.refresh` measured.

A number edited by hand in a generated block, a measurement not rendered, a figure replaced by hand, a zoo model
without a table row or a PyTorch-surface count that moved without a refresh fails here."""
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from docs import refresh  # noqa: E402

DATA = refresh.load()


def test_every_generated_block_is_what_the_measurements_render():
    seen = set()
    for page in refresh.PAGES:
        for name, content in refresh.blocks(page.read_text()):
            seen.add(name)
            assert content == refresh.rendered(name, content, DATA), (
                f"{page.name}: the {name} block differs from docs/measurements.json: run `python -m docs.refresh "
                "render` (or measure again), never edit it by hand")
    assert seen == set(refresh.BLOCKS)


def test_every_zoo_model_is_measured_and_its_figure_is_the_recorded_one():
    from lucid.cli.recipes import RECIPES
    assert list(refresh.ZOO) == list(RECIPES), "a zoo model needs its row in docs/refresh.py's ZOO"
    for name in RECIPES:
        record = DATA["zoo"][name]
        assert set(record) >= {"steps", "train_time_s", "total_s", "load", "result", "date", "machine"}
        if RECIPES[name].figure.endswith(".png"):
            figure = refresh.FIGURES / record["figure"]["file"]
            assert refresh.sha256(figure) == record["figure"]["sha256"], f"{figure} is not the figure measured"


def test_the_figures_the_readme_shows_come_from_the_refresh():
    recorded = {r["figure"]["file"] for r in DATA["zoo"].values() if "figure" in r}
    shown = set(re.findall(r"docs/zoo/([\w.]+\.png)", (ROOT / "README.md").read_text()))
    shown |= set(re.findall(r"\(zoo/([\w.]+\.png)\)", (ROOT / "docs" / "zoo.md").read_text()))
    assert shown and shown <= recorded
    assert {p.name for p in refresh.FIGURES.glob("*.png")} == recorded, "docs/zoo holds a figure no run made"


def test_surface_counts_are_current():
    pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "tests"))
    import test_torch_surface as surface
    now = {ns or "<top>": list(surface.coverage(ns)[:2]) for ns in surface.NAMESPACES}
    assert DATA["surface"]["namespaces"] == now, "PyTorch-surface coverage moved: run `python -m docs.refresh surface`"


def test_a_run_is_measured_as_a_user_runs_it(tmp_path):
    record = refresh.run_model("mlp", tmp_path / "mlp", ["--steps", "20"])
    assert record["steps"] == 20 and 0.0 <= record["result"]["test_acc"] <= 1.0
    assert record["total_s"] >= record["train_time_s"] > 0
    row = refresh.render_zoo_table({"zoo": {"mlp": {**record, "machine": refresh.machine()}}})
    assert f"test accuracy {record['result']['test_acc']:.3f}" in row and "20 steps" in row
    json.dumps(record)  # what is stored is plain JSON
