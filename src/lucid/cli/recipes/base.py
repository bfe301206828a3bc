"""What every training recipe provides to ``lucid train``'s common loop (``lucid.cli.trainer``).

A recipe owns the data, the model(s), the optimizer(s), one training step and the evaluation. Everything random
in it is a function of the seed and the step number (batch ``step`` is drawn from ``(seed, epoch)`` or
``(seed, step)``, never from a running generator), and every learning-rate schedule depends on the step only, not
on the run's length. So training is prefix-consistent: the state after N steps of a 100-step run equals the state
after N steps of a 1000-step run, and a checkpoint needs only the step, the weights, the optimizer and scheduler
state, and lucid's RNG key (dropout) to continue exactly.
"""
from __future__ import annotations

import contextlib

from pathlib import Path

import numpy as np

import lucid


class UsageError(Exception):
    """Bad input on the command line: printed without a traceback, exit status 2."""


class Recipe:
    name = ""            # the model's name on the command line
    summary = ""         # one line for ``lucid models``
    data = ""            # what it trains on
    target = ""          # the result the defaults reach (README's zoo table)
    metric = ""          # the headline key of evaluate()'s dict
    higher_is_better = True
    figure = ""          # the model's own figure file
    needs_matplotlib = True  # False where the figure is text (samples.txt)
    steps = 1000         # default total steps
    steps_per_epoch = 100  # for --epochs (recipes on a fixed dataset set it from the data)
    train_examples: int | None = None  # the size of a fixed training set (None: batches are generated)
    batch_size = 64
    lr = 1e-3
    eval_every = 100
    can_sample = False

    def __init__(self, config: dict | None = None, seed: int = 0, batch_size: int | None = None):
        self.config = {**self.default_config(), **(config or {})}
        self.seed = seed
        self.batch_size = batch_size or type(self).batch_size

    # ---------------------------------------------------------------------------------------------- the recipe
    def default_config(self) -> dict:
        """The model's constructor arguments (saved in config.json)."""
        return {}

    def load_data(self) -> None:
        """Load or generate the data (deterministic by ``self.seed``)."""

    def build(self) -> dict[str, lucid.nn.Module]:
        """The modules, ``{"model": ...}`` first (saved as model.safetensors; others as NAME.safetensors)."""
        raise NotImplementedError

    def make_optimizers(self, modules: dict, lr: float) -> dict:
        """``{name: optimizer}``; Adam on the model by default."""
        return {"optimizer": lucid.optim.Adam(modules["model"].parameters(), lr=lr)}

    def make_schedulers(self, optimizers: dict) -> dict:
        """``{name: scheduler}`` stepped once per training step; their rates must depend on the step only."""
        return {}

    def batch(self, step: int) -> tuple:
        """The inputs of training step ``step`` (a tuple of tensors)."""
        raise NotImplementedError

    def train_step(self, *batch) -> dict:
        """One optimisation step; returns ``{loss name: scalar tensor}``. No ``.item()`` here: with ``--compile``
        this function is traced by ``lucid.compile``."""
        raise NotImplementedError

    def evaluate(self) -> dict[str, float]:
        """The test metrics (lucid's RNG and the modules' train/eval modes are restored afterwards)."""
        raise NotImplementedError

    def draw(self, plt, out: Path) -> None:
        """Draw the model's figure into ``out / self.figure``."""

    def sample(self, out: Path, plt=None, **options) -> str:
        """Generate from the trained model; returns what to print."""
        raise NotImplementedError

    # ---------------------------------------------------------------------------------------------- helpers
    def epoch_indices(self, step: int, n: int) -> np.ndarray:
        """The example indices of batch ``step`` when every epoch visits ``n`` examples in a fresh random order
        (drawn from ``(seed, epoch)``); the last partial batch is dropped so every step has the same shape."""
        per_epoch = n // self.batch_size
        epoch, i = divmod(step, per_epoch)
        order = np.random.default_rng((self.seed, epoch)).permutation(n)
        return order[i * self.batch_size:(i + 1) * self.batch_size]

    def simple_step(self, loss_fn, *batch) -> dict:
        """zero_grad, loss, backward, step for the single optimizer ``self.optimizer`` (in mixed precision under
        ``--amp``)."""
        self.optimizer.zero_grad()
        with self.autocast():
            loss = loss_fn(*batch)
        self.backward_and_step(loss, self.optimizer)
        return {"loss": loss}

    # ---------------------------------------------------------------------------------------------- --amp
    # A recipe whose train_step runs its forward and loss under self.autocast() and steps with
    # self.backward_and_step supports --amp; the trainer sets ``amp`` ("bf16"/"fp16") and, for fp16, ``scaler``.
    supports_amp = True
    accepts_data = False  # whether ``lucid train MODEL --data ROOT`` can train it on dataset files
    amp: str | None = None
    scaler = None

    def autocast(self):
        """The forward-and-loss region: ``lucid.autocast`` on the device in use under ``--amp``, else nothing."""
        if self.amp is None:
            return contextlib.nullcontext()
        dtype = lucid.bfloat16 if self.amp == "bf16" else lucid.float16
        return lucid.autocast(lucid.get_default_device().type, dtype=dtype)

    def backward_and_step(self, loss, optimizer, clip: float | None = None) -> None:
        """``loss.backward()``, optional gradient-norm clipping to ``clip``, ``optimizer.step()``; with a
        GradScaler (fp16) the loss is scaled, the gradients unscaled before clipping, and a step with inf/NaN
        gradients skipped."""
        params = [p for g in optimizer.param_groups for p in g["params"]]
        if self.scaler is None:
            loss.backward()
            if clip is not None:
                lucid.nn.utils.clip_grad_norm_(params, clip)
            optimizer.step()
            return
        self.scaler.scale(loss).backward()
        if clip is not None:
            self.scaler.unscale_(optimizer)
            lucid.nn.utils.clip_grad_norm_(params, clip)
        self.scaler.step(optimizer)
        self.scaler.update()


def split(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random (train, test) split of range(n) with ``fraction`` in train, from ``seed``."""
    order = np.random.default_rng(seed).permutation(n)
    cut = int(round(n * fraction))
    return order[:cut], order[cut:]


def accuracy(model, x, y, batch_size: int = 500) -> tuple[float, np.ndarray]:
    """(accuracy, predicted labels) of a classifier on (x, y), in eval mode without grad."""
    predicted = []
    with lucid.no_grad():
        for i in range(0, len(y), batch_size):
            predicted.append(model(x[i:i + batch_size]).argmax(1).numpy())
    predicted = np.concatenate(predicted)
    return float((predicted == y.numpy()).mean()), predicted
