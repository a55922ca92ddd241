"""``torch.autocast``. On the CPU it casts as torch's does (amp/cpu_policy.py); a CUDA autocast that would change
dtypes raises NotImplementedError; a disabled one (``enabled=False``, ``"cuda"`` without a GPU, or a dtype other
than float16/bfloat16, which torch disables with a warning) is the no-op context manager and decorator."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
# the device types with an autocast dispatch key: torch's autocast is available for these (and only these have an
# enabled flag)
WITH_DISPATCH_KEY = ("cpu", "cuda", "xpu", "ipu", "hpu", "xla", "privateuseone", "mps", "mtia", "maia")
# (torch's words, with their double space, as no backend module is registered under the name "privateuseone")
_PRIVATEUSE1_MESSAGE = (
    "Tried to use AMP with the `privateuseone` backend, but the backend has not registered a module or  the module "
    "miss some necessary funcs. The backend should register a module by `torch._register_device_module`, and the "
    "module must have these funcs: \n`get_amp_supported_dtype() -> List[torch.dtype]`. \n"
)


def is_autocast_available(device_type: str) -> bool:
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type}")
    return device_type in WITH_DISPATCH_KEY


def _is_low_precision(dtype: Any) -> bool:
    """Whether ``dtype`` is one autocast runs in: float16 or bfloat16 (a dtype's name given as a string is no
    dtype, as torch's ``in [torch.bfloat16, torch.float16]`` finds)."""
    from ..backend.dtypes import bfloat16, float16

    return dtype is float16 or dtype is bfloat16


def _unsupported_dtype_message(device_type: str) -> str:
    """torch's warning for an autocast asked for a dtype other than float16/bfloat16 (it then disables itself)."""
    name = device_type.upper()
    return (f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
            f"{name} Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.")


class autocast:  # noqa: N801 - PyTorch's name
    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        if device_type == "privateuseone":
            raise AssertionError(_PRIVATEUSE1_MESSAGE)
        from .autocast_state import default_fast_dtype

        self.device = device_type
        self.fast_dtype = default_fast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = cache_enabled
        if enabled and device_type == "cuda":
            from .. import cuda

            if not cuda.is_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
                enabled = False
        elif enabled and not _is_low_precision(self.fast_dtype):
            warnings.warn(_unsupported_dtype_message(device_type), stacklevel=2)
            enabled = False
        if enabled and device_type == "cuda":
            # (the CPU's autocast casts as torch's does, amp/cpu_policy.py; another device type holds no tracegrad
            # tensor: its flag is recorded, as torch records it)
            raise NotImplementedError(
                f"tracegrad has no low-precision autocast yet (no per-operator casts): autocast('{device_type}') "
                "can only be used with enabled=False (a no-op)."
            )
        self._enabled = enabled

    def __enter__(self) -> autocast:
        from .autocast_state import enter_autocast  # (imports this module)

        self._saved_state = enter_autocast(self.device, self._enabled, self.fast_dtype, self._cache_enabled)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        from .autocast_state import exit_autocast

        exit_autocast(self._saved_state)
        return False

    def __call__(self, func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def _deprecated_device_autocast(device_type: str) -> type[autocast]:
    """``torch.cpu.amp.autocast`` / ``torch.cuda.amp.autocast``: torch.amp.autocast with a FutureWarning."""

    class DeviceAutocast(autocast):
        def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
            warnings.warn(f"`torch.{device_type}.amp.autocast(args...)` is deprecated. "
                          f"Please use `torch.amp.autocast('{device_type}', args...)` instead.",
                          FutureWarning, stacklevel=2)
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    DeviceAutocast.__name__ = DeviceAutocast.__qualname__ = "autocast"
    DeviceAutocast.__module__ = f"tracegrad.{device_type}.amp.autocast_mode"  # (where torch's class lives)
    return DeviceAutocast


# ---- decorators for the forward/backward of custom autograd Functions --------------------------------------------


def _check_device_type_argument(device_type: Any) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def _cast_inputs(value: Any, device_type: str, dtype: Any) -> Any:
    """torch's ``_cast``: floating tensors on ``device_type`` (float64 ones excepted) cast to ``dtype``, through
    mappings and iterables (strings, bytes and arrays left as they are)."""
    import collections.abc

    import numpy as np

    from .._tensor import Tensor
    from ..backend.dtypes import float64

    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype is not float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast_inputs(k, device_type, dtype): _cast_inputs(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        cast = (_cast_inputs(v, device_type, dtype) for v in value)
        return type(value)(cast) if isinstance(value, (list, tuple)) else cast
    return value


def custom_fwd(fwd: Callable | None = None, *, device_type: str, cast_inputs: Any = None) -> Callable:
    """Decorate a custom Function's ``forward``: with ``cast_inputs``, inside an autocast region of
    ``device_type``, its floating inputs are cast and it runs with autocast off; the autocast state is recorded on
    the ctx for ``custom_bwd``."""
    _check_device_type_argument(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    from .autocast_state import get_autocast_dtype, is_autocast_enabled

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_inputs(args, device_type, cast_inputs), **_cast_inputs(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Callable:
    """Decorate a custom Function's ``backward``: it runs with the autocast state its forward ran with."""
    _check_device_type_argument(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
