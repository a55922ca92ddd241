"""``torch.nn.modules.batchnorm``: the batch norms, where torch defines them (tracegrad writes them beside the other
norms, the lazy layers and the legacy ones; ``_torch_homes`` says they live here, as torch's classes print)."""

from __future__ import annotations

from .lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, _LazyNormBase
from .legacy import SyncBatchNorm
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d", "LazyBatchNorm3d",
           "SyncBatchNorm"]

PRIVATE_BASES = (_NormBase, _BatchNorm, _LazyNormBase)
