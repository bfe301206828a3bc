"""Samplers: iterables of dataset indices (or, for BatchSampler, of lists of indices) that a DataLoader draws from.

Random samplers take an optional ``lucid.Generator``; without one, each pass draws a fresh seed from lucid's global
generator, so ``lucid.manual_seed`` makes a run reproducible while successive epochs still differ."""
from __future__ import annotations

from typing import Iterable, Iterator, Sequence

import numpy as np

from ._generator import Generator, numpy_rng


class Sampler:
    """Base class: subclasses define ``__iter__`` (indices) and, where they can, ``__len__``.

    :param data_source: accepted for PyTorch's signature (subclasses keep what they need).
    """

    def __init__(self, data_source=None):
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1.

    :param data_source: the dataset (anything with ``len``).

    >>> from lucid.utils.data import SequentialSampler
    >>> list(SequentialSampler(range(3)))
    [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _check_positive_int(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


def _check_bool(name: str, value, error=ValueError) -> None:
    if not isinstance(value, bool):
        raise error(f"{name} should be a boolean value, but got {name}={value}")


_CHUNK = 1024  # indices drawn at a time with replacement


class RandomSampler(Sampler):
    """Random indices: a fresh permutation per pass (``num_samples`` beyond ``len(data_source)`` chains several
    permutations), or ``num_samples`` independent draws with ``replacement=True``.

    :param data_source: the dataset (anything with ``len``).
    :param replacement: draw ``num_samples`` indices independently (with repetition).
    :param num_samples: how many indices per pass; default ``len(data_source)``.
    :param generator: the ``Generator`` to draw from; default lucid's global one.

    >>> import lucid
    >>> from lucid.utils.data import RandomSampler
    >>> sorted(RandomSampler(range(4), generator=lucid.Generator().manual_seed(0)))
    [0, 1, 2, 3]
    """

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _check_bool("replacement", replacement, TypeError)
        _check_positive_int("num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, count = len(self.data_source), self.num_samples
        rng = numpy_rng(self.generator)
        if self.replacement:  # drawn lazily, a chunk at a time: num_samples may be far more than fits in memory
            for start in range(0, count, _CHUNK):
                yield from rng.integers(0, n, size=min(_CHUNK, count - start)).tolist()
            return
        for _ in range(count // n):
            yield from rng.permutation(n).tolist()
        yield from rng.permutation(n)[:count % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order, a fresh one per pass.

    :param indices: the indices to permute.
    :param generator: the ``Generator`` to draw from; default lucid's global one.
    """

    def __init__(self, indices: Sequence[int], generator: Generator | None = None):
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in numpy_rng(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices in [0, len(weights)) drawn with probability proportional to ``weights``.

    :param weights: one non-negative weight per index (a sequence or a 1-d tensor).
    :param num_samples: how many indices per pass.
    :param replacement: draw with repetition (without it, each index at most once).
    :param generator: the ``Generator`` to draw from; default lucid's global one.

    >>> import lucid
    >>> from lucid.utils.data import WeightedRandomSampler
    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
    [1, 1, 1]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None):
        _check_positive_int("num_samples", num_samples)
        _check_bool("replacement", replacement)
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (weights must be finite, non-negative and not all "
                               "zero)")
        if not replacement and num_samples > (w > 0).sum():
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        p = self.weights / self.weights.sum()
        rng = numpy_rng(self.generator)
        yield from rng.choice(len(p), size=self.num_samples, replace=self.replacement, p=p).tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``; the last, shorter batch is kept unless
    ``drop_last``.

    :param sampler: a ``Sampler`` or any iterable of indices.
    :param batch_size: indices per batch (a positive int).
    :param drop_last: drop the last batch when it is shorter.

    >>> from lucid.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Sampler | Iterable[int], batch_size: int, drop_last: bool):
        _check_positive_int("batch_size", batch_size)
        _check_bool("drop_last", drop_last)
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
