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


def test_render_has_the_mixed_precision_and_data_parallel_sections():
    """The amp and distributed workloads' results (their shapes as bench/amp.py and bench/distributed.py return
    them) come out as tables in RESULTS.md; measuring them takes minutes, so the numbers here are made up."""
    from bench import run

    plan = run.Plan(quick=True)
    step = {"median_ms": 10.0, "iqr_ms": (9.0, 11.0), "peak_mb": 2.0, "first_losses": [1.0, 0.9]}
    proc = {"processes": 1, "ms_per_step": 5.0, "examples_per_s": 100.0, "buckets": 2,
            "gradient_bytes_all_reduced_per_step": 0, "bytes_sent_per_rank_per_step": 0}
    results = {"workloads": [], "peaks": {}, "after": {}, "chains": None, "overhead": None, "failed": {},
               "amp": {"float32": step, "bf16": {**step, "median_ms": 30.0, "peak_mb": 1.5}},
               "distributed": {"cpu_cores": 2, "blas": "-", "workloads": {"mlp": {
                   "title": "MLP", "two_vs_one_throughput": 0.9,
                   "runs": [proc, {**proc, "processes": 2, "gradient_bytes_all_reduced_per_step": 2 ** 20,
                                   "bytes_sent_per_rank_per_step": 2 ** 20}]}}}}
    header = {"date": "today", "machine": "test", "python": "3", "mlx": "0", "lucid": "0", "torch": "-",
              "blas": "-", "compiler": "-"}
    results["per_op"] = {"exp": {"lucid": {"rss": 1026.0, "python": 472.0}, "torch": {"rss": 1046.0, "python": 0.0}}}
    text = run.render(results, header, plan, "python -m bench --only amp --only distributed")
    assert "| autocast bf16 | 30.0 (9.0–11.0) | 3.00× | 1.50 | 0.75× |" in text
    assert "| x.exp() (saves its output) | 1,026 | 472 | 1,046 | 0 |" in text  # bench/memory.py's table
    assert "| MLP | 2 | 5.0 | 100.0 | 0.90× | 1.00 MiB | 1.00 MiB | 2 |" in text


def test_bench_reductions_measures_and_renders():
    """bench/reductions.py: the accurate sum against mx.sum, and a workload's step with the blocking on / off."""
    from bench import reductions, run
    from bench.harness import Settings

    settings = Settings(repeats=1, block_s=0.0, check_calls=1, warmup_calls=0)
    result = {"sums": {}, "workloads": reductions.measure_workloads(settings, ["cnn"]),
              "threshold": 4096, "block": 256}
    cnn = result["workloads"]["cnn"]
    assert cnn["blocked"] >= 1 and cnn["calls"] > cnn["blocked"] and cnn["inside_s"] > 0  # 64 x 24 x 24 conv sums
    text = reductions.table(result)
    assert "| LeNet CNN 28x28" in text
    header = {"date": "today", "machine": "test", "python": "3", "mlx": "0", "lucid": "0", "torch": "-",
              "blas": "-", "compiler": "-"}
    results = {"workloads": [], "peaks": {}, "after": {}, "chains": None, "overhead": None, "failed": {},
               "amp": None, "distributed": None, "reductions": result}
    text = run.render(results, header, run.Plan(quick=True), "python -m bench --only reductions")
    assert "## Cost of accurate reductions" in text and "accurate reductions ≤ 2% of a step" in text


def test_bench_gcn_steps_agree_across_frameworks():
    """The GCN workload (bench/small.py, dense 2,708-node adjacency): lucid eager, MLX and PyTorch take the same two
    Adam steps from the same weights and batch (the second loss checks the gradients and the update). The whole
    harness on it takes ~30 s here, so only these three run; the DDPM test below runs the harness."""
    import numpy as np

    from bench import training

    spec = training.SPECS["gcn"]
    state, batch = training.initial_state(spec)
    builders = training.builders(spec, state, batch)
    names = [n for n in ("lucid", "mlx", "torch") if n in builders]
    losses = {n: [call() for call in [builders[n]()] for _ in range(2)] for n in names}
    for n in names:
        np.testing.assert_allclose(losses[n], losses["lucid"], rtol=2e-4)
    assert losses["lucid"][1] < losses["lucid"][0]


@pytest.mark.parametrize("key", ["ddpm"])
def test_bench_small_programs_agree_across_implementations(key):
    """The small-program workloads (bench/small.py): lucid eager and compiled, MLX and PyTorch compute the same
    losses from the same weights and batch, and the targets table has issue 21's rows against PyTorch."""
    from bench import run
    from bench.harness import Settings

    plan = run.Plan(quick=True)
    plan.settings = Settings(repeats=1, block_s=0.0, check_calls=2, warmup_calls=1)
    results = run.run_suite([key], plan, log=lambda msg: None)
    assert not results["failed"]
    (workload,) = results["workloads"]
    assert not workload.errors, workload.errors
    impls = ["mlx", "lucid.compile", "mx.compile"]
    try:
        import torch  # noqa: F401
        impls.append("torch")
    except ImportError:
        pass
    for impl in impls:
        assert workload.agree[impl], (impl, workload.mismatch)
    header = {"date": "today", "machine": "test", "python": "3", "mlx": "0", "lucid": "0", "torch": "-",
              "blas": "-", "compiler": "-"}
    text = run.render(results, header, plan, f"python -m bench --quick --only {key}")
    if "torch" in impls:
        assert "lucid eager / PyTorch eager ≤ 1.5×" in text and "lucid.compile / PyTorch eager ≤ 1.0×" in text
