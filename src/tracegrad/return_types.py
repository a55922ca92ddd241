"""Named tuples returned by multi-output operators (``torch.return_types.max`` and friends)."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable

_CACHE: dict = {}
_MADE: list[type] = []  # every return type made so far
_LISTENERS: list[Callable[[type], None]] = []  # told of each new one (the pytree registry, as torch registers them)


def _structseq_repr(self) -> str:
    # PyTorch's structseq: the qualified type name, then one field per line
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{fields})"


def return_type(name: str, fields) -> type:
    """A ``torch.return_types.<name>`` named tuple, printed as PyTorch prints it."""
    cls = namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    cls.__repr__ = _structseq_repr
    _MADE.append(cls)
    for listener in _LISTENERS:
        listener(cls)
    return cls


def on_return_type(listener: Callable[[type], None]) -> None:
    """Call ``listener`` with each return type, those made so far now and those made later when they are made."""
    _LISTENERS.append(listener)
    for cls in _MADE:
        listener(cls)


def make_return(schema, outs: tuple):
    names = tuple(r.name for r in schema.returns)
    if all(names):
        cls = _CACHE.get(schema.name)
        if cls is None:
            cls = _CACHE[schema.name] = return_type(schema.name.rstrip("_"), names)
        return cls(*outs)
    return tuple(outs)
