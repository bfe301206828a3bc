"""CrossMapLRN2d: local response normalization across channels in PyTorch's legacy (Lua Torch) form,
``torch.nn.CrossMapLRN2d``: ``y = x * (k + alpha / size * s) ** -beta`` with ``s`` a running sum of squares over
neighbouring channels, built exactly as PyTorch's recurrence builds it (its window keeps channel 0 once the window
has moved past it, as PyTorch's does). The sum is a fixed (C, C) 0/1 matrix applied to x**2, so gradients of every
order are those of the formula. On purpose unlike PyTorch: its hand-written backward is not the derivative of its
forward (torch.autograd.gradcheck fails on it, even for 3 channels); lucid's gradient is the exact one."""
from __future__ import annotations

import mlx.core as mx

from ..._tensor import Tensor, _wrap
from .module import Module


def _window(channels: int, size: int) -> mx.array:
    """The (C, C) matrix of PyTorch's recurrence: row c marks the squares summed into channel c's scale."""
    pre_pad = int((size - 1) / 2 + 1)
    rows = [[1.0 if j < min(pre_pad, channels) else 0.0 for j in range(channels)]]
    for c in range(1, channels):
        row = list(rows[-1])
        if c < channels - pre_pad + 1:
            row[c + pre_pad - 1] += 1.0
        if c > pre_pad:
            row[c - pre_pad] -= 1.0
        rows.append(row)
    return mx.array(rows)


class CrossMapLRN2d(Module):
    """Legacy cross-channel LRN over (N, C, H, W).

    :param size: the number of neighbouring channels summed.
    :param alpha: the scale of the sum.
    :param beta: the exponent.
    :param k: the additive constant.
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
        n, c, h, w = input.shape
        window = _wrap(_window(c, self.size).astype(input.dtype))
        sums = (window @ (input * input).reshape(n, c, h * w)).reshape(n, c, h, w)
        return input * (sums * (self.alpha / self.size) + self.k).pow(-self.beta)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ = ["CrossMapLRN2d"]
