"""pytorch/examples' MNIST as people run it: torchvision's datasets.MNIST from a data folder, ToTensor + Normalize,
DataLoaders for train and test, the example's CNN (shrunk), Adadelta and StepLR. ``--data``: the folder holding
MNIST/raw/ (the tests write small fixture files there)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torchvision import datasets, transforms

from _common import options, report, start_from


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(2304, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def main():
    args = options(steps=3, epochs=2, data="../data", batch_size=8)
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    dataset1 = datasets.MNIST(args.data, train=True, download=True, transform=transform)  # files there: no fetch
    dataset2 = datasets.MNIST(args.data, train=False, transform=transform)
    train_loader = torch.utils.data.DataLoader(dataset1, batch_size=args.batch_size)
    test_loader = torch.utils.data.DataLoader(dataset2, batch_size=args.batch_size)
    model = Net().to(device)
    start_from(args, model)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    losses = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            if batch_idx == args.steps:
                break
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        test_loss, correct = 0.0, 0
        with torch.no_grad():
            for data, target in test_loader:
                data, target = data.to(device), target.to(device)
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction="sum").item()
                correct += output.argmax(dim=1, keepdim=True).eq(target.view_as(output.argmax(dim=1, keepdim=True))) \
                    .sum().item()
        test_loss /= len(test_loader.dataset)
        print(f"Test set: Average loss: {test_loss:.4f}, Accuracy: {correct}/{len(test_loader.dataset)}")
        scheduler.step()
    report(args, losses=losses, test_loss=test_loss, correct=correct, classes=len(dataset1.classes))


if __name__ == "__main__":
    main()
