"""Interleaved timing and the statistics the tables print.

The machine is shared and noisy, so implementations are never timed one after the other: each repeat runs every
implementation once, in an order rotated from repeat to repeat (no implementation always goes first), and the tables
report medians with their spread. A ratio between two implementations is the median of the per-repeat ratios, so a
slow moment of the machine that hits both samples of a repeat cancels out.
"""
from __future__ import annotations

import statistics
from typing import Callable


def interleaved(fns: dict[str, Callable[[], float]], repeats: int, warmup: int = 1,
                errors: dict[str, str] | None = None) -> dict[str, list[float]]:
    """Samples (whatever each function returns, normally seconds) of every function, runs interleaved.

    A function that raises is dropped from the remaining repeats and its error is recorded in ``errors``
    (``"ExceptionType: message"``); the others go on.
    """
    errors = {} if errors is None else errors
    live = dict(fns)

    def call(key):
        try:
            return live[key]()
        except Exception as e:  # one failing implementation must not stop the benchmark
            errors[key] = f"{type(e).__name__}: {e}"
            del live[key]
            return None

    for _ in range(warmup):
        for key in list(live):
            call(key)
    samples: dict[str, list[float]] = {k: [] for k in live}
    for r in range(repeats):
        keys = list(live)
        if not keys:
            break
        shift = r % len(keys)
        for key in keys[shift:] + keys[:shift]:
            value = call(key)
            if value is not None:
                samples[key].append(value)
    return {k: v for k, v in samples.items() if k in live and v}


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """(first quartile, median, third quartile); with fewer than 4 values, (min, median, max)."""
    if len(values) < 4:
        return min(values), statistics.median(values), max(values)
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


class Stat:
    """Median and spread of a list of samples. ``spread`` is half the interquartile range relative to the median
    (so "8.1 ±3%" reads as: the middle half of the samples lies within about 3% of 8.1)."""

    __slots__ = ("median", "q1", "q3", "n")

    def __init__(self, values: list[float]):
        self.q1, self.median, self.q3 = quartiles(values)
        self.n = len(values)

    @property
    def spread(self) -> float:
        return (self.q3 - self.q1) / 2 / self.median if self.median else 0.0

    def fmt(self, scale: float = 1.0, digits: int = 2) -> str:
        return f"{self.median * scale:.{digits}f} ±{self.spread * 100:.0f}%"


def paired_ratio(a: list[float], b: list[float]) -> Stat | None:
    """Median of the per-repeat ratios a[i] / b[i] (the two lists come from the same interleaved repeats)."""
    n = min(len(a), len(b))
    if n == 0:
        return None
    return Stat([x / y for x, y in zip(a[:n], b[:n])])
