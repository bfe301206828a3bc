"""Karpathy's makemore, shrunk: a character-level MLP language model over a few names (embedding of the last 3
characters, tanh hidden layer, AdamW), its training loss logged to TensorBoard with ``SummaryWriter`` (imported at
the top, as makemore does), the best model saved with ``torch.save(model.state_dict())`` and loaded back."""
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter

from _common import options, report, start_from

NAMES = ["emma", "olivia", "ava", "isabella", "sophia", "charlotte", "mia", "amelia", "harper", "evelyn", "abigail",
         "emily", "elizabeth", "mila", "ella", "avery", "sofia", "camila", "aria", "scarlett"]


class MLP(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd=8, n_hidden=32):
        super().__init__()
        self.block_size, self.vocab_size = block_size, vocab_size
        self.wte = nn.Embedding(vocab_size + 1, n_embd)  # +1: the <BLANK> token before a word starts
        self.mlp = nn.Sequential(nn.Linear(block_size * n_embd, n_hidden), nn.Tanh(), nn.Linear(n_hidden, vocab_size))

    def forward(self, idx, targets=None):
        embs = []
        for _ in range(self.block_size):
            embs.append(self.wte(idx))
            idx = torch.roll(idx, 1, 1)
            idx[:, 0] = self.vocab_size
        logits = self.mlp(torch.cat(embs, -1))
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                                            ignore_index=-1)
        return logits, loss


def dataset(block_size):
    chars = sorted(set("".join(NAMES)))
    stoi = {ch: i + 1 for i, ch in enumerate(chars)}  # 0: the end token
    xs, ys = [], []
    for word in NAMES:
        ix = [stoi[c] for c in word]
        x = torch.zeros(block_size, dtype=torch.long)
        y = torch.zeros(block_size, dtype=torch.long)
        x[1:1 + len(ix)] = torch.tensor(ix[:block_size - 1])
        y[:len(ix)] = torch.tensor(ix[:block_size])
        y[len(ix) + 1:] = -1  # no loss past the end token
        xs.append(x)
        ys.append(y)
    return len(chars) + 1, torch.stack(xs), torch.stack(ys)


def main():
    args = options(steps=6, out_dir="")
    torch.manual_seed(3407)
    work_dir = args.out_dir or tempfile.mkdtemp()
    vocab_size, X, Y = dataset(block_size=10)
    model = MLP(vocab_size, block_size=3)
    start_from(args, model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
    writer = SummaryWriter(log_dir=work_dir)
    losses, best_loss = [], None
    for step in range(args.steps):
        logits, loss = model(X, Y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        writer.add_scalar("Loss/train", loss.item(), step)
        writer.flush()
        if best_loss is None or loss.item() < best_loss:
            torch.save(model.state_dict(), os.path.join(work_dir, "model.pt"))
            best_loss = loss.item()
    writer.add_histogram("logits", logits, args.steps)
    writer.close()
    reloaded = MLP(vocab_size, block_size=3)
    reloaded.load_state_dict(torch.load(os.path.join(work_dir, "model.pt")))
    with torch.no_grad():
        reloaded_loss = reloaded(X, Y)[1].item()
    print(f"makemore: loss {losses[-1]:.4f}, best {best_loss:.4f}, reloaded {reloaded_loss:.4f}")
    report(args, losses=losses, best_loss=best_loss, reloaded_loss=reloaded_loss)


if __name__ == "__main__":
    main()
