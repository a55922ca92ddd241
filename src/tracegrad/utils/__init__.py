"""``tracegrad.utils``: activation checkpointing, hook handles, data loading and benchmarking (PyTorch's ``torch.utils``
subset)."""

from __future__ import annotations

from . import _foreach_utils as _foreach_utils  # (torch.utils._foreach_utils, there once torch is imported)
from . import _pytree as _pytree  # (torch.utils._pytree, there once torch is imported)
from . import checkpoint, data, deterministic, dlpack, hooks

__all__ = ["benchmark", "checkpoint", "data", "deterministic", "dlpack", "hooks"]


def __getattr__(name: str):
    """``benchmark`` imported on first use (``torch.utils.benchmark.Timer`` after ``import tracegrad as torch``, where
    torch wants ``import torch.utils.benchmark``): it would add some 7 ms to every import of tracegrad."""
    if name == "benchmark":
        import importlib

        return importlib.import_module(f"{__name__}.benchmark")  # (binds the attribute: no second call)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
