"""``tracegrad.utils``: activation checkpointing, hook handles and data loading (PyTorch's ``torch.utils``
subset)."""

from __future__ import annotations

from . import _foreach_utils as _foreach_utils  # (torch.utils._foreach_utils, there once torch is imported)
from . import _pytree as _pytree  # (torch.utils._pytree, there once torch is imported)
from . import checkpoint, data, deterministic, dlpack, hooks

__all__ = ["checkpoint", "data", "deterministic", "dlpack", "hooks"]
