"""``tracegrad.autograd``: reverse-mode automatic differentiation with PyTorch's semantics (layer 4)."""

from __future__ import annotations

import importlib

from . import anomaly_mode, grad_mode, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .api import backward, grad
from .grad_mode import (
    _unsafe_preserve_version_counter,  # noqa: F401
    enable_grad,
    inference_mode,
    no_grad,
    set_grad_enabled,
)
from .saved import SavedTensor
from .variable import Variable, set_multithreading_enabled
from .views import _force_original_view_tracking, is_view_replay_enabled  # noqa: F401

__all__ = ["backward", "grad", "graph", "grad_mode", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "detect_anomaly", "set_detect_anomaly", "anomaly_mode", "SavedTensor", "Variable",
           "set_multithreading_enabled"]


def _optional(name: str):
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        return None


function = _optional("function")
if function is not None:
    from .function import Function, FunctionCtx, NestedIOFunction, once_differentiable  # noqa: F401

    __all__ += ["Function", "FunctionCtx", "once_differentiable", "NestedIOFunction"]
forward_ad = _optional("forward_ad")
functional = _optional("functional")
gradcheck_module = _optional("gradcheck")
if gradcheck_module is not None:
    from .gradcheck import gradcheck, gradgradcheck  # noqa: F401

    __all__ += ["gradcheck", "gradgradcheck"]
