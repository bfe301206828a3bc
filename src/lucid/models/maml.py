"""MAML on sine-wave regression (Finn, Abbeel & Levine 2017, section 5.1): the showcase of a tape with
higher-order derivatives.

Each task is a sine wave ``y = A sin(x - phase)`` with amplitude ``A`` in [0.1, 5] and phase in [0, pi], observed
at ``x`` in [-5, 5]. The model is the paper's 1-40-40-1 ReLU network. Adaptation to a task is a few SGD steps on
its K support points; the meta-objective is the loss on fresh query points of the same task *after* adaptation,
differentiated with respect to the initial parameters - through the inner SGD steps, so the inner gradients are
taken with ``lucid.autograd.grad(..., create_graph=True)`` and the meta-gradient contains second derivatives
(Hessian-vector products of the inner loss). ``first_order=True`` drops them (FOMAML), for comparison.

All tasks of a meta-batch adapt at once: the parameters are expanded to one copy per task, shape ``(T, ...)``,
and the forward pass uses batched matmuls, so one ``grad`` call gives every task its own inner gradient (the
tasks' losses are independent, so the gradient of their sum with respect to the copies is each task's own).

    model = SineMLP()
    tasks = sample_tasks(25, k_shot=10, seed=0)
    loss = meta_loss(model, tasks, inner_steps=1, inner_lr=0.01)   # post-adaptation query loss
    loss.backward()                                                # second-order meta-gradient in p.grad
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid import Tensor

AMPLITUDE = (0.1, 5.0)
PHASE = (0.0, math.pi)
X_RANGE = (-5.0, 5.0)


class SineMLP(nn.Module):
    """The paper's regressor: ``net.0``, ``net.2``, ``net.4`` are Linear layers ``1 -> hidden -> hidden -> 1``."""

    def __init__(self, hidden: int = 40, dtype=None):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden, dtype=dtype), nn.ReLU(), nn.Linear(hidden, hidden, dtype=dtype),
                                 nn.ReLU(), nn.Linear(hidden, 1, dtype=dtype))

    def forward(self, x: Tensor) -> Tensor:
        """x: (..., 1) -> (..., 1)."""
        return self.net(x)


def functional_forward(x: Tensor, params: list[Tensor]) -> Tensor:
    """The network with explicit parameters ``[w0, b0, w1, b1, w2, b2]`` (in ``SineMLP.parameters()`` order).

    Unbatched parameters (``w`` of shape (out, in)) take ``x`` of shape (N, 1); per-task parameters (``w`` of
    shape (T, out, in), ``b`` of shape (T, out)) take ``x`` of shape (T, N, 1)."""
    h = x
    n_layers = len(params) // 2
    for i in range(n_layers):
        w, b = params[2 * i], params[2 * i + 1]
        if w.dim() == 2:
            h = F.linear(h, w, b)
        else:
            h = lucid.matmul(h, w.transpose(-1, -2)) + b.unsqueeze(-2)
        if i < n_layers - 1:
            h = F.relu(h)
    return h


@dataclass
class SineTasks:
    """A meta-batch of T sine tasks: support (K points each) and query (Q points each) sets, all (T, n, 1)."""
    x_support: Tensor
    y_support: Tensor
    x_query: Tensor
    y_query: Tensor
    amplitude: np.ndarray  # (T,)
    phase: np.ndarray      # (T,)


def sine(x, amplitude, phase):
    """The task function; works on numpy arrays and lucid tensors alike."""
    return amplitude * (lucid.sin(x - phase) if isinstance(x, Tensor) else np.sin(x - phase))


def sample_tasks(num_tasks: int, k_shot: int = 10, k_query: int = 10, seed: int | tuple = 0,
                 dtype=lucid.float32) -> SineTasks:
    """``num_tasks`` random sine tasks, generated from ``seed`` (an int or a tuple of ints such as (seed, step))."""
    rng = np.random.default_rng(seed)
    amplitude = rng.uniform(*AMPLITUDE, size=num_tasks)
    phase = rng.uniform(*PHASE, size=num_tasks)
    xs = rng.uniform(*X_RANGE, size=(num_tasks, k_shot + k_query, 1))
    ys = amplitude[:, None, None] * np.sin(xs - phase[:, None, None])
    np_dtype = np.float64 if dtype == lucid.float64 else np.float32
    xs, ys = lucid.tensor(xs.astype(np_dtype), dtype=dtype), lucid.tensor(ys.astype(np_dtype), dtype=dtype)
    return SineTasks(xs[:, :k_shot], ys[:, :k_shot], xs[:, k_shot:], ys[:, k_shot:], amplitude, phase)


def per_task_params(params: list[Tensor], num_tasks: int) -> list[Tensor]:
    """One copy of every parameter per task, (T, ...): still differentiable with respect to ``params``."""
    return [p.unsqueeze(0).expand(num_tasks, *p.shape) for p in params]


def adapt(params: list[Tensor], x: Tensor, y: Tensor, inner_steps: int = 1, inner_lr: float = 0.01,
          first_order: bool = False) -> list[Tensor]:
    """``inner_steps`` SGD steps on the MSE of each task's support set, from per-task parameters ``params``.

    With ``first_order=False`` the inner gradients are part of the graph (``create_graph=True``), so a loss
    computed with the returned parameters differentiates through the adaptation, second derivatives included."""
    for _ in range(inner_steps):
        # sum over tasks of each task's mean loss: its gradient w.r.t. task t's copy is task t's own gradient
        loss = ((functional_forward(x, params) - y) ** 2).mean(dim=(1, 2)).sum()
        grads = lucid.autograd.grad(loss, params, create_graph=not first_order)
        params = [p - inner_lr * g for p, g in zip(params, grads)]
    return params


def task_losses(params: list[Tensor], x: Tensor, y: Tensor) -> Tensor:
    """Each task's MSE, shape (T,)."""
    return ((functional_forward(x, params) - y) ** 2).mean(dim=(1, 2))


def meta_loss(model: nn.Module, tasks: SineTasks, inner_steps: int = 1, inner_lr: float = 0.01,
              first_order: bool = False) -> Tensor:
    """MAML's objective: the mean over tasks of the query loss after adapting ``model``'s parameters on the
    support set. ``backward()`` on it gives the meta-gradient in the parameters' ``.grad``."""
    params = per_task_params(list(model.parameters()), tasks.x_support.shape[0])
    adapted = adapt(params, tasks.x_support, tasks.y_support, inner_steps, inner_lr, first_order)
    return task_losses(adapted, tasks.x_query, tasks.y_query).mean()


def evaluate(model: nn.Module, tasks: SineTasks, inner_steps: int = 10, inner_lr: float = 0.01) -> list[float]:
    """Mean query MSE over ``tasks`` after 0, 1, ..., ``inner_steps`` adaptation steps (no meta-gradient)."""
    params = per_task_params([p.detach().requires_grad_() for p in model.parameters()], tasks.x_support.shape[0])
    curve = []
    for step in range(inner_steps + 1):
        with lucid.no_grad():
            curve.append(task_losses(params, tasks.x_query, tasks.y_query).mean().item())
        if step < inner_steps:
            params = [p.detach().requires_grad_() for p in adapt(params, tasks.x_support, tasks.y_support, 1,
                                                                  inner_lr, first_order=True)]
    return curve


def sine_mlp(hidden: int = 40) -> SineMLP:
    """The 1-``hidden``-``hidden``-1 sine regressor MAML meta-trains."""
    return SineMLP(hidden)
