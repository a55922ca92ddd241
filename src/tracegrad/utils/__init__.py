"""``tracegrad.utils``: activation checkpointing and hook handles (PyTorch's ``torch.utils`` subset)."""

from __future__ import annotations

from . import checkpoint, hooks

__all__ = ["checkpoint", "hooks"]
