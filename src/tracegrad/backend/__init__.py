"""Array back ends (layer 1): the only layer that creates NumPy/CuPy arrays besides kernels in ``ops/``."""

from __future__ import annotations

import numpy as np

from . import cupy_backend, host_allocator, numpy_backend
from .device import CPU, as_device, device
from .dtypes import dtype

__all__ = ["numpy_backend", "cupy_backend", "array_module", "device_of", "device", "dtype", "CPU", "as_device",
           "cuda_available"]


host_allocator.tune_host_allocator()


def array_module(array):
    """NumPy for CPU arrays, CuPy for GPU arrays."""
    if isinstance(array, np.ndarray):
        return np
    if cupy_backend.xp is not None and isinstance(array, cupy_backend.xp.ndarray):
        return cupy_backend.xp
    return np


def device_of(array) -> device:
    if isinstance(array, np.ndarray):
        return CPU
    return device("cuda", int(array.device.id))


def cuda_available() -> bool:
    return cupy_backend.available()
