"""Data-parallel throughput: the MLP and transformer training steps on 1 process vs 2 processes
(DistributedDataParallel over ``mlx.launch --backend ring`` on this machine's loopback), and the bytes each rank
communicates per step.

    PYTHONPATH=src python -m bench.distributed                 # both workloads; writes bench/distributed.json
    PYTHONPATH=src python -m bench.distributed transformer     # one of them (replaces its entry in the json)

``python -m bench`` runs the same measurement as its ``distributed`` workload and puts the table in RESULTS.md.

The global batch is the same in both runs (each of 2 ranks trains on half of it), so examples/s compares like with
like. On a machine with 2 cores the two processes share the cores the single process had to itself: this measures
the overhead of data parallelism (the all-reduce, two Python tapes), not a speed-up; a speed-up needs a core (or a
machine) per process.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from . import env  # noqa: F401  (OpenBLAS before MLX)

MLP_SIZES = [784, 512, 512, 10]
# name -> (title, global batch, warm-up steps, timed steps)
WORKLOADS = {
    "mlp": (f"MLP {'-'.join(map(str, MLP_SIZES))}, global batch 128, SGD", 128, 5, 40),
    "transformer": ("Transformer LM 2 layers d=128 4 heads, seq 64, global batch 16, vocab 256, AdamW", 16, 3, 15),
}
OUT = Path(__file__).with_name("distributed.json")


def _mlp_setup(lucid, share: int, rank: int):
    import numpy as np
    nn = lucid.nn
    layers = []
    for a, b in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    rng = np.random.default_rng(rank)
    x = lucid.tensor(rng.normal(size=(share, MLP_SIZES[0])).astype(np.float32))
    y = lucid.tensor(rng.integers(0, MLP_SIZES[-1], size=share))
    return model, (lambda params: lucid.optim.SGD(params, lr=0.01)), x, y


def _transformer_setup(lucid, share: int, rank: int):
    """bench/training.py's transformer workload; rank r trains on its slice of the same global batch."""
    import numpy as np

    from .training import SPECS
    spec = SPECS["transformer"]
    model = spec.model(lucid)
    tokens, targets = spec.data(np.random.default_rng(0))
    rows = slice(rank * share, (rank + 1) * share)
    x, y = (lucid.from_numpy(np.ascontiguousarray(a[rows])) for a in (tokens, targets))
    return model, (lambda params: lucid.optim.AdamW(params, lr=spec.lr, weight_decay=0.01)), x, y


def worker(workload: str, result_path: str) -> None:
    import lucid
    import lucid.distributed as dist
    from lucid.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    _, batch, warmup, steps = WORKLOADS[workload]
    lucid.manual_seed(0)
    setup = _mlp_setup if workload == "mlp" else _transformer_setup
    module, make_optimizer, x, y = setup(lucid, batch // world, rank)
    model = DDP(module)
    opt = make_optimizer(model.parameters())
    F = lucid.nn.functional

    def step():
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.item()
    for _ in range(warmup):
        step()
    dist.barrier()
    started = time.perf_counter()
    for _ in range(steps):
        step()
    dist.barrier()
    seconds = time.perf_counter() - started
    if rank == 0:
        grad_bytes = model.bytes_per_sync()
        Path(result_path).write_text(json.dumps({
            "processes": world, "global_batch": batch, "steps": steps, "ms_per_step": 1e3 * seconds / steps,
            "examples_per_s": batch * steps / seconds, "buckets": len(model._buckets),
            "gradient_bytes_all_reduced_per_step": grad_bytes if world > 1 else 0,
            # a ring all-reduce sends 2 (W - 1) / W of the buffer from each rank (reduce-scatter + all-gather)
            "bytes_sent_per_rank_per_step": int(2 * (world - 1) / world * grad_bytes)}))


def launch(workload: str, processes: int, result: Path) -> dict:
    repo = Path(__file__).parents[1]
    env_vars = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo / "src"), str(repo)])}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [str(Path(sys.executable).with_name("mlx.launch")), "-n", str(processes), "--backend", "ring", "-p",
           str(port), "--python", sys.executable, "-m", "bench.distributed", "--worker", workload, str(result)]
    try:
        subprocess.run(cmd, env=env_vars, cwd=repo, check=True, timeout=600)
        return json.loads(result.read_text())
    finally:
        result.unlink(missing_ok=True)


def measure(workloads=tuple(WORKLOADS)) -> dict:
    """1 and 2 processes for each workload: ``{"cpu_cores", "blas", "workloads": {name: {"title", "runs",
    "two_vs_one_throughput"}}}``."""
    report = {"cpu_cores": os.cpu_count(), "blas": env.blas_in_use(), "workloads": {}}
    for name in workloads:
        rows = [launch(name, n, OUT.with_suffix(f".{name}.{n}.tmp")) for n in (1, 2)]
        report["workloads"][name] = {"title": WORKLOADS[name][0], "runs": rows,
                                     "two_vs_one_throughput": rows[1]["examples_per_s"] / rows[0]["examples_per_s"]}
    return report


def table(report: dict) -> str:
    """The measurement as a markdown table."""
    out = ["| workload | processes | ms / step | examples / s | 2 / 1 throughput | all-reduced per step | "
           "sent per rank per step | buckets |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for w in report["workloads"].values():
        for r in w["runs"]:
            ratio = f"{w['two_vs_one_throughput']:.2f}×" if r["processes"] > 1 else ""
            out.append(f"| {w['title']} | {r['processes']} | {r['ms_per_step']:.1f} | {r['examples_per_s']:.1f} | "
                       f"{ratio} | {r['gradient_bytes_all_reduced_per_step'] / 2 ** 20:.2f} MiB | "
                       f"{r['bytes_sent_per_rank_per_step'] / 2 ** 20:.2f} MiB | {r['buckets']} |")
    return "\n".join(out)


def main(argv: list[str]) -> None:
    chosen = argv or list(WORKLOADS)
    unknown = [w for w in chosen if w not in WORKLOADS]
    if unknown:
        raise SystemExit(f"unknown workload {unknown[0]!r}; choose from {', '.join(WORKLOADS)}")
    report = measure(chosen)
    if OUT.exists():  # a partial run replaces its workloads' entries and keeps the others
        kept = json.loads(OUT.read_text()).get("workloads", {})
        report["workloads"] = {**kept, **report["workloads"]}
    OUT.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{report['cpu_cores']} cores, {report['blas']}")
    print(table(report))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1:])
