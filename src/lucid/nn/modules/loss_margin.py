"""The multi-class margin losses, the triplet loss with a chosen distance and LinearCrossEntropyLoss (the functions
are in ``lucid/ops/loss_margin.py``)."""
from __future__ import annotations

import math

from ..._tensor import Tensor
from .. import functional as F
from .distance import PairwiseDistance
from .linear import Linear
from .loss import _Loss, _WeightedLoss


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss ``sum_{i != y} w[y] * max(0, margin - x[y] + x[i]) ** p / C`` (p 1 or 2).

    :param p: the hinge's power, 1 or 2.
    :param margin: the margin the target's score must lead by.
    :param weight: per-class weights (C,), or None.
    :param size_average: deprecated (see ``reduction``).
    :param reduce: deprecated (see ``reduction``).
    :param reduction: 'mean', 'sum' or 'none'.
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None, size_average=None,
                 reduce=None, reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss: targets are class indices up to the first -1.

    :param size_average: deprecated (see ``reduction``).
    :param reduce: deprecated (see ``reduction``).
    :param reduction: 'mean', 'sum' or 'none'.
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """``max(0, d(anchor, positive) - d(anchor, negative) + margin)`` with ``distance_function`` d
    (a PairwiseDistance() by default).

    :param distance_function: d(x, y) -> a distance per row; None is PairwiseDistance().
    :param margin: the margin, > 0.
    :param swap: use min(d(anchor, negative), d(positive, negative)) as the negative distance.
    :param reduction: 'mean', 'sum' or 'none'.
    """

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False, reduction: str = "mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             f"instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)


class LinearCrossEntropyLoss(_WeightedLoss):
    """A Linear layer (``linear``, in_features -> num_classes * prod(out_features), no bias by default) followed by
    cross entropy, as ``F.linear_cross_entropy``; ``weight`` is per class.

    :param in_features: the size of each input's last dimension.
    :param num_classes: the number of classes C.
    :param out_features: extra output dims (K-dimensional loss), () by default.
    :param bias: give the linear layer a bias.
    :param reduction: 'mean', 'sum' or 'none'.
    :param weight: per-class weights (C,), or None.
    :param ignore_index: a class index whose targets are ignored (None: -100).
    :param label_smoothing: the mixture with the uniform distribution, in [0, 1].
    :param options: PyTorch's chunking options (memory only; lucid computes the same values).
    """

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (), bias: bool = False,
                 device=None, dtype=None, reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # Linear's weight is 2-D: (C * prod(out), in), reshaped in forward
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        weight = self.linear.weight.reshape(self.num_classes, *self.out_features, self.linear.in_features)
        bias = None if self.linear.bias is None else self.linear.bias.reshape(self.num_classes, *self.out_features)
        return F.linear_cross_entropy(input, weight, target, linear_bias=bias, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")


__all__ = ["MultiMarginLoss", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss", "LinearCrossEntropyLoss"]
