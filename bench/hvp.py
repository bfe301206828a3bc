"""Hessian-vector product of a small MLP's loss by double backward.

lucid: ``lucid.autograd.grad(loss, params, create_graph=True)``, then the gradient of ``<grad, v>`` (and the same
function under ``lucid.compile``). MLX: ``mx.grad`` of ``<mx.grad(loss)(params), v>`` (and its ``mx.compile``).
PyTorch: ``torch.autograd.grad`` twice. Same weights, batch and vector everywhere; each call evaluates the HVP and
returns it (a list of arrays).
"""
from __future__ import annotations

from functools import partial

import mlx.core as mx
import mlx.nn as mnn
import numpy as np

import lucid

from . import env, models
from .harness import Settings, run_implementations

SIZES = [32, 64, 64, 10]
BATCH = 64
TITLE = f"HVP, MLP {'-'.join(map(str, SIZES))} tanh, batch {BATCH} (double backward)"


def setup():
    lucid.manual_seed(0)
    state = {k: v.numpy() for k, v in models.mlp(lucid, SIZES, "Tanh").state_dict().items()}
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32)
    y = rng.integers(0, SIZES[-1], BATCH)
    v = {k: rng.standard_normal(a.shape, dtype=np.float32) for k, a in state.items()}
    return state, x, y, v


def pytorch_style(root, state, x, y, v, compiled=False):
    model = env.on_torch_device(root, models.with_state(root, models.mlp(root, SIZES, "Tanh"), state))
    names = list(state)
    params = [dict(model.named_parameters())[k] for k in names]
    x, y = env.on_torch_device(root, root.from_numpy(x)), env.on_torch_device(root, root.from_numpy(y))
    vs = [env.on_torch_device(root, root.from_numpy(v[k])) for k in names]
    F = root.nn.functional

    def hvp(x, y, vs):
        loss = F.cross_entropy(model(x), y)
        grads = root.autograd.grad(loss, params, create_graph=True)
        dot = sum((g * u).sum() for g, u in zip(grads, vs))
        return root.autograd.grad(dot, params)

    if compiled:
        hvp = lucid.compile(hvp, state=[model])
    if root is lucid:
        def call():
            hv = [h.mlx for h in hvp(x, y, vs)]
            mx.eval(hv)
            return hv
    else:
        def call():
            hv = [h.detach() for h in hvp(x, y, vs)]
            env.torch_sync(root)
            return hv
    return call


def mlx_style(state, x, y, v, compiled=False):
    names = list(state)
    params = [mx.array(state[k]) for k in names]  # W1, b1, W2, b2, ... in (out, in) layout
    vs = [mx.array(v[k]) for k in names]
    x, y = mx.array(x), mx.array(y)

    def loss(params):
        h = x
        for i in range(0, len(params), 2):
            if i:
                h = mx.tanh(h)
            h = mx.addmm(params[i + 1], h, params[i].T)
        return mnn.losses.cross_entropy(h, y, reduction="mean")

    def dot_grad(params, vs):
        return sum((g * u).sum() for g, u in zip(mx.grad(loss)(params), vs))

    hvp = mx.grad(dot_grad)
    if compiled:
        hvp = mx.compile(hvp)

    def call():
        hv = hvp(params, vs)
        mx.eval(hv)
        return hv

    return call


def run(settings: Settings):
    state, x, y, v = setup()
    builders = {"lucid": partial(pytorch_style, lucid, state, x, y, v),
                "mlx": partial(mlx_style, state, x, y, v),
                "lucid.compile": partial(pytorch_style, lucid, state, x, y, v, compiled=True),
                "mx.compile": partial(mlx_style, state, x, y, v, compiled=True)}
    try:
        import torch
        builders["torch"] = partial(pytorch_style, torch, state, x, y, v)
    except ImportError:
        pass
    return run_implementations("hvp", TITLE, builders, settings)
