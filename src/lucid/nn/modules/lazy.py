"""Lazy modules (PyTorch's ``LazyModuleMixin``): layers whose input size is read from their first input.

Until the first call their parameters and buffers are ``UninitializedParameter`` / ``UninitializedBuffer``
(``lucid.nn.parameter``). A forward pre-hook runs ``initialize_parameters(*args)`` before the first forward, which
materializes them in place (so an optimizer built before the call holds the right objects), initialises them as the
eager layer would, removes the hooks and turns the module into ``cls_to_become`` (LazyConv2d -> Conv2d).
``state_dict`` holds the uninitialized objects as they are; ``load_state_dict`` of an initialized checkpoint
materializes them to the checkpoint's shapes first (the module keeps its lazy class until its first call, as in
PyTorch, and that call then leaves the loaded values alone).
"""
from __future__ import annotations

import itertools

from ... import _creation
from ..._dtype import int64
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .module import Module


class LazyModuleMixin:
    """The lazy behaviour; a subclass defines ``initialize_parameters(*args, **kwargs)`` and ``cls_to_become``."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        # an initialized checkpoint gives the uninitialized tensors their shapes; lazy into lazy stays lazy
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param) and not is_lazy(state_dict[key]):
                param.materialize(tuple(state_dict[key].shape))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # an uninitialized entry loaded into a still uninitialized tensor has nothing to copy (PyTorch copies
        # nothing either): only the key is matched
        lazy_pairs = [prefix + name for name, p in itertools.chain(self._parameters.items(), self._buffers.items())
                      if p is not None and is_lazy(p) and is_lazy(state_dict.get(prefix + name))]
        if lazy_pairs:
            for hook in self._load_state_dict_pre_hooks.values():
                hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
            lazy_pairs = [k for k in lazy_pairs if is_lazy(getattr(self, k[len(prefix):]))]
            state_dict = {k: v for k, v in state_dict.items() if k not in lazy_pairs}
            before = len(missing_keys)
            Module._load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                                         unexpected_keys, error_msgs)
            missing_keys[before:] = [k for k in missing_keys[before:] if k not in lazy_pairs]
            return
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module (not its children) is still uninitialized."""
        return any(is_lazy(p) for p in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


# ---------------------------------------------------------------------------------------------------- Linear
class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is the last dim of its first input; it then becomes a Linear.

    :param out_features: the size of each output's last dimension.
    :param bias: learn an additive bias.
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()
        if self.in_features == 0:  # loaded from a state_dict: the size comes from the loaded weight
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


# ---------------------------------------------------------------------------------------------------- convolutions
class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _lazy_init(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def _get_in_channels(self, input) -> int:
        n = self._n + 1
        if input.ndim not in (n, n + 1):
            raise RuntimeError(f"Expected {n}D (unbatched) or {n + 1}D (batched) input to {self.__class__.__name__}, "
                               f"but got input of size: {input.size()}")
        return input.shape[1] if input.ndim == n + 1 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(base):
    class LazyConv(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                     bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
            # in and out channels 0 and no bias: nothing is allocated that the first call would replace
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                             device=device, dtype=dtype)
            self._lazy_init(out_channels, bias, device, dtype)

    return LazyConv


def _lazy_conv_transpose(base):
    class LazyConvTranspose(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                     bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode, device=device, dtype=dtype)
            self._lazy_init(out_channels, bias, device, dtype)

    return LazyConvTranspose


_CONV_PARAMS = """

    :param out_channels: the number of output channels (``in_channels`` comes from the first input).
    :param kernel_size: the kernel size (an int or one per dim).
    :param stride: the stride.
    :param padding: the padding (for a convolution also 'same' or 'valid').
    :param dilation: the spacing between kernel elements.
    :param groups: the number of blocked connections from input to output channels.
    :param bias: learn an additive bias.
    :param padding_mode: 'zeros', 'reflect', 'replicate' or 'circular'.
    """
_TRANSPOSE_PARAMS = _CONV_PARAMS.replace(
    "    :param dilation:", "    :param output_padding: extra size added to one side of the output.\n    :param dilation:")
_NORM_PARAMS = """

    :param eps: added to the variance.
    :param momentum: the running statistics' update factor (None: a cumulative average).
    :param affine: learn a per-channel weight (and bias).
    :param track_running_stats: keep running statistics.
    :param bias: with ``affine``, learn the bias too.
    """


def _named(cls, name: str, doc: str):
    cls.__name__ = cls.__qualname__ = name
    cls.__doc__ = doc + (_TRANSPOSE_PARAMS if "Transpose" in name else _CONV_PARAMS)
    return cls


LazyConv1d = _named(_lazy_conv(Conv1d), "LazyConv1d", "A Conv1d whose in_channels is read from its first input.")
LazyConv2d = _named(_lazy_conv(Conv2d), "LazyConv2d", "A Conv2d whose in_channels is read from its first input.")
LazyConv3d = _named(_lazy_conv(Conv3d), "LazyConv3d", "A Conv3d whose in_channels is read from its first input.")
LazyConvTranspose1d = _named(_lazy_conv_transpose(ConvTranspose1d), "LazyConvTranspose1d",
                             "A ConvTranspose1d whose in_channels is read from its first input.")
LazyConvTranspose2d = _named(_lazy_conv_transpose(ConvTranspose2d), "LazyConvTranspose2d",
                             "A ConvTranspose2d whose in_channels is read from its first input.")
LazyConvTranspose3d = _named(_lazy_conv_transpose(ConvTranspose3d), "LazyConvTranspose3d",
                             "A ConvTranspose3d whose in_channels is read from its first input.")


# ---------------------------------------------------------------------------------------------------- norms
class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias: bool = True):
        # affine and the running statistics off: nothing is allocated that the first call would replace
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _creation.tensor(0, dtype=int64)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base, name: str):
    cls = type(name, (_LazyNormBase, base), {"cls_to_become": base, "__module__": __name__})
    cls.__doc__ = f"A {base.__name__} whose num_features is read from its first input (dim 1)." + _NORM_PARAMS
    return cls


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, "LazyBatchNorm1d")
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, "LazyBatchNorm2d")
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, "LazyBatchNorm3d")
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, "LazyInstanceNorm1d")
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, "LazyInstanceNorm2d")
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, "LazyInstanceNorm3d")

# (LazyModuleMixin stays in this module, as PyTorch keeps it in torch.nn.modules.lazy)
__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
