"""Memory per recorded op: what a chain of N recorded ops holds, per op, in lucid, in PyTorch and in MLX alone.

    python bench/memory.py              # N = 100,000
    python bench/memory.py --n 20000

Three chains on a float32[16] tensor that requires grad, each op kept alive by the next (as in ``x = x * c`` run
10^7 times): ``x * 1.0001`` (a Python number: nothing saved), ``x * c`` (c requires grad too: both operands saved)
and ``x.exp()`` (saves its output). MLX alone builds the same lazy graph with no tape. Two measures per cell:

  RSS / op          the growth of the process's resident memory over the chain, divided by N: everything the op
                    holds (Python objects, MLX's graph nodes and buffers, the allocator's overhead)
  Python B / op     tracemalloc's traced bytes over the chain, divided by N: the Python objects alone (lucid's
                    Tensor, Storage, node, edge and argument tuples; MLX's array wrappers)

Every cell runs in a fresh process of the same interpreter: in one process a heap that an earlier chain grew and
freed would absorb the next chain's allocations, and tracing would add its own memory to the RSS. Each process
builds and frees a 1,000-op chain first, so imports and first-call caches are not counted. ``python -m bench``
reuses this module for its "Memory per recorded op" table; tests/test_memory.py bounds lucid's numbers.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHAINS = {"mul_number": "x * 1.0001 (Python number)", "mul_tensor": "x * c (both require grad)",
          "exp": "x.exp() (saves its output)"}
LIBRARIES = ("lucid", "torch", "mlx")


def _chain(lib: str, kind: str, n: int):
    """Build a chain of ``n`` ops of ``kind`` in ``lib``; returns what keeps it alive."""
    if lib == "mlx":
        import mlx.core as mx
        x = c = mx.ones((16,))
        ops = {"mul_number": lambda y: y * 1.0001, "mul_tensor": lambda y: y * c, "exp": mx.exp}
    else:
        L = __import__(lib)
        x = L.ones(16, requires_grad=True)
        c = L.ones(16, requires_grad=True)
        ops = {"mul_number": lambda y: y * 1.0001, "mul_tensor": lambda y: y * c, "exp": lambda y: y.exp()}
    op = ops[kind]
    y = x
    for _ in range(n):
        y = op(y)
    return x, c, y


def _rss() -> int:
    """Resident memory in bytes (Linux /proc; elsewhere the peak from getrusage, which also only grows here)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def child(lib: str, kind: str, n: int, traced: bool) -> float:
    """Bytes per op of one chain, measured in this (fresh) process."""
    import gc
    import tracemalloc
    keep = _chain(lib, kind, 1000)
    del keep
    gc.collect()
    if traced:
        tracemalloc.start()
    before = _rss()
    keep = _chain(lib, kind, n)
    grown = tracemalloc.get_traced_memory()[0] if traced else _rss() - before
    del keep
    return grown / n


def measure(n: int = 100_000, libraries=LIBRARIES) -> dict:
    """{chain: {library: {"rss": bytes per op, "python": bytes per op}}}; a library that is not installed is left
    out."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out: dict = {}
    for kind in CHAINS:
        for lib in libraries:
            cell = {}
            for measure_ in ("rss", "python"):
                r = subprocess.run([sys.executable, "-m", "bench.memory", "--child", lib, kind, str(n), measure_],
                                   capture_output=True, text=True, cwd=root, timeout=600)
                if r.returncode != 0:
                    if "No module named" in r.stderr:
                        break  # PyTorch not installed
                    raise RuntimeError(f"{lib} {kind}: {r.stderr.strip()[-500:]}")
                cell[measure_] = json.loads(r.stdout.strip().splitlines()[-1])
            if cell:
                out.setdefault(kind, {})[lib] = cell
    return out


def table(results: dict, n: int) -> str:
    libs = [lib for lib in LIBRARIES if any(lib in row for row in results.values())]
    head = " | ".join(f"{lib} RSS / op | {lib} Python B / op" for lib in libs)
    lines = [f"Chains of N = {n:,} recorded ops on float32[16], bytes per op (fresh process per cell):", "",
             f"| chain | {head} |", "|---|" + "---:|" * (2 * len(libs))]
    for kind, row in results.items():
        cells = " | ".join(f"{row[lib]['rss']:,.0f} | {row[lib]['python']:,.0f}" if lib in row else "— | —"
                           for lib in libs)
        lines.append(f"| {CHAINS[kind]} | {cells} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=100_000, help="ops per chain")
    p.add_argument("--child", nargs=4, metavar=("LIB", "CHAIN", "N", "MEASURE"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        lib, kind, n, what = args.child
        print(json.dumps(child(lib, kind, int(n), what == "python")))
        return
    print(table(measure(args.n), args.n))


if __name__ == "__main__":
    if __package__ in (None, ""):  # run as a script: make the bench package importable
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
