"""Fetchers: how one sampler step (an index, or a list of them when batching) becomes a batch. The same code runs
in the main process (``num_workers=0``) and in each worker process."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..dataset import _fetch_many


class _BaseDatasetFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index) -> Any:
        raise NotImplementedError


class _MapDatasetFetcher(_BaseDatasetFetcher):
    def fetch(self, possibly_batched_index) -> Any:
        if self.auto_collation:
            return self.collate_fn(_fetch_many(self.dataset, possibly_batched_index))
        return self.collate_fn(self.dataset[possibly_batched_index])


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    """Reads the dataset's stream: as many samples as the batch has (placeholder) indices; StopIteration once
    the stream has nothing left for a batch (or only a short one, with ``drop_last``)."""

    def __init__(self, dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind: int, dataset, auto_collation: bool, collate_fn: Callable,
                       drop_last: bool) -> _BaseDatasetFetcher:
        fetcher = _MapDatasetFetcher if kind == _DatasetKind.Map else _IterableDatasetFetcher
        return fetcher(dataset, auto_collation, collate_fn, drop_last)
