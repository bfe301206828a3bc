"""Datasets: the map-style ``Dataset`` (``__getitem__`` + ``__len__``), the stream-style ``IterableDataset``
(``__iter__``), and the combinators TensorDataset, StackDataset, Subset, ConcatDataset, ChainDataset and
``random_split``, with PyTorch's semantics and error messages."""
from __future__ import annotations

import bisect
import itertools
import math
import warnings
from typing import Iterable, Sequence

from ..._tensor import Tensor
from ._generator import Generator, randperm


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``.
    ``a + b`` concatenates two datasets."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream of samples: subclasses define ``__iter__``. ``a + b`` chains two streams."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> "ChainDataset":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are ``(t[i] for t in tensors)``; every tensor has the same first dimension."""

    def __init__(self, *tensors: Tensor):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Several datasets of the same length side by side: sample ``i`` is the tuple (``StackDataset(a, b)``) or dict
    (``StackDataset(x=a, y=b)``) of their samples ``i``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self.datasets = args or kwargs
        sizes = [len(d) for d in (args or kwargs.values())]
        if any(n != sizes[0] for n in sizes):
            raise ValueError("Size mismatch between datasets")
        self._length = sizes[0]

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    :param dataset: the dataset to take samples from.
    :param indices: the indices of the samples, in order.
    """

    def __init__(self, dataset: Dataset, indices: Sequence[int]):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Map-style datasets one after the other: index ``i`` falls in the first dataset whose cumulative size
    exceeds it.

    :param datasets: the map-style datasets, in order (none may be an ``IterableDataset``).

    >>> from lucid.utils.data import ConcatDataset
    >>> ds = ConcatDataset([[1, 2], [3]])
    >>> len(ds), ds[2]
    (3, 3)
    """

    def __init__(self, datasets: Iterable[Dataset]):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        if idx >= len(self):
            raise IndexError(f"index {idx} is out of range for a ConcatDataset of length {len(self)}")
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other.

    :param datasets: the ``IterableDataset`` objects, iterated in order.
    """

    def __init__(self, datasets: Iterable[Dataset]):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets of the given lengths.

    ``lengths`` are sizes that add up to ``len(dataset)``, or fractions that add up to 1: each split then gets
    ``floor(len * frac)`` items and the remainder is dealt out one by one from the first split on (PyTorch's rule).
    Without ``generator`` the permutation is drawn from lucid's global generator (``lucid.manual_seed``).

    :param dataset: the dataset to split.
    :param lengths: the subsets' lengths (summing to ``len(dataset)``) or fractions (summing to 1; the remainder is
        spread one by one over the first subsets, as PyTorch does).
    :param generator: the ``Generator`` to draw the permutation from.
    :returns: a list of ``Subset`` objects.

    >>> import lucid
    >>> from lucid.utils.data import random_split
    >>> [len(s) for s in random_split(range(10), [0.7, 0.3], generator=lucid.Generator().manual_seed(0))]
    [7, 3]
    """
    lengths = list(lengths)
    n = len(dataset)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.")
        lengths = sizes
    if any(int(size) != size or size < 0 for size in lengths):
        raise ValueError(f"lengths should be non-negative integers or fractions that sum to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    lengths = [int(size) for size in lengths]
    indices = randperm(n, generator)
    return [Subset(dataset, indices[end - size:end]) for end, size in zip(itertools.accumulate(lengths), lengths)]
