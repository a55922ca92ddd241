"""``torch.utils.benchmark.utils.valgrind_wrapper.timer_interface``: the ``CopyIfCallgrind`` marker for globals,
and the refusal of Callgrind collection (tracegrad has no Valgrind client-request bindings to toggle
instrumentation around the statement)."""

from __future__ import annotations

import itertools
import shutil
import textwrap
from typing import Any, NoReturn

import tracegrad

__all__ = ["CopyIfCallgrind"]

_CALLGRIND_COMMANDS = ("valgrind", "callgrind_control", "callgrind_annotate")


def _allowed_global_types() -> tuple[tuple[type, ...], ...]:
    """The types torch lets cross into a Callgrind subprocess: builtins (pickled), modules (torch.save),
    scripted functions and modules (torch.jit.save)."""
    return (
        (str, bytes, bool, int, float, complex),
        (tracegrad.jit.ScriptFunction, tracegrad.jit.ScriptModule),
        (tracegrad.nn.Module,),
    )


class CopyIfCallgrind:
    """Marks a Timer global as one that may be replaced by a deserialised copy under Callgrind."""

    def __init__(self, value: Any, *, setup: str | None = None) -> None:
        if not any(isinstance(value, types) for types in _allowed_global_types()):
            supported = "\n".join(getattr(t, "__name__", repr(t)) for t in itertools.chain(_allowed_global_types()))
            raise ValueError(
                f"Unsupported type: {type(value)}\n"
                f"`collect_callgrind` restricts globals to the following types:\n"
                f"{textwrap.indent(supported, '  ')}"
            )
        self._value = value
        self._setup = setup

    @property
    def value(self) -> Any:
        return self._value

    @property
    def setup(self) -> str | None:
        return self._setup

    @staticmethod
    def unwrap_all(globals: dict[str, Any]) -> dict[str, Any]:  # noqa: A002 - torch's parameter name
        return {k: (v.value if isinstance(v, CopyIfCallgrind) else v) for k, v in globals.items()}


def refuse_callgrind() -> NoReturn:
    """torch's OSError where Valgrind's tools are missing; where they are present, its error for a platform
    without Valgrind support, since tracegrad cannot instrument the statement either way."""
    missing = [command for command in _CALLGRIND_COMMANDS if shutil.which(command) is None]
    if missing:
        raise OSError("Missing: " + ", ".join(missing))
    raise OSError("Valgrind is not supported on this platform.")
