"""Fine-tuning a pretrained torchvision mobilenet_v2 in the usual PyTorch form, shrunk: load the checkpoint's
state_dict, freeze the features, replace the classifier for 5 classes and train it with Adam on random 64x64 images.
(The "pretrained" checkpoint is a fresh model saved by torch.save: no download.)"""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchvision import models

from _common import options, report, start_from


def main():
    args = options(steps=3, batch_size=8, dropout=0.2)
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = os.path.join(tmp, "mobilenet_v2.pth")
        torch.save(models.mobilenet_v2(weights=None).state_dict(), checkpoint)
        model = models.mobilenet_v2(weights=None)
        model.load_state_dict(torch.load(checkpoint, map_location="cpu", weights_only=True))
    for p in model.features.parameters():
        p.requires_grad = False
    model.classifier = nn.Sequential(nn.Dropout(args.dropout), nn.Linear(model.last_channel, 5))
    start_from(args, model)
    rng = np.random.default_rng(0)
    images = torch.tensor(rng.standard_normal((args.batch_size * args.steps, 3, 64, 64), dtype=np.float32))
    labels = torch.tensor(rng.integers(0, 5, args.batch_size * args.steps))
    loader = DataLoader(TensorDataset(images, labels), batch_size=args.batch_size)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    losses = []
    model.train()
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    frozen = sum(not p.requires_grad for p in model.parameters())
    print(f"losses {[round(v, 4) for v in losses]}, {frozen} frozen tensors")
    report(args, losses=losses, frozen=frozen)


if __name__ == "__main__":
    main()
