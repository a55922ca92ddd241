"""``tracegrad.nn``: modules, parameters, initialisation and the functional API (PyTorch's ``torch.nn``)."""

from __future__ import annotations

from . import attention, functional, init, modules, parallel, utils
from .modules import *  # noqa: F403 - the layer classes, as in torch.nn
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["attention", "functional", "init", "modules", "parallel", "utils", "DataParallel", "Parameter", "Buffer",
           "UninitializedParameter", "UninitializedBuffer", *_modules_all]
