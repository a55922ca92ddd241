"""``torch.backends``: the switches of PyTorch's CPU build. tracegrad computes with NumPy, so the flags are kept,
validated and read back as torch does, but change no kernel."""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

_PRECISIONS = ("none", "ieee", "tf32", "bf16")


def _bool_setter(name: str) -> Callable[[Any], bool]:
    """torch's C++ setters refuse anything but a bool with this RuntimeError."""

    def check(value: Any) -> bool:
        if not isinstance(value, bool):
            raise RuntimeError(f"{name} expects a bool, but got {type(value).__name__}")
        return value

    return check


def _precision(value: Any) -> str:
    if value not in _PRECISIONS:
        raise RuntimeError(f"Unknown precision: {value}")
    return value


def install_flags(module_name: str, flags: dict[str, tuple[Any, Callable[[Any], Any]]]) -> None:
    """Turn module ``module_name``'s ``flags`` ({name: (initial value, validator)}) into properties, so that
    ``torch.backends.cudnn.enabled = 1`` is checked as in torch (which swaps in a module subclass the same way)."""
    module = sys.modules[module_name]
    values = {name: initial for name, (initial, _) in flags.items()}

    def prop(name: str, validate: Callable[[Any], Any]) -> property:
        def setter(_: types.ModuleType, value: Any) -> None:
            values[name] = validate(value)

        return property(lambda _: values[name], setter)

    namespace = {name: prop(name, validate) for name, (_, validate) in flags.items()}
    module.__class__ = type(f"{module_name.rsplit('.', 1)[-1].title()}Module", (types.ModuleType,), namespace)


def set_module_flags(module_name: str, values: dict[str, Any]) -> tuple:
    """torch's ``set_flags``: set each flag whose value is not None (through its checked property); return all
    the flags' previous values, in ``values``' order, for ``flags()`` to restore."""
    module = sys.modules[module_name]
    previous = tuple(getattr(module, name) for name in values)
    for name, value in values.items():
        if value is not None:
            setattr(module, name, value)
    return previous


@contextlib.contextmanager
def module_flags(module_name: str, values: dict[str, Any]) -> Iterator[None]:
    """torch's ``flags()`` context manager: set every flag (torch's defaults switch the library off), restore on
    exit."""
    previous = set_module_flags(module_name, values)
    try:
        yield
    finally:
        set_module_flags(module_name, dict(zip(values, previous)))


install_flags(__name__, {"fp32_precision": ("none", _precision)})

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: E402

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
