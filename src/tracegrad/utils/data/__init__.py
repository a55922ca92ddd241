"""``tracegrad.utils.data``: datasets, samplers and the ``DataLoader`` (PyTorch's ``torch.utils.data``).

With ``num_workers > 0`` batches are loaded in worker processes, seeded as PyTorch seeds them (see
``dataloader``'s docstring); ``pin_memory`` pins nothing (as PyTorch without an accelerator). PyTorch's deprecated
DataPipe family (``IterDataPipe``, ``MapDataPipe``, ``functional_datapipe``, ...) is not provided.
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
