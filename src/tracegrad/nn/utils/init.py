"""``tracegrad.nn.utils.init``: ``skip_init``."""

from __future__ import annotations

import inspect

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args, **kwargs) -> Module:
    """An instance of ``module_cls`` whose parameters and buffers are left uninitialised.

    PyTorch builds the module on the meta device and materialises empty storage; tracegrad has no meta
    device, so the module is built where asked and its initial values are unspecified, as PyTorch's are."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs)
