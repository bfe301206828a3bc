"""MultiheadAttention with PyTorch's parameters, initialisation, shapes and mask conventions. The functional
``multi_head_attention_forward`` it runs (PyTorch's ``F.multi_head_attention_forward``, same arguments) and the mask
conventions are in ``lucid.ops.attention``.
"""
from __future__ import annotations

from ..._creation import zeros
from ..._tensor import Tensor
from ...ops.attention import multi_head_attention_forward
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under the name PyTorch gives MultiheadAttention's ``out_proj`` (so that reprs match)."""


# ---------------------------------------------------------------------------------------------------- module
class MultiheadAttention(Module):
    """``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O`` with ``head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)``.

    Parameters as PyTorch's: ``in_proj_weight`` (3E, E) when kdim == vdim == embed_dim, else ``q_proj_weight`` (E, E),
    ``k_proj_weight`` (E, kdim), ``v_proj_weight`` (E, vdim) (xavier_uniform_); ``in_proj_bias`` (3E) and
    ``out_proj.bias`` zero; ``out_proj`` an (E, E) Linear; with ``add_bias_kv`` ``bias_k``, ``bias_v`` (1, 1, E)
    (xavier_normal_). Inputs (L, N, E) / (S, N, kdim) / (S, N, vdim), (N, L, E) ... with ``batch_first``, or
    unbatched (L, E) ...; ``forward`` returns ``(attn_output, attn_weights or None)``.

    :param embed_dim: E, the model's width (split over the heads).
    :param num_heads: the number of heads (dividing ``embed_dim``).
    :param dropout: dropout on the attention weights, in training.
    :param bias: learn the input and output projections' biases.
    :param add_bias_kv: learn a bias row appended to the keys and values.
    :param add_zero_attn: append a row of zeros to the keys and values.
    :param kdim: the keys' features (default ``embed_dim``).
    :param vdim: the values' features (default ``embed_dim``).
    :param batch_first: inputs and outputs are (N, L, E) instead of (L, N, E).

    >>> import lucid
    >>> mha = lucid.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = lucid.zeros(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    (lucid.Size([3, 5, 8]), lucid.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def param(*shape):
            return Parameter(zeros(shape, dtype=dtype, device=device))

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = param(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = param(1, 1, embed_dim)
            self.bias_v = param(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple:
        """Bool masks: True marks a position that may NOT be attended to; float masks are added to the scores.
        ``key_padding_mask`` (N, S) (or (S) unbatched); ``attn_mask`` (L, S) or (N * num_heads, L, S).
        ``is_causal`` is a hint that ``attn_mask`` is the causal mask (which must still be given)."""
        is_batched = query.ndim == 3
        if self.batch_first and is_batched:  # keep "query is key is value": it decides how they are projected
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights


__all__ = ["MultiheadAttention"]
