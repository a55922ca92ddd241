"""Process-wide runtime settings PyTorch exposes at the top level (thread counts, the default device,
deterministic algorithms, float32 matmul precision, flush-denormal). NumPy's kernels take none of them into
account; tracegrad keeps and validates the values as PyTorch does so that code which sets and reads them runs.
The float32 precisions, which ``torch.backends`` shares, are kept in ``_fp32_precision``.
"""

from __future__ import annotations

import os

import numpy as np

from . import _fp32_precision
from .backend.device import DEFAULT_DEVICE, as_device, device, refuse_unsupported


class _Runtime:
    num_threads: int = max(1, (os.cpu_count() or 1))
    num_interop_threads: int = max(1, (os.cpu_count() or 1))
    deterministic: bool = False
    deterministic_warn_only: bool = False
    fill_uninitialized_memory: bool = True  # (torch.utils.deterministic.fill_uninitialized_memory)


RUNTIME = _Runtime()


def _positive_int(name: str, value) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise RuntimeError(f"{name} expects an int, but got {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return value


def get_num_threads() -> int:
    return RUNTIME.num_threads


def set_num_threads(int: int) -> None:  # noqa: A002 - PyTorch's parameter name
    RUNTIME.num_threads = _positive_int("set_num_threads", int)


def get_num_interop_threads() -> int:
    return RUNTIME.num_interop_threads


def set_num_interop_threads(int: int) -> None:  # noqa: A002
    RUNTIME.num_interop_threads = _positive_int("set_num_interop_threads", int)


def init_num_threads() -> None:
    """Nothing to initialise: NumPy manages its own threads."""


def get_default_device() -> device:
    """The default device, with the current index of its type where it names none (as torch finds it: by making
    an empty tensor there, which fails as a factory fails there)."""
    d = DEFAULT_DEVICE.device
    if d.index is not None or d.type == "cpu":
        return d
    refuse_unsupported(d, moving=True)  # (torch's tensor([]) is made on the CPU, then moved there)
    from .cuda import current_device

    return device("cuda", current_device())  # (raises torch's error without CUDA)


def set_default_device(device) -> None:  # noqa: A002
    """Make ``device`` (None: the CPU) where factories given no device put their tensors. As in torch, a device
    this build has no kernels for is accepted here and refused by the next factory."""
    DEFAULT_DEVICE.set(as_device("cpu" if device is None else device))


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    RUNTIME.deterministic = mode
    RUNTIME.deterministic_warn_only = bool(warn_only) and mode


def are_deterministic_algorithms_enabled() -> bool:
    return RUNTIME.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return RUNTIME.deterministic_warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """0 / "default": off; 1 / "warn": deterministic, warn only; 2 / "error": deterministic."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def fills_uninitialized_memory() -> bool:
    """Whether memory torch leaves uninitialised (``empty``, the grown part of ``resize_``) is filled, as torch
    does under deterministic algorithms unless ``torch.utils.deterministic.fill_uninitialized_memory`` is off."""
    return RUNTIME.deterministic and RUNTIME.fill_uninitialized_memory


def uninitialized_fill_value(dtype: np.dtype):
    """What torch writes there: True for bool, the largest value for integers, NaN for the rest."""
    if dtype == np.bool_:
        return True
    return np.iinfo(dtype).max if dtype.kind in "iu" else np.nan


def fill_uninitialized(array: np.ndarray) -> np.ndarray:
    """``array`` (just allocated by an empty-like factory), filled where torch would fill it (see above)."""
    if fills_uninitialized_memory() and array.size:
        array[...] = uninitialized_fill_value(array.dtype)
    return array


def get_deterministic_debug_mode() -> int:
    if not RUNTIME.deterministic:
        return 0
    return 1 if RUNTIME.deterministic_warn_only else 2


def get_float32_matmul_precision() -> str:
    return _fp32_precision.float32_matmul_precision()


def set_float32_matmul_precision(precision: str) -> None:
    _fp32_precision.set_float32_matmul_precision(precision)


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing denormals is supported (PyTorch: True on x86 with SSE3). NumPy cannot switch it, so
    the call changes nothing and says it is unsupported."""
    return False
