"""``lucid.poisson`` and ``lucid.binomial`` (PyTorch's top-level samplers): the exact counting samplers of
``_counts`` on tensors, with PyTorch's dtype rules and errors. The draws carry no gradient (PyTorch's are zero,
or not implemented)."""
from __future__ import annotations

__all__ = ["poisson", "binomial"]

import mlx.core as mx

from .._checks import check_later
from .._dtype import dtype_name
from .._tensor import Tensor, _wrap
from . import _counts

_NAMES = {mx.float64: "Double", mx.float32: "Float", mx.float16: "Half", mx.bfloat16: "BFloat16", mx.int64: "Long",
          mx.int32: "Int", mx.int16: "Short", mx.int8: "Char", mx.uint8: "Byte", mx.bool_: "Bool"}


def _floating(t: Tensor) -> bool:
    return mx.issubdtype(t.dtype, mx.floating)


def poisson(input, generator=None) -> Tensor:
    """A Poisson draw for each rate in ``input`` (float, non-negative: checked at the next evaluation)."""
    if not _floating(input):
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_NAMES.get(input.dtype, input.dtype)}'")
    rate = input.mlx
    check_later(mx.any(rate < 0), lambda _: RuntimeError(
        "invalid Poisson rate, expected rate to be non-negative"), "poisson")
    return _wrap(_counts.poisson(mx.maximum(rate, 0), generator))


def binomial(count, prob, generator=None) -> Tensor:
    """A Binomial draw for each pair: successes in ``count`` trials of probability ``prob`` (float tensors of one
    dtype, broadcast together)."""
    if not _floating(count):
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{_NAMES.get(count.dtype, dtype_name(count.dtype))}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {_NAMES.get(prob.dtype)} but expected {_NAMES.get(count.dtype)}")
    n, p = mx.broadcast_arrays(count.mlx, prob.mlx)
    return _wrap(_counts.binomial(n, p, generator))
