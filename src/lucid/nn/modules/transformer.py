"""Transformer layers with PyTorch's sub-module names, defaults and forward signatures: TransformerEncoderLayer,
TransformerEncoder, TransformerDecoderLayer, TransformerDecoder and Transformer ("Attention Is All You Need").

Masks follow MultiheadAttention's conventions (bool True = may not attend; float masks are added). PyTorch's
inference fast paths (nested tensors, fused kernels) have no counterpart here: every call takes the plain path,
which gives the same values. ``is_causal`` is only a hint, as in PyTorch; a causal ``mask`` without it is applied
as given (PyTorch compares the mask's values to detect it, which would force an evaluation).
"""
from __future__ import annotations

import copy
from typing import Callable

from ..._creation import full
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ...ops.attention import _canonical_mask, _none_or_dtype
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """(sz, sz) float mask: -inf above the diagonal (future positions), 0 elsewhere."""
    return full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


# ---------------------------------------------------------------------------------------------------- layers
class _SelfAttentionLayer(Module):
    """What the encoder and decoder layers share: the self-attention block (``self_attn`` then ``dropout1``)."""

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)


class TransformerEncoderLayer(_SelfAttentionLayer):
    """Self-attention then a feed-forward block (linear1 -> activation -> dropout -> linear2), each with dropout
    and a residual connection; LayerNorm after each (post-norm) or, with ``norm_first``, before each.
    ``activation``: "relu", "gelu" or a callable (a Module becomes a child named "activation").

    :param d_model: the width of the inputs and outputs.
    :param nhead: the attention heads.
    :param dim_feedforward: the width of the feed-forward block.
    :param dropout: the dropout rate.
    :param activation: the feed-forward activation: "relu", "gelu" or a callable.
    :param layer_norm_eps: the LayerNorms' eps.
    :param batch_first: inputs and outputs are (N, S, E) instead of (S, N, E).
    :param norm_first: LayerNorm before each block (pre-norm) instead of after.
    :param bias: learn biases in the linear layers and LayerNorms.

    >>> import lucid
    >>> layer = lucid.nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, batch_first=True)
    >>> layer(lucid.zeros(2, 7, 16)).shape
    lucid.Size([2, 7, 16])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        factory = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        """src (S, N, E) ((N, S, E) with batch_first, or unbatched (S, E)); src_mask (S, S) or (N * nhead, S, S);
        src_key_padding_mask (N, S)."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(_SelfAttentionLayer):
    """Self-attention over the target, attention to the encoder's output (``memory``), then the feed-forward
    block; each with dropout, a residual connection and a LayerNorm (after, or before with ``norm_first``).

    :param d_model: the width of the inputs and outputs.
    :param nhead: the attention heads.
    :param dim_feedforward: the width of the feed-forward block.
    :param dropout: the dropout rate.
    :param activation: the feed-forward activation: "relu", "gelu" or a callable.
    :param layer_norm_eps: the LayerNorms' eps.
    :param batch_first: inputs and outputs are (N, S, E) instead of (S, N, E).
    :param norm_first: LayerNorm before each block (pre-norm) instead of after.
    :param bias: learn biases in the linear layers and LayerNorms.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        factory = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        """tgt (T, N, E), memory (S, N, E) (batch first with batch_first); tgt_mask (T, T), memory_mask (T, S),
        tgt_key_padding_mask (N, T), memory_key_padding_mask (N, S)."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


# ---------------------------------------------------------------------------------------------------- stacks
class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` (under ``layers``), then ``norm`` if given.
    ``enable_nested_tensor`` and ``mask_check`` are accepted for PyTorch compatibility; they steer PyTorch's
    nested-tensor fast path, which lucid does not have.

    :param encoder_layer: the layer to copy.
    :param num_layers: how many copies.
    :param norm: a final normalization (or None).
    :param enable_nested_tensor: accepted (PyTorch's nested-tensor fast path).
    :param mask_check: accepted (PyTorch's nested-tensor fast path).
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(mask),
                                               "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=bool(is_causal), src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` (under ``layers``), then ``norm`` if given.

    :param decoder_layer: the layer to copy.
    :param num_layers: how many copies.
    :param norm: a final normalization (or None).
    """

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """Encoder (``num_encoder_layers`` layers + LayerNorm) and decoder (``num_decoder_layers`` layers + LayerNorm);
    every parameter with more than one dim is re-drawn with xavier_uniform_, as in PyTorch.
    ``forward(src, tgt, ...)`` returns the decoder's output, shaped like ``tgt``.

    :param d_model: the width of the inputs and outputs.
    :param nhead: the attention heads.
    :param num_encoder_layers: the encoder's layers.
    :param num_decoder_layers: the decoder's layers.
    :param dim_feedforward: the width of the feed-forward block.
    :param dropout: the dropout rate.
    :param activation: the feed-forward activation: "relu", "gelu" or a callable.
    :param custom_encoder: an encoder to use instead of the standard one.
    :param custom_decoder: a decoder to use instead of the standard one.
    :param layer_norm_eps: the LayerNorms' eps.
    :param batch_first: inputs and outputs are (N, S, E) instead of (S, N, E).
    :param norm_first: LayerNorm before each block (pre-norm) instead of after.
    :param bias: learn biases in the linear layers and LayerNorms.
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        factory = dict(device=device, dtype=dtype)
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **factory), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **factory), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """src (S, N, E), tgt (T, N, E) ((N, S, E), (N, T, E) with batch_first); masks as in the layers."""
        is_batched = src.ndim == 3
        if is_batched and src.shape[0 if self.batch_first else 1] != tgt.shape[0 if self.batch_first else 1]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The causal mask: -inf above the diagonal, 0 elsewhere (float32 unless ``dtype``)."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]
