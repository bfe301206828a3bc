"""Pooling's argument checks, in PyTorch's order and words: empty inputs, adaptive output sizes, outputs too large
to exist. Nothing here builds an array: each check raises before an op sees its arguments."""
from __future__ import annotations

import math
import os

from .._tensor import Tensor


def require_positive(n: int, fn: str, input: Tensor) -> None:
    """PyTorch's refusal of a pooling input with an empty channel or spatial dim (only the batch may be empty), in
    the words of the kernel PyTorch runs (avg_pool1d is its 2-d pool over an inserted unit dim)."""
    shape = list(input.shape)
    if min(shape[input.ndim - n - 1:]) > 0:
        return
    if n == 3:
        name = "avg_pool3d" if fn == "avg_pool3d" else "max_pool3d_with_indices_out_cpu_template"
        raise RuntimeError(f"{name}(): Expected input's non-batch dimensions to have positive length, but input has a "
                           f"shape of {shape} and non-batch dimension 0 has length zero!")
    if fn == "avg_pool1d":
        n, shape = 2, shape[:-1] + [1] + shape[-1:]
    prefix = "max_pool1d: " if fn == "max_pool1d" else ""
    raise RuntimeError(f"{prefix}Expected {n + 1}D or {n + 2}D (batch mode) tensor with optional 0 dim batch size for "
                       f"input, but got:{shape}")


def adaptive_size(fn, output_size, shape: tuple, n: int) -> tuple:
    """``output_size`` for an input of ``shape`` with ``n`` spatial dims (None keeps a dim), refused as PyTorch
    refuses it: too few or too many entries, or a negative one (the average pools check the entries, the max pools
    fail to allocate the output). A 0 is allowed: the output is empty, and its backward refuses
    (pool_nodes.empty_adaptive_output)."""
    lead, spatial = tuple(shape[:-n]), tuple(shape[-n:])
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * n
    output_size = tuple(output_size)
    if n > 1 and len(shape) <= len(output_size):  # (PyTorch's functional fills the Nones from the input's last dims)
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if len(output_size) == 1 and n > 1:
        output_size *= n
    if len(output_size) != n:
        if n == 1:
            raise RuntimeError(f"{fn}() argument 'output_size' should contain one int (got {len(output_size)})")
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {n}" if "max" in fn else
                           f"{fn}: output_size must be {n}")
    out = tuple(s if o is None else int(o) for o, s in zip(output_size, spatial))
    if min(out) < 0:
        shown = (1,) + out if n == 1 else out  # (the 1-d pools are PyTorch's 2-d ones over a unit dim)
        if "max" in fn:
            raise RuntimeError(f"Trying to create tensor with negative dimension {next(o for o in out if o < 0)}: "
                               f"{list(lead + shown)}")
        raise RuntimeError(f"{fn[:-2]}{max(n, 2)}d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{shown[0]}, {','.join(map(str, shown[1:]))}}}")
    return out


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # no sysconf: only the int64 limit applies
        return 2 ** 63 - 1


def refuse_huge(sizes: list, itemsize: int, storage: bool) -> None:
    """Refuse an output that cannot exist, before anything of its size is built (the index tables of the adaptive
    pools and interpolation are as long as the output): an element count beyond int64 with PyTorch's message
    (``storage``: the allocator's "Storage size calculation overflowed", else "numel: integer multiplication
    overflow"), and more bytes than this machine has with the message of PyTorch's CPU allocator."""
    numel = math.prod(sizes)
    if numel > 2 ** 63 - 1:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(sizes)}" if storage else
                           "numel: integer multiplication overflow")
    if numel * itemsize > 2 ** 63 - 1:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(sizes)}")
    if numel * itemsize > _physical_memory():
        raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate {numel * itemsize} "
                           "bytes. Error code 12 (Cannot allocate memory)")


def require_nonempty(fn, input, first: int) -> None:
    """PyTorch's refusal of an empty dim from ``first`` on (only the batch may be empty); adaptive_avg_pool1d
    reports itself as the 2-d pool of the input with a unit dim inserted, as PyTorch computes it."""
    sizes = list(input.shape)
    if fn == "adaptive_avg_pool1d":
        fn, sizes = "adaptive_avg_pool2d", sizes[:-1] + [1] + sizes[-1:]
    for d in range(max(first, 0), len(sizes)):
        if sizes[d] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {sizes} with dimension {d} being empty")
