"""``lucid train``'s common loop: progress bar, periodic evaluation, checkpoints, exact resume, Ctrl-C.

A run directory holds:

- ``model.safetensors``: the model's state_dict (PyTorch's key names; other modules, such as dcgan's
  discriminator, go in ``NAME.safetensors``);
- ``optimizer.safetensors``: what resuming needs besides the weights, written with ``lucid.save``:
  ``{"step": int, "optimizers": {name: optimizer.state_dict()}, "schedulers": {name: scheduler.state_dict()},
  "rng_state": lucid.get_rng_state()}``, and under ``--amp fp16`` ``"scaler": GradScaler.state_dict()`` (the loss
  scale and its growth tracker, so a resumed run skips and grows as the uninterrupted one; read it back with
  ``lucid.load``);
- ``config.json``: the model name and constructor arguments, the training arguments, the step reached, the
  train time and the last evaluation (``result``);
- ``metrics.csv``: one row per evaluation (step, time, learning rate, mean training losses since the previous
  row, test metrics); ``loss.png`` and the model's figure (with matplotlib).

Every file is written to a temporary name and renamed, and ``config.json`` last, so a stopped run leaves the
previous consistent checkpoint or the new one. Ctrl-C sets a flag; the loop finishes its step, writes the
checkpoint and stops (a second Ctrl-C stops at once).
"""
from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import signal
import sys
import threading
import time
from pathlib import Path

import lucid

from . import figures
from .recipes.base import Recipe, UsageError

INTERRUPTED = 130  # the exit status of a run stopped with Ctrl-C (128 + SIGINT), as shells report it


# -------------------------------------------------------------------------------------------------- run files
def atomic_write(path: Path, write) -> None:
    """``write(tmp_path)``, then rename over ``path``."""
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)


def write_json(path: Path, obj: dict) -> None:
    atomic_write(path, lambda p: p.write_text(json.dumps(obj, indent=2) + "\n"))


def ensure_writable(out: Path) -> None:
    """Create ``out`` and prove a file can be written there, before any training."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".lucid-write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as e:
        raise UsageError(f"cannot write to --out {out}: {e.strerror or e}") from None


def read_config(run: Path) -> dict:
    path = run / "config.json"
    if not path.is_file():
        raise UsageError(f"{run} is not a lucid run directory (no config.json; a run is written by lucid train)")
    return json.loads(path.read_text())


def read_metrics(run: Path, up_to_step: int) -> list[dict]:
    path = run / "metrics.csv"
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        rows = [{k: (None if v == "" else float(v)) for k, v in r.items()} for r in csv.DictReader(f)]
    for r in rows:
        r["step"] = int(r["step"])
    return [r for r in rows if r["step"] <= up_to_step]


def write_metrics(path: Path, rows: list[dict]) -> None:
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]

    def write(tmp):
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if r.get(k) is None else r[k]) for k in keys})
    atomic_write(path, write)


def load_weights(modules: dict, run: Path, model_name: str, saved_name: str) -> None:
    """Load every module's safetensors file from ``run`` (strict), naming the mismatched keys on failure."""
    for name, module in modules.items():
        path = run / ("model.safetensors" if name == "model" else f"{name}.safetensors")
        if not path.is_file():
            raise UsageError(f"cannot load {model_name} from {run}: {path.name} is missing")
        try:
            module.load_state_dict(lucid.load(path))
        except RuntimeError as e:
            origin = f" (a checkpoint of {saved_name!r})" if saved_name != model_name else ""
            raise UsageError(f"cannot load {model_name} from {run}{origin}: {e}") from None


@contextlib.contextmanager
def evaluation(modules: dict):
    """Eval mode for the modules, and lucid's RNG state restored afterwards, so evaluating or drawing never
    changes what training does next (a resumed run evaluates at different steps)."""
    rng = lucid.get_rng_state()
    modes = {name: m.training for name, m in modules.items()}
    for m in modules.values():
        m.eval()
    try:
        yield
    finally:
        lucid.set_rng_state(rng)
        for name, m in modules.items():
            m.train(modes[name])


# -------------------------------------------------------------------------------------------------- the loop
class _StopFlag:
    """SIGINT -> stop after the current step (in the main thread; elsewhere Ctrl-C keeps its default)."""

    def __init__(self):
        self.set = False
        self._previous = None

    def _handler(self, signum, frame):
        self.set = True
        signal.signal(signal.SIGINT, self._previous)  # a second Ctrl-C interrupts at once

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


