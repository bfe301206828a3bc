"""The benchmark models, written once for the PyTorch API (lucid and torch share the code) and once for mlx.nn, with
the converters that copy lucid's initial weights into the MLX models.

PyTorch-API builders take the framework's root module (``lucid`` or ``torch``). Converters take lucid's
``state_dict`` as numpy arrays (PyTorch names and layouts) and return ``(name, mx.array)`` pairs for
``mlx.nn.Module.load_weights``: convolution weights go from OIHW to MLX's OHWI, MultiheadAttention's packed
``in_proj`` is split into MLX's query/key/value projections, and the first Linear after a CNN's flatten gets its
input columns permuted from NCHW to NHWC order, so both models compute the same function.
"""
from __future__ import annotations

import mlx.core as mx
import mlx.nn as mnn
import numpy as np


# ---------------------------------------------------------------------------------------------------- PyTorch API
def mlp(root, sizes: list[int], activation: str = "ReLU"):
    """Linear layers of ``sizes`` with an activation between them (Linear modules at even indices)."""
    nn = root.nn
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        if i:
            layers.append(getattr(nn, activation)())
        layers.append(nn.Linear(a, b))
    return nn.Sequential(*layers)


def lenet(root):
    """LeNet-style CNN for (N, 1, 28, 28): conv 6@5x5, pool, conv 16@5x5, pool, fc 120, 84, 10, ReLU."""
    nn = root.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2),      # 6 x 12 x 12
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),     # 16 x 4 x 4
                         nn.Flatten(), nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def tiny_lm(root, vocab: int, d: int, heads: int, layers: int, seq: int):
    """Token + learned position embeddings, pre-norm causal TransformerEncoderLayers (ReLU feed-forward of 4d,
    no dropout), a final LayerNorm and a Linear head: (N, seq) token ids -> (N, seq, vocab) logits."""
    nn = root.nn

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Parameter(root.randn(seq, d) * 0.02)
            self.layers = nn.ModuleList([nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True,
                                                                    norm_first=True) for _ in range(layers)])
            self.norm = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)
            self.causal_mask = nn.Transformer.generate_square_subsequent_mask(seq)

        def forward(self, idx):
            x = self.tok(idx) + self.pos
            for layer in self.layers:
                x = layer(x, src_mask=self.causal_mask, is_causal=True)
            return self.head(self.norm(x))

    return TinyLM()


def with_state(root, model, state: dict[str, np.ndarray]):
    """``model`` with lucid's initial weights (numpy arrays under PyTorch's names) loaded; ``root``: lucid or torch."""
    model.load_state_dict({k: root.from_numpy(v.copy()) for k, v in state.items()})
    return model


# ---------------------------------------------------------------------------------------------------- mlx.nn
def mlx_mlp(sizes: list[int], activation: str = "ReLU") -> mnn.Module:
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        if i:
            layers.append(getattr(mnn, activation)())
        layers.append(mnn.Linear(a, b))
    return mnn.Sequential(*layers)


def _flatten(x: mx.array) -> mx.array:
    return x.reshape(x.shape[0], -1)


def mlx_lenet() -> mnn.Module:
    """The same CNN for NHWC input (N, 28, 28, 1); layer indices as in ``lenet``."""
    return mnn.Sequential(mnn.Conv2d(1, 6, 5), mnn.ReLU(), mnn.MaxPool2d(2),
                          mnn.Conv2d(6, 16, 5), mnn.ReLU(), mnn.MaxPool2d(2),
                          _flatten, mnn.Linear(256, 120), mnn.ReLU(), mnn.Linear(120, 84), mnn.ReLU(),
                          mnn.Linear(84, 10))


class MLXEncoderLayer(mnn.Module):
    """Pre-norm encoder layer with the attribute names of PyTorch's TransformerEncoderLayer."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.self_attn = mnn.MultiHeadAttention(d, heads, bias=True)
        self.linear1 = mnn.Linear(d, 4 * d)
        self.linear2 = mnn.Linear(4 * d, d)
        self.norm1 = mnn.LayerNorm(d)
        self.norm2 = mnn.LayerNorm(d)

    def __call__(self, x: mx.array, mask: mx.array) -> mx.array:
        y = self.norm1(x)
        x = x + self.self_attn(y, y, y, mask)
        return x + self.linear2(mnn.relu(self.linear1(self.norm2(x))))


class MLXTinyLM(mnn.Module):
    def __init__(self, vocab: int, d: int, heads: int, layers: int, seq: int):
        super().__init__()
        self.tok = mnn.Embedding(vocab, d)
        self.pos = mx.zeros((seq, d))
        self.layers = [MLXEncoderLayer(d, heads) for _ in range(layers)]
        self.norm = mnn.LayerNorm(d)
        self.head = mnn.Linear(d, vocab)

    def __call__(self, idx: mx.array) -> mx.array:
        mask = mnn.MultiHeadAttention.create_additive_causal_mask(idx.shape[1])
        x = self.tok(idx) + self.pos
        for layer in self.layers:
            x = layer(x, mask)
        return self.head(self.norm(x))


# ---------------------------------------------------------------------------------------------------- weights
def mlp_weights(sd: dict[str, np.ndarray]) -> list:
    return [(f"layers.{k}", mx.array(v)) for k, v in sd.items()]


def lenet_weights(sd: dict[str, np.ndarray]) -> list:
    out = []
    for k, v in sd.items():
        if v.ndim == 4:  # OIHW -> OHWI
            v = v.transpose(0, 2, 3, 1)
        elif k == "7.weight":  # columns in (C, H, W) order -> (H, W, C), MLX's flatten order
            v = v.reshape(v.shape[0], 16, 4, 4).transpose(0, 2, 3, 1).reshape(v.shape[0], -1)
        out.append((f"layers.{k}", mx.array(np.ascontiguousarray(v))))
    return out


def lm_weights(sd: dict[str, np.ndarray]) -> list:
    out = []
    for k, v in sd.items():
        if ".self_attn.in_proj_" in k:
            prefix, kind = k.split(".in_proj_")  # kind: "weight" or "bias"
            for name, part in zip(("query_proj", "key_proj", "value_proj"), np.split(v, 3)):
                out.append((f"{prefix}.{name}.{kind}", mx.array(part)))
        else:
            out.append((k, mx.array(v)))
    return out
