"""Small programs, the kind written in a notebook: their steps are a few dozen small ops, so per-op Python cost, not
kernels, decides their speed (issue 21). Two shapes:

- DDPM on 2-D points: the noise-prediction MLP (3 hidden layers of 64, GELU) fed the noised point and a sinusoidal
  embedding of the timestep; one step noises a batch of 32 points (``x_t = sqrt(abar_t) x_0 + sqrt(1 - abar_t)
  noise``), predicts the noise, MSE, backward, Adam. The timesteps and the noise are drawn once (the batch is fixed,
  as in every workload here) so the implementations' losses can be compared; a real loop draws them per step (two
  more ops).
- GCN on a Cora-sized graph: 2,708 nodes, 1,433 sparse binary features (row-normalised), two graph convolutions
  1,433 -> 16 -> 7 (``adj @ (x @ W) + b``, as Kipf's pygcn), cross-entropy on the first 140 nodes (Cora's training
  split), Adam. The normalised adjacency ``D^-1/2 (A + I) D^-1/2`` of a random graph with Cora's 5,278 undirected
  edges, as a dense 2,708 x 2,708 matrix (``gcn``) and as a sparse COO tensor of its ~13k nonzeros
  (``gcn_sparse``, ``torch.sparse.mm`` as in pygcn; the MLX twin gathers and scatter-adds). pygcn's dropout is left
  out (each framework draws its own random mask, so the losses could not be compared).

PyTorch-API models take the framework's root module (``lucid`` or ``torch``); the mlx.nn twins take the same
weights through the converters.
"""
from __future__ import annotations

import math
from functools import cache

import mlx.core as mx
import mlx.nn as mnn
import numpy as np

from .models import mlp, mlx_mlp

# ---------------------------------------------------------------------------------------------------- DDPM
DDPM_STEPS = 1000      # diffusion timesteps, linear beta schedule 1e-4 .. 0.02
DDPM_EMBED = 32        # sinusoidal embedding of t: 16 sines, 16 cosines
DDPM_SIZES = [2 + DDPM_EMBED, 64, 64, 64, 2]
DDPM_BATCH = 32


def _frequencies() -> np.ndarray:
    half = DDPM_EMBED // 2
    return np.exp(-math.log(10000.0) * np.arange(half, dtype=np.float32) / half).reshape(1, half)


