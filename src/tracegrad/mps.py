"""``torch.mps`` off macOS: nothing available; the calls that need the device raise torch's error."""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["device_count", "get_rng_state", "manual_seed", "seed", "set_rng_state", "synchronize", "empty_cache",
           "set_per_process_memory_fraction", "current_allocated_memory", "driver_allocated_memory",
           "recommended_max_memory", "is_available"]


def _no_backend(call: str) -> NoReturn:
    raise RuntimeError(f"Cannot execute {call}() without MPS backend.")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    """Ignored without the device, as in torch."""


def seed() -> None:
    _no_backend("getDefaultGenerator")


def get_rng_state(device: Any = "mps") -> NoReturn:
    _no_backend("getDefaultGenerator")


def set_rng_state(new_state: Any, device: Any = "mps") -> NoReturn:
    _no_backend("getDefaultGenerator")


def synchronize() -> NoReturn:
    _no_backend("deviceSynchronize")


def empty_cache() -> NoReturn:
    _no_backend("emptyCache")


def set_per_process_memory_fraction(fraction: float) -> NoReturn:
    _no_backend("setMemoryFraction")


def current_allocated_memory() -> NoReturn:
    _no_backend("getCurrentAllocatedMemory")


def driver_allocated_memory() -> NoReturn:
    _no_backend("getDriverAllocatedMemory")


def recommended_max_memory() -> NoReturn:
    _no_backend("getRecommendedMaxMemory")
