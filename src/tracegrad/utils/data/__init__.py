"""``tracegrad.utils.data``: datasets, samplers and the ``DataLoader`` (PyTorch's ``torch.utils.data``).

Batches are loaded in the main process: ``num_workers`` is accepted for compatibility and gives the same
batches in the same order as ``num_workers=0`` (no worker processes are started), so ``pin_memory``,
``prefetch_factor`` and ``persistent_workers`` change nothing either. PyTorch's deprecated DataPipe family
(``IterDataPipe``, ``MapDataPipe``, ``functional_datapipe``, ...) is not provided.
"""

from __future__ import annotations

from ._utils.collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
