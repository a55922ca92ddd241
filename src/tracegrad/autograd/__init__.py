"""``tracegrad.autograd``: reverse-mode automatic differentiation with PyTorch's semantics (layer 4)."""

from __future__ import annotations

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


from . import forward_ad, function, functional  # noqa: E402
from . import gradcheck as gradcheck_module  # noqa: E402
from .function import Function, FunctionCtx, NestedIOFunction, once_differentiable  # noqa: E402
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402

__all__ += ["Function", "FunctionCtx", "once_differentiable", "NestedIOFunction", "gradcheck", "gradgradcheck",
            "forward_ad", "functional", "function", "gradcheck_module"]

from . import profiler, profiler_util  # noqa: E402
from .profiler import _profiler_enabled  # noqa: E402, F401

__all__ += ["profiler", "profiler_util"]
