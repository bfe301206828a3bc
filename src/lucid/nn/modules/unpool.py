"""Max unpooling, power-average (LP) pooling and fractional max pooling layers (the functions are in
``lucid/ops/unpool.py``). Options are stored as PyTorch stores them, so reprs and attributes match."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module


def _ntuple(value, n: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _MaxUnpoolNd(Module):
    _n = 0
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._n)
        self.padding = _ntuple(padding, self._n)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: ``forward(input, indices, output_size=None)`` puts each value back at its
    index, zeros elsewhere."""
    _n, _fn = 1, staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d."""
    _n, _fn = 2, staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d."""
    _n, _fn = 3, staticmethod(F.max_unpool3d)


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """``(sum over each window of x ** p) ** (1 / p)`` over (N, C, L); p = inf is max pooling of |x|."""
    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """The power-average pool over (N, C, H, W)."""
    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """The power-average pool over (N, C, D, H, W)."""
    _fn = staticmethod(F.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    _n = 0
    _fn = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
                 _random_samples=None):
        super().__init__()
        name = type(self).__name__
        if self._n == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)  # fixed samples: the same windows every call
        self.output_size = _ntuple(output_size, self._n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, self._n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio[:self._n]):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):
        return self._fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                        _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling (Graham, 2014) over (N, C, H, W): ``kernel_size`` windows at pseudo-random,
    increasing starts giving ``output_size`` (or ``output_ratio`` of the input); new starts each call unless
    ``_random_samples`` is given."""
    _n, _fn = 2, staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, T, H, W)."""
    _n, _fn = 3, staticmethod(F.fractional_max_pool3d)


_UNPOOL_PARAMS = """

    :param kernel_size: the max pool's window size (an int or one per dim).
    :param stride: the max pool's stride (default: ``kernel_size``).
    :param padding: the max pool's padding.
    """
_LP_PARAMS = """

    :param norm_type: the power p (``inf`` gives max pooling of |x|).
    :param kernel_size: the window size (an int or one per dim).
    :param stride: the stride (default: ``kernel_size``).
    :param ceil_mode: round the output size up instead of down.
    """
_FRACTIONAL_PARAMS = """

    :param kernel_size: the window size (an int or one per dim).
    :param output_size: the output's spatial size (an int or one per dim), or None to use ``output_ratio``.
    :param output_ratio: the output size as a fraction of the input's, each in (0, 1).
    :param return_indices: also return each maximum's flat index in its input plane (for MaxUnpool).
    :param _random_samples: fixed samples in [0, 1), (N, C, dims), that place the windows; None draws new ones from
        lucid's generator at each call.
    """
for _cls, _params in ((MaxUnpool1d, _UNPOOL_PARAMS), (MaxUnpool2d, _UNPOOL_PARAMS), (MaxUnpool3d, _UNPOOL_PARAMS),
                      (LPPool1d, _LP_PARAMS), (LPPool2d, _LP_PARAMS), (LPPool3d, _LP_PARAMS),
                      (FractionalMaxPool2d, _FRACTIONAL_PARAMS), (FractionalMaxPool3d, _FRACTIONAL_PARAMS)):
    _cls.__doc__ = _cls.__doc__.rstrip() + _params

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]
