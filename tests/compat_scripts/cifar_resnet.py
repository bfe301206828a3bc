"""CIFAR-10 training in the usual PyTorch form, shrunk: torchvision's datasets.CIFAR10 read from the python-pickle
batches under ``--data`` (cifar-10-batches-py/, as cifar-10-python.tar.gz unpacks; the tests write small fixture
files there), random-crop and flip augmentation, resnet18(num_classes=10), SGD with momentum and cosine annealing,
then the loss and accuracy on the test batch."""
import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as transforms
from torch.utils.data import DataLoader

from _common import options, report, start_from


def main():
    args = options(steps=3, batch_size=8, augment=1, shuffle=1, data="./data")
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    normalize = transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))
    augment = [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip()] if args.augment else []
    transform_train = transforms.Compose([*augment, transforms.ToTensor(), normalize])
    transform_test = transforms.Compose([transforms.ToTensor(), normalize])
    train_set = torchvision.datasets.CIFAR10(root=args.data, train=True, download=False, transform=transform_train)
    test_set = torchvision.datasets.CIFAR10(root=args.data, train=False, download=False, transform=transform_test)
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=bool(args.shuffle))
    test_loader = DataLoader(test_set, batch_size=args.batch_size, shuffle=False)
    model = torchvision.models.resnet18(num_classes=10).to(device)
    start_from(args, model)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)
    losses = []
    model.train()
    for step, (inputs, targets) in enumerate(loader):
        if step == args.steps:
            break
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for inputs, targets in test_loader:
            outputs = model(inputs.to(device))
            test_loss += criterion(outputs, targets.to(device)).item() * len(targets)
            correct += (outputs.argmax(1) == targets.to(device)).sum().item()
    test_loss /= len(test_set)
    print(f"losses {[round(v, 4) for v in losses]}, test loss {test_loss:.4f}, accuracy {correct}/{len(test_set)}")
    report(args, losses=losses, test_loss=test_loss, correct=correct, classes=len(train_set.classes))


if __name__ == "__main__":
    main()
