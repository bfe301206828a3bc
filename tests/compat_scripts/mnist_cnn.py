"""pytorch/examples' MNIST, shrunk: a CNN trained with Adadelta and StepLR, on random 28x28 images."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

from _common import options, report, start_from


class Net(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(2 * dropout)
        self.fc1 = nn.Linear(2304, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def main():
    args = options(steps=3, epochs=2, dropout=0.25)
    use_cuda = torch.cuda.is_available()
    use_mps = torch.backends.mps.is_available()
    torch.manual_seed(1)
    device = torch.device("cuda" if use_cuda else "mps" if use_mps else "cpu")
    torch.backends.cudnn.benchmark = True
    rng = np.random.default_rng(0)
    images = rng.random((16 * args.steps, 1, 28, 28), dtype=np.float32)
    labels = rng.integers(0, 10, 16 * args.steps)
    dataset = TensorDataset(torch.tensor((images - 0.1307) / 0.3081), torch.tensor(labels))
    loader = DataLoader(dataset, batch_size=16, shuffle=False, **({"num_workers": 1, "pin_memory": True}
                                                                   if use_cuda else {}))
    model = Net(args.dropout).to(device)
    start_from(args, model)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    losses = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        correct = 0
        with torch.no_grad():
            for data, target in loader:
                pred = model(data.to(device)).argmax(dim=1, keepdim=True)
                correct += pred.eq(target.to(device).view_as(pred)).sum().item()
        print(f"epoch {epoch}: loss {losses[-1]:.4f}, accuracy {correct}/{len(loader.dataset)}, "
              f"lr {scheduler.get_last_lr()[0]:.3f}")
        scheduler.step()
    report(args, losses=losses, lr=optimizer.param_groups[0]["lr"])


if __name__ == "__main__":
    main()
