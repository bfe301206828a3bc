"""Batch and instance normalization layers with PyTorch's parameters (weight, bias) and buffers (running_mean,
running_var, num_batches_tracked).

Training normalizes with the batch's statistics and moves the running ones toward the batch mean and unbiased
variance by ``momentum`` (``momentum=None``: a cumulative average, factor 1 / num_batches_tracked); evaluation
normalizes with the running statistics. The factor of the cumulative average is a 0-d tensor computed from the
buffer, so nothing is read back from the device.
"""
from __future__ import annotations

import warnings

from ... import _creation
from ..._params import describe_layers
from ..._dtype import int64
from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .normalization import register_affine, reset_affine


class _NormBase(Module):
    """Parameters, buffers, initialisation, repr and old-checkpoint loading of batch and instance norm."""

    _version = 2  # version 2 added num_batches_tracked

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        register_affine(self, num_features, affine, bias, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", _creation.ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", _creation.tensor(0, dtype=int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        # checkpoints from before version 2 have no num_batches_tracked: keep the module's (PyTorch does the same),
        # or 0 for a module on the meta device (whose counter has no value to keep)
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            n = self.num_batches_tracked
            state_dict[key] = n if n is not None and not n.is_meta else _creation.tensor(0, dtype=int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    _dims: tuple  # the accepted input ranks

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self._dims:
            expected = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {expected} input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = (1.0 / self.num_batches_tracked).to(self.running_mean.dtype)
        # in eval mode the batch's statistics are used only when there are no running ones
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep_running else None,
                            self.running_var if keep_running else None, self.weight, self.bias, use_batch_stats,
                            factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) over the batch (and length) per channel.

    >>> import lucid
    >>> lucid.nn.BatchNorm1d(3)(lucid.zeros(4, 3)).shape
    lucid.Size([4, 3])
    """
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) per channel.

    >>> import lucid
    >>> lucid.nn.BatchNorm2d(3)(lucid.zeros(4, 3, 5, 5)).shape
    lucid.Size([4, 3, 5, 5])
    """
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) per channel.

    >>> import lucid
    >>> lucid.nn.BatchNorm3d(3)(lucid.zeros(4, 3, 2, 5, 5)).shape
    lucid.Size([4, 3, 2, 5, 5])
    """
    _dims = (5,)


class _InstanceNorm(_NormBase):
    _no_batch_dim: int  # the rank of an unbatched input

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        n = self._no_batch_dim
        if input.ndim not in (n, n + 1):
            raise ValueError(f"expected {n}D or {n + 1}D input (got {input.ndim}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False")
        if input.ndim == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        # checkpoints from before PyTorch 0.4 saved running stats that instance norm no longer tracks by default
        if local_metadata.get("version", None) is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
            if keys:
                klass = type(self).__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                    "state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} does not "
                    "track running stats by default since 0.4.0. Please remove these keys from state_dict. If the "
                    "running stats are actually needed, instead set track_running_stats=True in {klass} to enable "
                    "them. See the documentation of {klass} for details.".format(
                        names=" and ".join(f'"{k}"' for k in keys), klass=klass))
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class InstanceNorm1d(_InstanceNorm):
    """Normalize each (sample, channel) of (N, C, L) or (C, L) over L.

    """
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Normalize each (sample, channel) of (N, C, H, W) or (C, H, W) over H and W.

    """
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Normalize each (sample, channel) of (N, C, D, H, W) or (C, D, H, W) over D, H and W.

    """
    _no_batch_dim = 4


__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


# the normalizations' arguments, described once for the six classes (appended to their docstrings)
_ARGS = {
    "num_features": "C, the channels of an input (N, C, ...).",
    "eps": "added to the variance for numerical stability.",
    "momentum": "the running statistics' update weight (None: a cumulative average).",
    "affine": "learn a per-channel scale (``weight``) and shift (``bias``).",
    "track_running_stats": "keep running mean/variance (used in eval mode).",
    "bias": "with ``affine``, learn the shift too.",
}
describe_layers((BatchNorm1d, BatchNorm2d, BatchNorm3d), _ARGS)
describe_layers((InstanceNorm1d, InstanceNorm2d, InstanceNorm3d), {
    **_ARGS,
    "affine": "learn a per-channel scale and shift (default False).",
    "track_running_stats": "keep running statistics (default False).",
})

