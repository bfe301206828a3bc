"""Training-step workloads: the same model, initial weights, batch and optimizer in lucid (eager and
``lucid.compile``), MLX (eager and ``mx.compile``) and, when installed, PyTorch.

Every implementation does one full step per call and ends it with the same synchronisation: the parameters and the
optimizer state are evaluated (lucid's ``optimizer.step()`` does this itself, once per step; MLX does
``mx.eval(model.parameters(), optimizer.state)``), then the loss is read with ``.item()``. The batch is fixed, so the
loss falls from step to step and the first steps' losses show whether the implementations agree.
"""
from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from functools import partial
from typing import Callable

import mlx.core as mx
import mlx.nn as mnn
import mlx.optimizers as mopt
import numpy as np

import lucid
from lucid import _checks

from . import env, models, small, zoo
from .harness import UNCHECKED, Settings, run_implementations


@dataclass
class Spec:
    key: str
    title: str
    model: Callable            # root module (lucid or torch) -> PyTorch-API model
    mlx_model: Callable[[], mnn.Module]
    mlx_weights: Callable[[dict], list]
    data: Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]]
    optimizer: str             # "SGD", "Adam" or "AdamW"
    lr: float
    target_eager: float | None  # the target for lucid eager / MLX eager
    nchw: bool = False         # input is an image batch: MLX gets it as NHWC
    loss: Callable | None = None      # (F, model, x, y) -> loss, where the model is not a classifier of x
    mlx_loss: Callable | None = None  # (model, x, y) -> loss for the mlx.nn twin; cross-entropy when None
    target_torch: float | None = None  # issue 21's target for lucid eager / PyTorch eager (compiled: ≤ 1.0×)


def _classes(shape, classes: int):
    return lambda rng: (rng.standard_normal(shape, dtype=np.float32), rng.integers(0, classes, shape[0]))


def _tokens(batch: int, seq: int, vocab: int):
    def data(rng):
        ids = rng.integers(0, vocab, (batch, seq + 1))
        return ids[:, :-1], ids[:, 1:]  # next-token prediction
    return data


