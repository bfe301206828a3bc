"""Train an MLP on the bundled UCI handwritten digits (1797 8x8 images, 10 classes) the PyTorch way, and report
test accuracy.

    python examples/train_digits.py [--epochs 30] [--model mlp|lenet] [--seed 0]

Everything is lucid: ``lucid.datasets.load_digits``, ``TensorDataset``/``DataLoader``, ``nn.Sequential``,
``nn.functional.cross_entropy``, ``optim.Adam`` and a cosine learning-rate schedule.
"""
from __future__ import annotations

import argparse
import time

from tqdm import tqdm

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.utils.data import DataLoader, TensorDataset, random_split


def mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 64), nn.ReLU(),
                         nn.Linear(64, 10))


def lenet() -> nn.Module:
    """A LeNet-style CNN for 8x8 inputs."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),   # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),  # 32 x 2 x 2
        nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def evaluate(model: nn.Module, loader: DataLoader) -> float:
    model.eval()
    correct = total = 0
    with lucid.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    model.train()
    return correct / total


def train(model_name: str = "mlp", epochs: int = 30, seed: int = 0, batch_size: int = 32, lr: float = 3e-3,
          verbose: bool = True) -> float:
    """Train and return the test accuracy."""
    lucid.manual_seed(seed)
    digits = lucid.datasets.load_digits()
    x = digits.images.reshape(-1, 1, 8, 8) / 16.0  # pixel values are 0..16
    dataset = TensorDataset(x, digits.target)
    train_set, test_set = random_split(dataset, [0.8, 0.2], generator=lucid.Generator().manual_seed(seed))
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True,
                              generator=lucid.Generator().manual_seed(seed))
    test_loader = DataLoader(test_set, batch_size=256)

    model = mlp() if model_name == "mlp" else lenet()
    optimizer = lucid.optim.Adam(model.parameters(), lr=lr)
    scheduler = lucid.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    start = time.perf_counter()
    # one bar for the whole run (tqdm redraws it in a terminal and prints it at intervals into a pipe)
    bar = tqdm(total=epochs * len(train_loader), unit="batch", disable=not verbose)
    for epoch in range(1, epochs + 1):
        bar.set_description(f"epoch {epoch}/{epochs}")
        running = 0.0
        for i, (xb, yb) in enumerate(train_loader, 1):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            running += loss.item()
            bar.update(1)
            bar.set_postfix(loss=f"{running / i:.4f}", refresh=False)
        scheduler.step()
        if verbose and (epoch % 5 == 0 or epoch == epochs):
            bar.write(f"epoch {epoch}: test accuracy {evaluate(model, test_loader):.3f}")
    bar.close()
    accuracy = evaluate(model, test_loader)
    if verbose:
        print(f"{model_name}: test accuracy {accuracy:.4f} on {len(test_set)} held-out digits "
              f"({time.perf_counter() - start:.1f}s)")
    return accuracy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["mlp", "lenet"], default="mlp")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train(args.model, args.epochs, args.seed)
