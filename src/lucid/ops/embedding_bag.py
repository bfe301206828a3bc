"""``embedding_bag``: sums, means or maxima of bags of embedding rows without materialising the per-token output
the way ``embedding(...).sum(...)`` over a ragged batch would need.

Bags are the rows of a 2-D input, or the runs of a 1-D input that start at ``offsets``. The offsets are read (a
sync, as PyTorch's CPU kernel validates them too) to lay the bags out as a padded (bags, longest bag) table of
token positions; the token indices themselves stay lazy and go through ``embedding`` (and so through
``lucid._checks.checked_index``). Everything after the lookup is differentiable lucid ops: gradients reach the
weight (and ``per_sample_weights``) as in PyTorch, with max sending each bag's gradient to its maximum.
"""
from __future__ import annotations

__all__ = ["embedding_bag", "embedding_bag_with_aux"]

import mlx.core as mx
import numpy as np

from .. import _cpu_route
from .._legacy import type_name
from .._checks import checked_index, mark_known
from .._tensor import Tensor, _wrap
from ._core import data
from .elementwise import clamp, where
from .index import index_select
from .nn_basic import embedding


def _layout(input: Tensor, offsets, include_last_offset: bool) -> tuple[np.ndarray, np.ndarray]:
    """(positions, valid): for each bag, the positions of its tokens in the flattened input, padded to the longest
    bag (padding entries point at position 0 and are not valid)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                             f"length sequences. However, found offsets of type {type(offsets).__name__}")
        b, length = input.shape
        return np.arange(b * length).reshape(b, length), np.ones((b, length), bool)
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    total = input.shape[0]
    off = offsets._to_numpy().astype(np.int64)
    if off.size and off[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {off[0]}")
    if (np.diff(off) < 0).any() or (off.size and off[-1] > total):
        raise RuntimeError(f"offsets must be non-decreasing and at most the number of indices ({total}), got "
                           f"{off.tolist()}")
    # with include_last_offset the last bag still runs to the end of the input, as PyTorch's CPU kernel does (its
    # offset2bag puts every index past the last start in the last bag)
    starts, ends = (off[:-1], np.append(off[1:-1], total)) if include_last_offset and off.size else \
        (off, np.append(off[1:], total))
    lengths = ends - starts
    longest = int(lengths.max()) if lengths.size else 0
    j = np.arange(longest)
    valid = j[None, :] < lengths[:, None]
    return np.where(valid, starts[:, None] + j[None, :], 0), valid


def _index_error(value) -> RuntimeError:
    return RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {value}")


@_cpu_route.float64_args
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2, scale_grad_by_freq: bool = False,
                  mode: str = "mean", sparse: bool = False, per_sample_weights=None,
                  include_last_offset: bool = False, padding_idx=None) -> Tensor:
    """(bags, embedding_dim): the ``mode`` ("sum", "mean" or "max") of the rows of ``weight`` looked up by each
    bag's indices. ``per_sample_weights`` (input's shape, "sum" only) scale each row; entries equal to
    ``padding_idx`` are left out of their bag (and of its count for "mean"); an empty bag gives zeros.

    :param weight: the embedding matrix, (num_embeddings, embedding_dim).
    :param offsets: the start of each bag in a 1-D input.
    :param max_norm: renormalize looked-up rows whose norm exceeds it (in place).
    :param scale_grad_by_freq: divide each row's gradient by its index's count.
    :param mode: 'sum', 'mean' or 'max'.
    :param sparse: accepted; gradients are dense.
    :param per_sample_weights: a weight per index, for mode 'sum'.
    :param include_last_offset: ``offsets`` has one more entry, the end of the last bag.
    :param padding_idx: a row left out of the bags.
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                      "on GitHub.")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not None, "
                             f"then it must have the same shape as the input ({list(input.shape)})")
        if per_sample_weights.dtype != weight.dtype:
            raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as tensor for argument "
                               f"#1 'per_sample_weights'; but type {type_name(weight.dtype)} does not equal "
                               f"{type_name(per_sample_weights.dtype)} (while checking arguments for embedding_bag)")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if padding_idx is not None and not -weight.shape[0] <= padding_idx < weight.shape[0]:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{weight.shape[0]} through "
                           f"{weight.shape[0] - 1}, but got {padding_idx}")
    positions, valid = _layout(input, offsets, include_last_offset)
    bags, longest = positions.shape
    dim = weight.shape[1]
    if longest == 0:  # every bag empty: zeros that stay on the graph (sums over no rows), so backward gives zero
        out = weight[:0].sum(0).expand(bags, dim)  # gradients to weight and per_sample_weights, as PyTorch's
        return out if per_sample_weights is None else out + per_sample_weights.sum()
    if padding_idx is not None:
        padding_idx %= weight.shape[0]
    # the indices are checked here, with embedding_bag's own error (embedding's check then finds them safe); before
    # flattening, so that indices with values on the host (a tensor built from a list) are checked at once
    flat = _wrap(checked_index(data(input), weight.shape[0], _index_error, "embedding_bag").reshape(-1))
    rows = embedding(flat, weight, None, max_norm, norm_type, scale_grad_by_freq)  # (tokens, dim)
    pos = _wrap(mark_known(mx.array(positions.reshape(-1), dtype=mx.int64)))  # host values: checked at once
    table = index_select(rows, 0, pos).reshape(bags, longest, dim)
    mask = _wrap(mx.array(valid))
    if padding_idx is not None:
        mask = mask & (index_select(flat, 0, pos).reshape(bags, longest) != padding_idx)
    mask = mask.unsqueeze(-1)
    count = mask.sum(1)  # (bags, 1)
    if mode == "max":
        best = where(mask, table, float("-inf")).max(1).values
        return where(count > 0, best, 0.0)
    if per_sample_weights is not None:
        table = table * index_select(per_sample_weights.reshape(-1), 0, pos).reshape(bags, longest, 1)
    total = where(mask, table, 0.0).sum(1)
    return total if mode == "sum" else total / clamp(count, 1).to(total.dtype)