LM = dict(vocab=256, d=128, heads=4, layers=2, seq=64)
SPECS = {
    "mlp": Spec("mlp", "MLP 784-512-512-10, batch 128, SGD", partial(models.mlp, sizes=[784, 512, 512, 10]),
                partial(models.mlx_mlp, [784, 512, 512, 10]), models.mlp_weights, _classes((128, 784), 10),
                "SGD", 0.01, 1.05),
    "tiny_mlp": Spec("tiny_mlp", "MLP 32-32-32-10, batch 16, SGD (overhead-bound)",
                     partial(models.mlp, sizes=[32, 32, 32, 10]), partial(models.mlx_mlp, [32, 32, 32, 10]),
                     models.mlp_weights, _classes((16, 32), 10), "SGD", 0.01, 1.10),
    "cnn": Spec("cnn", "LeNet CNN 28x28, batch 64, Adam", models.lenet, models.mlx_lenet, models.lenet_weights,
                _classes((64, 1, 28, 28), 10), "Adam", 1e-3, 1.10, nchw=True),
    "transformer": Spec("transformer", "Transformer LM 2 layers d=128 4 heads, seq 64, batch 16, vocab 256, AdamW",
                        partial(models.tiny_lm, **LM), partial(models.MLXTinyLM, **LM), models.lm_weights,
                        _tokens(16, LM["seq"], LM["vocab"]), "AdamW", 1e-3, 1.10),
    # the zoo (bench/zoo.py): lucid's own model, the same source run by PyTorch, an mlx.nn twin
    "gpt": Spec("gpt", "zoo GPT (nanoGPT) 2 layers d=64 4 heads, seq 64, batch 16, vocab 65, AdamW", zoo.gpt,
                partial(zoo.MLXGPT, **zoo.GPT_CONFIG), zoo.gpt_weights, _tokens(16, 64, 65), "AdamW", 1e-3, 1.10,
                loss=zoo.gpt_loss),
    "resnet": Spec("resnet", "zoo ResNet-18 (width 16, CIFAR stem) 32x32, batch 16, SGD", zoo.resnet18,
                   zoo.MLXResNet18, zoo.resnet_weights, _classes((16, 3, 32, 32), 10), "SGD", 0.01, 1.10, nchw=True),
    "dcgan": Spec("dcgan", "zoo DCGAN generator step D(G(z)) 32x32, ngf=ndf=64, batch 16, Adam", zoo.dcgan,
                  partial(zoo.MLXGAN, **zoo.DCGAN_CONFIG), zoo.dcgan_weights,
                  lambda rng: (rng.standard_normal((16, 100, 1, 1), dtype=np.float32), np.ones(16, np.float32)),
                  "Adam", 2e-4, 1.10, nchw=True, loss=zoo.bce_loss,
                  mlx_loss=lambda model, x, y: mnn.losses.binary_cross_entropy(model(x), y, with_logits=False)),
    "lstm_lm": Spec("lstm_lm", "zoo LSTM LM (word_language_model) 2x128, emb 64, seq 64, batch 32, vocab 65, Adam",
                    zoo.lstm_lm, partial(zoo.MLXLSTMLM, **zoo.LSTM_CONFIG), zoo.lstm_weights, _tokens(32, 64, 65),
                    "Adam", 3e-3, 1.10, loss=zoo.lstm_loss),
    # small programs (bench/small.py): per-op cost decides their speed; the targets are against PyTorch
    "ddpm": Spec("ddpm", "DDPM on 2-D points, MLP 3x64 GELU + sinusoidal t, batch 32, Adam", small.ddpm,
                 small.MLXDDPM, small.ddpm_weights, small.ddpm_data, "Adam", 1e-3, None, loss=small.ddpm_loss,
                 mlx_loss=small.mlx_ddpm_loss, target_torch=1.5),
    "gcn": Spec("gcn", "GCN on a Cora-sized graph (2,708 nodes, 1,433-16-7, dense adjacency), Adam", small.gcn,
                small.MLXGCN, small.gcn_weights, small.gcn_data, "Adam", 1e-2, None, loss=small.gcn_loss,
                mlx_loss=small.mlx_gcn_loss, target_torch=1.5),
    "gcn_sparse": Spec("gcn_sparse", "GCN on a Cora-sized graph (2,708 nodes, 1,433-16-7, sparse adjacency), Adam",
                       small.gcn_sparse, partial(small.MLXGCN, sparse=True), small.gcn_weights, small.gcn_data,
                       "Adam", 1e-2, None, loss=small.gcn_loss, mlx_loss=small.mlx_gcn_loss, target_torch=1.5),
}


# ---------------------------------------------------------------------------------------------------- setup
def initial_state(spec: Spec) -> tuple[dict, tuple]:
    """lucid's initial weights (numpy, PyTorch names) and the batch, both from seed 0."""
    lucid.manual_seed(0)
    state = {k: v.numpy() for k, v in spec.model(lucid).state_dict().items()}
    return state, spec.data(np.random.default_rng(0))


def _loss(F, logits, target):
    if logits.ndim > 2:  # (N, S, V) language-model logits
        logits, target = logits.reshape(-1, logits.shape[-1]), target.reshape(-1)
    return F.cross_entropy(logits, target)


