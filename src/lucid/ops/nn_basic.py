"""Basic neural-network ops: linear, bilinear, the dropouts, embedding, one_hot, scaled_dot_product_attention,
cosine_similarity and pairwise_distance, with PyTorch's arguments, defaults and errors.

Most are compositions of lucid ops, so their gradients of every order come from those. Two are declared ops:
``linear`` (through linalg's fused ``addmm``: one MLX call, AddmmBackward0 as in PyTorch) and ``embedding``, whose
backward is a scatter-add of rows (repeated indices accumulate) that honours ``padding_idx`` and
``scale_grad_by_freq``; that backward is itself an op whose gradient is again an embedding, so higher derivatives
work. Random masks come from lucid's generator (``lucid.manual_seed``).
"""
from __future__ import annotations

__all__ = ["linear", "bilinear", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout", "embedding", "one_hot", "scaled_dot_product_attention", "cosine_similarity",
           "pairwise_distance"]

import math
import warnings

import mlx.core as mx

from .. import _cpu_route
from .._checks import checked_index
from .._dtype import dtype_name
from .._random import next_key
from .._threads import tolist
from .._tensor import Tensor, _wrap
from .._grad_mode import no_grad
from ._core import data, defop, expect_tensor
from .elementwise import where
from .index import _scalar_name
from .linalg import PRODUCT_SAVE, _check_mm, _mm, _mT, _product, matmul
from .reduce import norm, softmax
from .shape import broadcast_tensors
from ..autograd.grad_mode import state as _gm_state  # lucid.autocast's hook (ops/autocast_policy.py)


# ---------------------------------------------------------------------------------------------------- linear
def _linear_fwd(x, w, b=None):
    out = _product(x, mx.swapaxes(w, 0, 1))  # MLX multiplies by the transposed view without copying it
    return out if b is None else out + b


def _linear_bias_fwd(b, x, w):
    # linear() has checked that the three dtypes are one (MLX dtype comparisons cost ~2k instructions each)
    if mx.issubdtype(x.dtype, mx.inexact):
        return mx.addmm(b, x, mx.swapaxes(w, 0, 1))  # one fused MLX call
    return _linear_fwd(x, w, b)


def _linear_gx(g, ans, *args):
    return _mm(g, args[-1])  # g @ W


def _linear_gw(g, ans, *args):
    return _mm(_mT(g), args[-2])  # g^T @ x: W's gradient directly, no transpose node after it


# 2-D linear as one op each (PyTorch records addmm/mm and a TBackward0 for weight.t(); one node here, 3 fewer ops in
# backward): the names are PyTorch's, the inputs (bias, input, weight) / (input, weight)
# the bias's value is needed by no gradient; x only by W's and W only by x's (so a Linear on data keeps no weight)
_linear_bias = defop("addmm", _linear_bias_fwd, node="AddmmBackward0", save={1: (2,), 2: (1,)}, raw=True, vjp=(
    lambda g, ans, b, x, w: g.sum(0) if b.ndim == 1 else g, _linear_gx, _linear_gw))
_linear_nobias = defop("mm", _linear_fwd, node="MmBackward0", save=PRODUCT_SAVE, vjp=(_linear_gx, _linear_gw), raw=True)


def _check_linear_dtypes(input, weight, bias) -> None:
    """PyTorch's addmm/mm error: a float64 or integer input to float32 weights is a mistake, never promoted."""
    wd = weight.dtype
    for what, t in (("mat1 and mat2", input), ("self and mat2", bias)):
        if t is not None and t.dtype != wd:
            raise RuntimeError(f"{what} must have the same dtype, but got {_scalar_name(t.dtype)} and "
                               f"{_scalar_name(wd)}")


