"""``torch.cuda``: whether the GPU back end (CuPy with an NVIDIA GPU) can be used, and its device count.

On a machine without it these answer as PyTorch's CPU build does: ``is_available()`` is False,
``device_count()`` 0, seeding and ``empty_cache()`` are silently ignored, the memory counters read 0, and asking
for the device itself (its name, its capability) raises. With a GPU the memory counters read CuPy's default
memory pool, which holds tracegrad's GPU arrays; it keeps no peak, so the ``max_*`` counters refuse.
"""

from __future__ import annotations

from collections import OrderedDict

from .backend import cupy_backend
from .backend.device import device as _device

__all__ = ["is_available", "device_count", "current_device", "synchronize", "manual_seed", "manual_seed_all",
           "is_initialized", "empty_cache", "memory_allocated", "memory_reserved", "max_memory_allocated",
           "max_memory_reserved", "memory_stats", "get_device_name", "get_device_capability", "is_bf16_supported"]


def is_available() -> bool:
    return cupy_backend.available()


def device_count() -> int:
    if not cupy_backend.available():
        return 0
    return int(cupy_backend.xp.cuda.runtime.getDeviceCount())


def _require() -> None:
    if not cupy_backend.available():
        raise AssertionError("Torch not compiled with CUDA enabled")


def current_device() -> int:
    _require()
    return int(cupy_backend.xp.cuda.runtime.getDevice())


def synchronize(device=None) -> None:
    _require()
    cupy_backend.xp.cuda.Device().synchronize()


def manual_seed(seed: int) -> None:
    """Seed the GPU's random generator (ignored without a GPU, as in PyTorch)."""
    if cupy_backend.available():
        cupy_backend.xp.random.seed(int(seed))


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)


def is_initialized() -> bool:
    return cupy_backend.available()


def empty_cache() -> None:
    """Give the GPU memory cached by the allocator back (nothing to do without a GPU)."""
    if cupy_backend.available():
        cupy_backend.xp.get_default_memory_pool().free_all_blocks()


def memory_allocated(device=None) -> int:
    return int(cupy_backend.xp.get_default_memory_pool().used_bytes()) if cupy_backend.available() else 0


def memory_reserved(device=None) -> int:
    return int(cupy_backend.xp.get_default_memory_pool().total_bytes()) if cupy_backend.available() else 0


def _peak_not_tracked() -> int:
    if cupy_backend.available():
        raise NotImplementedError("tracegrad does not track the peak GPU memory (CuPy's memory pool keeps none)")
    return 0  # (torch's CPU build: nothing was ever allocated)


def max_memory_allocated(device=None) -> int:
    return _peak_not_tracked()


def max_memory_reserved(device=None) -> int:
    return _peak_not_tracked()


def memory_stats(device=None) -> OrderedDict:
    if cupy_backend.available():
        raise NotImplementedError("tracegrad does not keep torch's caching-allocator statistics")
    return OrderedDict()


def _device_index(device) -> int:
    """The GPU a device argument names, as torch's ``_get_device_index(device, optional=True)``: an int as it is,
    a CUDA device or its name by its index, and the current GPU for None, an unindexed CUDA device (or anything
    else torch's parser finds no index in); a device of another type is refused."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device) and device.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    index = device.index if isinstance(device, _device) else None
    return current_device() if index is None else index


def _device_properties(device) -> dict:
    _require()
    index = _device_index(device)
    if index < 0 or index >= device_count():  # (torch's get_device_properties)
        raise AssertionError("Invalid device id")
    return cupy_backend.xp.cuda.runtime.getDeviceProperties(index)


def get_device_name(device=None) -> str:
    name = _device_properties(device)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None) -> tuple[int, int]:
    properties = _device_properties(device)
    return int(properties["major"]), int(properties["minor"])


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False  # (tracegrad has no bfloat16; torch's CPU build answers False too)


from .amp import cuda_amp as amp  # noqa: E402,F401 - torch.cuda.amp (deprecated aliases of torch.amp)
