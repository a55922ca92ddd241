"""``torch.cuda``: whether the GPU back end (CuPy with an NVIDIA GPU) can be used, and its device count.

On a machine without it these answer as PyTorch's CPU build does: ``is_available()`` is False,
``device_count()`` 0, seeding is silently ignored, and asking for the device itself raises.
"""

from __future__ import annotations

from .backend import cupy_backend

__all__ = ["is_available", "device_count", "current_device", "synchronize", "manual_seed", "manual_seed_all"]


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


from .amp import cuda_amp as amp  # noqa: E402,F401 - torch.cuda.amp (deprecated aliases of torch.amp)
