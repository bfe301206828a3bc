"""Character-level language models on tiny Shakespeare: gpt (nanoGPT) and lstm_lm (pytorch/examples'
word-language-model RNNModel). Each step trains on random windows of the training text (drawn from (seed, step));
the test metric is the cross-entropy (nats per character) and perplexity on fixed windows of the validation text;
the "figure" is samples.txt, generated text."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import lucid
import lucid.nn.functional as F

from ... import models
from .base import Recipe


class CharLM(Recipe):
    data = "tiny Shakespeare (1.1 M characters, 65-character vocabulary, 90/10 split)"
    metric = "test_loss"
    higher_is_better = False
    figure = "samples.txt"
    needs_matplotlib = False
    can_sample = True
    context = 64          # characters per training window
    eval_windows = 256    # validation windows per evaluation
    sample_length = 500

    def load_data(self) -> None:
        self.corpus = lucid.datasets.load_tinyshakespeare()
        self.train_ids = self.corpus.train.numpy()
        val = self.corpus.val.numpy()
        starts = np.random.default_rng((self.seed, 1 << 40)).integers(0, len(val) - self.context - 1,
                                                                      size=self.eval_windows)
        self.val_x, self.val_y = self.windows(val, starts)
        self.steps_per_epoch = len(self.train_ids) // (self.batch_size * self.context)

    def windows(self, ids: np.ndarray, starts: np.ndarray) -> tuple:
        """Inputs and next-character targets, each (len(starts), context) int64 tensors."""
        x = np.stack([ids[s:s + self.context] for s in starts])
        y = np.stack([ids[s + 1:s + 1 + self.context] for s in starts])
        return lucid.tensor(x, dtype=lucid.int64), lucid.tensor(y, dtype=lucid.int64)

    def batch(self, step: int) -> tuple:
        rng = np.random.default_rng((self.seed, step))
        return self.windows(self.train_ids, rng.integers(0, len(self.train_ids) - self.context - 1,
                                                         size=self.batch_size))

    def mean_loss(self, x, y):
        """Mean cross-entropy (nats per character) of the model on windows x -> y, (B, context) each."""
        raise NotImplementedError

    def evaluate(self) -> dict[str, float]:
        total = 0.0
        with lucid.no_grad():
            for i in range(0, self.eval_windows, 64):
                total += self.mean_loss(self.val_x[i:i + 64], self.val_y[i:i + 64]).item() * len(self.val_x[i:i + 64])
        loss = total / self.eval_windows
        return {"test_loss": loss, "test_ppl": math.exp(loss)}

    def generate(self, prompt: str, length: int, temperature: float, top_k: int | None) -> str:
        raise NotImplementedError

    def encode_prompt(self, prompt: str) -> list[int]:
        from .base import UsageError
        if not prompt:  # the model continues from the prompt's last character
            raise UsageError("--prompt is empty: give at least one character to continue from")
        unknown = sorted(set(prompt) - set(self.corpus.stoi))
        if unknown:
            raise UsageError(f"the prompt has characters outside the vocabulary: {unknown}")
        return self.corpus.encode(prompt)

    def draw(self, plt, out: Path) -> None:
        metrics = self.evaluate()
        lucid.manual_seed(self.seed)
        text = self.generate("\n", self.sample_length, 0.8, None)
        (out / self.figure).write_text(
            f"# lucid train {self.name}: {self.sample_length} characters sampled at temperature 0.8 after a newline, "
            f"from the model with validation loss {metrics['test_loss']:.3f} nats/char (perplexity "
            f"{metrics['test_ppl']:.2f}; character frequencies alone score 3.35, uniform guessing 4.17)\n"
            f"# model: {self.config}\n{text}\n")

    def sample(self, out: Path, plt=None, prompt: str = "\n", length: int = 500, temperature: float = 0.8,
               top_k: int | None = None, **options) -> str:
        return self.generate(prompt, length, temperature, top_k)


class GPT(CharLM):
    name = "gpt"
    summary = "nanoGPT decoder-only transformer (2 layers, 4 heads, 64 wide), character-level Shakespeare"
    target = "validation loss <= 2.3 nats/char"
    steps = 500
    batch_size = 32
    lr = 3e-3
    eval_every = 100
    warmup = 50

    def default_config(self) -> dict:
        return {"block_size": self.context, "vocab_size": 65, "n_layer": 2, "n_head": 4, "n_embd": 64,
                "dropout": 0.0, "bias": False}

    def build(self) -> dict:
        return {"model": models.gpt(**self.config)}

    def make_optimizers(self, modules: dict, lr: float) -> dict:
        return {"optimizer": modules["model"].configure_optimizers(0.1, lr, (0.9, 0.99))}

    def make_schedulers(self, optimizers: dict) -> dict:
        warmup = self.warmup
        return {"scheduler": lucid.optim.lr_scheduler.LambdaLR(optimizers["optimizer"],
                                                               lambda step: min(1.0, (step + 1) / warmup))}

    def mean_loss(self, x, y):
        return self.model(x, y)[1]

    def train_step(self, x, y) -> dict:
        return self.simple_step(self.mean_loss, x, y)

    def generate(self, prompt: str, length: int, temperature: float, top_k: int | None) -> str:
        idx = lucid.tensor([self.encode_prompt(prompt)], dtype=lucid.int64)
        out = self.model.generate(idx, length, temperature=temperature, top_k=top_k)
        return self.corpus.decode(out[0].tolist())


class LSTMLM(CharLM):
    name = "lstm_lm"
    summary = "pytorch/examples word-language-model RNNModel (2-layer LSTM 128), character-level Shakespeare"
    target = "validation loss <= 2.3 nats/char"
    steps = 500
    batch_size = 32
    lr = 3e-3
    eval_every = 100
    clip = 1.0

    def default_config(self) -> dict:
        return {"ntoken": 65, "ninp": 64, "nhid": 128, "nlayers": 2, "dropout": 0.1, "tie_weights": False,
                "rnn_type": "LSTM"}

    def build(self) -> dict:
        return {"model": models.lstm_lm(**self.config)}

    def mean_loss(self, x, y):
        # RNNModel is time-first: (context, batch) in, log-probabilities (context * batch, ntoken) out; every
        # window starts from a zero state (windows are random, so there is no state to carry between steps)
        log_probs, _ = self.model(x.t(), self.model.init_hidden(x.shape[0]))
        return F.nll_loss(log_probs, y.t().reshape(-1))

    def train_step(self, x, y) -> dict:
        self.optimizer.zero_grad()
        with self.autocast():
            loss = self.mean_loss(x, y)
        self.backward_and_step(loss, self.optimizer, clip=self.clip)
        return {"loss": loss}

    def generate(self, prompt: str, length: int, temperature: float, top_k: int | None) -> str:
        ids = self.encode_prompt(prompt)
        hidden = self.model.init_hidden(1)
        rng = np.random.default_rng(int(lucid.randint(0, 1 << 30, (1,)).item()))  # seeded by lucid.manual_seed
        out = list(ids)
        with lucid.no_grad():
            log_probs, hidden = self.model(lucid.tensor([[i] for i in ids], dtype=lucid.int64), hidden)
            for _ in range(length):
                logits = log_probs[-1].numpy().astype(np.float64) / temperature
                if top_k is not None:
                    logits[logits < np.sort(logits)[-min(top_k, len(logits))]] = -np.inf
                p = np.exp(logits - logits.max())
                nxt = int(rng.choice(len(p), p=p / p.sum()))
                out.append(nxt)
                log_probs, hidden = self.model(lucid.tensor([[nxt]], dtype=lucid.int64), hidden)
        return self.corpus.decode(out)


RECIPES = [GPT, LSTMLM]
