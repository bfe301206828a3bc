"""Python numbers in arithmetic (``x * 0.5``, ``1 - x``) as shared, ready-made MLX arrays.

MLX turns a Python number operand into a new 0-d array and then broadcasts it to the other operand's shape with a
graph node of its own: two arrays per op, about 1 KB of memory (measured on MLX 0.32's CPU backend: a recorded
``x * c`` chain takes ~2.1 KB per op, ~1.1 KB with the operand of the right shape), held for as long as the lazy
graph lives. For small tensors, where this is most of an op's memory, the constant of the operand's shape and
dtype is made once, already filled (no graph node, so a trace by ``mx.compile`` or ``mx.vmap`` sees a plain
constant), and shared by every op that multiplies, adds, subtracts or divides by that number. Looking it up costs
what MLX's own conversion of the number costs. The result is the same array MLX would compute: the constant holds
the number converted to the operand's floating dtype, as MLX's weak-scalar rule converts it.

Large tensors (where the two extra arrays are nothing next to the data), non-float dtypes (other promotion rules),
bfloat16 (no host dtype to fill it from), 0 (``x * -0.0`` and ``x * 0.0`` are equal keys but different results)
and NaN (never equal to itself) keep MLX's path.
"""
from __future__ import annotations

import mlx.core as mx
import numpy as np

MAX_ELEMENTS = 1024  # above this an op's data outweighs the two arrays a Python number costs
_MAX_ENTRIES = 256  # a bounded table: a learning rate that changes every step must not grow it forever
_HOST_DTYPES = {mx.float32: np.float32, mx.float16: np.float16, mx.float64: np.float64}
_table: dict = {}


def operand(v, like: mx.array):
    """The Python number ``v`` (a float or int, not bool) as the operand of an op with the array ``like``: a shared
    filled array of like's shape and dtype, or ``v`` itself where MLX's own conversion is kept (module docstring)."""
    if not v or v != v or like.size > MAX_ELEMENTS:
        return v
    dtype = like.dtype
    key = (v, like.shape, dtype)
    c = _table.get(key)
    if c is None:
        host = _HOST_DTYPES.get(dtype)
        if host is None:
            return v
        if len(_table) >= _MAX_ENTRIES:
            _table.clear()
        # rounded as MLX rounds a Python number: float64 keeps the double, float16 goes through float32 as MLX's
        # conversion does (rounding straight from the double could differ in a last bit)
        with np.errstate(over="ignore"):  # a number past the dtype's range is inf, silently, as in MLX
            one = np.float64(v) if host is np.float64 else np.array(v, dtype=np.float32).astype(host)
        c = _table[key] = mx.array(np.full(like.shape, one, dtype=host), dtype=dtype)
    return c
