"""``tracegrad.utils``: activation checkpointing, hook handles and data loading (PyTorch's ``torch.utils``
subset)."""

from __future__ import annotations

from . import checkpoint, data, dlpack, hooks

__all__ = ["checkpoint", "data", "dlpack", "hooks"]
