"""``DistributedSampler``: each of ``num_replicas`` processes draws its own equal share of a dataset's indices.

PyTorch's semantics exactly: one permutation per epoch from ``seed + epoch`` (the same on every rank, so the
shares never overlap), padded by repeating its start so it divides evenly (or cut with ``drop_last``), and rank
``r`` takes every ``num_replicas``-th index from position ``r``. The shuffle comes from a ``lucid.Generator``
seeded with ``seed + epoch``, so the order differs from PyTorch's random stream but the partition is the same.
"""
from __future__ import annotations

import math
from typing import Callable, Iterator

from ._generator import Generator, randperm
from .sampler import Sampler

_world: list[Callable[[], tuple[int, int]] | None] = [None]  # set by lucid.distributed: () -> (world size, rank)


def register_world(fn: Callable[[], tuple[int, int]]) -> None:
    """Called by ``lucid.distributed`` (a higher layer) so that the sampler's defaults come from the process
    group."""
    _world[0] = fn


class DistributedSampler(Sampler):
    """Indices of ``dataset`` for process ``rank`` of ``num_replicas`` (defaults: the process group's rank and
    world size). Call ``set_epoch(epoch)`` before each epoch for a fresh shuffle; every rank yields
    ``len(self)`` indices.

    :param dataset: the dataset to shard.
    :param num_replicas: the number of processes; default the process group's world size.
    :param rank: this process's rank; default the process group's.
    :param shuffle: shuffle the indices (the same permutation on every rank, from ``seed`` and the epoch).
    :param seed: the shuffling seed, identical on every rank.
    :param drop_last: drop the tail so that every rank gets ``len(dataset) // num_replicas`` indices; otherwise the
        indices are padded by repeating the first ones, as PyTorch does.

    >>> from lucid.utils.data import DistributedSampler
    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False):
        if num_replicas is None or rank is None:
            if _world[0] is None:
                raise RuntimeError("Requires distributed package to be available")
            size, own = _world[0]()
            num_replicas = size if num_replicas is None else num_replicas
            rank = own if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:  # the largest share every rank can have without repeats
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = randperm(n, Generator().manual_seed(self.seed + self.epoch))
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - n
            indices += (indices * math.ceil(padding / n))[:padding] if padding > n else indices[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch to shuffle for: with ``shuffle=True`` each epoch has its own order (the same on all ranks)."""
        self.epoch = epoch
