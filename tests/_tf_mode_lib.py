"""A ``TorchFunctionMode`` that records the calls its handler sees, for the tests that compare what a mode sees in
tracegrad and in torch (tests/test_*tf_mode*_vs_torch.py, tests/test_torch_function_modes_vs_torch.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["call_name", "call_name_and_types", "recorded_run", "recorded"]

# what is kept of one call: (lib, func, types, args, kwargs) -> an entry of the record
Describe = Callable[[Any, Callable, tuple, tuple, dict], Any]


def call_name(lib, func: Callable, types: tuple = (), args: tuple = (), kwargs: dict | None = None) -> str:
    """torch's name of ``func`` (``resolve_name``), else its module and qualified name."""
    return lib.overrides.resolve_name(func) or f"{func.__module__}:{func.__qualname__}"


def call_name_and_types(lib, func: Callable, types: tuple, args: tuple = (), kwargs: dict | None = None) -> tuple:
    """``call_name`` and the names of the classes in ``types``."""
    return call_name(lib, func), tuple(kind.__name__ for kind in types)


def recorded_run(lib, run: Callable[[], Any], describe: Describe = call_name) -> list:
    """``describe(...)`` of each call a mode sees while ``run()`` runs; each call then runs as it would."""
    seen: list = []

    class Recorder(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(describe(lib, func, types, args, kwargs or {}))
            return func(*args, **(kwargs or {}))

    with Recorder():
        run()
    return seen


def recorded(lib, program: Callable[[Any], Callable[[], Any]], describe: Describe = call_name) -> list:
    """``recorded_run`` of ``program(lib)``, built after ``lib.manual_seed(0)``."""
    lib.manual_seed(0)
    return recorded_run(lib, program(lib), describe)
