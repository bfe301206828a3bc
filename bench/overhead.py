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
  ... compiled module     the chain as a module under lucid.compile: one tape node per call  vs  ``mx.grad``

On Linux the ``mlx[cpu]`` wheel bundles the slow reference BLAS, so this script loads Debian's OpenBLAS first
(``apt-get install libopenblas0-pthread``) and says which BLAS ran. The chain benchmarks do not call BLAS; the
matmul line in the header shows what it changes. ``python -m bench`` reuses this module for its "Backward scaling"
and "Tape overhead per op" tables.
"""
from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time

if __package__ in (None, ""):  # run as a script: make the bench package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.env import describe  # noqa: E402  (loads OpenBLAS before MLX)
from bench.timing import Stat, interleaved, paired_ratio  # noqa: E402

import mlx.core as mx  # noqa: E402

import lucid  # noqa: E402

SIZE = 16  # elements per tensor: small, so the table measures overhead, not arithmetic


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


@functools.cache
def _compiled_chain(n: int):
    """The chain as a module under ``lucid.compile``: one tape node per call (traced here, before any timing)."""
    class Chain(lucid.nn.Module):
        def forward(self, x):
            return chain(x, n, lucid.sin)

    module = lucid.compile(Chain())
    for _ in range(2):  # the first call runs eagerly, the second traces
        module(lucid.ones(SIZE, requires_grad=True)).sum().backward()
    return module


def lucid_compiled_module(n):
    module = _compiled_chain(n)
    x = lucid.ones(SIZE, requires_grad=True)
    t0 = time.perf_counter()
    module(x).sum().backward()
    mx.eval(x.grad.mlx)
    return time.perf_counter() - t0


def measure(fns: dict, n: int, repeats: int) -> dict:
    """Median seconds of each function on a chain of ``n`` ops, runs interleaved (one warm-up round first)."""
    samples = interleaved({k: functools.partial(f, n) for k, f in fns.items()}, repeats)
    return {k: statistics.median(v) for k, v in samples.items()}


def torch_forward_backward(n):
    """The same chain through PyTorch's tape (optional reference; only called when torch is installed)."""
    import torch
    x = torch.ones(SIZE, requires_grad=True)
    t0 = time.perf_counter()
    chain(x, n, torch.sin).sum().backward()
    assert x.grad is not None
    return time.perf_counter() - t0


def has_torch() -> bool:
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


# ---------------------------------------------------------------------------------------------------- tables
def per_op(seconds: float, n: int) -> float:
    return seconds / n * 1e6


def measure_overhead(n: int, repeats: int) -> dict:
    """Median seconds of every variant on a chain of ``n`` ops."""
    return measure({"mlx": mlx_forward, "rec": lucid_forward, "nograd": lucid_forward_no_grad, "mxbuild": mlx_build,
                    "build": lucid_build, "mxgrad": mlx_grad, "fb": lucid_forward_backward,
                    "walk": lucid_backward_walk, "cm": lucid_compiled_module}, n, repeats)


def recording_overhead_us(t: dict, n: int) -> dict:
    """What recording one op costs on top of the MLX call (µs): lucid's graph building with a tape minus MLX's
    ("build"), and the same with the chain's evaluation included ("eval")."""
    return {"build": per_op(t["build"] - t["mxbuild"], n), "eval": per_op(t["rec"] - t["mlx"], n)}


