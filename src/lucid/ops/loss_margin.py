"""Multi-class margin losses (``lucid.nn.functional``), PyTorch's formulas, reductions and errors:

- ``multi_margin_loss``: per sample, ``sum_{i != y} w[y] * max(0, margin - x[y] + x[i]) ** p / C``;
- ``multilabel_margin_loss``: per sample, the targets are ``y`` up to its first -1, and the loss is
  ``sum_{j target} sum_{i not target} max(0, 1 - (x[j] - x[i])) / C`` (a repeated target counts again);
- ``triplet_margin_with_distance_loss``: the triplet loss with any distance function (pairwise distance by default);
- ``linear_cross_entropy``: cross_entropy of a linear layer's output (PyTorch's reference path; its ``options``
  choose how PyTorch chunks the batch to save memory, which gives the same values, so lucid accepts and ignores them).

Composed of lucid ops (a gather of the target scores, masks, sums), so float64 and gradients of every order come
from them; the class indices stay on the device and are bounds-checked by ``lucid._checks``.
"""
from __future__ import annotations

__all__ = ["multi_margin_loss", "multilabel_margin_loss", "triplet_margin_with_distance_loss", "linear_cross_entropy"]

import math

import mlx.core as mx

from .._checks import checked_index
from .._tensor import Tensor, _wrap
from ._core import data
from .elementwise import minimum
from .index import _scalar_name, gather
from .loss import _reduce, _reduction, cross_entropy
from .nn_basic import linear, pairwise_distance


def _long_target(target) -> None:
    if target.dtype != mx.int64:
        raise RuntimeError(f"expected scalar type Long but found {_scalar_name(target.dtype)}")


def _as_matrix(input) -> Tensor:
    """(N, C) from PyTorch's accepted (C,), 0-d (one class) or (N, C) input; anything else is refused."""
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0) or (input.ndim == 1 and input.shape[0] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    return input.reshape(1, -1) if input.ndim < 2 else input


def _reduce_rows(loss: Tensor, reduction: str, batched: bool) -> Tensor:
    """The per-sample losses reduced; an empty batch's mean is 0 (PyTorch's kernels), not NaN."""
    if not batched:
        loss = loss.reshape(())
    if reduction == "mean" and loss.numel() == 0:
        return loss.sum()
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """The multi-class hinge loss of scores ``input`` (N, C) or (C,) against class indices ``target`` (N,).

    :param p: 1 or 2.
    :param weight: a rescaling weight per class, (C,), or None.
    """
    reduction = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    x = _as_matrix(input)
    n, c = x.shape
    _long_target(target)
    if target.numel() != n or (input.ndim == 2 and target.ndim != 1):
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. Input "
                           f"has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    y = checked_index(data(target), c, lambda v: RuntimeError("target out of range"), "multi_margin_loss")
    y = _wrap(y.reshape(n, 1))
    hinge = (margin - gather(x, 1, y) + x).clamp_min(0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * gather(weight, 0, y.reshape(-1)).reshape(n, 1)
    # the target's own term is max(0, margin) ** p: masked out, not subtracted (exact, and no gradient through it)
    others = _wrap(mx.arange(c)[None, :] != data(y))
    # PyTorch's kernel keeps a dim of per-sample losses for a 1-D target, also beside a 1-D input
    return _reduce_rows((hinge * others).sum(1) / c, reduction, target.ndim > 0)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """The multi-label hinge loss of scores ``input`` (N, C) or (C,) against ``target`` of the same shape holding
    class indices, ended by the first -1."""
    reduction = _reduction(size_average, reduce, reduction)
    x = _as_matrix(input)
    n, c = x.shape
    _long_target(target)
    if (input.ndim <= 1 and target.numel() != c) or (input.ndim == 2 and tuple(target.shape) != (n, c)):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    t = checked_index(data(target), c, lambda v: RuntimeError("argument #2 'target' is out of range"),
                      "multilabel_margin_loss", ignore=-1).reshape(n, c)
    valid = mx.cumprod((t >= 0).astype(mx.int32), axis=1).astype(mx.bool_)  # the targets before the first -1
    safe = mx.where(valid, t, 0)
    is_target = mx.any(valid[:, :, None] & (safe[:, :, None] == mx.arange(c)), axis=1)  # (N, C)
    scores = gather(x, 1, _wrap(safe))  # (N, C): x at the j-th target
    hinge = (1 - scores.reshape(n, c, 1) + x.reshape(n, 1, c)).clamp_min(0)
    keep = _wrap((valid[:, :, None] & ~is_target[:, None, :]).astype(x.dtype))
    return _reduce_rows((hinge * keep).sum((1, 2)) / c, reduction, input.ndim == 2)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``distance_function`` d (pairwise_distance by default); ``swap``
    uses ``min(d(a, n), d(p, n))`` as the negative distance.

    :param anchor: the anchors.
    :param positive: the positive examples.
    :param negative: the negative examples.
    :param distance_function: a function of two tensors giving their distances (default ``pairwise_distance``).
    :param swap: use the positive-negative distance when it is smaller.
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction: str = "mean",
                         ignore_index: int | None = None, label_smoothing: float = 0.0, options=None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)`` for input (in,) or (N, in) and
    linear_weight (C, *out, in): the logits are (N, C, *out), the K-dimensional loss when ``out`` is not empty.
    ``ignore_index`` None means -100 (and must be None with class-probability targets).

    :param linear_weight: the output projection, (C, in_features).
    :param linear_bias: its bias, (C,), or None.
    :param weight: a rescaling weight per class, (C,), or None.
    :param label_smoothing: in [0, 1]: the target mixed with the uniform distribution.
    :param options: PyTorch's chunking options (accepted; they only save memory).
    """
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions (in_features), got "
                           f"{in_features} and {linear_weight.shape[-1]}, respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if out_features:
        rows = math.prod(out_features, start=classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index, label_smoothing=label_smoothing)
