"""``DistributedSampler``: each of ``num_replicas`` processes visits its own share of a dataset."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TypeVar

from ... import Generator, randperm
from ...distributed import NO_PROCESS_GROUP
from .dataset import Dataset
from .sampler import Sampler

__all__ = ["DistributedSampler"]

_T_co = TypeVar("_T_co", covariant=True)


class DistributedSampler(Sampler[_T_co]):
    """The indices that replica ``rank`` of ``num_replicas`` visits: every ``num_replicas``-th index of the
    (optionally shuffled) dataset, padded by repeating its start (or, with ``drop_last``, trimmed) to a multiple
    of ``num_replicas``. The shuffle depends only on ``seed + epoch`` (see ``set_epoch``), so replicas agree."""

    def __init__(self, dataset: Dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            # tracegrad has no process group to ask for the world size or rank: torch's error before
            # init_process_group
            raise ValueError(NO_PROCESS_GROUP)
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[_T_co]:
        n = len(self.dataset)
        if self.shuffle:
            # a private generator: the order must not depend on (or disturb) the global random state
            indices = randperm(n, generator=Generator().manual_seed(self.seed + self.epoch)).tolist()
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
        """Use the shuffle of ``epoch`` from the next iteration on (call it before each epoch)."""
        self.epoch = epoch
