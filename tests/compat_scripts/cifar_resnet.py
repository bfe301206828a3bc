"""CIFAR-10 training in the usual PyTorch form, shrunk: torchvision's resnet18(num_classes=10), random-crop and
flip augmentation, SGD with momentum and cosine annealing, on random 32x32 images in a TensorDataset."""
import numpy as np
import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as transforms
from torch.utils.data import DataLoader, Dataset

from _common import options, report, start_from


class Augmented(Dataset):
    """Applies a transform to each image of an (images, labels) pair of tensors, as torchvision's CIFAR10 does."""

    def __init__(self, images, labels, transform=None):
        self.images, self.labels, self.transform = images, labels, transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        image = self.images[i]
        return (self.transform(image) if self.transform else image), self.labels[i]


def main():
    args = options(steps=3, batch_size=8, augment=1, shuffle=1)
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    rng = np.random.default_rng(0)
    images = torch.tensor(rng.random((args.batch_size * args.steps, 3, 32, 32), dtype=np.float32))
    labels = torch.tensor(rng.integers(0, 10, args.batch_size * args.steps))
    normalize = transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))
    augment = [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip()] if args.augment else []
    train_set = Augmented(images, labels, transforms.Compose([*augment, normalize]))
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=bool(args.shuffle))
    model = torchvision.models.resnet18(num_classes=10).to(device)
    start_from(args, model)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)
    losses = []
    model.train()
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        correct = (model(normalize(images)).argmax(1) == labels).sum().item()
    print(f"losses {[round(v, 4) for v in losses]}, train accuracy {correct}/{len(labels)}")
    report(args, losses=losses)


if __name__ == "__main__":
    main()
