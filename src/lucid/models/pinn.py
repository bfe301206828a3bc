"""A physics-informed neural network (Raissi, Perdikaris & Karniadakis 2019) for Poisson's equation on the unit
square (or interval), which has a known exact solution to compare with:

    -laplace(u) = f  on (0, 1)^d,   u = 0 on the boundary,
    f(x) = d pi^2 prod_i sin(pi x_i),   exact solution u(x) = prod_i sin(pi x_i).

The network ``u_theta(x)`` is an MLP with tanh activations (smooth, so its second derivatives are informative).
Its loss is the mean squared PDE residual at random interior collocation points plus a weighted mean squared
boundary value at random boundary points. The Laplacian of the network with respect to its *input* comes from
``lucid.autograd.grad(..., create_graph=True)`` twice, and the training step differentiates that again with
respect to the weights: third-order use of the tape.

    model = PoissonPINN(dim=2)
    interior, boundary = collocation_points(1024, 256, dim=2, seed=(0, step))
    loss = pinn_loss(model, interior, boundary)
    loss.backward()
"""
from __future__ import annotations

import math

import numpy as np

import lucid
import lucid.nn as nn
from lucid import Tensor


class PoissonPINN(nn.Module):
    """``u_theta``: ``net.0``, ``net.2``, ... are Linear layers ``dim -> width -> ... -> 1`` with tanh between."""

    def __init__(self, dim: int = 2, width: int = 32, depth: int = 3, dtype=None):
        super().__init__()
        if dim not in (1, 2, 3):
            raise ValueError(f"PoissonPINN: dim must be 1, 2 or 3, got {dim}")
        self.dim = dim
        layers: list[nn.Module] = []
        sizes = [dim] + [width] * depth
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(a, b, dtype=dtype), nn.Tanh()]
        layers.append(nn.Linear(width, 1, dtype=dtype))
        self.net = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        """x: (N, dim) points -> (N, 1) values of u."""
        return self.net(x)


def exact_solution(x):
    """u(x) = prod_i sin(pi x_i) for numpy arrays or tensors of shape (N, dim); returns (N, 1)."""
    if isinstance(x, Tensor):
        return lucid.sin(math.pi * x).prod(dim=1, keepdim=True)
    return np.sin(np.pi * x).prod(axis=1, keepdims=True)


def source(x: Tensor) -> Tensor:
    """f(x) = d pi^2 prod_i sin(pi x_i), shape (N, 1)."""
    return x.shape[1] * math.pi ** 2 * exact_solution(x)


def laplacian(u: Tensor, x: Tensor) -> Tensor:
    """sum_i d^2 u / d x_i^2 for u (N, 1) computed from x (N, dim) point by point; differentiable again."""
    du = lucid.autograd.grad(u.sum(), x, create_graph=True)  # (N, dim): row n is grad u(x_n)
    total = 0
    for i in range(x.shape[1]):
        d2u = lucid.autograd.grad(du[:, i].sum(), x, create_graph=True)  # (N, dim); column i is d2u/dx_i^2
        total = total + d2u[:, i:i + 1]
    return total


def residual(model: nn.Module, x: Tensor) -> Tensor:
    """The PDE residual -laplace(u_theta) - f at the points x (N, dim), shape (N, 1)."""
    x = x.detach().requires_grad_()
    return -laplacian(model(x), x) - source(x)


def collocation_points(n_interior: int, n_boundary: int, dim: int = 2, seed: int | tuple = 0,
                       dtype=lucid.float32) -> tuple[Tensor, Tensor]:
    """Uniform random interior points (n_interior, dim) and boundary points (n_boundary, dim): each boundary point
    has one coordinate set to 0 or 1 (a random face). Generated from ``seed`` (an int or a tuple)."""
    rng = np.random.default_rng(seed)
    interior = rng.uniform(0.0, 1.0, size=(n_interior, dim))
    boundary = rng.uniform(0.0, 1.0, size=(n_boundary, dim))
    face = rng.integers(0, dim, size=n_boundary)
    boundary[np.arange(n_boundary), face] = rng.integers(0, 2, size=n_boundary)
    np_dtype = np.float64 if dtype == lucid.float64 else np.float32
    return (lucid.tensor(interior.astype(np_dtype), dtype=dtype), lucid.tensor(boundary.astype(np_dtype), dtype=dtype))


def pinn_loss(model: nn.Module, interior: Tensor, boundary: Tensor, boundary_weight: float = 10.0) -> Tensor:
    """mean(residual^2) at the interior points + boundary_weight * mean(u^2) at the boundary points."""
    return (residual(model, interior) ** 2).mean() + boundary_weight * (model(boundary) ** 2).mean()


def grid(n: int, dim: int) -> np.ndarray:
    """An evaluation grid of n points per axis on [0, 1]^dim, shape (n^dim, dim) (x varies fastest)."""
    axes = np.meshgrid(*([np.linspace(0.0, 1.0, n)] * dim), indexing="xy")
    return np.stack([a.reshape(-1) for a in axes], axis=1)


def relative_l2_error(model: nn.Module, n: int = 101) -> float:
    """||u_theta - u|| / ||u|| on a grid of n points per axis (101 in 1-D and 2-D; the test metric)."""
    points = grid(n if model.dim < 3 else 21, model.dim)
    dtype = next(model.parameters()).dtype
    with lucid.no_grad():
        pred = model(lucid.tensor(points, dtype=dtype)).numpy().astype(np.float64)
    exact = exact_solution(points)
    return float(np.linalg.norm(pred - exact) / np.linalg.norm(exact))
