"""torchvision.ops.stochastic_depth (Huang et al., 2016): drop a residual branch at random during training."""
from __future__ import annotations

from ... import nn
from ..._tensor import Tensor


def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
    """Zero ``input`` with probability ``p`` - per sample (``mode='row'``: each entry of the first dimension) or
    all at once (``'batch'``) - and scale what is kept by ``1 / (1 - p)``. The identity when not ``training`` or
    ``p == 0``."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ("batch", "row"):
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    survival_rate = 1.0 - p
    size = [input.shape[0]] + [1] * (input.dim() - 1) if mode == "row" else [1] * input.dim()
    noise = input.new_empty(size).bernoulli_(survival_rate)
    if survival_rate > 0.0:
        noise = noise / survival_rate
    return input * noise


class StochasticDepth(nn.Module):
    """``stochastic_depth`` as a module (it follows the module's ``training`` flag)."""

    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input: Tensor) -> Tensor:
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"
