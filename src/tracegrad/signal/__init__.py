"""``tracegrad.signal``: signal-processing helpers (PyTorch's ``torch.signal``)."""

from __future__ import annotations

from . import windows

__all__ = ["windows"]
