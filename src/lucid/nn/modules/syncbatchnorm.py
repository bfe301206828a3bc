"""SyncBatchNorm: batch normalization whose batch statistics are taken over the whole batch split across the ranks
of ``lucid.distributed`` (PyTorch's ``torch.nn.SyncBatchNorm``), and ``convert_sync_batchnorm``.

In training, with a process group of more than one rank initialized, each rank sums its part of the batch per
channel and the sums are added over the ranks (two collectives: the sums and counts, then the squared deviations
from the global mean, so the variance is computed as accurately as a single process's). The sum over the ranks is a
differentiable op whose VJP is itself, which is PyTorch's backward: each rank's input gradient sees the gradient of
every rank's loss through the shared statistics. Otherwise (eval mode, no process group, one rank) it is plain
BatchNorm.

nn sits below lucid.distributed in lucid's layers, so the collective is handed to this module by lucid.distributed
when it is imported (``register_collective``).
"""
from __future__ import annotations

import math

from ... import _creation
from ..._grad_mode import no_grad
from ..._tensor import Tensor
from ...ops._core import defop
from ...ops.shape import cat
from .batchnorm import _BatchNorm

_collective = [None]  # process_group -> None (not initialized) or (world size, all_sum of an MLX array)


def register_collective(fn) -> None:
    """Called by lucid.distributed: ``fn(process_group)`` gives None when no process group is initialized, else the
    world size and a function summing an MLX array over the ranks."""
    _collective[0] = fn


# the sum over the ranks; its VJP sums the ranks' gradients (every rank's loss depends on every rank's input)
_all_sum = defop("sync_batch_norm_all_sum", lambda a, reduce: reduce(a), save=None,
                 vjp=lambda g, ans, a, reduce: _all_sum(g, reduce))


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over (N, C, *) whose training statistics span the batches of all ranks of ``process_group``
    (the world when None). Same arguments, parameters, buffers and state_dict as BatchNorm.

    :param num_features: the number of channels C.
    :param eps: added to the variance.
    :param momentum: the running statistics' update factor (None: a cumulative average).
    :param affine: learn a per-channel weight and bias.
    :param track_running_stats: keep running statistics (used in eval mode).
    :param process_group: the ranks to synchronize over (None: the world).
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        sync = None
        if bn_training and self.training and _collective[0] is not None:
            found = _collective[0](self.process_group)
            if found is not None and found[0] > 1:
                sync = found[1]
        if sync is None:
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = (1.0 / self.num_batches_tracked).to(self.running_mean.dtype)
        return self._synced(input, sync, factor)

    def _synced(self, x: Tensor, reduce, factor) -> Tensor:
        dims = (0,) + tuple(range(2, x.ndim))
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        count = math.prod(x.shape[d] for d in dims)
        local = cat([x.sum(dims), _creation.full((1,), count, dtype=x.dtype)])
        totals = _all_sum(local, reduce)
        n = totals[-1]
        mean = totals[:-1] / n
        centered = x - mean.reshape(shape)
        m2 = _all_sum((centered * centered).sum(dims), reduce)
        y = centered * (m2 / n + self.eps).rsqrt().reshape(shape)
        if self.weight is not None:
            y = y * self.weight.reshape(shape)
        if self.bias is not None:
            y = y + self.bias.reshape(shape)
        if self.track_running_stats and self.running_mean is not None:
            with no_grad():  # the unbiased variance of the whole batch, as BatchNorm's running_var
                self.running_mean.mul_(1 - factor).add_(mean.detach() * factor)
                self.running_var.mul_(1 - factor).add_((m2 / (n - 1)).detach() * factor)
        return y

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*D layer replaced by a SyncBatchNorm holding the same parameters (the
        same Parameter objects), running statistics and training mode."""
        converted = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                      module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return converted


__all__ = ["SyncBatchNorm"]
