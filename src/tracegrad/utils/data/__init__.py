"""``tracegrad.utils.data``: datasets, samplers and the ``DataLoader`` (PyTorch's ``torch.utils.data``).

Batches are loaded in the main process: ``num_workers`` is accepted for compatibility and gives the same
batches in the same order as ``num_workers=0`` (no worker processes are started), so ``pin_memory``,
``prefetch_factor`` and ``persistent_workers`` change nothing either.
"""

from __future__ import annotations

from .collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler

__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler",
           "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "default_collate",
           "default_convert", "get_worker_info", "random_split"]
