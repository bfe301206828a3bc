"""lucid against pure MLX (and PyTorch when installed): training steps, HVP, backward scaling, tape overhead, memory;
then lucid's mixed precision (``bench/amp.py``) and data parallelism on 1 vs 2 processes (``bench/distributed.py``).

    python -m bench                    # everything (~25 minutes on 2 cores: the zoo workloads take ~10, amp and distributed ~5,
                                       # ddpm and gcn ~2, MLX's DCGAN steps ~5 s each); writes bench/RESULTS.md (+ results.png)
    python -m bench --quick            # fewer repeats and shorter chains: a smoke run, writes nothing
    python -m bench --only cnn --only memory --output /tmp/r.md
    python -m bench --quick --device gpu --torch-device cuda   # on an NVIDIA machine (tools/gpu_check.sh)
    python bench/run.py ...            # the same

Each workload's implementations (lucid eager, MLX eager, lucid.compile, mx.compile, PyTorch eager) run in this one
process, interleaved: every repeat times each implementation once, in a rotated order, after a warm-up; the tables
give medians with the spread, and ratios as medians of per-repeat ratios. A partial run (--quick or --only) prints
its tables and writes a file only when --output is given, so bench/RESULTS.md always holds a full run.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

if __package__ in (None, ""):  # run as a script: make the bench package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import env  # noqa: E402  (first: loads OpenBLAS before MLX)
import lucid  # noqa: E402
from bench import amp, distributed, hvp, memory, overhead, reductions, report, training  # noqa: E402
from bench.harness import UNCHECKED, Settings  # noqa: E402
from bench.timing import paired_ratio  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = [*training.SPECS, "hvp", "chains", "overhead", "memory", "reductions", "amp", "distributed"]
PEAK_MEMORY = ("mlp", "cnn")
AFTER_BACKWARD = ("mlp", "cnn", "transformer")
OVERHEAD_N = 1000


class Plan:
    """How much to measure: the full run, or --quick."""

    def __init__(self, quick: bool):
        self.quick = quick
        if quick:
            self.settings = Settings(repeats=3, block_s=0.02, check_calls=2, warmup_calls=1)
            self.chain_repeats = {1_000: 3, 10_000: 3}
            self.overhead_repeats = 3
            self.amp_repeats = 2
            self.per_op_n = 10_000
        else:
            self.settings = Settings()
            self.chain_repeats = {1_000: 41, 10_000: 11, 100_000: 5}
            self.overhead_repeats = 15
            self.amp_repeats = 10
            self.per_op_n = 100_000

    def describe(self) -> str:
        s = self.settings
        return (f"{s.repeats} interleaved repeats per implementation, each a block of about {s.block_s * 1e3:.0f} ms "
                f"of back-to-back calls, after {s.check_calls} checked and {s.warmup_calls} more warm-up calls; "
                f"chains: {', '.join(f'{r} repeats at N = {n:,}' for n, r in self.chain_repeats.items())}; "
                f"overhead table: {self.overhead_repeats} repeats; mixed precision: {self.amp_repeats} steps per "
                "precision after 3 warm-up steps")


def run_suite(workloads: list[str], plan: Plan, log=lambda msg: print(msg, file=sys.stderr, flush=True)) -> dict:
    """Measure the given workloads; a workload that fails as a whole is recorded under ``failed``."""
    out = {"workloads": [], "peaks": {}, "after": {}, "chains": None, "overhead": None, "per_op": None,
           "reductions": None, "amp": None, "distributed": None, "failed": {}}
    for key in workloads:
        log(f"bench: {key} ...")
        t0 = time.perf_counter()
        try:
            if key in training.SPECS:
                out["workloads"].append(training.run(key, plan.settings))
            elif key == "hvp":
                out["workloads"].append(hvp.run(plan.settings))
            elif key == "chains":
                out["chains"] = overhead.measure_scaling(list(plan.chain_repeats), plan.chain_repeats.get)
            elif key == "overhead":
                out["overhead"] = overhead.measure_overhead(OVERHEAD_N, plan.overhead_repeats)
            elif key == "memory":
                for k in PEAK_MEMORY:
                    out["peaks"][k] = training.peak_memory(k)
                for k in AFTER_BACKWARD:
                    try:
                        out["after"][k] = training.memory_after_backward(k)
                    except Exception as e:
                        out["after"][k] = f"{type(e).__name__}: {e}"
                out["per_op"] = memory.measure(plan.per_op_n)
            elif key == "reductions":
                out["reductions"] = reductions.measure(plan.settings, log=log)
            elif key == "amp":
                out["amp"] = amp.measure(plan.amp_repeats, log=log)
            elif key == "distributed":
                out["distributed"] = distributed.measure()
            else:
                raise ValueError(f"unknown workload {key!r}; choose from {', '.join(WORKLOADS)}")
        except Exception as e:  # keep going: the report says what failed
            out["failed"][key] = f"{type(e).__name__}: {e}"
        log(f"bench: {key} done in {time.perf_counter() - t0:.0f} s")
    return out


def _revision() -> str:
    try:
        rev = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"], capture_output=True, text=True,
                             timeout=10).stdout.strip()
        return rev or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def render(results: dict, header: dict, plan: Plan, command: str, chart_name: str | None = None) -> str:
    notes = report.Notes()
    titles = {k: s.title for k, s in training.SPECS.items()}
    lines = ["# lucid benchmarks", "",
             f"`{command}` on {header['date']}" + (" (quick mode: few repeats, not for quoting)" if plan.quick
                                                   else ""), "",
             f"- machine: {header['machine']}",
             f"- Python {header['python']}; MLX {header['mlx']}; lucid {header['lucid']} (git {_revision()}); "
             f"PyTorch {header['torch']}",
             f"- BLAS: {header['blas']}",
             f"- {header['compiler']}",
             f"- method: {plan.describe()}. Cells are medians ±half the interquartile range; ratios are medians of "
             "per-repeat ratios (interquartile range in parentheses). Every training step ends the same way: "
             "parameters and optimizer state evaluated, then `loss.item()`.", ""]
    if chart_name:
        lines += [f"![lucid / MLX]({chart_name})", ""]
    flat = recording = None
    if results["chains"] and len(results["chains"]) > 1:
        rows = results["chains"]
        flat = {"first": rows[0]["n"], "last": rows[-1]["n"],
                **{k: overhead.flatness(rows, k) for k in ("lucid", "mx.grad", "walk")},
                "ratio_first": paired_ratio(rows[0]["lucid"], rows[0]["mx.grad"]).median,
                "ratio_last": paired_ratio(rows[-1]["lucid"], rows[-1]["mx.grad"]).median}
    if results["overhead"]:
        recording = overhead.recording_overhead_us(results["overhead"], OVERHEAD_N)
    eager_targets = {k: s.target_eager for k, s in training.SPECS.items()}
    lines += ["## Targets (issues 5 and 21)", "",
              report.targets_table(results["workloads"], eager_targets, results["peaks"], titles, recording, flat,
                                   results["after"], results.get("reductions"),
                                   {k: s.target_torch for k, s in training.SPECS.items()}), ""]
    misses = os.path.join(os.path.dirname(os.path.abspath(__file__)), "MISSES.md")
    if os.path.exists(misses):  # the written analysis of the targets that are not met
        lines += [open(misses).read(), ""]
    if results["workloads"]:
        lines += ["## Time per training step / HVP (ms)", "", report.timing_table(results["workloads"], notes), "",
                  "Calls per timed block: " + "; ".join(
                      f"{r.key} " + ", ".join(f"{i} {n}" for i, n in r.calls.items()) for r in results["workloads"]),
                  ""]
    if any(u in r.samples for r in results["workloads"] for u in UNCHECKED):
        lines += ["## Cost of the index bounds checks", "",
                  "The time lucid eager spends inside the index bounds checks (`lucid._checks`) per training step, "
                  "timed from inside the checks (the median of 30 steps), and its share of the median step; then each step "
                  "with the checks / the same step with them turned off, interleaved in the same process (that "
                  "ratio is within this machine's run-to-run noise). The class targets and token ids are on the "
                  "host, so they are checked at once; the language model's targets are reshaped first, so theirs "
                  "is the deferred check (made safe, flagged, evaluated at `backward()`).", "",
                  report.checks_table(results["workloads"]), ""]
    if results["peaks"]:
        lines += ["## Peak memory of one training step", "",
                  "Each implementation built alone and warmed up; MiB above the process's baseline at the step's "
                  "peak (`mx.reset_peak_memory()` / `mx.get_peak_memory()`; the largest of 5 steps): weights, "
                  "gradients, optimizer state, batch and temporaries. The last column is the rise over what was live "
                  "just before the step.", "",
                  report.memory_table(results["peaks"], titles, notes), ""]
    if results["after"]:
        lines += ["## Active memory after backward (lucid, retain_graph=False)", "",
                  "`mx.get_active_memory()` before a forward and after `loss.backward()`, evaluation of the "
                  "gradients and `del` of the loss and output (the gradients existed before: a first backward made "
                  "them, so both numbers should be equal).", "",
                  report.after_backward_table(results["after"], titles, notes), ""]
    if results.get("per_op"):
        lines += ["## Memory per recorded op", "",
                  "What a chain of recorded ops holds per op (`bench/memory.py`): the RSS growth (everything, MLX's "
                  "graph included) and tracemalloc's bytes (the Python objects alone), each in a fresh process.", "",
                  memory.table(results["per_op"], plan.per_op_n), ""]
    if results["chains"]:
        lines += ["## Backward scaling", "", overhead.scaling_table(results["chains"]), ""]
    if results["overhead"]:
        lines += ["## Tape overhead per op", "",
                  overhead.overhead_table(results["overhead"], OVERHEAD_N, plan.overhead_repeats), ""]
    if results.get("reductions"):
        r = results["reductions"]
        lines += ["## Cost of accurate reductions", "",
                  "MLX's CPU backend sums float32 in sequence (`mx.ones(2**25).sum()` is 16777216); lucid sums in "
                  f"blocks of {r['block']} once a reduction covers more than {r['threshold']} elements "
                  "(`lucid._sums`). First its sum against MLX's own `mx.sum` on the same array, each call "
                  "evaluated; then, per training workload, the reductions of one lucid eager step (in parentheses "
                  "those large enough to be blocked; the others cost one comparison of Python ints), the time spent "
                  "inside `lucid._sums` per step, timed from inside (graph building, including the MLX reduction "
                  "calls made anyway: an upper bound), its share of the median step, and the step with the blocking "
                  "on / off, interleaved in the same process (within this machine's run-to-run noise).", "",
                  reductions.table(r), ""]
    if results["amp"]:
        lines += ["## Mixed precision: float32 vs `lucid.autocast` (transformer)", "",
                  f"{titles['transformer']}, lucid eager: one full step per measurement, the forward and loss under "
                  "`lucid.autocast(\"cpu\", dtype=...)` (no GradScaler: its unscale and inf check are the same for "
                  "every precision). Peak rise: MiB above what was live before the step, the largest over the "
                  "steps. MLX's CPU backend has no BLAS kernel for bfloat16/float16 matmuls, so on CPU the low "
                  "precisions cost time; their benefit (half the bytes moved) is for Apple GPUs.", "",
                  amp.table(results["amp"]), ""]
    if results["distributed"]:
        d = results["distributed"]
        lines += ["## Data parallelism: 1 vs 2 processes", "",
                  f"`DistributedDataParallel` over `mlx.launch --backend ring` on this machine's loopback "
                  f"({d['cpu_cores']} cores); the same global batch in both runs, split over the ranks. With "
                  f"{d['cpu_cores']} cores the two processes share the cores one process had to itself, so this "
                  "measures the overhead of data parallelism (all-reduce, two Python tapes), not a speed-up. Bytes: "
                  "the gradients all-reduced per step, and what each rank sends in a ring all-reduce "
                  "(2(W-1)/W of it).", "", distributed.table(d), ""]
    for key, err in results["failed"].items():
        notes.add(f"workload `{key}` failed: `{err}`")
    if notes.items:
        lines += ["## Notes and errors", "", notes.markdown(), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="few repeats, short chains: a smoke run")
    p.add_argument("--only", action="append", choices=WORKLOADS, metavar="WORKLOAD",
                   help=f"run only this workload (repeatable): {', '.join(WORKLOADS)}")
    p.add_argument("--output", help="markdown file to write (default: bench/RESULTS.md for a full run, none for a "
                                    "partial one); the chart goes beside it as results.png")
    p.add_argument("--device", choices=["cpu", "gpu"],
                   help="MLX's default device for lucid and MLX (default: MLX's own, the GPU where there is one)")
    p.add_argument("--torch-device", default="cpu", help="where the PyTorch implementations run: cpu (default), "
                                                          "cuda or mps")
    args = p.parse_args(argv)
    if args.device:
        lucid.set_default_device(args.device)
    env.torch_device = args.torch_device
    plan = Plan(args.quick)
    workloads = args.only or WORKLOADS
    output = args.output or (None if args.quick or args.only else os.path.join(HERE, "RESULTS.md"))
    header = env.describe()
    print(f"bench: {header['machine']}; MLX {header['mlx']}; BLAS: {header['blas']}", file=sys.stderr)
    results = run_suite(workloads, plan)
    command = "python -m bench" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    chart_name = None
    if output:
        png = os.path.join(os.path.dirname(os.path.abspath(output)), "results.png")
        if report.chart(results["workloads"], results["chains"], png):
            chart_name = os.path.basename(png)
    text = render(results, header, plan, command, chart_name)
    print(text)
    if output:
        with open(output, "w") as f:
            f.write(text)
        print(f"bench: wrote {output}" + (f" and {chart_name}" if chart_name else ""), file=sys.stderr)
    return results


if __name__ == "__main__":
    main()
