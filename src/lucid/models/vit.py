"""A Vision Transformer (Dosovitskiy et al., 2021) with torchvision's ``VisionTransformer`` module names, so a
torchvision ViT state_dict of the same size loads unchanged; the defaults are a tiny model for 32x32 images."""
from __future__ import annotations

import math
from collections import OrderedDict

import lucid

from .. import nn


class MLPBlock(nn.Sequential):
    """torchvision's transformer MLP: ``0`` Linear(dim, mlp_dim) -> GELU -> Dropout -> ``3`` Linear(mlp_dim, dim)
    -> Dropout, on (..., dim)."""

    def __init__(self, dim: int, mlp_dim: int, dropout: float):
        super().__init__(nn.Linear(dim, mlp_dim), nn.GELU(), nn.Dropout(dropout), nn.Linear(mlp_dim, dim),
                         nn.Dropout(dropout))
        for m in (self[0], self[3]):
            nn.init.xavier_uniform_(m.weight)
            nn.init.normal_(m.bias, std=1e-6)


class EncoderBlock(nn.Module):
    """A pre-norm transformer encoder block on (N, S, dim): ``x + self_attention(ln_1(x))``, then
    ``x + mlp(ln_2(x))``. ``self_attention`` is a batch-first ``nn.MultiheadAttention`` (keys
    ``in_proj_weight`` (3*dim, dim), ``in_proj_bias``, ``out_proj.weight``, ``out_proj.bias``)."""

    def __init__(self, heads: int, dim: int, mlp_dim: int, dropout: float, attention_dropout: float):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(dim, heads, dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = MLPBlock(dim, mlp_dim, dropout)

    def forward(self, x):
        y = self.ln_1(x)
        y, _ = self.self_attention(y, y, y, need_weights=False)
        x = x + self.dropout(y)
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    """Position embedding ``pos_embedding`` (1, S, dim), dropout, ``layers.encoder_layer_{i}`` blocks and the
    final LayerNorm ``ln``, on (N, S, dim)."""

    def __init__(self, seq_length: int, depth: int, heads: int, dim: int, mlp_dim: int, dropout: float,
                 attention_dropout: float):
        super().__init__()
        self.pos_embedding = nn.Parameter(lucid.empty(1, seq_length, dim))
        nn.init.normal_(self.pos_embedding, std=0.02)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            (f"encoder_layer_{i}", EncoderBlock(heads, dim, mlp_dim, dropout, attention_dropout))
            for i in range(depth)))
        self.ln = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x):
        return self.ln(self.layers(self.dropout(x + self.pos_embedding)))


class VisionTransformer(nn.Module):
    """ViT classifier: images (N, channels, image_size, image_size) -> logits (N, num_classes).

    The image is cut into (image_size/patch_size)^2 patches, each embedded by ``conv_proj`` (a Conv2d with kernel
    and stride ``patch_size``: weight (dim, channels, p, p)); a learned ``class_token`` (1, 1, dim) is prepended,
    the ``encoder`` (position embedding, ``depth`` pre-norm blocks of ``heads``-head attention and an MLP of width
    ``mlp_dim``, final LayerNorm) runs over the S = patches + 1 tokens, and ``heads.head`` (num_classes, dim) reads
    the class token. Keys, names and initialisation are torchvision's (``class_token``, ``conv_proj.*``,
    ``encoder.pos_embedding``, ``encoder.layers.encoder_layer_0.ln_1.weight``, ...``.self_attention.in_proj_weight``,
    ...``.mlp.0.weight``, ...``.mlp.3.weight``, ``encoder.ln.*``, ``heads.head.*``, zero-initialised head); unlike
    torchvision, ``channels`` may differ from 3 and there is no pre-logits layer.

    :param image_size: the input's height and width.
    :param patch_size: the side of each square patch (dividing image_size).
    :param num_classes: the logits' size.
    :param dim: the tokens' width.
    :param depth: the encoder blocks.
    :param heads: the attention heads.
    :param mlp_dim: the MLP's hidden width in each block.
    :param channels: the input's channels.
    :param dropout: the dropout rate.
    :param attention_dropout: dropout on the attention weights.
    """

    def __init__(self, image_size: int = 32, patch_size: int = 4, num_classes: int = 6, dim: int = 64,
                 depth: int = 4, heads: int = 4, mlp_dim: int = 128, channels: int = 3, dropout: float = 0.0,
                 attention_dropout: float = 0.0):
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"image_size ({image_size}) must be a multiple of patch_size ({patch_size})")
        if dim % heads:
            raise ValueError(f"dim ({dim}) must be a multiple of heads ({heads})")
        self.image_size, self.patch_size, self.hidden_dim = image_size, patch_size, dim
        self.conv_proj = nn.Conv2d(channels, dim, patch_size, stride=patch_size)
        nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / (channels * patch_size ** 2)))
        nn.init.zeros_(self.conv_proj.bias)
        self.class_token = nn.Parameter(lucid.zeros(1, 1, dim))
        seq_length = (image_size // patch_size) ** 2 + 1
        self.encoder = Encoder(seq_length, depth, heads, dim, mlp_dim, dropout, attention_dropout)
        self.heads = nn.Sequential(OrderedDict(head=nn.Linear(dim, num_classes)))
        nn.init.zeros_(self.heads.head.weight)
        nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        """(N, C, H, W) -> (N, patches, dim), checking the image size as torchvision does."""
        n, _, h, w = x.shape
        if h != self.image_size or w != self.image_size:
            raise ValueError(f"VisionTransformer expects {self.image_size}x{self.image_size} images, got {h}x{w}")
        x = self.conv_proj(x)  # (N, dim, H/p, W/p)
        return x.reshape(n, self.hidden_dim, -1).permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        tokens = lucid.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1)
        return self.heads(self.encoder(tokens)[:, 0])


def vit(image_size: int = 32, patch_size: int = 4, num_classes: int = 6, dim: int = 64, depth: int = 4,
        heads: int = 4, mlp_dim: int = 128, channels: int = 3, dropout: float = 0.0) -> VisionTransformer:
    """A ``VisionTransformer``; the defaults (64 patches of 4x4, 4 blocks of width 64, 0.14 M parameters) suit
    ``make_shapes`` images.

    :param image_size: the input's height and width.
    :param patch_size: the side of each square patch (dividing image_size).
    :param num_classes: the logits' size.
    :param dim: the tokens' width.
    :param depth: the encoder blocks.
    :param heads: the attention heads.
    :param mlp_dim: the MLP's hidden width in each block.
    :param channels: the input's channels.
    :param dropout: the dropout rate.
    """
    return VisionTransformer(image_size, patch_size, num_classes, dim, depth, heads, mlp_dim, channels, dropout)
