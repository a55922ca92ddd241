"""``torch.utils.deterministic``: whether memory torch leaves uninitialised (``empty``, what ``resize_`` grows) is
filled with a known value (NaN, an integer type's largest value, True) while ``use_deterministic_algorithms`` is
on. PyTorch makes the module's attribute a property by giving the module its own class; so does this one."""

from __future__ import annotations

import sys
import types

from .._runtime import RUNTIME


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self) -> bool:
        """Whether to fill uninitialized memory with a known value when ``use_deterministic_algorithms`` is on."""
        return RUNTIME.fill_uninitialized_memory

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode: bool) -> None:
        if not isinstance(mode, bool):  # (torch's C++ setter checks the Python type itself)
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        RUNTIME.fill_uninitialized_memory = mode


sys.modules[__name__].__class__ = _Deterministic
