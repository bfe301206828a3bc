"""Data-parallel throughput: the MLP training step on 1 process vs 2 processes (DistributedDataParallel over
``mlx.launch --backend ring`` on this machine's loopback), and the bytes each rank communicates per step.

    PYTHONPATH=src python -m bench.distributed        # writes bench/distributed.json and prints a table

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

SIZES = [784, 512, 512, 10]
BATCH = 128  # global: split over the ranks
WARMUP, STEPS = 5, 40
OUT = Path(__file__).with_name("distributed.json")


def worker(result_path: str) -> None:
    import numpy as np

    import lucid
    import lucid.distributed as dist
    from lucid import nn
    from lucid.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    lucid.manual_seed(0)
    layers = []
    for a, b in zip(SIZES[:-1], SIZES[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = DDP(nn.Sequential(*layers[:-1]))
    opt = lucid.optim.SGD(model.parameters(), lr=0.01)
    share = BATCH // world
    rng = np.random.default_rng(rank)
    x = lucid.tensor(rng.normal(size=(share, SIZES[0])).astype(np.float32))
    y = lucid.tensor(rng.integers(0, SIZES[-1], size=share))

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    for _ in range(WARMUP):
        step()
    dist.barrier()
    started = time.perf_counter()
    for _ in range(STEPS):
        step()
    dist.barrier()
    seconds = time.perf_counter() - started
    if rank == 0:
        grad_bytes = model.bytes_per_sync()
        Path(result_path).write_text(json.dumps({
            "processes": world, "global_batch": BATCH, "steps": STEPS, "ms_per_step": 1e3 * seconds / STEPS,
            "examples_per_s": BATCH * STEPS / seconds, "buckets": len(model._buckets),
            "gradient_bytes_all_reduced_per_step": grad_bytes if world > 1 else 0,
            # a ring all-reduce sends 2 (W - 1) / W of the buffer from each rank (reduce-scatter + all-gather)
            "bytes_sent_per_rank_per_step": int(2 * (world - 1) / world * grad_bytes)}))


def launch(processes: int, result: Path) -> dict:
    repo = Path(__file__).parents[1]
    env_vars = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo / "src"), str(repo)])}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [str(Path(sys.executable).with_name("mlx.launch")), "-n", str(processes), "--backend", "ring", "-p",
           str(port), "--python", sys.executable, "-m", "bench.distributed", "--worker", str(result)]
    subprocess.run(cmd, env=env_vars, cwd=repo, check=True, timeout=600)
    return json.loads(result.read_text())


def main() -> None:
    rows = [launch(n, OUT.with_suffix(f".{n}.tmp")) for n in (1, 2)]
    for n in (1, 2):
        OUT.with_suffix(f".{n}.tmp").unlink()
    report = {"workload": f"MLP {'-'.join(map(str, SIZES))}, global batch {BATCH}, SGD", "cpu_cores": os.cpu_count(),
              "blas": env.blas_in_use(), "runs": rows,
              "two_vs_one_throughput": rows[1]["examples_per_s"] / rows[0]["examples_per_s"]}
    OUT.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{report['workload']} on {report['cpu_cores']} cores ({report['blas']})")
    for r in rows:
        print(f"  {r['processes']} process(es): {r['ms_per_step']:.2f} ms/step, {r['examples_per_s']:.0f} examples/s, "
              f"all-reduce of {r['gradient_bytes_all_reduced_per_step']} B/step "
              f"({r['bytes_sent_per_rank_per_step']} B sent per rank, {r['buckets']} buckets)")
    print(f"  2 processes / 1 process throughput: {report['two_vs_one_throughput']:.2f}x")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2])
    else:
        main()
