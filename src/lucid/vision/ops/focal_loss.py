"""torchvision.ops.sigmoid_focal_loss (Lin et al., 2017, "Focal Loss for Dense Object Detection")."""
from __future__ import annotations

from ... import nn
from ..._tensor import Tensor


def sigmoid_focal_loss(inputs: Tensor, targets: Tensor, alpha: float = 0.25, gamma: float = 2,
                       reduction: str = "none") -> Tensor:
    """The focal loss of logits ``inputs`` against binary ``targets`` (same shape, 0/1 or soft labels):
    ``alpha_t * (1 - p_t) ** gamma * BCE(inputs, targets)`` with ``p_t`` the probability given to the true class
    and ``alpha_t = alpha`` for positives, ``1 - alpha`` for negatives (no weighting when ``alpha < 0``).
    ``reduction``: ``'none'`` (per element), ``'mean'`` or ``'sum'``."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: "
                         "'none', 'mean', 'sum'")
    p = inputs.sigmoid()
    ce_loss = nn.functional.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss
