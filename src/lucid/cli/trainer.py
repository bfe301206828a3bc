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
  train time, the last evaluation (``result``) and the SHA-256 of each safetensors file (``files``);
- ``metrics.csv``: one row per evaluation (step, time, learning rate, mean training losses since the previous
  row, test metrics); ``loss.png`` and the model's figure (with matplotlib).

The checkpoint's files are one set: written whole beside the old checkpoint and switched in by one rename
(``lucid.cli.runs``), so a stopped run leaves the previous checkpoint or the new one, never a mix. Ctrl-C sets a
flag; the loop finishes its step, writes the checkpoint and stops (a second Ctrl-C stops at once, and the last
complete checkpoint stays).
"""
from __future__ import annotations

import contextlib
import math
import signal
import sys
import threading
import time
from pathlib import Path

import lucid

from . import figures
from .recipes.base import Recipe, UsageError
from .runs import (build, check_set, load_weights, read_metrics, read_training_state, weights_file, write_checkpoint,
                   write_metrics)

INTERRUPTED = 130  # the exit status of a run stopped with Ctrl-C (128 + SIGINT), as shells report it


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
        n = recipe.train_examples
        if n is not None and recipe.batch_size > n:  # an epoch would hold no batch
            raise UsageError(f"--batch-size {recipe.batch_size} is larger than {recipe.name}'s training set ({n} "
                             f"examples); choose at most {n}")
        lucid.manual_seed(recipe.seed)
        self.modules = build(recipe)
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
        state = read_training_state(run, saved, self.optimizers, self.schedulers)
        load_weights(self.modules, run, self.recipe.name, saved["model"])
        check_set(run, saved)  # after loading: a truncated file is reported as such
        try:
            for name, opt in self.optimizers.items():
                opt.load_state_dict(state["optimizers"][name])
            for name, sch in self.schedulers.items():
                sch.load_state_dict(state["schedulers"][name])
            if self.recipe.scaler is not None and "scaler" in state:  # absent when the run was not --amp fp16
                self.recipe.scaler.load_state_dict(state["scaler"])
        except (KeyError, TypeError, ValueError, RuntimeError) as e:  # PyTorch's load_state_dict errors
            raise UsageError(f"cannot resume from {run}: optimizer.safetensors does not fit {self.recipe.name}'s "
                             f"optimizers ({type(e).__name__}: {e})") from None
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
        state = {"step": self.step, "optimizers": {k: o.state_dict() for k, o in self.optimizers.items()},
                 "schedulers": {k: s.state_dict() for k, s in self.schedulers.items()},
                 "rng_state": lucid.get_rng_state()}
        if self.recipe.scaler is not None:
            state["scaler"] = self.recipe.scaler.state_dict()
        files = {weights_file(name): lambda p, m=module: lucid.save(m.state_dict(), p)
                 for name, module in self.modules.items()}
        files["optimizer.safetensors"] = lambda p: lucid.save(state, p)
        files["metrics.csv"] = lambda p: write_metrics(p, self.rows)
        write_checkpoint(self.out, files, self.config())

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
                    raise UsageError(f"{recipe.name}: the training loss became {sum(losses.values())} at "
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
