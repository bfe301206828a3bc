"""The cost of lucid's accurate float reductions (``lucid._sums``, issue 19).

MLX's CPU backend sums float32 in sequence (``mx.ones(2**25).sum()`` is 16777216); lucid sums in blocks once a
reduction covers more than ``lucid._sums.THRESHOLD`` elements. Two measurements:

- the blocked sum against MLX's own ``mx.sum`` on the same array (1-D sums of 2**20 and 2**25 float32 values, and a
  batch-norm-shaped reduction over (N, H, W)), interleaved, each call evaluated;
- each training workload's lucid eager step: the time spent inside lucid._sums per step, timed from inside (graph
  building: the threshold checks, the blocked sums' extra MLX calls, and the MLX reduction calls that would be made
  anyway, so an upper bound of the Python-side cost; the evaluation of a blocked sum costs less than MLX's own, as
  the first table shows) and its share of the step; how many reductions per step take the blocked path at all; and
  the step with the blocking on / off (``lucid._sums.enabled``), interleaved in the same process (on this shared
  machine that ratio moves by a few percent either way from run to run).
"""
from __future__ import annotations

import time

import mlx.core as mx
import numpy as np

import lucid
from lucid import _sums

from . import training
from .harness import Settings
from .timing import Stat, interleaved, paired_ratio

SUMS = {"1-D sum of 2**20 float32": ((2 ** 20,), None), "1-D sum of 2**25 float32": ((2 ** 25,), None),
        "batch-norm statistics: (128, 64, 32, 32) over (0, 2, 3)": ((128, 64, 32, 32), (0, 2, 3))}


def _timed(call, n: int):
    """One timed block: ``n`` calls, seconds per call."""
    def block():
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        return (time.perf_counter() - t0) / n
    return block


def measure_sums(settings: Settings) -> dict:
    """Per case: seconds per evaluated call of ``mx.sum`` and of the accurate sum, and the paired ratio."""
    out = {}
    for title, (shape, axes) in SUMS.items():
        a = mx.random.uniform(shape=shape)
        mx.eval(a)
        fns = {"mx.sum": lambda: mx.eval(mx.sum(a, axis=axes)), "lucid": lambda: mx.eval(_sums.sum(a, axes))}
        t0 = time.perf_counter()
        fns["mx.sum"]()
        n = max(1, round(settings.block_s / max(time.perf_counter() - t0, 1e-9)))
        samples = interleaved({k: _timed(f, n) for k, f in fns.items()}, settings.repeats)
        out[title] = {"samples": samples, "ratio": paired_ratio(samples["lucid"], samples["mx.sum"])}
    return out


def _plain(call):
    """The same step with the blocking turned off around it."""
    def plain():
        _sums.enabled[0] = False
        try:
            return call()
        finally:
            _sums.enabled[0] = True
    return plain


ENTRY_POINTS = ("sum", "mean", "var", "logsumexp")


def inside_per_step(call, steps: int = 30) -> dict:
    """Seconds per step spent inside lucid._sums (outermost calls only; the median over ``steps`` steps), the
    number of reductions per step that went through it and of those summed in blocks (at lucid._sums._levels)."""
    originals = {name: getattr(_sums, name) for name in ENTRY_POINTS + ("_levels",)}
    spent, depth, calls, blocked = [0.0], [0], [0], [0]

    def timed(f):
        def g(*args, **kwargs):
            if depth[0]:
                return f(*args, **kwargs)
            depth[0] += 1
            calls[0] += 1
            t0 = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - t0
                depth[0] -= 1
        return g

    def levels(*args):
        blocked[0] += 1
        return originals["_levels"](*args)

    per_step = []
    try:
        for name in ENTRY_POINTS:
            setattr(_sums, name, timed(originals[name]))
        _sums._levels = levels
        for _ in range(steps):
            spent[0], calls[0], blocked[0] = 0.0, 0, 0
            call()
            per_step.append(spent[0])
    finally:
        for name, f in originals.items():
            setattr(_sums, name, f)
    return {"inside_s": float(np.median(per_step)), "calls": calls[0], "blocked": blocked[0]}


def measure_workloads(settings: Settings, keys=None, log=lambda msg: None) -> dict:
    """Per training workload: lucid eager step times with the blocking on and off (interleaved), their paired
    ratio, and the number of blocked reductions per step."""
    out = {}
    for key in keys or list(training.SPECS):
        spec = training.SPECS[key]
        log(f"bench: reductions: {key}")
        state, batch = training.initial_state(spec)
        on = training.pytorch_style(lucid, spec, state, batch)
        off = _plain(training.pytorch_style(lucid, spec, state, batch))
        for _ in range(settings.check_calls + settings.warmup_calls):
            on(), off()
        t0 = time.perf_counter()
        on()
        n = max(1, round(settings.block_s / max(time.perf_counter() - t0, 1e-9)))
        samples = interleaved({"on": _timed(on, n), "off": _timed(off, n)}, settings.repeats)
        out[key] = {"title": spec.title, "samples": samples, "ratio": paired_ratio(samples["on"], samples["off"]),
                    **inside_per_step(on, steps=settings.repeats)}
    return out


def measure(settings: Settings, log=lambda msg: None) -> dict:
    return {"sums": measure_sums(settings), "workloads": measure_workloads(settings, log=log),
            "threshold": _sums.THRESHOLD, "block": _sums.BLOCK}


def share(r: dict) -> float:
    """The time inside lucid._sums over the median step (blocking on)."""
    return r["inside_s"] / Stat(r["samples"]["on"]).median


def _cell(stat) -> str:
    return "—" if stat is None else f"{stat.median:.3f}× ({stat.q1:.3f}–{stat.q3:.3f})"


def table(result: dict) -> str:
    lines = ["| reduction | mx.sum ms | lucid's accurate sum ms | accurate / mx.sum |", "|---|---:|---:|---:|"]
    for title, r in result["sums"].items():
        s = r["samples"]
        lines.append(f"| {title} | {Stat(s['mx.sum']).fmt(1e3)} | {Stat(s['lucid']).fmt(1e3)} | {_cell(r['ratio'])} |")
    lines += ["", "| workload | reductions per step (blocked) | time inside lucid._sums per step | share of the step "
              "| lucid eager ms, blocking on | off | on / off |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in result["workloads"].values():
        s = r["samples"]
        lines.append(f"| {r['title']} | {r['calls']} ({r['blocked']}) | {r['inside_s'] * 1e6:.1f} µs | "
                     f"{share(r):.2%} | {Stat(s['on']).fmt(1e3)} | {Stat(s['off']).fmt(1e3)} | {_cell(r['ratio'])} |")
    return "\n".join(lines)
