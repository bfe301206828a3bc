"""A physics-informed network for Burgers' equation u_t + u u_x = nu u_xx, with derivatives from
``torch.autograd.grad(...)[0]`` and ``create_graph=True`` (the idiom where a Tensor-returning grad would silently
take the first row)."""
import math

import numpy as np
import torch
import torch.nn as nn

from _common import options, report, start_from


class PINN(nn.Module):
    def __init__(self, width=20, depth=3):
        super().__init__()
        layers, n_in = [], 2
        for _ in range(depth):
            layers += [nn.Linear(n_in, width), nn.Tanh()]
            n_in = width
        layers.append(nn.Linear(n_in, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))


def residual(model, x, t, nu):
    u = model(x, t)
    u_t = torch.autograd.grad(u, t, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    u_x = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    u_xx = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x), create_graph=True)[0]
    return u_t + u * u_x - nu * u_xx


def main():
    args = options(steps=5)
    torch.manual_seed(0)
    nu = 0.01 / math.pi
    rng = np.random.default_rng(0)
    x_f = torch.tensor(rng.uniform(-1, 1, (64, 1)).astype(np.float32), requires_grad=True)
    t_f = torch.tensor(rng.uniform(0, 1, (64, 1)).astype(np.float32), requires_grad=True)
    x_0 = torch.tensor(rng.uniform(-1, 1, (32, 1)).astype(np.float32))
    t_0, u_0 = torch.zeros_like(x_0), -torch.sin(math.pi * x_0)
    model = PINN()
    start_from(args, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for step in range(args.steps):
        optimizer.zero_grad()
        f = residual(model, x_f, t_f, nu)
        loss = torch.mean(f ** 2) + torch.mean((model(x_0, t_0) - u_0) ** 2)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    g = torch.autograd.grad(model(x_f, t_f).sum(), x_f)[0]
    assert g.shape == x_f.shape, g.shape  # a gradient for each point, not the first row
    print(f"PINN: loss {losses[-1]:.5f}")
    report(args, losses=losses)


if __name__ == "__main__":
    main()
