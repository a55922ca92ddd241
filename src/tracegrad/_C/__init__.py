"""Engine introspection under PyTorch's private names (``torch._C._current_graph_task_id`` and friends)."""

from __future__ import annotations

from .. import _fp32_precision
from .._factories import Generator
from ..autograd import engine as _engine
from ..autograd.grad_mode import _set_grad_enabled
from ..autograd.graph import _current_graph_task_id, _will_engine_execute_node
from ..ops.linalg import _LinAlgError
from . import _autograd
from ._foreach_grouping import _group_tensors_by_device_and_dtype

__all__ = ["Generator", "_LinAlgError", "_autograd", "_will_engine_execute_node", "_current_graph_task_id",
           "_current_graph_task_execution_order", "_current_autograd_node", "_set_grad_enabled", "_get_tracing_state",
           "_group_tensors_by_device_and_dtype", "_get_privateuse1_backend_name",
           "_get_fp32_precision_getter", "_set_fp32_precision_setter", "_get_float32_matmul_precision",
           "_set_float32_matmul_precision", "_get_cublas_allow_tf32", "_set_cublas_allow_tf32",
           "_get_cudnn_allow_tf32", "_set_cudnn_allow_tf32"]


def _current_graph_task_execution_order() -> list:
    """The nodes the running backward will execute, in the order the engine will run them."""
    task = _engine.current_graph_task()
    if task is None:
        raise RuntimeError("_current_graph_task_execution_order should only be called during the backward pass")
    from ..autograd.grad_mode import is_multithreading_enabled

    if is_multithreading_enabled():
        raise RuntimeError("_current_graph_task_execution_order expects the current backward to be executed with "
                           "multithreading disabled, e.g. by running:\n\n>>> with "
                           "torch.autograd.set_multithreading_enabled(False):\n...     torch.autograd.grad(...)\n")
    return _engine.planned_execution_order(task)


def _current_autograd_node():
    return _engine.current_node()


def _get_tracing_state():
    return None


def _get_privateuse1_backend_name() -> str:
    """The name of PyTorch's out-of-tree device backend, before one renames it (tracegrad has none)."""
    return "privateuseone"


# ---- the float32 precision settings (torch.backends' Python code calls these) ----------------------------

_get_fp32_precision_getter = _fp32_precision.get_fp32_precision_getter
_set_fp32_precision_setter = _fp32_precision.set_fp32_precision_setter
_get_float32_matmul_precision = _fp32_precision.float32_matmul_precision
_set_float32_matmul_precision = _fp32_precision.set_float32_matmul_precision
_get_cublas_allow_tf32 = _fp32_precision.allow_tf32_cublas
_set_cublas_allow_tf32 = _fp32_precision.set_allow_tf32_cublas
_get_cudnn_allow_tf32 = _fp32_precision.allow_tf32_cudnn
_set_cudnn_allow_tf32 = _fp32_precision.set_allow_tf32_cudnn


# ---- the __torch_function__ protocol (torch.overrides reads these) ---------------------------------------------

from .._torch_function import (  # noqa: E402
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_function_impl,
)
from .._torch_function import is_torch_function_enabled as _is_torch_function_enabled  # noqa: E402
from .._torch_function import is_torch_function_mode_enabled as _is_torch_function_mode_enabled  # noqa: E402

__all__ += ["DisableTorchFunction", "DisableTorchFunctionSubclass", "_disabled_torch_function_impl",
            "_is_torch_function_enabled", "_is_torch_function_mode_enabled", "_len_torch_function_stack",
            "_push_on_torch_function_stack", "_pop_torch_function_stack", "_get_function_stack_at"]


def _len_torch_function_stack() -> int:
    from .._torch_function import mode_stack

    return len(mode_stack())


def _push_on_torch_function_stack(mode) -> None:
    from .._torch_function import push_mode

    push_mode(mode)


def _pop_torch_function_stack():
    from .._torch_function import pop_mode

    return pop_mode()


def _get_function_stack_at(level: int):
    from .._torch_function import mode_stack

    return mode_stack()[level]
