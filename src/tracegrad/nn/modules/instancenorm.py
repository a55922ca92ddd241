"""``torch.nn.modules.instancenorm``: the instance norms, where torch defines them (tracegrad writes them beside
the other norms and the lazy layers; ``_torch_homes`` says they live here, as torch's classes print)."""

from __future__ import annotations

from .lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]

PRIVATE_BASES = (_InstanceNorm,)
