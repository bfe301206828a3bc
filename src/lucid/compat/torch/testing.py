"""torch.testing.assert_close: closeness with PyTorch's default tolerances for the dtype. Comparing values reads
them, so this is an evaluation point (it is called from test code, never from inside ops)."""
from __future__ import annotations

import mlx.core as _mx
import numpy as _np

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


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format=None) -> _Tensor:
    """A tensor of ``shape`` filled with random values in ``[low, high)`` (PyTorch's defaults: [-9, 9] for
    floating and signed integer dtypes, [0, 9] for unsigned, False/True for bool). ``exclude_zero`` replaces zeros
    by the dtype's smallest positive step; ``noncontiguous`` and ``memory_format`` are accepted (lucid tensors have
    one layout)."""
    import lucid
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    if dtype == lucid.bool:
        out = lucid.randint(0, 2, shape, device=device).to(lucid.bool)
    else:
        floating = _mx.issubdtype(dtype, _mx.inexact)
        lo = -9 if low is None else low
        hi = 9 if high is None else high
        if _mx.issubdtype(dtype, _mx.unsignedinteger):
            lo = max(0, lo)
        if lo >= hi:
            raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        if floating:
            out = (lucid.rand(*shape, dtype=dtype, device=device) * (hi - lo) + lo).to(dtype)
        else:
            out = lucid.randint(int(_np.ceil(lo)), int(_np.ceil(hi)) + (high is None), shape, dtype=dtype,
                                device=device)
        if exclude_zero:
            out = lucid.where(out == 0, lucid.tensor(1 if not floating else _np.finfo(_np.float32).tiny,
                                                     dtype=dtype), out)
    if requires_grad:
        out.requires_grad_(True)
    return out
