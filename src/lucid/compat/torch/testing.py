"""torch.testing.assert_close: closeness with PyTorch's default tolerances for the dtype. Comparing values reads
them, so this is an evaluation point (it is called from test code, never from inside ops)."""
from __future__ import annotations

import math as _math
import warnings as _warnings

import mlx.core as _mx
import numpy as _np

import lucid as _lucid

from lucid import Tensor as _Tensor

# PyTorch's defaults: (rtol, atol) by dtype; exact for integers and bool
_TOLERANCES = {_mx.float16: (1e-3, 1e-5), _mx.bfloat16: (1.6e-2, 1e-5), _mx.float32: (1.3e-6, 1e-5),
               _mx.float64: (1e-7, 1e-7), _mx.complex64: (1.3e-6, 1e-5)}


def _as_numpy(x):
    if isinstance(x, _Tensor):
        return x.detach().float().numpy() if x.dtype == _mx.bfloat16 else x.detach().numpy()
    return _np.asarray(x)


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol=None, atol=None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg=None) -> None:
    """Raise AssertionError unless ``|actual - expected| <= atol + rtol * |expected|`` elementwise (containers are
    compared item by item)."""
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got no atol." if atol is None
                         else "Both 'rtol' and 'atol' must be either specified or omitted, but got no rtol.")
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype, msg=msg)
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if actual.keys() != expected.keys():
            raise AssertionError(f"The keys of the mappings do not match: {sorted(map(str, actual))} != "
                                 f"{sorted(map(str, expected))}")
        for k in actual:
            assert_close(actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype,
                         msg=msg)
        return
    if check_dtype and isinstance(actual, _Tensor) and isinstance(expected, _Tensor) and actual.dtype != expected.dtype:
        raise AssertionError(f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.")
    a, e = _as_numpy(actual), _as_numpy(expected)
    if a.shape != e.shape:
        raise AssertionError(f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.")
    if rtol is None:
        dtype = actual.dtype if isinstance(actual, _Tensor) else _mx.float64 if a.dtype.kind in "fc" else None
        rtol, atol = _TOLERANCES.get(dtype, (0.0, 0.0))
    if _np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    bad = ~_np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    diff = _np.abs(a.astype(_np.float64) - e.astype(_np.float64))
    where = _np.unravel_index(int(_np.argmax(_np.where(bad, diff, -1))), a.shape) if a.ndim else ()
    message = (f"Tensor-likes are not close!\n\nMismatched elements: {int(bad.sum())} / {bad.size} "
               f"({100 * bad.mean():.1f}%)\nGreatest absolute difference: {float(diff.max())} at index {where} "
               f"(up to {atol} allowed)\nrtol={rtol}, atol={atol}")
    raise AssertionError(msg if isinstance(msg, str) else msg(message) if callable(msg) else message)


# ---------------------------------------------------------------------------------------------------- make_tensor
def _bounds(low, high, dtype, lowest, highest, default_low, default_high, integral: bool) -> tuple:
    """PyTorch's rules for ``low``/``high``: defaults by dtype, no NaN, low < high (equal allowed, with a warning,
    for floating dtypes), clamped into what the dtype holds; rounded up for integral dtypes."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and _math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and not integral:
        _warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is deprecated "
                      "since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.", FutureWarning,
                      stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return (_math.ceil(low), _math.ceil(high)) if integral else (low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format=None):
    """A tensor of ``shape`` and ``dtype`` with values drawn uniformly from ``[low, high)`` (by default [-9, 9) for
    floating and complex dtypes, [-9, 10) for signed and [0, 10) for unsigned integers, {False, True} for bool);
    ``exclude_zero`` replaces zeros by 1 (integers, bool) or the dtype's smallest normal number. lucid's tensors
    are contiguous: ``noncontiguous`` takes every other element of a wider draw, as PyTorch does, and gives a
    contiguous copy of it."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    integral = dtype == _lucid.bool or _mx.issubdtype(dtype, _mx.integer)
    if requires_grad and integral:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    if not (integral or _mx.issubdtype(dtype, _mx.floating) or dtype == _mx.complex64):
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). To request "
                        "support, file an issue at: https://github.com/pytorch/pytorch/issues")
    wide = noncontiguous and _math.prod(shape) > 1
    draw_shape = (*shape[:-1], 2 * shape[-1]) if wide else shape
    if dtype == _lucid.bool:
        lo, hi = _bounds(low, high, dtype, 0, 2, 0, 2, True)
        result = _lucid.randint(lo, hi, draw_shape, device=device).to(dtype)
    elif integral:
        info = _mx.iinfo(dtype)
        lo, hi = _bounds(low, high, dtype, info.min, info.max + (1 if dtype != _mx.int64 else 0), -9, 10, True)
        result = _lucid.randint(lo, hi, draw_shape, dtype=_lucid.int64, device=device).to(dtype)
    else:
        part = _mx.float32 if dtype == _mx.complex64 else dtype
        info = _mx.finfo(part)
        lo, hi = _bounds(low, high, dtype, float(info.min), float(info.max), -9, 9, False)

        def uniform():  # (halved and doubled where the span overflows the dtype, as PyTorch does)
            span = hi - lo
            if span >= float(info.max):
                return _lucid.rand(draw_shape, dtype=part, device=device) * (span / 2) * 2 + lo
            return _lucid.rand(draw_shape, dtype=part, device=device) * span + lo

        result = _lucid.complex(uniform(), uniform()) if dtype == _mx.complex64 else uniform()
    if wide:
        result = result[..., 1::2].clone()
    if exclude_zero:
        # the dtype's smallest normal number (bfloat16 and complex64's parts have float32's exponent range)
        tiny = 1 if integral else float(_np.finfo(_np.float16 if dtype == _mx.float16 else
                                                  _np.float64 if dtype == _mx.float64 else _np.float32).tiny)
        result = _lucid.where(result == 0, _lucid.tensor(tiny, dtype=dtype), result)
    return result.requires_grad_(requires_grad) if requires_grad else result
