"""Run one workload's implementations side by side: build each, check they compute the same thing, warm up, then
time them interleaved.

An implementation is a builder that returns a call; each call does one unit of work (a training step, an HVP)
including its synchronisation, and returns a value to compare (the loss; the HVP as a list of arrays). The first
``check_calls`` calls double as warm-up (``lucid.compile`` runs eagerly on its first call and traces on its
second) and their values are compared with the reference implementation's. Any implementation that fails — to
build, in the check, or while timed — is reported with its error, and the others go on.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .timing import interleaved

IMPLEMENTATIONS = ("lucid", "mlx", "lucid.compile", "mx.compile", "torch", "compiled model")
# "compiled model": the eager loop (loss.backward(); optimizer.step()) around lucid.compile(model), one tape node per
# call (measured on the small programs, issue 21)
UNCHECKED = ("lucid, no index checks", "lucid.compile, no index checks")  # the cost of lucid._checks


@dataclass
class Settings:
    repeats: int = 21          # interleaved timed blocks per implementation
    block_s: float = 0.25      # target length of one timed block (calls per block are calibrated to it)
    check_calls: int = 3       # first calls: compared across implementations, and warm-up
    warmup_calls: int = 2      # further untimed calls, which also calibrate the block
    rtol: float = 2e-3         # agreement tolerance of the first calls' results (float32)


@dataclass
class WorkloadResult:
    key: str
    title: str
    samples: dict[str, list[float]] = field(default_factory=dict)  # seconds per call, per repeat
    calls: dict[str, int] = field(default_factory=dict)             # calls per timed block
    errors: dict[str, str] = field(default_factory=dict)
    mismatch: dict[str, float] = field(default_factory=dict)        # max relative difference to the reference
    agree: dict[str, bool] = field(default_factory=dict)
    extra: dict = field(default_factory=dict)


def _error(e: BaseException) -> str:
    frame = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
    where = f" (at {frame.filename.split('/src/')[-1]}:{frame.lineno})" if frame else ""
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}{where}"


def as_numpy(value) -> np.ndarray:
    """A call's result (a float, an array, or a list of arrays/tensors) as one flat float64 vector."""
    if isinstance(value, (list, tuple)):
        return np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in value])
    return np.asarray(value, dtype=np.float64).ravel()


def relative_difference(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-12))


def run_implementations(key: str, title: str, builders: dict[str, Callable[[], Callable[[], object]]],
                        settings: Settings, reference: str = "lucid") -> WorkloadResult:
    """Build, check, warm up and time every implementation (see the module docstring)."""
    result = WorkloadResult(key, title)
    calls, values, per_call = {}, {}, {}
    for name, build in builders.items():
        try:
            call = build()
            values[name] = [as_numpy(call()) for _ in range(settings.check_calls)]
            t0 = time.perf_counter()
            for _ in range(max(settings.warmup_calls, 1)):
                call()
            per_call[name] = (time.perf_counter() - t0) / max(settings.warmup_calls, 1)
            calls[name] = call
        except Exception as e:  # recorded in the table; the other implementations go on
            result.errors[name] = _error(e)
    if reference in values:
        for name, vals in values.items():
            diff = relative_difference(np.stack(vals), np.stack(values[reference]))
            result.mismatch[name] = diff
            result.agree[name] = diff <= settings.rtol

    def timed(call, n):
        def block():
            t0 = time.perf_counter()
            for _ in range(n):
                call()
            return (time.perf_counter() - t0) / n
        return block

    result.calls = {name: max(1, round(settings.block_s / max(per_call[name], 1e-9))) for name in calls}
    fns = {name: timed(call, result.calls[name]) for name, call in calls.items()}
    result.samples = interleaved(fns, settings.repeats, warmup=0, errors=result.errors)
    return result