def ddpm(root):
    """The noise-prediction network: ``model(x_t, t)`` with ``x_t`` (N, 2) and ``t`` (N, 1) float timesteps."""
    nn = root.nn

    class NoisePredictor(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = mlp(root, DDPM_SIZES, "GELU")
            self.freqs = root.from_numpy(_frequencies())  # a constant, not a parameter

        def forward(self, x_t, t):
            angles = t * self.freqs
            return self.net(root.cat([x_t, root.sin(angles), root.cos(angles)], dim=1))

    return NoisePredictor()


def ddpm_data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """x: (32, 5) = clean point (a mixture of two Gaussians), sqrt(abar_t), sqrt(1 - abar_t), t; y: the noise."""
    x0 = rng.standard_normal((DDPM_BATCH, 2)) * 0.3 + rng.choice([-1.0, 1.0], (DDPM_BATCH, 1))
    t = rng.integers(0, DDPM_STEPS, DDPM_BATCH)
    abar = np.cumprod(1.0 - np.linspace(1e-4, 0.02, DDPM_STEPS))[t]
    x = np.column_stack([x0, np.sqrt(abar), np.sqrt(1.0 - abar), t]).astype(np.float32)
    return x, rng.standard_normal((DDPM_BATCH, 2)).astype(np.float32)


def ddpm_loss(F, model, x, noise):
    x_t = x[:, :2] * x[:, 2:3] + noise * x[:, 3:4]
    return F.mse_loss(model(x_t, x[:, 4:5]), noise)


class MLXDDPM(mnn.Module):
    def __init__(self):
        super().__init__()
        self.net = mlx_mlp(DDPM_SIZES, "GELU")

    def __call__(self, x_t, t):
        angles = t * _mlx_frequencies()
        return self.net(mx.concatenate([x_t, mx.sin(angles), mx.cos(angles)], axis=1))


@cache
def _mlx_frequencies() -> mx.array:  # outside the module: an mx.array attribute would be a parameter
    return mx.array(_frequencies())


def mlx_ddpm_loss(model, x, noise):
    x_t = x[:, :2] * x[:, 2:3] + noise * x[:, 3:4]
    return mnn.losses.mse_loss(model(x_t, x[:, 4:5]), noise)


def ddpm_weights(sd: dict[str, np.ndarray]) -> list:
    return [(k.replace("net.", "net.layers.", 1), mx.array(v)) for k, v in sd.items()]


# ---------------------------------------------------------------------------------------------------- GCN
GCN = dict(nodes=2708, features=1433, hidden=16, classes=7, edges=5278, train=140)


@cache
def cora_adjacency() -> np.ndarray:
    """``D^-1/2 (A + I) D^-1/2`` of a fixed random undirected graph with Cora's node and edge counts, dense float32."""
    rng = np.random.default_rng(1)
    n = GCN["nodes"]
    a = np.zeros((n, n), np.float32)
    src, dst = rng.integers(0, n, GCN["edges"]), rng.integers(0, n, GCN["edges"])
    a[src, dst] = a[dst, src] = 1.0
    np.fill_diagonal(a, 1.0)
    d = 1.0 / np.sqrt(a.sum(1))
    return (a * d[:, None] * d[None, :]).astype(np.float32)


def gcn_data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n = GCN["nodes"]
    x = (rng.random((n, GCN["features"])) < 0.0127).astype(np.float32)  # Cora's density: ~18 words per paper
    x[np.arange(n), rng.integers(0, GCN["features"], n)] = 1.0           # no empty row
    return x / x.sum(1, keepdims=True), rng.integers(0, GCN["classes"], n)


def gcn(root, sparse: bool = False):
    """pygcn's model without dropout: ``model(features)`` -> (nodes, classes) logits. ``sparse``: the adjacency is a
    sparse COO tensor (``adj @ h`` is then ``torch.sparse.mm``, as in pygcn), else dense."""
    nn = root.nn

    class GraphConvolution(nn.Module):
        def __init__(self, fan_in, fan_out):
            super().__init__()
            bound = 1.0 / math.sqrt(fan_out)  # pygcn's init
            self.weight = nn.Parameter(root.rand(fan_in, fan_out) * (2 * bound) - bound)
            self.bias = nn.Parameter(root.rand(fan_out) * (2 * bound) - bound)

        def forward(self, x, adj):
            return adj @ (x @ self.weight) + self.bias

    class GCNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.gc1 = GraphConvolution(GCN["features"], GCN["hidden"])
            self.gc2 = GraphConvolution(GCN["hidden"], GCN["classes"])
            adj = root.from_numpy(cora_adjacency())
            self.adj = adj.to_sparse() if sparse else adj  # a constant, not a parameter or buffer

        def forward(self, x):
            return self.gc2(root.relu(self.gc1(x, self.adj)), self.adj)

    return GCNModel()


def gcn_loss(F, model, x, y):
    return F.cross_entropy(model(x)[:GCN["train"]], y[:GCN["train"]])


def gcn_sparse(root):
    return gcn(root, sparse=True)


class MLXGraphConvolution(mnn.Module):
    def __init__(self, fan_in, fan_out):
        super().__init__()
        self.weight = mx.zeros((fan_in, fan_out))
        self.bias = mx.zeros((fan_out,))

    def __call__(self, x, adj):
        return adj(x @ self.weight) + self.bias


class MLXGCN(mnn.Module):
    """``sparse``: MLX has no sparse arrays; the product with the adjacency's nonzeros is a gather and a scatter-add,
    as lucid's sparse.mm computes it."""

    def __init__(self, sparse: bool = False):
        super().__init__()
        self.sparse = sparse
        self.gc1 = MLXGraphConvolution(GCN["features"], GCN["hidden"])
        self.gc2 = MLXGraphConvolution(GCN["hidden"], GCN["classes"])

    def __call__(self, x):
        adj = _mlx_sparse_product if self.sparse else _mlx_adjacency().__matmul__
        return self.gc2(mnn.relu(self.gc1(x, adj)), adj)


@cache
def _mlx_adjacency() -> mx.array:
    return mx.array(cora_adjacency())


@cache
def _mlx_coo() -> tuple[mx.array, mx.array, mx.array]:
    a = cora_adjacency()
    rows, cols = np.nonzero(a)
    return mx.array(rows), mx.array(cols), mx.array(a[rows, cols])


def _mlx_sparse_product(h: mx.array) -> mx.array:
    rows, cols, vals = _mlx_coo()
    return mx.zeros((GCN["nodes"], h.shape[1]), h.dtype).at[rows].add(vals[:, None] * h[cols])


def mlx_gcn_loss(model, x, y):
    return mnn.losses.cross_entropy(model(x)[:GCN["train"]], y[:GCN["train"]], reduction="mean")


def gcn_weights(sd: dict[str, np.ndarray]) -> list:
    return [(k, mx.array(v)) for k, v in sd.items()]
