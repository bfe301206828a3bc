"""``python -m bench.amp``: step time and peak memory of the transformer workload in float32 and under
``lucid.autocast`` (bfloat16, float16), the same model, weights, batch and AdamW step as ``bench/training.py``.

Peak memory is ``mx.get_peak_memory()`` over one step above what was live before it (MLX reports it on every
backend; on CPU it counts MLX's own buffers). On MLX's CPU backend the low-precision matmuls have no BLAS kernel,
so autocast costs time there; it is meant for Apple GPUs, where bfloat16/float16 halve the bytes moved.
"""
from __future__ import annotations

from bench import env  # noqa: F401  (loads OpenBLAS before MLX)

import contextlib
import gc
import time

import mlx.core as mx
import numpy as np

import lucid

from .timing import quartiles
from .training import SPECS, _loss, initial_state
from . import models


def _step(mode: str | None):
    spec = SPECS["transformer"]
    state, batch = initial_state(spec)
    model = models.with_state(lucid, spec.model(lucid), state)
    optimizer = lucid.optim.AdamW(model.parameters(), lr=spec.lr, weight_decay=0.01)
    x, y = (lucid.from_numpy(np.ascontiguousarray(a)) for a in batch)
    dtype = {"bf16": lucid.bfloat16, "fp16": lucid.float16}.get(mode)

    def step() -> float:
        optimizer.zero_grad()
        with lucid.autocast("cpu", dtype=dtype) if dtype else contextlib.nullcontext():
            loss = _loss(lucid.nn.functional, model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()
    return step


def main(repeats: int = 10) -> dict:
    print(f"BLAS: {env.blas_in_use()}")
    print(f"transformer ({SPECS['transformer'].title}), device {mx.default_device()}")
    out = {}
    for mode in (None, "bf16", "fp16"):
        gc.collect()
        mx.clear_cache()
        step = _step(mode)
        first = [step() for _ in range(3)]  # warm-up; the losses show the runs agree
        peaks, times = [], []
        for _ in range(repeats):
            gc.collect()
            before = mx.get_active_memory()
            mx.reset_peak_memory()
            t = time.perf_counter()
            step()
            times.append(time.perf_counter() - t)
            peaks.append(mx.get_peak_memory() - before)
        q = quartiles(times)
        name = mode or "float32"
        out[name] = {"median_ms": q[1] * 1e3, "iqr_ms": (q[0] * 1e3, q[2] * 1e3), "peak_mb": max(peaks) / 2 ** 20,
                     "first_losses": first}
        print(f"{name:8s} step {q[1] * 1e3:8.1f} ms (quartiles {q[0] * 1e3:.1f}-{q[2] * 1e3:.1f})  peak rise "
              f"{max(peaks) / 2 ** 20:7.2f} MiB  losses {', '.join(f'{v:.4f}' for v in first)}")
    return out


if __name__ == "__main__":
    main()
