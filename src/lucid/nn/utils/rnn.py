"""Variable-length sequences (``torch.nn.utils.rnn``): ``pad_sequence``, ``PackedSequence`` and
``pack_padded_sequence`` / ``pad_packed_sequence`` / ``pack_sequence`` / ``unpack_sequence`` / ``unpad_sequence``.

A PackedSequence holds the time steps of a batch sorted by length, longest first: ``data`` (sum of lengths, *)
stacks step 0 of every sequence, then step 1 of the sequences that have one, ...; ``batch_sizes`` (int64, on the
host) counts the sequences at each step. The lengths are Python values (as in PyTorch, where they must be on the
CPU). Packing and unpacking are gathers with host indices, so gradients flow through both.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import mlx.core as mx
import numpy as np

from ... import _cpu_route
from ..._checks import mark_known
from ..._tensor import Tensor, _wrap
from ...ops.index import index_select
from ...ops.shape import cat, stack

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpack_sequence", "unpad_sequence"]


def _index(values) -> Tensor:
    return _wrap(mark_known(mx.array(np.asarray(values, dtype=np.int64))))


def _fill(shape, value, dtype) -> Tensor:
    # mx.full with a Python float ignores an integer dtype (it gives float32): make the scalar in ``dtype`` first
    return _wrap(mx.broadcast_to(mx.array(value, dtype=dtype), shape))


class _PackedSequenceFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceFields):
    """A packed batch (see the module docstring). As in PyTorch, ``unsorted_indices`` defaults to the inverse of
    ``sorted_indices``, and the conversions (``to``, ``double``, ``long`` ...) change ``data`` only."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            order = np.asarray(sorted_indices.tolist(), dtype=np.int64)
            unsorted_indices = _index(np.argsort(order))
        if batch_sizes is None:  # PyTorch's (data, batch_sizes) pair form
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> "PackedSequence":
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args, **kwargs) -> "PackedSequence":
        return self.to(*args, device="cpu", **kwargs)

    def double(self) -> "PackedSequence":
        return self.to(dtype=mx.float64)

    def float(self) -> "PackedSequence":
        return self.to(dtype=mx.float32)

    def half(self) -> "PackedSequence":
        return self.to(dtype=mx.float16)

    def long(self) -> "PackedSequence":
        return self.to(dtype=mx.int64)

    def int(self) -> "PackedSequence":
        return self.to(dtype=mx.int32)

    def short(self) -> "PackedSequence":
        return self.to(dtype=mx.int16)

    def char(self) -> "PackedSequence":
        return self.to(dtype=mx.int8)

    def byte(self) -> "PackedSequence":
        return self.to(dtype=mx.uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        # MLX memory is unified: there is no pinned host memory, so nothing is ever pinned
        return False


@_cpu_route.float64_args
def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shapes (L_i, *) into (max L, B, *) (or (B, max L, *) with ``batch_first``), padding the
    shorter ones with ``padding_value`` on the ``padding_side``."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = longest - s.shape[0]
        if extra:
            fill = _fill((extra, *s.shape[1:]), padding_value, s.dtype)
            s = cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def _layout(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For lengths sorted longest first: batch_sizes, and for each packed row its (time step, batch index)."""
    steps = int(lengths[0]) if lengths.size else 0
    batch_sizes = np.array([(lengths > t).sum() for t in range(steps)], dtype=np.int64)
    times = np.concatenate([np.full(b, t) for t, b in enumerate(batch_sizes)]) if steps else np.zeros(0, np.int64)
    batch = np.concatenate([np.arange(b) for b in batch_sizes]) if steps else np.zeros(0, np.int64)
    return batch_sizes, times, batch


def _lengths(lengths) -> np.ndarray:
    return np.asarray(lengths.tolist() if isinstance(lengths, Tensor) else lengths, dtype=np.int64).reshape(-1)


@_cpu_route.float64_args
def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) whose sequences have ``lengths``. With
    ``enforce_sorted`` the lengths must be in decreasing order; otherwise the batch is sorted and
    ``sorted_indices``/``unsorted_indices`` record the permutation."""
    if input.numel() == 0:  # PyTorch's first check, before the lengths are looked at
        raise RuntimeError("Cannot pack empty tensors.")
    lengths = _lengths(lengths)
    if lengths.size != input.shape[0 if batch_first else 1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.size} (batch_size="
                           f"{input.shape[0 if batch_first else 1]})")
    if lengths.size and lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if enforce_sorted:
        if (np.diff(lengths) > 0).any():
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                               "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                               "this requirement if you do not need ONNX exportability.")
        order = None
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
    if lengths.size and lengths[0] > input.shape[1 if batch_first else 0]:
        raise RuntimeError("Expected all lengths to be at most the padded length")
    batch_sizes, times, batch = _layout(lengths)
    source = batch if order is None else order[batch]
    n_batch = input.shape[0 if batch_first else 1]
    rows = source * input.shape[1] + times if batch_first else times * n_batch + source
    flat = input.reshape(-1, *input.shape[2:])
    data = index_select(flat, 0, _index(rows))
    if order is None:
        return PackedSequence(data, _index(batch_sizes))
    return PackedSequence(data, _index(batch_sizes), _index(order), _index(np.argsort(order)))


@_cpu_route.float64_args
def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of ``pack_padded_sequence``: (padded batch, lengths as int64), in the original batch order."""
    data, batch_sizes = sequence.data, np.asarray(sequence.batch_sizes.tolist(), dtype=np.int64)
    steps, n = batch_sizes.size, int(batch_sizes[0]) if batch_sizes.size else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    lengths = np.array([(batch_sizes > b).sum() for b in range(n)], dtype=np.int64)
    _, times, batch = _layout(lengths)
    # padded row (t, b) takes packed row k, or the padding row appended at the end
    table = np.full((steps, n), data.shape[0], dtype=np.int64)
    table[times, batch] = np.arange(times.size)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        order = np.asarray(unsorted.tolist(), dtype=np.int64)
        table, lengths = table[:, order], lengths[order]
    pad = _fill((1, *data.shape[1:]), padding_value, data.dtype)
    rows = table.T if batch_first else table
    out = index_select(cat([data, pad], 0), 0, _index(rows.reshape(-1)))
    return out.reshape(*rows.shape, *data.shape[1:]), _index(lengths)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) tensors (longest first, unless ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of (L_i, *) tensors a PackedSequence was made from."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return [padded[i, :n] for i, n in enumerate(lengths.tolist())]


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The inverse of ``pad_sequence``: the list of (L_i, *) tensors, ``L_i`` read from ``lengths``."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths(lengths).tolist())]