class Trainer:
    def __init__(self, recipe: Recipe, out: Path, lr: float, compile: bool = False, eval_every: int | None = None,
                 args: dict | None = None, progress: bool = True, distributed: bool = False):
        self.recipe, self.out, self.lr = recipe, out, lr
        self.total = recipe.steps  # the run's length; the command sets it from --steps/--epochs
        self.eval_every = eval_every or recipe.eval_every
        self.log_every = max(1, self.eval_every // 10)  # metrics.csv rows of training loss between evaluations
        self.args = args or {}
        self.progress = progress
        recipe.load_data()
        lucid.manual_seed(recipe.seed)
        self.modules = recipe.build()
        self.optimizers = recipe.make_optimizers(self.modules, lr)
        self.schedulers = recipe.make_schedulers(self.optimizers)
        for name, obj in {**self.modules, **self.optimizers, **self.schedulers}.items():
            setattr(recipe, name, obj)
        self.rank, self.world = 0, 1
        if distributed:  # the recipes call their modules directly: DDP's gradient hooks do the averaging
            self.rank, self.world = lucid.distributed.get_rank(), lucid.distributed.get_world_size()
            self.ddp = [lucid.nn.parallel.DistributedDataParallel(m) for m in self.modules.values()
                        if any(p.requires_grad for p in m.parameters())]
        self.progress = progress and self.rank == 0  # rank 0 alone shows progress and writes the run directory
        self.step_fn = recipe.train_step
        if compile:
            self.step_fn = lucid.compile(recipe.train_step,
                                         state=[*self.modules.values(), *self.optimizers.values()])
        self.step = 0
        self.train_time = 0.0
        self.rows: list[dict] = []
        self.result: dict = {}

    # ---------------------------------------------------------------------------------------------- resume
    def resume(self, run: Path, saved: dict) -> None:
        """Continue from the checkpoint in ``run`` (config ``saved``): weights, optimizers, schedulers, the
        GradScaler, RNG, step."""
        load_weights(self.modules, run, self.recipe.name, saved.get("model", "?"))
        state = lucid.load(run / "optimizer.safetensors")
        for name, opt in self.optimizers.items():
            opt.load_state_dict(state["optimizers"][name])
        for name, sch in self.schedulers.items():
            sch.load_state_dict(state["schedulers"][name])
        if self.recipe.scaler is not None and "scaler" in state:  # absent when the run was not --amp fp16
            self.recipe.scaler.load_state_dict(state["scaler"])
        lucid.set_rng_state(state["rng_state"])
        self.step = int(state["step"])
        self.train_time = float(saved.get("train_time_s", 0.0))
        self.rows = read_metrics(run, self.step)
        self.result = saved.get("result", {})
        if self.args.get("lr_given"):
            for opt in self.optimizers.values():
                for group in opt.param_groups:
                    group["lr"] = group["initial_lr"] = self.lr

    # ---------------------------------------------------------------------------------------------- saving
    def checkpoint(self) -> None:
        for name, module in self.modules.items():
            path = self.out / ("model.safetensors" if name == "model" else f"{name}.safetensors")
            atomic_write(path, lambda p, m=module: lucid.save(m.state_dict(), p))
        state = {"step": self.step, "optimizers": {k: o.state_dict() for k, o in self.optimizers.items()},
                 "schedulers": {k: s.state_dict() for k, s in self.schedulers.items()},
                 "rng_state": lucid.get_rng_state()}
        if self.recipe.scaler is not None:
            state["scaler"] = self.recipe.scaler.state_dict()
        atomic_write(self.out / "optimizer.safetensors", lambda p: lucid.save(state, p))
        write_metrics(self.out / "metrics.csv", self.rows)
        write_json(self.out / "config.json", self.config())

    def config(self) -> dict:
        r = self.recipe
        return {"model": r.name, "model_config": r.config, "data": r.data,
                "args": {**{k: v for k, v in self.args.items() if k != "lr_given"}, "seed": r.seed,
                         "batch_size": r.batch_size, "lr": self.lr, "steps": self.total},
                "step": self.step, "train_time_s": round(self.train_time, 2), "metric": r.metric,
                "result": self.result, "lucid_version": lucid.__version__}

    def figures(self, say) -> None:
        plt = figures.pyplot()
        recipe = self.recipe
        if plt is None:
            skipped = "loss.png" + (f" and {recipe.figure}" if recipe.needs_matplotlib else "")
            say(f"matplotlib is not installed: skipped {skipped} ({figures.INSTALL_HINT})")
        elif self.rows:
            keys = list(dict.fromkeys(k for r in self.rows for k in r))
            train_keys = [k for k in keys if k.startswith("train_")]
            eval_keys = [k for k in keys if k.startswith("test_")]
            figures.loss_curves(plt, self.rows, train_keys, eval_keys, self.out / "loss.png",
                                f"lucid train {recipe.name}")
        if plt is not None or not recipe.needs_matplotlib:
            with evaluation(self.modules):
                recipe.draw(plt, self.out)

    # ---------------------------------------------------------------------------------------------- training
    def shard(self, batch: tuple) -> tuple:
        """This rank's contiguous share (along dim 0) of every tensor in a training batch."""
        if self.world == 1:
            return batch
        shares = []
        for t in batch:
            n = t.shape[0]
            if n % self.world:
                raise UsageError(f"--distributed: a batch of {n} does not split evenly over {self.world} "
                                 f"processes; choose a --batch-size divisible by {self.world}")
            share = n // self.world
            shares.append(t[self.rank * share:(self.rank + 1) * share])
        return tuple(shares)

    def log(self, losses: dict, count: int, metrics: dict | None) -> None:
        """Append a metrics.csv row: mean training losses since the last row, and the test metrics if given."""
        groups = next(iter(self.optimizers.values())).param_groups
        row = {"step": self.step, "time_s": round(self.train_time, 3), "lr": groups[0]["lr"]}
        row.update({f"train_{k}": v / max(count, 1) for k, v in losses.items()})
        if metrics is not None:
            self.result = {k: round(v, 6) for k, v in metrics.items()}
            row.update(self.result)
        self.rows.append(row)

    def run(self) -> int:
        """Train from ``self.step`` to ``self.total``; returns 0, or INTERRUPTED after Ctrl-C."""
        from tqdm.auto import tqdm
        recipe = self.recipe
        for m in self.modules.values():
            m.train()
        bar = tqdm(total=self.total, initial=self.step, desc=recipe.name, unit="step", dynamic_ncols=True,
                   mininterval=0.5 if sys.stderr.isatty() else 10.0, disable=not self.progress)
        say = bar.write if self.progress else (lambda s: None)
        losses: dict[str, float] = {}
        count = 0
        with _StopFlag() as stop:
            while self.step < self.total and not stop.set:
                started = time.perf_counter()
                out = self.step_fn(*self.shard(recipe.batch(self.step)))
                for s in self.schedulers.values():
                    s.step()
                for k, v in out.items():
                    if self.world > 1:  # the loss of the whole batch: the mean of the ranks' shares
                        lucid.distributed.all_reduce(v, op=lucid.distributed.ReduceOp.AVG)
                    losses[k] = losses.get(k, 0.0) + v.item()
                self.step += 1
                count += 1
                self.train_time += time.perf_counter() - started
                bar.update(1)
                bar.set_postfix({k: f"{v / count:.4g}" for k, v in losses.items()}, refresh=False)
                if not math.isfinite(sum(losses.values())):
                    bar.close()
                    raise FloatingPointError(f"{recipe.name}: the training loss became {sum(losses.values())} at "
                                             f"step {self.step}; try a smaller --lr")
                evaluate = self.step % self.eval_every == 0 or self.step == self.total or stop.set
                if evaluate or self.step % self.log_every == 0:
                    metrics = None
                    if evaluate:
                        with evaluation(self.modules):
                            metrics = recipe.evaluate()
                        say(f"step {self.step}/{self.total}  " + "  ".join(
                            [f"train_{k} {v / count:.4g}" for k, v in losses.items()]
                            + [f"{k} {v:.4g}" for k, v in metrics.items()]))
                    self.log(losses, count, metrics)
                    losses, count = {}, 0
                    if evaluate and self.rank == 0:
                        self.checkpoint()
            bar.close()
            interrupted = stop.set and self.step < self.total
        if self.rank != 0:
            return INTERRUPTED if interrupted else 0
        if interrupted:
            print(f"Interrupted at step {self.step}/{self.total}: checkpoint written to {self.out}. Continue with:\n"
                  f"  lucid train {recipe.name} --resume {self.out}", file=sys.stderr)
        self.figures(say=lambda s: print(s, file=sys.stderr))
        return INTERRUPTED if interrupted else 0
