"""Loss modules (PyTorch's ``torch.nn`` losses): each holds its options and calls the function of the same name in
``lucid.nn.functional`` (see ``lucid/ops/loss.py`` for the formulas and reductions). Class weights and
``pos_weight`` are buffers, as in PyTorch, so they follow ``.to()`` and appear in ``state_dict``."""
from __future__ import annotations

from ..._tensor import Tensor
from ...ops.loss import _legacy_reduction
from .. import functional as F
from .module import Module


class _Loss(Module):
    """Base of the losses: ``reduction`` ('mean', 'sum' or 'none'), or the deprecated ``size_average`` and
    ``reduce`` that override it."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with per-class ``weight`` (a buffer, possibly None)."""

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean absolute error ``|input - target|``. Shapes: input (*), target (*), output () or (*) for 'none'.

    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).

    >>> import lucid
    >>> loss = lucid.nn.L1Loss()
    >>> loss(lucid.tensor([1.0, 2.0]), lucid.tensor([0.0, 4.0]))
    Tensor(1.5)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error ``(input - target) ** 2``. Shapes: input (*), target (*), output () or (*).

    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).

    >>> import lucid
    >>> loss = lucid.nn.MSELoss()
    >>> loss(lucid.tensor([1.0, 2.0]), lucid.tensor([0.0, 4.0]))
    Tensor(2.5)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above: ``0.5 * d**2 / beta`` or ``|d| - 0.5 * beta``.

    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    :param beta: where the loss turns from quadratic to linear (>= 0; 0 gives L1).

    >>> import lucid
    >>> loss = lucid.nn.SmoothL1Loss()
    >>> loss(lucid.tensor([0.5, 3.0]), lucid.tensor([0.0, 0.0]))
    Tensor(1.3125)
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, linear above: ``0.5 * d**2`` or ``delta * (|d| - 0.5 * delta)``.

    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    :param delta: where the loss turns from quadratic to linear (> 0).

    >>> import lucid
    >>> loss = lucid.nn.HuberLoss(delta=1.0)
    >>> loss(lucid.tensor([0.5, 3.0]), lucid.tensor([0.0, 0.0]))
    Tensor(1.3125)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices. Shapes: input (N, C) / (N, C, d1, ...) / (C) log-probabilities,
    target (N) / (N, d1, ...) / () int64, output () or the target's shape for 'none'.

    :param weight: a rescaling weight per class, shape (C,) (a buffer).
    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param ignore_index: a target value that contributes nothing (nor to the mean's denominator).
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).

    >>> import lucid
    >>> loss = lucid.nn.NLLLoss()
    >>> loss(lucid.tensor([[-0.5, -1.0]]), lucid.tensor([1]))
    Tensor(1.)
    """

    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices (as NLLLoss's target) or class probabilities (the input's
    shape), with optional class ``weight``, ``ignore_index`` and ``label_smoothing``.

    Shapes: input (N, C), (N, C, d1, ...) or (C,) logits; target (N), (N, d1, ...) or () int64 class indices,
    or class probabilities of the input's shape; output () or the target's shape for 'none'.

    :param weight: a rescaling weight per class, shape (C,) (a buffer).
    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param ignore_index: a target value that contributes nothing (nor to the mean's denominator).
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    :param label_smoothing: in [0, 1]: the target mixed with the uniform distribution.

    >>> import lucid
    >>> loss = lucid.nn.CrossEntropyLoss()
    >>> round(loss(lucid.tensor([[2.0, 0.0, 0.0]]), lucid.tensor([0])).item(), 4)
    0.2395
    """

    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities ``input`` (*) against ``target`` (*); ``weight`` broadcasts.

    :param weight: a rescaling weight, broadcast against the input (a buffer).
    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).

    >>> import lucid
    >>> loss = lucid.nn.BCELoss()
    >>> loss(lucid.tensor([0.5]), lucid.tensor([1.0])).item()
    0.6931471824645996
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy in one stable step; ``pos_weight`` (one per class, broadcast along the last
    dim) weighs the positive examples.

    :param weight: a rescaling weight, broadcast against the input (a buffer).
    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    :param pos_weight: a weight of the positive examples per class, broadcast along the last dim (a buffer).

    >>> import lucid
    >>> loss = lucid.nn.BCEWithLogitsLoss()
    >>> loss(lucid.tensor([0.0]), lucid.tensor([1.0])).item()
    0.6931471824645996
    """

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight: Tensor | None = None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """KL divergence of ``target`` (probabilities, or log-probabilities with ``log_target``) from log-probabilities
    ``input``; use ``reduction='batchmean'`` for the per-sample KL divergence.

    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default; over every element), 'batchmean' (over the batch: the KL divergence), 'sum' or
        'none'.
    :param log_target: ``target`` holds log-probabilities.
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood of ``target`` counts given rates (their logs with ``log_input``).

    :param log_input: the input holds log-rates (the loss is ``exp(input) - target * input``); else rates.
    :param full: add Stirling's approximation of ``log(target!)``.
    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param eps: added to rates before the log when ``log_input=False``.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    """

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8,
                 reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood of ``target`` given means ``input`` and variances ``var``.

    :param full: add the constant ``0.5 * log(2 * pi)``.
    :param eps: variances are clamped below at ``eps`` (for stability).
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` for target 1, ``max(0, cos(x1, x2) - margin)`` for target -1. Shapes: inputs (N, D) or
    (D), target (N) or ().

    :param margin: in [-1, 1]; 0 to 0.5 is usual.
    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """``max(0, -target * (input1 - input2) + margin)``, target 1 or -1.

    :param margin: the margin.
    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(0, d(anchor, positive) - d(anchor, negative) + margin)`` with the p-norm pairwise distance.

    :param margin: the margin (> 0).
    :param p: the norm of the pairwise distance.
    :param eps: added to the differences for stability.
    :param swap: use the distance between positive and negative when it is smaller (the distance swap).
    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss ``log(1 + exp(-target * input))``, target 1 or -1.

    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``input`` for target 1, ``max(0, margin - input)`` for target -1.

    :param margin: the margin.
    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    """

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss of (N, C) logits against 0/1 targets, averaged over the classes.

    :param weight: a rescaling weight per class, shape (C,) (a buffer).
    :param size_average: deprecated (use ``reduction``): False means 'sum'.
    :param reduce: deprecated (use ``reduction``): False means 'none'.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist Temporal Classification loss of log-probabilities (T, N, C) against unaligned targets.

    :param blank: the blank label's index.
    :param reduction: 'mean' (default), 'sum' or 'none' (the per-element losses).
    :param zero_infinity: replace infinite losses (impossible alignments) and their gradients by zero.
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths, target_lengths) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


__all__ = ["L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
           "BCEWithLogitsLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CosineEmbeddingLoss",
           "MarginRankingLoss", "TripletMarginLoss", "SoftMarginLoss", "HingeEmbeddingLoss",
           "MultiLabelSoftMarginLoss", "CTCLoss"]
