"""AdaptiveLogSoftmaxWithLoss (Grave et al. 2016, "Efficient softmax approximation for GPUs"), PyTorch's
``torch.nn.AdaptiveLogSoftmaxWithLoss``: frequent classes (the shortlist) share a head softmax with one entry per
cluster of rarer classes; a rare class's log-probability is its cluster's head entry plus its log-probability within
the cluster, whose projection is narrower (``in_features // div_value ** (i + 1)``).

PyTorch picks each cluster's rows with ``nonzero`` (a shape that depends on the targets' values, which would need
them on the host); here every cluster's log-softmax is computed for every row and each row takes the one its target
falls in, so nothing waits for the targets (the cost: the clusters' small projections run on the whole batch).
"""
from __future__ import annotations

from collections import namedtuple

import mlx.core as mx

from ..._checks import checked_index
from ..._tensor import Tensor, _wrap
from ...ops._core import data
from ...ops.shape import cat
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax over ``n_classes`` split at ``cutoffs``; ``forward(input, target)`` returns
    ``(output, loss)``: the target classes' log-probabilities and their negative mean. ``log_prob(input)`` gives the
    full (N, n_classes) log-distribution and ``predict(input)`` its argmax.

    :param in_features: the size of each input's last dimension.
    :param n_classes: the number of classes.
    :param cutoffs: increasing class indices in [1, n_classes - 1] where the clusters start.
    :param div_value: the factor by which each cluster's projection is narrower than the previous one's.
    :param head_bias: give the head a bias.
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0, head_bias: bool = False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                                        Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        if target_.ndim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.ndim > 0
        input = input_ if batched else input_.unsqueeze(0)
        raw = data(target_)

        def out_of_range(_):
            values = raw.tolist() if raw.ndim else [raw.item()]
            return RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                                f"[{min(values)}, {max(values)}] were found. ")

        target = checked_index(raw, self.n_classes, out_of_range, "AdaptiveLogSoftmaxWithLoss").reshape(-1)
        head_index = target
        output = None
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            inside = (target >= low) & (target < high)
            head_index = mx.where(inside, self.shortlist_size + i, head_index)
            relative = mx.where(inside, target - low, 0).reshape(-1, 1)
            local = F.log_softmax(self.tail[i](input), dim=1).gather(1, _wrap(relative)).reshape(-1)
            term = local.where(_wrap(inside), 0.0)
            output = term if output is None else output + term
        head_logprob = F.log_softmax(self.head(input), dim=1)
        picked = head_logprob.gather(1, _wrap(head_index.reshape(-1, 1))).reshape(-1)
        output = picked if output is None else output + picked
        loss = (-output).mean()
        if not batched:
            output = output.reshape(())
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """The log-probabilities of all ``n_classes`` classes: (N, in_features) -> (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most probable class of each row: (N, in_features) -> (N,)."""
        return self.log_prob(input).argmax(dim=1)


__all__ = ["AdaptiveLogSoftmaxWithLoss"]
