"""``tracegrad.utils``: activation checkpointing, hook handles, data loading and benchmarking (PyTorch's ``torch.utils``
subset)."""

from __future__ import annotations

from . import _foreach_utils as _foreach_utils  # (torch.utils._foreach_utils, there once torch is imported)
from . import _pytree as _pytree  # (torch.utils._pytree, there once torch is imported)
from . import benchmark, checkpoint, data, deterministic, dlpack, hooks

__all__ = ["benchmark", "checkpoint", "data", "deterministic", "dlpack", "hooks"]