def linear(input, weight, bias=None) -> Tensor:
    """``input @ weight.T + bias`` with ``weight`` of shape (out_features, in_features) and ``input`` (*, in), all
    of one dtype (a mismatch raises, as in PyTorch).

    A 2-D input is one recorded op (``AddmmBackward0``, or ``MmBackward0`` without bias) whose next functions are
    the bias, input and weight themselves (PyTorch's graph has a ``TBackward0`` between addmm and the weight).

    :param weight: (out_features, in_features).
    :param bias: (out_features,), or None.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("linear", linear, input, weight, bias)
    expect_tensor("linear", "input", 1, input)
    wd = weight.dtype
    if not (input.dtype == wd and (bias is None or bias.dtype == wd)):  # (MLX's dtype == is cheaper than !=)
        _check_linear_dtypes(input, weight, bias)
    xs = input.shape
    if len(xs) > 2:  # fold the batch dims: one matrix product (and one for the weight's gradient)
        lead = tuple(xs[:-1])
        out = linear(input.reshape(-1, xs[-1]), weight, bias)
        return out.reshape(lead + tuple(out.shape[1:]))
    ws = weight.shape
    if len(xs) == 2 and len(ws) == 2:
        if xs[1] != ws[1]:
            _check_mm(tuple(xs), (ws[1], ws[0]))
        return _linear_nobias(input, weight) if bias is None else _linear_bias(bias, input, weight)
    out = matmul(input, weight.t())
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None) -> Tensor:
    """``out[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    :param weight: (out_features, in1_features, in2_features).
    :param bias: (out_features,), or None.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("bilinear", bilinear, input1, input2, weight, bias)
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for a, b in zip(input1.shape[:-1], input2.shape[:-1]):
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {a} and {b}")
    out_f, in1, in2 = weight.shape
    for i, (x, n) in enumerate(((input1, in1), (input2, in2)), 1):
        if x.shape[-1] != n:
            raise RuntimeError(f"bilinear(): input{i} size does not match weight size: got {x.shape[-1]} but "
                               f"expected {n}")
    if bias is not None and bias.shape[0] != out_f:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{out_f}")
    lead = tuple(input1.shape[:-1])
    x1, x2 = input1.reshape(-1, in1), input2.reshape(-1, in2)
    # (N, in1) @ (in1, out * in2) -> (N, out, in2), then contracted with x2: two matrix products
    t = matmul(x1, weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    out = matmul(t, x2.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(lead + (out_f,))


# ---------------------------------------------------------------------------------------------------- dropout
_SELU_ALPHA = 1.7580993408473766  # -selu's negative saturation value: alpha_dropout keeps mean 0 and variance 1


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep(shape: tuple, p: float, dtype) -> mx.array:
    """1 for each element kept (probability 1 - p), 0 for each dropped, in ``dtype``."""
    return mx.random.bernoulli(1 - p, shape, key=next_key()).astype(dtype)


@_cpu_route.float64_args
def _dropout(input, p, training, inplace, noise_shape=None, alpha=False) -> Tensor:
    """PyTorch's _dropout_impl: the identity when not training (or p = 0), zeros for p = 1; otherwise the input times
    a kept/dropped mask over ``noise_shape`` (broadcast: whole channels for feature dropout), scaled so the mean is
    kept. ``alpha``: dropped elements take selu's saturation value, and an affine map restores mean and variance."""
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    keep = _keep(noise_shape or tuple(input.shape), p, input.dtype)
    if not alpha:
        scale = _wrap(keep * (1 / (1 - p)))
        return input.mul_(scale) if inplace else input * scale
    a = 1 / math.sqrt((_SELU_ALPHA ** 2 * p + 1) * (1 - p))
    scale, shift = _wrap(keep * a), _wrap((keep - 1 + p) * (_SELU_ALPHA * a))
    return input.mul_(scale).add_(shift) if inplace else input * scale + shift


def _channels(input, batched: bool = True) -> tuple:
    """The noise shape of feature dropout: one draw per (sample, channel), or per channel when unbatched."""
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    lead = 2 if batched else 1
    return tuple(input.shape[:lead]) + (1,) * (input.ndim - lead)


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (the identity when not
    training).

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    """
    return _dropout(input, p, training, inplace)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for selu networks: keeps zero mean and unit variance (PyTorch's default is ``training=False``).

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    """
    return _dropout(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels of (N, C, *) ``input``.

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    """
    _check_p(p)
    return _dropout(input, p, training, inplace, _channels(input), alpha=True)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or unbatched (C, L) ``input``.

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    """
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _dropout(input, p, training, inplace, _channels(input, input.ndim == 3))


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) ``input``; a 3-D input is read as (N, C, L), as PyTorch does (with its
    warning).

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).")
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.")
    return _dropout(input, p, training, inplace, _channels(input))


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or unbatched (C, D, H, W) ``input``.

    :param p: the probability of zeroing an element (or a channel), in [0, 1].
    """
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).")
    return _dropout(input, p, training, inplace, _channels(input, input.ndim == 5))


# ---------------------------------------------------------------------------------------------------- embedding
def _take_rows(w, idx, scale):
    return mx.take(w, idx, axis=0)


def _scatter_rows(g, idx, scale, num):
    """The weight's gradient: each index's gradient row added into its row of a (num, dim) zero canvas (repeated
    indices accumulate), times ``scale`` (0 at padding_idx, 1/count with scale_grad_by_freq) when given."""
    rows = g.reshape(-1, g.shape[-1])
    if scale is not None:  # a padding row gets none, even of a NaN gradient (PyTorch skips it, 0 * NaN is NaN)
        rows = mx.where(scale == 0, 0, rows * scale)
    return mx.zeros((num, rows.shape[-1]), g.dtype).at[idx.reshape(-1)].add(rows)


def _scatter_rows_vjp(gg, ans, g, idx, scale, num):
    rows = _embedding(gg, idx, None)
    if scale is None:
        return rows
    scale = _wrap(scale.reshape(idx.shape + (1,)))
    return where(scale == 0, 0.0, rows * scale)


# index and scale are MLX arrays, so a released node keeps them (and only the weight's shape)
_embedding = defop("embedding", _take_rows, save=None,
                   vjp=(lambda g, ans, w, idx, scale: _embedding_backward(g, idx, scale, w.shape[0]),))
_embedding_backward = defop("embedding_backward", _scatter_rows, vjp=(_scatter_rows_vjp,), save=None)


def _grad_scale(idx: mx.array, num: int, padding_idx, scale_grad_by_freq: bool, dtype):
    """Per-index factors of the weight's gradient, shape (n, 1), or None when all are 1."""
    if padding_idx is None and not scale_grad_by_freq:
        return None
    flat = idx.reshape(-1)
    scale = mx.ones(flat.shape, dtype)
    if scale_grad_by_freq:
        counts = mx.zeros((num,), dtype).at[flat].add(1)
        scale = 1 / mx.take(counts, flat)
    if padding_idx is not None:
        scale = mx.where(flat == padding_idx, mx.array(0, dtype), scale)
    return scale.reshape(-1, 1)


def _renorm_rows(weight: Tensor, idx: mx.array, max_norm: float, norm_type: float) -> None:
    """PyTorch's embedding_renorm_: rows of ``weight`` that ``idx`` uses and whose norm exceeds ``max_norm`` are
    scaled in place (unrecorded) to norm ``max_norm``."""
    with no_grad():
        flat = _wrap(idx.reshape(-1))
        rows = weight[flat]
        n = norm(rows, norm_type, 1, keepdim=True)
        weight.index_put_((flat,), rows * where(n > max_norm, max_norm / (n + 1e-7), 1.0))


@_cpu_route.float64_args
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` (num_embeddings, dim) at the integer indices ``input``: shape (*input.shape, dim).
    Repeated indices accumulate gradient; the ``padding_idx`` row gets none; ``scale_grad_by_freq`` divides each
    row's gradient by its count in ``input``; ``max_norm`` first renormalizes the used rows in place. ``sparse``
    is accepted and ignored (the gradient is dense). Out-of-range indices raise PyTorch's IndexError (at once, or at
    the next evaluation when their values are not known yet: see lucid._checks).

    :param weight: the embedding matrix, (num_embeddings, embedding_dim).
    :param padding_idx: a row that gets no gradient.
    :param max_norm: renormalize looked-up rows whose norm exceeds it (in place).
    :param scale_grad_by_freq: divide each row's gradient by its index's count in the batch.
    :param sparse: accepted; gradients are dense.
    """
    idx = data(input)
    if not isinstance(idx, mx.array) or not mx.issubdtype(idx.dtype, mx.integer):
        name = dtype_name(idx.dtype) if isinstance(idx, mx.array) else type(input).__name__
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {name} instead (while checking arguments for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= num
    idx = checked_index(idx, num, lambda v: IndexError("index out of range in self"), "embedding")
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    return _embedding(weight, idx, _grad_scale(idx, num, padding_idx, scale_grad_by_freq, weight.dtype))


def _class_value_error(v) -> RuntimeError:
    return RuntimeError("Class values must be non-negative." if v < 0 else
                        "Class values must be smaller than num_classes.")


def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """int64 tensor of shape (*tensor.shape, num_classes) with a 1 at each index. ``num_classes=-1`` infers
    ``max + 1`` (this reads the values, and checks they are non-negative); with ``num_classes`` given, values
    outside [0, num_classes) raise PyTorch's error (at once, or at the next evaluation: see lucid._checks).

    :param tensor: the class indices (int64).
    :param num_classes: the number of classes (-1: one more than the largest index).
    """
    a = data(tensor)
    if not isinstance(a, mx.array) or not mx.issubdtype(a.dtype, mx.integer):
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1 or (a.size == 0 and num_classes <= 0):
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        lo, hi = tolist(mx.stack([mx.min(a), mx.max(a)]))  # the result's shape depends on the values
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        num_classes = hi + 1
    elif num_classes < 1:
        raise RuntimeError("num_classes should be positive")
    else:
        a = checked_index(a, num_classes, _class_value_error, "one_hot")
    return _wrap((mx.expand_dims(a, -1) == mx.arange(num_classes)).astype(mx.int64))


# ---------------------------------------------------------------------------------------------------- attention
def _check_attention(query, key, value, attn_mask, is_causal) -> None:
    q, k, v = query.dtype, key.dtype, value.dtype
    if not q == k == v:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{dtype_name(q)} key.dtype: {dtype_name(k)} and value.dtype: {dtype_name(v)} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if attn_mask is not None:
        m = attn_mask.dtype
        if m not in (mx.bool_, mx.float32, q):
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {dtype_name(m)} and  query.dtype: {dtype_name(q)} instead.")
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")


def _repeat_heads(x, heads: int):
    """``x.repeat_interleave(heads // H, dim=-3)`` for x of shape (..., H, S, E)."""
    h = x.shape[-3]
    if h == heads:
        return x
    shape = tuple(x.shape)
    rep = heads // h
    return x.unsqueeze(-3).expand(shape[:-2] + (rep,) + shape[-2:]).reshape(shape[:-3] + (heads,) + shape[-2:])


@_cpu_route.float64_args
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` for query (N, ..., L, E), key (N, ..., S, E) and value
    (N, ..., S, Ev); ``scale`` defaults to 1/sqrt(E). A bool ``attn_mask`` marks with True the scores that take part,
    a float one is added; ``is_causal`` lets position i attend to positions <= i. As PyTorch's math backend, a row
    with no position taking part gives zeros (not NaN). ``dropout_p`` drops attention weights (always, as in
    PyTorch: pass 0 for evaluation). ``enable_gqa`` repeats the heads (dim -3) of key and value to match query's.

    :param query: (..., L, E).
    :param key: (..., S, E).
    :param value: (..., S, Ev).
    :param attn_mask: a boolean mask (True: attend) or a float bias, broadcast to (..., L, S).
    :param dropout_p: dropout on the attention weights.
    :param is_causal: a lower-triangular mask.
    :param scale: the scale of the scores (default 1/sqrt(E)).
    :param enable_gqa: let the query's heads share the keys' and values' groups.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("scaled_dot_product_attention", scaled_dot_product_attention, query, key, value,
                                       attn_mask, dropout_p, is_causal, scale, enable_gqa)
    _check_attention(query, key, value, attn_mask, is_causal)
    if enable_gqa and key.ndim >= 3 and query.ndim >= 3:
        heads = query.shape[-3]
        if heads % key.shape[-3] or heads % value.shape[-3]:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
        key, value = _repeat_heads(key, heads), _repeat_heads(value, heads)
    if scale is None:
        scale = 1 / math.sqrt(query.shape[-1])
    scores = matmul(query * scale, key.transpose(-2, -1))
    dead = None  # rows where nothing takes part: zeros out, and no NaN in the gradient
    if is_causal:
        length, source = query.shape[-2], key.shape[-2]
        scores = where(mx.tril(mx.ones((length, source), mx.bool_)), scores, -math.inf)
    elif attn_mask is not None:
        m = data(attn_mask)
        if m.dtype == mx.bool_:
            scores = where(m, scores, -math.inf)
            dead = mx.logical_not(mx.any(m, axis=-1, keepdims=True))
        else:
            scores = scores + (attn_mask if m.dtype == scores.dtype else attn_mask.to(scores.dtype))
            dead = mx.all(data(scores) == -math.inf, axis=-1, keepdims=True)
        scores = where(dead, 0.0, scores)
    attn = softmax(scores, -1)
    if dead is not None:
        attn = where(dead, 0.0, attn)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p)
    return matmul(attn, value)


