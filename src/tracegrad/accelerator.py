"""``torch.accelerator``: the device-generic API the tutorials use to pick a device
(``torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"``).

tracegrad's only accelerator is CUDA through CuPy; without it these answer as PyTorch's CPU build does:
no accelerator, ``device_count()`` 0, and anything that needs the device raises torch's error.
"""

from __future__ import annotations

from typing import Any

from . import cuda
from .backend import cupy_backend
from .backend.device import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count", "device_index",
           "empty_cache", "is_available", "set_device_idx", "set_device_index", "synchronize"]

_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def _require() -> None:
    if not cuda.is_available():
        raise RuntimeError(_NONE_AVAILABLE)


def current_accelerator(check_available: bool = False) -> _device | None:
    """``device("cuda")`` where CuPy finds a GPU, else None (the index is left unset, as in torch)."""
    return _device("cuda") if cuda.is_available() else None


def is_available() -> bool:
    return cuda.is_available()


def device_count() -> int:
    return cuda.device_count()


def current_device_index() -> int:
    _require()
    return cuda.current_device()


def set_device_index(device: Any, /) -> None:
    _require()
    index = device.index if isinstance(device, _device) else device
    cupy_backend.xp.cuda.Device(0 if index is None else int(index)).use()


current_device_idx = current_device_index  # torch's older (deprecated) spellings
set_device_idx = set_device_index


def synchronize(device: Any = None, /) -> None:
    _require()
    cuda.synchronize(device)


def empty_cache() -> None:
    _require()
    cupy_backend.xp.get_default_memory_pool().free_all_blocks()


class device_index:
    """Context manager that makes ``device`` the current accelerator index inside it (None: no change)."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None:
            set_device_index(self.prev_idx)
