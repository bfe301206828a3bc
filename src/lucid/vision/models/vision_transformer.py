"""torchvision's Vision Transformer ViT-B/16 (Dosovitskiy et al., 2020)."""
from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from functools import partial

import lucid

from ... import nn
from ..ops.misc import MLP
from ._api import Weights, WeightsEnum, load_weights, make_weights, overwrite_param, prepare

ViT_B_16_Weights = make_weights("ViT_B_16_Weights", "IMAGENET1K_V1",
                                IMAGENET1K_V1=Weights("https://download.pytorch.org/models/vit_b_16-c867db91.pth"))


class MLPBlock(MLP):
    """The transformer's feed-forward block: Linear -> GELU -> Dropout -> Linear -> Dropout (keys ``0`` and
    ``3``); checkpoints with the older names ``linear_1``/``linear_2`` load too."""
    _version = 2

    def __init__(self, in_dim: int, mlp_dim: int, dropout: float) -> None:
        super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None, dropout=dropout)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for i in range(2):  # linear_1 -> 0, linear_2 -> 3
            for kind in ("weight", "bias"):
                old = f"{prefix}linear_{i + 1}.{kind}"
                if old in state_dict:
                    state_dict[f"{prefix}{3 * i}.{kind}"] = state_dict.pop(old)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class EncoderBlock(nn.Module):
    """Pre-norm transformer layer: ``x + attention(ln_1(x))``, then ``+ mlp(ln_2(.))``."""

    def __init__(self, num_heads: int, hidden_dim: int, mlp_dim: int, dropout: float, attention_dropout: float,
                 norm_layer: Callable[..., nn.Module] = partial(nn.LayerNorm, eps=1e-6)) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, dropout=attention_dropout,
                                                    batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        if input.dim() != 3:
            raise RuntimeError(f"Expected (batch_size, seq_length, hidden_dim) got {tuple(input.shape)}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    """Learned position embedding, dropout, ``num_layers`` ``EncoderBlock``s (``encoder_layer_0``, ...) and a
    final ``ln``."""

    def __init__(self, seq_length: int, num_layers: int, num_heads: int, hidden_dim: int, mlp_dim: int,
                 dropout: float, attention_dropout: float,
                 norm_layer: Callable[..., nn.Module] = partial(nn.LayerNorm, eps=1e-6)) -> None:
        super().__init__()
        self.pos_embedding = nn.Parameter(lucid.empty(1, seq_length, hidden_dim).normal_(std=0.02))
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            (f"encoder_layer_{i}", EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                                                norm_layer)) for i in range(num_layers)))
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        if input.dim() != 3:
            raise RuntimeError(f"Expected (batch_size, seq_length, hidden_dim) got {tuple(input.shape)}")
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(nn.Module):
    """Patchify (``conv_proj``: a ``patch_size`` convolution), prepend ``class_token``, ``encoder``, and
    ``heads`` (``head``, or ``pre_logits``/tanh/``head`` with ``representation_size``) on the class token. Input
    (N, 3, image_size, image_size) exactly."""

    def __init__(self, image_size: int, patch_size: int, num_layers: int, num_heads: int, hidden_dim: int,
                 mlp_dim: int, dropout: float = 0.0, attention_dropout: float = 0.0, num_classes: int = 1000,
                 representation_size: int | None = None,
                 norm_layer: Callable[..., nn.Module] = partial(nn.LayerNorm, eps=1e-6),
                 conv_stem_configs=None) -> None:
        super().__init__()
        if image_size % patch_size != 0:
            raise RuntimeError("Input shape indivisible by patch size!")
        if conv_stem_configs is not None:
            raise ValueError("conv_stem_configs is not supported by lucid's VisionTransformer (no published "
                             "torchvision checkpoint uses it)")
        self.image_size = image_size
        self.patch_size = patch_size
        self.hidden_dim = hidden_dim
        self.mlp_dim = mlp_dim
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.num_classes = num_classes
        self.representation_size = representation_size
        self.norm_layer = norm_layer
        self.conv_proj = nn.Conv2d(3, hidden_dim, kernel_size=patch_size, stride=patch_size)
        seq_length = (image_size // patch_size) ** 2 + 1  # the patches and the class token
        self.class_token = nn.Parameter(lucid.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                               norm_layer)
        self.seq_length = seq_length
        heads: OrderedDict[str, nn.Module] = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)
        fan_in = self.conv_proj.in_channels * self.conv_proj.kernel_size[0] * self.conv_proj.kernel_size[1]
        nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
        nn.init.zeros_(self.conv_proj.bias)
        if representation_size is not None:
            nn.init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / self.heads.pre_logits.in_features))
            nn.init.zeros_(self.heads.pre_logits.bias)
        nn.init.zeros_(self.heads.head.weight)
        nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, _, h, w = x.shape
        p = self.patch_size
        if h != self.image_size:
            raise RuntimeError(f"Wrong image height! Expected {self.image_size} but got {h}!")
        if w != self.image_size:
            raise RuntimeError(f"Wrong image width! Expected {self.image_size} but got {w}!")
        # (N, C, H, W) -> (N, hidden, H/p, W/p) -> (N, (H/p)(W/p), hidden)
        return self.conv_proj(x).reshape(n, self.hidden_dim, (h // p) * (w // p)).permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        x = lucid.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1)
        return self.heads(self.encoder(x)[:, 0])


def vit_b_16(*, weights=None, progress: bool = True, **kwargs) -> VisionTransformer:
    """ViT-B/16: 16 px patches, 12 layers of 12 heads, width 768, MLP 3072 (86.6 M parameters), 224 px images
    (``image_size=`` changes that for random weights). ``weights``: None, a checkpoint file or a
    ``ViT_B_16_Weights`` name; ``**kwargs`` go to ``VisionTransformer``."""
    weights = prepare(weights, ViT_B_16_Weights, kwargs)
    if isinstance(weights, WeightsEnum):
        overwrite_param(kwargs, "image_size", 224)  # the published weights' size
    image_size = kwargs.pop("image_size", 224)
    model = VisionTransformer(image_size, 16, 12, 12, 768, 3072, **kwargs)
    return load_weights(model, weights)
