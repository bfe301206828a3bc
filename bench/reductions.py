"""The cost of lucid's accurate float reductions (``lucid._sums``, issue 19).

MLX's CPU backend sums float32 in sequence (``mx.ones(2**25).sum()`` is 16777216); lucid sums in blocks once a
reduction covers more than ``lucid._sums.THRESHOLD`` elements. Two measurements:

- the blocked sum against MLX's own ``mx.sum`` on the same array (1-D sums of 2**20 and 2**25 float32 values, and a
  batch-norm-shaped reduction over (N, H, W)), interleaved, each call evaluated;
- each training workload's lucid eager step with the blocking on / the same step with it turned off
  (``lucid._sums.enabled``), interleaved in the same process, and how many reductions per step take the blocked
  path at all (smaller ones cost one comparison of Python ints).
"""
from __future__ import annotations

import time

import mlx.core as mx

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


def blocked_per_step(call) -> int:
    """How many reductions one step sums in blocks (counted at lucid._sums._levels)."""
    levels, count = _sums._levels, [0]

    def counted(*args):
        count[0] += 1
        return levels(*args)
    _sums._levels = counted
    try:
        call()
    finally:
        _sums._levels = levels
    return count[0]


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
                    "blocked": blocked_per_step(on)}
    return out


def measure(settings: Settings, log=lambda msg: None) -> dict:
    return {"sums": measure_sums(settings), "workloads": measure_workloads(settings, log=log),
            "threshold": _sums.THRESHOLD, "block": _sums.BLOCK}


def _cell(stat) -> str:
    return "—" if stat is None else f"{stat.median:.3f}× ({stat.q1:.3f}–{stat.q3:.3f})"


def table(result: dict) -> str:
    lines = ["| reduction | mx.sum ms | lucid's accurate sum ms | accurate / mx.sum |", "|---|---:|---:|---:|"]
    for title, r in result["sums"].items():
        s = r["samples"]
        lines.append(f"| {title} | {Stat(s['mx.sum']).fmt(1e3)} | {Stat(s['lucid']).fmt(1e3)} | {_cell(r['ratio'])} |")
    lines += ["", "| workload | blocked reductions per step | lucid eager ms, blocking on | off | on / off |",
              "|---|---:|---:|---:|---:|"]
    for r in result["workloads"].values():
        s = r["samples"]
        lines.append(f"| {r['title']} | {r['blocked']} | {Stat(s['on']).fmt(1e3)} | {Stat(s['off']).fmt(1e3)} | "
                     f"{_cell(r['ratio'])} |")
    return "\n".join(lines)
