"""pytorch/examples' VAE, shrunk: reparameterisation, BCE + KL loss, Adam. The noise comes from numpy so a run
under PyTorch and one under lucid draw the same."""
import numpy as np
import torch
from torch import nn, optim
from torch.nn import functional as F

from _common import options, report, start_from


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc21 = nn.Linear(32, 8)
        self.fc22 = nn.Linear(32, 8)
        self.fc3 = nn.Linear(8, 32)
        self.fc4 = nn.Linear(32, 64)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, 64))
        return self.decode(self.reparameterize(mu, logvar, eps)), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def main():
    args = options(steps=5)
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    rng = np.random.default_rng(0)
    model = VAE().to(device)
    start_from(args, model)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    model.train()
    for step in range(args.steps):
        data = torch.tensor(rng.random((32, 1, 8, 8), dtype=np.float32)).to(device)
        eps = torch.tensor(rng.standard_normal((32, 8), dtype=np.float32))
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data, eps)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        optimizer.step()
        losses.append(loss.item() / len(data))
    model.eval()
    with torch.no_grad():
        sample = model.decode(torch.tensor(rng.standard_normal((4, 8), dtype=np.float32)))
    print(f"VAE: loss {losses[-1]:.4f}, sample {tuple(sample.shape)}")
    report(args, losses=losses, sample=sample.sum().item())


if __name__ == "__main__":
    main()