def pytorch_style(root, spec: Spec, state: dict, batch: tuple, compiled: bool = False,
                  compiled_model: bool = False) -> Callable[[], float]:
    """The step as a PyTorch user writes it; ``root`` is ``lucid`` or ``torch``. ``compiled``: the whole step under
    ``lucid.compile``; ``compiled_model``: the same eager step around ``lucid.compile(model)`` (one tape node per
    call of the model)."""
    model = env.on_torch_device(root, models.with_state(root, spec.model(root), state))
    if compiled_model:
        model = lucid.compile(model)
    kwargs = {"weight_decay": 0.01} if spec.optimizer == "AdamW" else {}
    optimizer = getattr(root.optim, spec.optimizer)(model.parameters(), lr=spec.lr, **kwargs)
    F = root.nn.functional
    x, y = (env.on_torch_device(root, root.from_numpy(np.ascontiguousarray(a))) for a in batch)

    def step(x, y):
        optimizer.zero_grad()
        loss = spec.loss(F, model, x, y) if spec.loss else _loss(F, model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    if compiled:
        step = lucid.compile(step, state=[model, optimizer])
    return lambda: step(x, y).item()


def mlx_style(spec: Spec, state: dict, batch: tuple, compiled: bool = False) -> Callable[[], float]:
    """The step as an MLX user writes it: ``nn.value_and_grad`` and ``mlx.optimizers``; compiled with the model and
    optimizer state as ``inputs``/``outputs``, as the MLX documentation shows."""
    model = spec.mlx_model()
    model.load_weights(spec.mlx_weights(state))
    if spec.optimizer == "SGD":
        optimizer = mopt.SGD(learning_rate=spec.lr)
    elif spec.optimizer == "Adam":
        optimizer = mopt.Adam(learning_rate=spec.lr, bias_correction=True)  # PyTorch's Adam corrects the bias
    else:
        optimizer = mopt.AdamW(learning_rate=spec.lr, weight_decay=0.01, bias_correction=True)
    optimizer.init(model.trainable_parameters())
    x, y = batch
    x = mx.array(np.ascontiguousarray(x.transpose(0, 2, 3, 1)) if spec.nchw else x)
    y = mx.array(y)

    def loss_fn(model, x, y):
        if spec.mlx_loss:
            return spec.mlx_loss(model, x, y)
        return mnn.losses.cross_entropy(model(x), y, reduction="mean")

    loss_and_grad = mnn.value_and_grad(model, loss_fn)

    def step(x, y):
        loss, grads = loss_and_grad(model, x, y)
        optimizer.update(model, grads)
        return loss

    if compiled:
        step = mx.compile(step, inputs=[model.state, optimizer.state], outputs=[model.state, optimizer.state])

    def call():
        loss = step(x, y)
        mx.eval(model.parameters(), optimizer.state)
        return loss.item()

    return call


def without_index_checks(build: Callable[[], Callable]) -> Callable[[], Callable]:
    """The same implementation with lucid's index bounds checks (lucid._checks) turned off around each call: the
    difference is what the checks cost. (The batch's class targets and token ids are on the host, so they are
    checked at once; the language model's targets are reshaped first, so theirs is the deferred check.)"""
    def built():
        call = build()

        def unchecked():
            _checks.enabled[0] = False
            try:
                return call()
            finally:
                _checks.enabled[0] = True
        return unchecked
    return built


def builders(spec: Spec, state: dict, batch: tuple) -> dict[str, Callable]:
    out = {"lucid": partial(pytorch_style, lucid, spec, state, batch),
           "mlx": partial(mlx_style, spec, state, batch),
           "lucid.compile": partial(pytorch_style, lucid, spec, state, batch, compiled=True),
           "mx.compile": partial(mlx_style, spec, state, batch, compiled=True)}
    if spec.target_torch is not None:  # the small programs: the eager loop around a compiled model too
        out["compiled model"] = partial(pytorch_style, lucid, spec, state, batch, compiled_model=True)
    out[UNCHECKED[0]] = without_index_checks(out["lucid"])
    out[UNCHECKED[1]] = without_index_checks(out["lucid.compile"])
    try:
        import torch
        out["torch"] = partial(pytorch_style, torch, spec, state, batch)
    except ImportError:
        pass
    return out


def run(key: str, settings: Settings):
    spec = SPECS[key]
    state, batch = initial_state(spec)
    result = run_implementations(key, spec.title, builders(spec, state, batch), settings)
    result.extra["check_s"] = check_work(spec, state, batch)
    return result


def check_work(spec: Spec, state: dict, batch: tuple, steps: int = 30) -> float:
    """Seconds per lucid eager step spent inside the index checks (the median over ``steps`` steps), timed from
    inside: every ``checked_index`` call and every ``flush()`` of pending checks alone (at ``backward()``/``step()``; an evaluation that reads a value
    anyway is not counted). A direct measure, steadier than the with/without ratio on a noisy machine."""
    from lucid.ops import index, loss, nn_basic
    spent = [0.0]

    def timed(f, only_bare=False):
        def g(*args, **kwargs):
            if only_bare and args:
                return f(*args, **kwargs)
            t0 = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - t0
        return g

    patched = [(m, "checked_index", False) for m in (index, loss, nn_basic)] + [(_checks, "flush", True)]
    originals = [getattr(m, name) for m, name, _ in patched]
    call = pytorch_style(lucid, spec, state, batch)
    for _ in range(3):
        call()
    per_step = []
    try:
        for (m, name, bare), f in zip(patched, originals):
            setattr(m, name, timed(f, bare))
        for _ in range(steps):
            spent[0] = 0.0
            call()
            per_step.append(spent[0])
    finally:
        for (m, name, _), f in zip(patched, originals):
            setattr(m, name, f)
    return float(np.median(per_step))  # the median step: a preemption on a busy machine is not the checks' cost


# ---------------------------------------------------------------------------------------------------- memory
def peak_memory(key: str, implementations=("lucid", "mlx", "lucid.compile", "mx.compile")) -> dict:
    """Per implementation, built alone and warmed up: bytes above the process's baseline at the peak of one step
    (weights, gradients, optimizer state, batch and temporaries), and the step's own rise over what was live
    before it; the largest of 5 steps. Errors are returned as strings."""
    spec = SPECS[key]
    state, batch = initial_state(spec)
    out = {}
    for name in implementations:
        try:
            gc.collect()
            mx.clear_cache()
            base = mx.get_active_memory()
            call = builders(spec, state, batch)[name]()
            for _ in range(3):
                call()
            worst = {"peak": 0, "rise": 0}
            for _ in range(5):  # the peak depends a little on the order MLX frees buffers in: keep the largest
                gc.collect()
                before = mx.get_active_memory()
                mx.reset_peak_memory()
                call()
                peak = mx.get_peak_memory()
                worst = {"peak": max(worst["peak"], peak - base), "rise": max(worst["rise"], peak - before)}
            out[name] = worst
            del call
        except Exception as e:
            out[name] = f"{type(e).__name__}: {e}"
    gc.collect()
    return out


def memory_after_backward(key: str) -> dict:
    """lucid: active memory before a forward and after ``loss.backward()`` (retain_graph=False), the gradients'
    evaluation and ``del`` of the loss and output; the gradients already exist (a first backward made them), so the
    two numbers should be equal: a difference is memory the graph keeps alive."""
    spec = SPECS[key]
    state, batch = initial_state(spec)
    model = models.with_state(lucid, spec.model(lucid), state)
    x, y = (lucid.from_numpy(np.ascontiguousarray(a)) for a in batch)
    params = list(model.parameters())

    def forward_backward():
        out = model(x)
        loss = _loss(lucid.nn.functional, out, y)
        loss.backward()
        mx.eval([p.grad.mlx for p in params])
        return out, loss

    out, loss = forward_backward()
    del out, loss
    gc.collect()
    before = mx.get_active_memory()
    mx.reset_peak_memory()
    out, loss = forward_backward()
    peak = mx.get_peak_memory()
    del out, loss
    after = mx.get_active_memory()
    gc.collect()
    after_gc = mx.get_active_memory()
    return {"before": before, "after": after, "after_gc": after_gc, "peak": peak,
            "grads": sum(p.grad.mlx.nbytes for p in params)}
