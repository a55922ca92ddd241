"""``tracegrad.nn``: modules, parameters, initialisation and the functional API (PyTorch's ``torch.nn``)."""

from __future__ import annotations

from . import functional