def overhead_table(t: dict, n: int, repeats: int) -> str:
    rows = [
        ("forward, recording (requires_grad=True)", t["rec"], t["mlx"], "MLX forward"),
        ("forward, recording, graph build only (no eval)", t["build"], t["mxbuild"], "MLX build"),
        ("forward, under lucid.no_grad()", t["nograd"], t["mlx"], "MLX forward"),
        ("forward + backward", t["fb"], t["mxgrad"], "mx.grad"),
        ("forward + backward, the chain as one lucid.compile(module) node", t["cm"], t["mxgrad"], "mx.grad"),
    ]
    out = [f"Chain of N = {n} elementwise ops on float32[{SIZE}], median of {repeats} (µs per op or node):", "",
           "| measurement | lucid µs/op | baseline | baseline µs/op | overhead µs/op | ratio |",
           "|---|---:|---|---:|---:|---:|"]
    for name, ours, base, base_name in rows:
        a, b = per_op(ours, n), per_op(base, n)
        out.append(f"| {name} | {a:.2f} | {base_name} | {b:.2f} | {a - b:+.2f} | {a / b:.2f}x |")
    out.append(f"| backward walk only (engine, no eval) | {per_op(t['walk'], n):.2f} | — | — | — | — |")
    return "\n".join(out)


def measure_scaling(sizes, repeats_for) -> list[dict]:
    """Per chain length: interleaved samples (seconds per node) of lucid fwd+bwd, mx.grad, lucid's walk alone and,
    when installed, PyTorch fwd+bwd."""
    fns = {"lucid": lucid_forward_backward, "mx.grad": mlx_grad, "walk": lucid_backward_walk}
    if has_torch():
        fns["torch"] = torch_forward_backward
    rows = []
    for n in sizes:
        samples = interleaved({k: functools.partial(f, n) for k, f in fns.items()}, repeats_for(n))
        rows.append({"n": n, **{k: [s / n for s in v] for k, v in samples.items()}})
    return rows


def scaling_table(rows: list[dict]) -> str:
    """Markdown: µs per node at each chain length, and how the per-node cost at the longest chain compares with the
    shortest (1.00x = perfectly flat)."""
    torch_col = any("torch" in r for r in rows)
    head = "| N nodes | lucid fwd+bwd µs/node | mx.grad µs/node | lucid / mx.grad | lucid walk µs/node |"
    rule = "|---:|---:|---:|---:|---:|"
    if torch_col:
        head, rule = head + " torch fwd+bwd µs/node |", rule + "---:|"
    out = ["Backward over a chain of N elementwise ops, time per node (medians ±half-IQR; flat = linear in N):", "",
           head, rule]
    for r in rows:
        ratio = paired_ratio(r["lucid"], r["mx.grad"])
        line = (f"| {r['n']:,} | {Stat(r['lucid']).fmt(1e6)} | {Stat(r['mx.grad']).fmt(1e6)} | "
                f"{ratio.median:.2f}x | {Stat(r['walk']).fmt(1e6)} |")
        if torch_col:
            line += f" {Stat(r['torch']).fmt(1e6) if r.get('torch') else '—'} |"
        out.append(line)
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        growth = {k: Stat(last[k]).median / Stat(first[k]).median for k in ("lucid", "mx.grad", "walk")}
        out += ["", f"Per-node cost at N = {last['n']:,} relative to N = {first['n']:,}: lucid fwd+bwd "
                    f"{growth['lucid']:.2f}x, mx.grad {growth['mx.grad']:.2f}x, lucid backward walk "
                    f"{growth['walk']:.2f}x."]
    return "\n".join(out)


def flatness(rows: list[dict], key: str = "lucid") -> float:
    """Per-node cost at the longest chain over the per-node cost at the shortest."""
    return Stat(rows[-1][key]).median / Stat(rows[0][key]).median


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000, help="chain length for the overhead table")
    p.add_argument("--repeats", type=int, default=15, help="repeats for the overhead table")
    p.add_argument("--max-n", type=int, default=100_000, help="longest chain in the scaling table")
    args = p.parse_args()

    h = describe()
    print(f"lucid {h['lucid']}, MLX {h['mlx']}, Python {h['python']}\nmachine: {h['machine']}\nBLAS: {h['blas']}")
    print()
    print(overhead_table(measure_overhead(args.n, args.repeats), args.n, args.repeats))
    print()
    sizes = [n for n in (1_000, 10_000, 100_000) if n <= args.max_n]
    print(scaling_table(measure_scaling(sizes, lambda n: max(5, args.repeats * 1000 // n))))


if __name__ == "__main__":
    main()
