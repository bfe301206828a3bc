"""The benchmark package imports and runs: one small workload, a few steps per implementation, rendered to markdown.
No timing is asserted (timings are for bench/RESULTS.md, never for tests)."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

pytest.importorskip("mlx.nn")
pytest.importorskip("mlx.optimizers")


def test_bench_quick_tiny_mlp_runs_and_renders():
    from bench import run
    from bench.harness import Settings

    plan = run.Plan(quick=True)
    plan.settings = Settings(repeats=1, block_s=0.0, check_calls=2, warmup_calls=1)  # 2 checked + 1 + 1 timed steps
    results = run.run_suite(["tiny_mlp"], plan, log=lambda msg: None)
    assert not results["failed"]
    (workload,) = results["workloads"]
    for impl in ("lucid", "mlx", "lucid.compile", "mx.compile"):
        assert impl in workload.samples or impl in workload.errors, impl
    assert workload.samples["lucid"] and workload.samples["mlx"]
    assert workload.agree["mlx"], workload.mismatch  # same initial weights and batch: same losses

    header = {"date": "today", "machine": "test", "python": "3", "mlx": "0", "lucid": "0", "torch": "-",
              "blas": "-", "compiler": "-"}
    text = run.render(results, header, plan, "python -m bench --quick --only tiny_mlp")
    assert "| MLP 32-32-32-10" in text and "## Targets" in text