# ---------------------------------------------------------------------------------------------------- similarity
def _clamped_norm(x, dim: int, eps: float):
    """``||x||`` along ``dim`` with its value clamped to at least ``eps`` but its gradient unclamped: PyTorch clamps
    the norm in place under no_grad."""
    n = norm(x, 2, dim, keepdim=True)
    return n + (n.clamp_min(eps) - n).detach()


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` (the inputs broadcast first); each
    input is divided by its norm before the product, which keeps the result in [-1, 1].

    :param x1: the first vectors.
    :param x2: the second vectors (broadcast against ``x1``).
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("cosine_similarity", cosine_similarity, x1, x2, dim, eps)
    if tuple(x1.shape) != tuple(x2.shape):
        x1, x2 = broadcast_tensors(x1, x2)
    if not mx.issubdtype(x1.dtype, mx.floating):
        x1, x2 = x1.to(mx.float32), x2.to(mx.float32)
    cos = ((x1 / _clamped_norm(x1, dim, eps)) * (x2 / _clamped_norm(x2, dim, eps))).sum(dim)
    # rounding can leave a cosine an ulp past +-1 (PyTorch's stays within, its tests check): the value is clamped,
    # the gradient is the sum's (the subtraction is exact this close to 1)
    return cos - (cos - cos.clamp(-1.0, 1.0)).detach()


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim (the inputs broadcast).

    :param x1: the first vectors.
    :param x2: the second vectors.
    :param p: the norm's order.
    """
    return norm(x1 - x2 + eps, p, max(x1.ndim, x2.ndim) - 1, keepdim)
