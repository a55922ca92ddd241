"""``torch.backends``: the switches of PyTorch's CPU build. tracegrad computes with NumPy, so the flags are kept,
validated and read back as torch does, but change no kernel."""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

from .._fp32_precision import checked_bool, get_fp32_precision_getter, set_fp32_precision_setter


def _bool_setter(name: str) -> Callable[[Any], bool]:
    """torch's C++ setters refuse anything but a bool with this RuntimeError."""
    return lambda value: checked_bool(name, value)


def install_flags(module_name: str, flags: dict[str, tuple[Any, Callable[[Any], Any]]],
                  computed: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]] | None = None) -> None:
    """Turn module ``module_name``'s ``flags`` ({name: (initial value, validator)}) into properties, so that
    ``torch.backends.cudnn.enabled = 1`` is checked as in torch (which swaps in a module subclass the same way).
    ``computed`` ({name: (getter, setter)}) are flags kept elsewhere: the float32 precisions."""
    module = sys.modules[module_name]
    values = {name: initial for name, (initial, _) in flags.items()}

    def stored(name: str, validate: Callable[[Any], Any]) -> property:
        def setter(_: types.ModuleType, value: Any) -> None:
            values[name] = validate(value)

        return property(lambda _: values[name], setter)

    def kept_elsewhere(get: Callable[[], Any], set_: Callable[[Any], Any]) -> property:
        return property(lambda _: get(), lambda _, value: set_(value))

    namespace = {name: stored(name, validate) for name, (_, validate) in flags.items()}
    namespace.update({name: kept_elsewhere(*access) for name, access in (computed or {}).items()})
    module.__class__ = type(f"{module_name.rsplit('.', 1)[-1].title()}Module", (types.ModuleType,), namespace)


def precision_of(backend: str, op: str) -> tuple[Callable[[], str], Callable[[Any], str]]:
    """(getter, setter) of one node of the float32 precision tree, through torch's binding (and its checks)."""
    return (lambda: get_fp32_precision_getter(backend, op),
            lambda value: set_fp32_precision_setter(backend, op, value))


class _FP32Precision:  # noqa: N801 - PyTorch's name
    """torch's ``torch.backends.cudnn.conv`` and the like: the ``fp32_precision`` of one (backend, op) node."""

    def __init__(self, backend: str, op: str) -> None:
        self.backend = backend
        self.op = op

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "fp32_precision":
            set_fp32_precision_setter(self.backend, self.op, value)
        elif name in ("backend", "op"):
            super().__setattr__(name, value)
        else:
            raise AttributeError("Unknown attribute " + name)

    def __getattr__(self, name: str) -> Any:
        if name == "fp32_precision":
            return get_fp32_precision_getter(self.backend, self.op)
        raise AttributeError("Unknown attribute " + name)


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


def set_flags(_fp32_precision: str | None = "none") -> tuple:
    return set_module_flags(__name__, {"fp32_precision": _fp32_precision})


def flags(fp32_precision: str = "none") -> contextlib.AbstractContextManager:
    """Set the generic float32 precision inside the block; on exit, write back the one read on entry."""
    return module_flags(__name__, {"fp32_precision": fp32_precision})


install_flags(__name__, {}, {"fp32_precision": precision_of("generic", "all")})

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: E402

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