_MODES = ("sum", "mean", "max")


def embedding_bag_with_aux(weight, indices, offsets, scale_grad_by_freq: bool = False, mode: int = 0,
                           sparse: bool = False, per_sample_weights=None, include_last_offset: bool = False,
                           padding_idx=None) -> tuple:
    """``torch.embedding_bag``: the bags' output (as ``nn.functional.embedding_bag``, with ``mode`` 0 sum, 1 mean,
    2 max and ``weight`` first) and the three int64 tensors PyTorch's kernel returns beside it: ``offset2bag`` (the
    bag of each index; empty for a float32/float16/bfloat16 sum without ``padding_idx``, which PyTorch computes
    without it), ``bag_size`` (the non-padding indices per bag for mean and max, zeros of ``offsets``' length for
    sum) and ``max_indices`` (for max, the weight row each output element came from, 0 in an empty bag; else a copy
    of ``bag_size``)."""
    if not 0 <= mode < len(_MODES):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    for name, t, ok, wanted in (("input", indices, indices.ndim in (1, 2), "a 1D or 2D"),
                                ("offsets", offsets, offsets.ndim == 1, "a 1D"), ("weight", weight, weight.ndim == 2,
                                                                                 "a 2D")):
        if not ok:  # the native op's errors (RuntimeError; nn.functional.embedding_bag raises ValueError)
            raise RuntimeError(f"{name} has to be {wanted} Tensor, but got Tensor of dimension {t.ndim}")
    output = embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq, _MODES[mode], sparse,
                           per_sample_weights, include_last_offset, padding_idx)
    positions, valid = _layout(indices, offsets, include_last_offset)
    bags, longest = positions.shape
    total = indices.shape[0]
    off = offsets._to_numpy().astype(np.int64)  # already read (and validated) by _layout
    if mode == 0 and weight.dtype in (mx.float32, mx.float16, mx.bfloat16) and padding_idx is None:
        offset2bag = np.zeros((0,), np.int64)
    else:  # an index past the last offset (include_last_offset) belongs to the last bag, as in PyTorch
        offset2bag = np.clip(np.searchsorted(off[:bags], np.arange(total), "right") - 1, 0, None)
    offset2bag = _wrap(mx.array(offset2bag, dtype=mx.int64))
    if mode == 0:
        bag_size = _wrap(mx.zeros((off.shape[0],), mx.int64))
        return output, offset2bag, bag_size, bag_size.clone()
    keep = mx.array(valid)
    pos = mx.array(positions.reshape(-1), dtype=mx.int64)
    rows = mx.take(data(indices), pos).reshape(bags, longest) if longest else mx.zeros((bags, 0), mx.int64)
    if padding_idx is not None:
        keep = keep & (rows != padding_idx % weight.shape[0])
    bag_size = _wrap(mx.sum(keep, axis=1).astype(mx.int64))
    if mode == 1:
        return output, offset2bag, bag_size, bag_size.clone()
    if longest == 0:
        return output, offset2bag, bag_size, _wrap(mx.zeros((bags, weight.shape[1]), mx.int64))
    # the indices were checked by embedding_bag above; out-of-range ones are clipped here so MLX never sees them
    safe = mx.clip(rows, 0, weight.shape[0] - 1)
    table = mx.where(keep[..., None], data(weight.detach())[safe], -mx.inf)  # (bags, longest, dim)
    first = mx.argmax(table, axis=1)  # (bags, dim): the first maximum's place in its bag
    best = mx.take_along_axis(safe[..., None], first[:, None, :], axis=1).squeeze(1)
    max_indices = mx.where(mx.any(keep, axis=1)[:, None], best, 0).astype(mx.int64)
    return output, offset2bag, bag_size, _wrap(max_indices)


def native_embedding_bag(weight, indices, offsets, scale_grad_by_freq: bool = False, mode: int = 0,
                         sparse: bool = False, per_sample_weights=None, include_last_offset: bool = False,
                         padding_idx: int = -1) -> tuple:
    """PyTorch's native ``torch._embedding_bag`` (and ``_embedding_bag_forward_only``), which ``torch.embedding_bag``
    calls once it has made ``padding_idx`` non-negative: ``embedding_bag_with_aux`` where a negative ``padding_idx``
    means no padding row (in ``torch.embedding_bag`` -1 is the last row)."""
    return embedding_bag_with_aux(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                                  include_last_offset, None if padding_idx is None or padding_idx < 0 else padding_idx)
