"""A decoder-only transformer with nanoGPT's structure and key names (Karpathy's nanoGPT ``model.py``), so a nanoGPT
checkpoint of the same config loads unchanged: ``transformer.wte``, ``transformer.wpe``, ``transformer.h.N.ln_1``,
``.attn.c_attn``, ``.attn.c_proj``, ``.ln_2``, ``.mlp.c_fc``, ``.mlp.c_proj``, ``transformer.ln_f`` and
``lm_head``, whose weight is ``transformer.wte.weight`` (tied: one Parameter, both keys in the state_dict)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import lucid

from .. import nn
from ..nn import functional as F


@dataclass
class GPTConfig:
    """nanoGPT's configuration (its defaults are GPT-2 small's).

    :param block_size: the longest context.
    :param vocab_size: the number of tokens.
    :param n_layer: the transformer blocks.
    :param n_head: the attention heads.
    :param n_embd: the embedding width.
    :param dropout: the dropout rate.
    :param bias: biases in the Linear layers and LayerNorms.
    """
    block_size: int = 1024   # the longest context
    vocab_size: int = 50304  # GPT-2's 50257 rounded up to a multiple of 64
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True        # biases in the Linears and LayerNorms, as GPT-2; False is a little better and faster


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention on (B, T, C): ``c_attn`` (3C, C) projects to queries, keys and values,
    each position attends to itself and the positions before it, ``c_proj`` (C, C) mixes the heads."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        if config.n_embd % config.n_head:
            raise ValueError(f"n_embd ({config.n_embd}) must be a multiple of n_head ({config.n_head})")
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                           is_causal=True)
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """``c_fc`` (4C, C) -> exact GELU -> ``c_proj`` (C, 4C) -> dropout, on (B, T, C)."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    """A pre-norm transformer block: ``x + attn(ln_1(x))``, then ``x + mlp(ln_2(x))``."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """nanoGPT: token ids (B, T), T <= block_size -> next-token logits.

    ``forward(idx, targets=None)`` returns ``(logits, loss)``: with ``targets`` (B, T) the logits of every position
    (B, T, vocab_size) and their mean cross-entropy (targets of -1 are ignored); without, as nanoGPT does for fast
    generation, the logits of the last position only (B, 1, vocab_size) and ``None``.
    Initialisation is nanoGPT's: N(0, 0.02) weights, zero biases, and N(0, 0.02/sqrt(2 n_layer)) for the
    residual projections (``c_proj``).

    :param config: a ``GPTConfig``.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying: the embedding is the output layer
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def get_num_params(self, non_embedding: bool = True) -> int:
        """The number of parameters (the tied embedding counted once); without the position embedding unless
        ``non_embedding=False``."""
        n = sum(p.numel() for p in self.parameters())
        return n - self.transformer.wpe.weight.numel() if non_embedding else n

    def forward(self, idx, targets=None):
        b, t = idx.shape
        if t > self.config.block_size:
            raise ValueError(f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}")
        pos = lucid.arange(t, dtype=lucid.int64)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is None:
            return self.lm_head(x[:, -1:, :]), None
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1), ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay: float, learning_rate: float, betas=(0.9, 0.95)):
        """nanoGPT's AdamW: weight decay on the matrices (2-D and up: Linear weights, embeddings), none on biases
        and LayerNorm parameters."""
        params = list(self.parameters())
        decay = [p for p in params if p.dim() >= 2]
        no_decay = [p for p in params if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
        return lucid.optim.AdamW(groups, lr=learning_rate, betas=betas)

    @lucid.no_grad()
    def generate(self, idx, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None):
        """Extend the token ids ``idx`` (B, T) by ``max_new_tokens`` sampled tokens, each from the softmax of the
        last logits divided by ``temperature`` (restricted to the ``top_k`` most likely when given), feeding the
        last ``block_size`` tokens back in; returns (B, T + max_new_tokens). Uses lucid's random generator, so
        ``lucid.manual_seed`` makes it repeatable. Call ``model.eval()`` first to switch dropout off."""
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.shape[1] <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = lucid.topk(logits, min(top_k, logits.shape[-1]))
                logits = lucid.where(logits < v[:, -1:], -math.inf, logits)
            probs = F.softmax(logits, dim=-1)
            idx_next = lucid.multinomial(probs, 1)
            idx = lucid.cat((idx, idx_next), dim=1)
        return idx


def gpt(**config_fields) -> GPT:
    """``GPT(GPTConfig(**config_fields))``, e.g. ``gpt(block_size=64, vocab_size=65, n_layer=4, n_head=4,
    n_embd=128)``."""
    return GPT(GPTConfig(**config_fields))
