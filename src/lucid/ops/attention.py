"""PyTorch's ``F.multi_head_attention_forward`` (same arguments): the functional form that ``nn.MultiheadAttention``
runs, and the mask helpers that ``nn.Transformer*`` share with it.

Mask conventions are PyTorch's MultiheadAttention ones, the opposite of ``scaled_dot_product_attention``'s for bool
masks: here True means "may NOT attend". Bool masks become float masks (-inf where True) that are added to the
scores; ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or (N * num_heads, L, S) add up. With
``need_weights=True`` the scores are formed explicitly (a row with nothing to attend to gives NaN, as in PyTorch);
otherwise the heads go through ``scaled_dot_product_attention``.
"""
from __future__ import annotations

import math
import warnings

import mlx.core as mx

from .._creation import zeros
from .._tensor import Tensor
from .linalg import baddbmm, bmm
from .nn_basic import dropout, linear, scaled_dot_product_attention
from .reduce import softmax
from .shape import cat


# ---------------------------------------------------------------------------------------------------- masks
def _canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type, check_other: bool = True):
    """A bool mask as a float one (-inf where True, 0 elsewhere) of ``target_type``; float masks pass through."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != mx.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if not is_float:
        mask = zeros(tuple(mask.shape), dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    return None if input is None else input.dtype


def _pad_column(mask):
    """One more (zero: attendable) column at the end of a float mask, for the bias_k / zero-attention key."""
    return None if mask is None else cat([mask, zeros(tuple(mask.shape[:-1]) + (1,), dtype=mask.dtype)], -1)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads: int) -> bool:
    """PyTorch's checks; whether the input is batched (3-D query) or not (2-D)."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.ndim}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {tuple(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                         "tensor")


# ---------------------------------------------------------------------------------------------------- projections
def _in_projection_packed(q, k, v, w, b=None) -> tuple:
    """q, k, v projected by the packed (3E, E) ``w``: one matrix product for self-attention (q is k is v), two when
    key is value, three otherwise."""
    if k is v:
        if q is k:
            return linear(q, w, b).chunk(3, -1)
        e = q.shape[-1]
        w_q, w_kv = w.split([e, 2 * e])
        b_q, b_kv = (None, None) if b is None else b.split([e, 2 * e])
        return (linear(q, w_q, b_q),) + linear(k, w_kv, b_kv).chunk(2, -1)
    b_q, b_k, b_v = (None,) * 3 if b is None else b.chunk(3)
    w_q, w_k, w_v = w.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _heads(x, length: int, batch_heads: int, head_dim: int):
    """(S, N, E) -> (N * num_heads, S, head_dim)."""
    return x.reshape(length, batch_heads, head_dim).transpose(0, 1)


def _static(x, name: str, batch_heads: int, head_dim: int):
    if x.shape[0] != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {x.shape[0]}")
    if x.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {x.shape[2]}")
    return x


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias, training: bool = True,
                                 key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple:
    """Multi-head attention of time-major query (L, N, E), key (S, N, kdim), value (S, N, vdim) (or unbatched
    (L, E), (S, kdim), (S, vdim)): ``(attn_output (L, N, E), attn_weights (N, L, S) averaged over heads, or
    (N, num_heads, L, S), or None without need_weights)``.

    :param query: (L, N, E) (or (L, E)).
    :param key: (S, N, kdim).
    :param value: (S, N, vdim).
    :param embed_dim_to_check: E, checked against the query.
    :param num_heads: the number of heads.
    :param in_proj_weight: the packed query/key/value projection, (3E, E), or None with separate weights.
    :param in_proj_bias: its bias, (3E,), or None.
    :param bias_k: a bias row appended to the keys, or None.
    :param bias_v: a bias row appended to the values, or None.
    :param add_zero_attn: append a row of zeros to the keys and values.
    :param dropout_p: dropout on the attention weights.
    :param out_proj_weight: the output projection, (E, E).
    :param out_proj_bias: its bias, (E,), or None.
    :param key_padding_mask: (N, S): True (or -inf) where a key is padding.
    :param need_weights: also return the attention weights.
    :param attn_mask: (L, S) or (N * num_heads, L, S), boolean or additive.
    :param use_separate_proj_weight: use ``q_proj_weight``/``k_proj_weight``/``v_proj_weight``.
    :param q_proj_weight: the query projection, (E, E).
    :param k_proj_weight: the key projection, (E, kdim).
    :param v_proj_weight: the value projection, (E, vdim).
    :param static_k: precomputed keys (instead of projecting ``key``).
    :param static_v: precomputed values (instead of projecting ``value``).
    :param average_attn_weights: average the returned weights over the heads.
    :param is_causal: a hint that ``attn_mask`` is the causal mask.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                                 f"{tuple(value.shape[:2])}")
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                                 "v_proj_weight is None")
        b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k), linear(value, v_proj_weight, b_v)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    src_len = key.shape[0]
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key or value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_column(attn_mask), _pad_column(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be set or both be None")
    batch_heads = bsz * num_heads
    q = _heads(q, tgt_len, batch_heads, head_dim)
    k = _heads(k, k.shape[0], batch_heads, head_dim) if static_k is None else _static(static_k, "static_k",
                                                                                       batch_heads, head_dim)
    v = _heads(v, v.shape[0], batch_heads, head_dim) if static_v is None else _static(static_v, "static_v",
                                                                                       batch_heads, head_dim)
    if add_zero_attn:
        k = cat([k, zeros((batch_heads, 1, head_dim), dtype=k.dtype)], 1)
        v = cat([v, zeros((batch_heads, 1, head_dim), dtype=v.dtype)], 1)
        attn_mask, key_padding_mask = _pad_column(attn_mask), _pad_column(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"Expected key_padded_mask.shape to be {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(batch_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if attn_mask is not None:
            weights = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(weights, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, out_proj_weight.shape[0])
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)  # (with bsz 0 this raises, as PyTorch's does)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, out_proj_weight.shape[0])
    if not is_batched:
        out = out.squeeze(1)
    return out, None
