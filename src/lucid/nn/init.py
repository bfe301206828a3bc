"""lucid.nn.init: PyTorch's parameter initialisers.

Each one fills its tensor in place, under no_grad (so it works on leaves that require grad), draws from lucid's
seeded generator (``lucid.manual_seed`` makes it reproducible) and returns the tensor. Nothing is evaluated: the
new value is a lazy MLX array until someone looks at it.
"""
from __future__ import annotations

import math
import threading
import warnings

import mlx.core as mx
import numpy as np

from .._random import next_key
from .._tensor import Tensor, _wrap
from .. import _grad_mode as gm

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity: linear/conv/sigmoid 1, tanh 5/3, relu sqrt(2),
    leaky_relu sqrt(2 / (1 + slope^2)) (slope ``param``, default 0.01), selu 3/4."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight laid out (out, in, *kernel): in * prod(kernel), out * prod(kernel)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.shape[1] * receptive_field_size, tensor.shape[0] * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


# ---------------------------------------------------------------------------------------------------- writing
def _draw_dtype(dtype) -> mx.Dtype:
    # MLX's uniform has no float64 kernel: draw float32 and let copy_ widen it
    return dtype if dtype in (mx.float16, mx.bfloat16) else mx.float32


class _Skip(threading.local):
    active = False  # nn.utils.skip_init: construct a module leaving its tensors as created (no draw, no write)


skipping = _Skip()


def _set(tensor: Tensor, value: mx.array) -> Tensor:
    """Write ``value`` into ``tensor`` in place (its Parameter object, storage and dtype stay)."""
    if skipping.active:
        return tensor
    with gm.no_grad():
        tensor.copy_(_wrap(value))
    return tensor


def _uniform(tensor: Tensor, low: float, high: float) -> Tensor:
    if skipping.active:
        return tensor
    return _set(tensor, mx.random.uniform(low, high, tuple(tensor.shape), _draw_dtype(tensor.dtype), key=next_key()))


def _normal(tensor: Tensor, mean: float, std: float) -> Tensor:
    if skipping.active:
        return tensor
    return _set(tensor, mx.random.normal(tuple(tensor.shape), _draw_dtype(tensor.dtype), loc=mean, scale=std,
                                         key=next_key()))


def _no_op_if_empty(tensor: Tensor) -> bool:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op")
        return True
    return False


# ---------------------------------------------------------------------------------------------------- initialisers
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with U(a, b)."""
    return _uniform(tensor, a, b)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with N(mean, std^2)."""
    return _normal(tensor, mean, std)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator=None) -> Tensor:
    """Fill with N(mean, std^2) truncated to [a, b] (inverse-CDF sampling, as PyTorch does)."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)
    lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
    u = mx.random.uniform(2 * lo - 1, 2 * hi - 1, tuple(tensor.shape), mx.float32, key=next_key())
    value = mx.clip(mx.erfinv(u) * (std * math.sqrt(2.0)) + mean, a, b)
    return _set(tensor, value)


def constant_(tensor: Tensor, val: float) -> Tensor:
    with gm.no_grad():
        return tensor.fill_(val)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity (ones on the diagonal of a rectangular matrix)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _set(tensor, mx.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a {3, 4, 5}-D conv weight with the Dirac delta, so the convolution passes its input channels through
    (in each of ``groups`` groups)."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    value = np.zeros(sizes, dtype=np.float32)  # a constant built from shapes alone: nothing lazy is evaluated
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            value[(g * out_chans_per_grp + d, d) + centre] = 1
    return _set(tensor, mx.array(value))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _uniform(tensor, -a, a)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return _normal(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator=None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015); ``a`` is the leaky_relu slope."""
    if _no_op_if_empty(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return _uniform(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator=None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan)."""
    if _no_op_if_empty(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return _normal(tensor, 0.0, std)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian matrix, signs fixed so that the result
    is uniformly distributed (Saxe et al., 2013); dims after the first are flattened."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = mx.random.normal((rows, cols), mx.float32, key=next_key())
    if rows < cols:
        flat = flat.T
    q, r = mx.linalg.qr(flat, stream=mx.cpu)  # MLX's QR runs on the CPU only
    q = q * mx.sign(mx.diagonal(r))
    if rows < cols:
        q = q.T
    return _set(tensor, (q * gain).reshape(tuple(tensor.shape)))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """N(0, std^2) with a fraction ``sparsity`` of each column set to zero."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    value = mx.random.normal((rows, cols), mx.float32, scale=std, key=next_key())
    # rank of each entry within its column under a random permutation: the first num_zeros ranks are zeroed
    ranks = mx.argsort(mx.argsort(mx.random.uniform(shape=(rows, cols), key=next_key()), axis=0), axis=0)
    return _set(tensor, mx.where(ranks < num_zeros, 0.0, value))


def _deprecated(method):
    """PyTorch's old spelling without the trailing underscore: the same in-place init, with its FutureWarning."""
    old, new = method.__name__[:-1], method.__name__

    def deprecated(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.", FutureWarning, stacklevel=2)
        return method(*args, **kwargs)
    deprecated.__name__ = deprecated.__qualname__ = old
    deprecated.__doc__ = f"Deprecated: use ``{new}``."
    return deprecated


uniform, normal, constant, eye, dirac = map(_deprecated, (uniform_, normal_, constant_, eye_, dirac_))
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
orthogonal, sparse = _deprecated(orthogonal_), _deprecated(sparse_)

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "zeros_", "ones_", "eye_", "dirac_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_"]
