"""What lucid's tape costs on top of MLX, per recorded op and per backward node.

    python bench/overhead.py              # chains of 10^3 ops, then backward scaling up to 10^5 nodes
    python bench/overhead.py --max-n 10000

The workload is a chain of N elementwise ops (``x * 1.0001``, ``sin``, ``+ 0.5``, repeated) on a small float32
vector, so the numbers are dominated by per-op bookkeeping, not by arithmetic. Every variant builds the lazy graph
and calls ``mx.eval`` once at the end; lucid and MLX runs are interleaved in the same process and the median of
several repeats is reported. Python's garbage collector stays on, as in user code. Rows:

  forward, recording      lucid with requires_grad=True (one tape node per op)  vs  the same chain in MLX
  ... graph build only    the same, timing only the Python loop that builds the lazy graph (eval excluded)
  forward, no_grad        lucid under lucid.no_grad() (only the Tensor wrapper)   vs  the same chain in MLX
  forward + backward      lucid ``loss.backward()``, then eval of ``x.grad``      vs  ``mx.grad`` of the same function
  backward walk only      lucid's engine walk (no eval), timed alone; MLX has no separate step to compare with

On Linux the ``mlx[cpu]`` wheel bundles the slow reference BLAS, so this script loads Debian's OpenBLAS first
(``apt-get install libopenblas0-pthread``) and says which BLAS ran. The chain benchmarks do not call BLAS; the
matmul line in the header shows what it changes.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import platform
import re
import statistics
import sys
import time


def _load_openblas() -> str | None:
    """Put Debian's OpenBLAS in the global symbol scope before MLX loads, so MLX's BLAS calls bind to it."""
    if not sys.platform.startswith("linux"):
        return None
    libdir = f"/usr/lib/{platform.machine()}-linux-gnu"
    for path in (f"{libdir}/openblas-pthread/libopenblas.so.0", f"{libdir}/libopenblas.so.0"):
        if os.path.exists(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                return path
            except OSError:
                pass
    return None


OPENBLAS = _load_openblas()

import mlx.core as mx  # noqa: E402  (after the BLAS is loaded, so MLX binds to it)

import lucid  # noqa: E402

SIZE = 16  # elements per tensor: small, so the table measures overhead, not arithmetic


# ---------------------------------------------------------------------------------------------------- header
def blas_in_use() -> str:
    if sys.platform == "darwin":
        return "Accelerate (macOS CPU; on the GPU MLX uses its own Metal kernels)"
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        maps = ""
    if re.search(r"/libopenblas[^/\s]*\.so", maps):  # not numpy's own libscipy_openblas
        return f"OpenBLAS ({OPENBLAS or 'preloaded'})"
    return "reference BLAS bundled with mlx[cpu] (apt-get install libopenblas0-pthread for a fast one)"


def matmul_gflops(n: int = 512, repeats: int = 5) -> float:
    a = mx.random.normal((n, n))
    b = mx.random.normal((n, n))
    mx.eval(a, b, a @ b)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        mx.eval(a @ b)
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best / 1e9


# ---------------------------------------------------------------------------------------------------- workloads
def chain(x, n: int, sin):
    """n elementwise ops; the same code runs on mx.array and on lucid.Tensor."""
    for i in range(n):
        k = i % 3
        if k == 0:
            x = x * 1.0001
        elif k == 1:
            x = sin(x)
        else:
            x = x + 0.5
    return x


def mlx_forward(n):
    x = mx.ones((SIZE,))
    t0 = time.perf_counter()
    mx.eval(chain(x, n, mx.sin))
    return time.perf_counter() - t0


def mlx_grad(n):
    x = mx.ones((SIZE,))
    f = mx.grad(lambda v: chain(v, n, mx.sin).sum())
    t0 = time.perf_counter()
    mx.eval(f(x))
    return time.perf_counter() - t0


def lucid_forward(n):
    x = lucid.ones(SIZE, requires_grad=True)
    t0 = time.perf_counter()
    mx.eval(chain(x, n, lucid.sin).mlx)
    return time.perf_counter() - t0


def mlx_build(n):
    x = mx.ones((SIZE,))
    t0 = time.perf_counter()
    y = chain(x, n, mx.sin)
    dt = time.perf_counter() - t0
    mx.eval(y)
    return dt


def lucid_build(n):
    x = lucid.ones(SIZE, requires_grad=True)
    t0 = time.perf_counter()
    y = chain(x, n, lucid.sin)
    dt = time.perf_counter() - t0
    mx.eval(y.mlx)
    return dt


def lucid_forward_no_grad(n):
    x = lucid.ones(SIZE, requires_grad=True)
    t0 = time.perf_counter()
    with lucid.no_grad():
        mx.eval(chain(x, n, lucid.sin).mlx)
    return time.perf_counter() - t0


def lucid_forward_backward(n):
    x = lucid.ones(SIZE, requires_grad=True)
    t0 = time.perf_counter()
    chain(x, n, lucid.sin).sum().backward()
    mx.eval(x.grad.mlx)
    return time.perf_counter() - t0


def lucid_backward_walk(n):
    x = lucid.ones(SIZE, requires_grad=True)
    loss = chain(x, n, lucid.sin).sum()
    mx.eval(loss.mlx)
    t0 = time.perf_counter()
    loss.backward()
    dt = time.perf_counter() - t0
    mx.eval(x.grad.mlx)
    return dt


def measure(fns: dict, n: int, repeats: int) -> dict:
    """Median seconds of each function, runs interleaved (one warm-up round first)."""
    for f in fns.values():
        f(n)
    times = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            times[k].append(f(n))
    return {k: statistics.median(v) for k, v in times.items()}


# ---------------------------------------------------------------------------------------------------- tables
def per_op(seconds: float, n: int) -> float:
    return seconds / n * 1e6


def overhead_table(n: int, repeats: int) -> str:
    t = measure({"mlx": mlx_forward, "rec": lucid_forward, "nograd": lucid_forward_no_grad, "mxbuild": mlx_build,
                 "build": lucid_build, "mxgrad": mlx_grad, "fb": lucid_forward_backward,
                 "walk": lucid_backward_walk}, n, repeats)
    rows = [
        ("forward, recording (requires_grad=True)", t["rec"], t["mlx"], "MLX forward"),
        ("forward, recording, graph build only (no eval)", t["build"], t["mxbuild"], "MLX build"),
        ("forward, under lucid.no_grad()", t["nograd"], t["mlx"], "MLX forward"),
        ("forward + backward", t["fb"], t["mxgrad"], "mx.grad"),
    ]
    out = [f"Chain of N = {n} elementwise ops on float32[{SIZE}], median of {repeats} (µs per op or node):", "",
           "| measurement | lucid µs/op | baseline | baseline µs/op | overhead µs/op | ratio |",
           "|---|---:|---|---:|---:|---:|"]
    for name, ours, base, base_name in rows:
        a, b = per_op(ours, n), per_op(base, n)
        out.append(f"| {name} | {a:.2f} | {base_name} | {b:.2f} | {a - b:+.2f} | {a / b:.2f}x |")
    out.append(f"| backward walk only (engine, no eval) | {per_op(t['walk'], n):.2f} | — | — | — | — |")
    return "\n".join(out)


def scaling_table(sizes, repeats_for) -> str:
    out = ["Backward scaling, forward + backward per node (a flat per-node cost means time linear in N):", "",
           "| N nodes | lucid fwd+bwd µs/node | mx.grad µs/node | ratio | lucid backward walk µs/node |",
           "|---:|---:|---:|---:|---:|"]
    for n in sizes:
        t = measure({"mxgrad": mlx_grad, "fb": lucid_forward_backward, "walk": lucid_backward_walk}, n,
                    repeats_for(n))
        a, b = per_op(t["fb"], n), per_op(t["mxgrad"], n)
        out.append(f"| {n:,} | {a:.2f} | {b:.2f} | {a / b:.2f}x | {per_op(t['walk'], n):.2f} |")
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000, help="chain length for the overhead table")
    p.add_argument("--repeats", type=int, default=15, help="repeats for the overhead table")
    p.add_argument("--max-n", type=int, default=100_000, help="longest chain in the scaling table")
    args = p.parse_args()

    print(f"lucid {lucid.__version__}, MLX {mx.__version__}, Python {platform.python_version()}")
    print(f"machine: {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, MLX device {mx.default_device()}")
    print(f"BLAS: {blas_in_use()}; float32 matmul 512x512: {matmul_gflops():.1f} GFLOP/s")
    print()
    print(overhead_table(args.n, args.repeats))
    print()
    sizes = [n for n in (1_000, 10_000, 100_000) if n <= args.max_n]
    print(scaling_table(sizes, lambda n: max(5, args.repeats * 1000 // n)))


if __name__ == "__main__":
    main()
