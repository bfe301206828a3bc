"""DataLoader: batches from a dataset, with PyTorch's arguments, argument checks and iteration order.

Workers: MLX arrays live in one process's unified memory and MLX's lazy graphs are not meant to be built from
several processes at once, so lucid loads every batch in the main process. ``num_workers > 0`` is accepted and
behaves like one worker that runs in the main process: ``worker_init_fn(0)`` is called at the start of each pass
and ``get_worker_info()`` reports ``id=0, num_workers=1`` while a batch is being fetched (so IterableDatasets that
shard by worker still yield every sample exactly once). ``timeout`` has no worker to wait for, and
``pin_memory`` is a no-op (memory is unified).
"""
from __future__ import annotations

import contextlib
import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ._collate import default_collate, default_convert
from ._generator import Generator, numpy_rng
from .dataset import Dataset, IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns while a batch is fetched with ``num_workers > 0``.

    :param id: the worker's id (always 0: lucid loads in the main process).
    :param num_workers: the number of workers (always 1).
    :param seed: the worker's seed.
    :param dataset: the dataset being loaded.
    """
    id: int
    num_workers: int
    seed: int
    dataset: Dataset


_worker_info: list[WorkerInfo | None] = [None]


def get_worker_info() -> WorkerInfo | None:
    """Inside a (main-process) worker's fetch: its WorkerInfo; elsewhere None."""
    return _worker_info[0]


@contextlib.contextmanager
def _as_worker(info: WorkerInfo):
    previous, _worker_info[0] = _worker_info[0], info
    try:
        yield
    finally:
        _worker_info[0] = previous


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: the dataset's own iterator decides what comes next."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


def _tensor_gather(dataset) -> Callable[[list], list] | None:
    """For a plain TensorDataset (or Subsets of one): ``indices -> default_collate([dataset[i] for i in
    indices])`` computed with one gather per tensor instead of a slice per sample and a stack (about 8x faster
    for digits-sized batches). None for any other dataset, including subclasses that override indexing."""
    if type(dataset).__getitem__ is TensorDataset.__getitem__:
        return lambda indices: [t[list(indices)] for t in dataset.tensors]  # a list index is bounds-checked
    if (type(dataset).__getitem__ is Subset.__getitem__ and type(dataset).__getitems__ is Subset.__getitems__
            and (inner := _tensor_gather(dataset.dataset)) is not None):
        return lambda indices: inner([dataset.indices[i] for i in indices])
    return None


_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader:
    """Iterate over ``dataset`` in batches.

    ``batch_size`` samples (indices from ``sampler``, or a ``RandomSampler`` when ``shuffle=True`` and a
    ``SequentialSampler`` otherwise) are fetched and merged by ``collate_fn`` (``default_collate``); the last,
    shorter batch is dropped when ``drop_last``. ``batch_sampler`` yields whole lists of indices instead, and
    ``batch_size=None`` turns batching off (each sample goes through ``default_convert``). ``generator`` seeds the
    shuffling (``lucid.Generator().manual_seed(0)``); without it shuffles draw from lucid's global generator.
    See the module docstring for ``num_workers``.

    :param dataset: a map-style ``Dataset`` (``__getitem__``/``__len__``) or an ``IterableDataset``.
    :param batch_size: samples per batch; None turns batching off.
    :param shuffle: draw indices at random (a ``RandomSampler``); default False.
    :param sampler: the indices to fetch, in order (exclusive with ``shuffle``).
    :param batch_sampler: yields whole lists of indices (exclusive with ``batch_size``, ``shuffle``, ``sampler``,
        ``drop_last``).
    :param num_workers: worker processes in PyTorch; lucid loads in the main process (see the module docstring).
    :param collate_fn: merges a list of samples into a batch; default ``default_collate``.
    :param pin_memory: accepted; MLX memory is unified, so nothing is pinned.
    :param drop_last: drop the last batch when it is shorter than ``batch_size``.
    :param timeout: accepted for PyTorch's signature (must be >= 0).
    :param worker_init_fn: with ``num_workers > 0``, called as ``worker_init_fn(0)`` at the start of each pass
        (lucid's one in-process worker).
    :param multiprocessing_context: accepted for PyTorch's signature.
    :param generator: the ``Generator`` that drives shuffling and random samplers.
    :param prefetch_factor: accepted with ``num_workers > 0``, as in PyTorch.
    :param persistent_workers: accepted with ``num_workers > 0``, as in PyTorch.
    :param pin_memory_device: accepted for PyTorch's signature.
    :param in_order: accepted for PyTorch's signature (batches always come in order).

    >>> import lucid
    >>> from lucid.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(lucid.arange(10.0).reshape(5, 2), lucid.arange(5))
    >>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | None = None, batch_sampler: Sampler | None = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False, drop_last: bool = False,
                 timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context=None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        is_iterable = isinstance(dataset, IterableDataset)
        if is_iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None:
            if is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.in_order = in_order
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._initialized = True

    def __setattr__(self, name, value):
        if name in _FROZEN and self.__dict__.get("_initialized", False):
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def __iter__(self) -> Iterator:
        # like PyTorch, every pass draws the workers' base seed from the loader's generator (or the global one),
        # whether or not there are workers, so num_workers never changes which batches come out
        seed = int(numpy_rng(self.generator).integers(1 << 63))
        if isinstance(self.dataset, IterableDataset):
            batches = self._iterable_batches()
        else:
            batches = self._map_batches()
        if self.num_workers > 0:
            return self._in_main_process_worker(batches, seed)
        return batches

    def _map_batches(self) -> Iterator:
        dataset, collate = self.dataset, self.collate_fn
        if not self._auto_collation:
            for index in self.sampler:
                yield collate(dataset[index])
            return
        gather = _tensor_gather(dataset) if collate is default_collate else None
        getitems = getattr(dataset, "__getitems__", None)
        for indices in self.batch_sampler:
            if gather is not None:
                yield gather(indices)
                continue
            samples = getitems(indices) if callable(getitems) else [dataset[i] for i in indices]
            yield collate(samples)

    def _iterable_batches(self) -> Iterator:
        stream, collate = iter(self.dataset), self.collate_fn
        if not self._auto_collation:
            for sample in stream:
                yield collate(sample)
            return
        while True:
            batch = list(itertools.islice(stream, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield collate(batch)

    def _in_main_process_worker(self, batches: Iterator, seed: int) -> Iterator:
        info = WorkerInfo(id=0, num_workers=1, seed=seed, dataset=self.dataset)
        with _as_worker(info):
            if self.worker_init_fn is not None:
                self.worker_init_fn(0)
        while True:
            with _as_worker(info):
                try:
                    batch = next(batches)
                except StopIteration:
                    return
            yield batch
