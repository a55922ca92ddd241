"""``torch.jit`` as eager code meets it: tracegrad runs everything eagerly and has no TorchScript.

What model code calls outside a script works as in torch: ``is_scripting()`` and ``is_tracing()`` are False, the
decorators (``export``, ``unused``, ``ignore``, ``_overload_method``...) mark the function and return it unchanged,
``annotate(type, value)`` is ``value``, ``Attribute(value, type)`` is torch's named tuple, ``Final`` is
``typing.Final``, and a ``script_if_tracing`` function runs as written. What needs TorchScript (``script``,
``trace``, ``load``, ``save``...) raises NotImplementedError saying so (see _no_torchscript.py).
"""

from __future__ import annotations

import collections
import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from .._jit_internal import (
    Final,
    _drop,
    _overload,
    _overload_method,
    export,
    ignore,
    is_scripting,
    unused,
)
from ._no_torchscript import (
    RecursiveScriptModule,
    ScriptFunction,
    ScriptModule,
    TopLevelTracedModule,
    TracedModule,
    freeze,
    interface,
    load,
    optimize_for_inference,
    save,
    script,
    script_method,
    trace,
    trace_module,
)

__all__ = ["Attribute", "Final", "RecursiveScriptModule", "ScriptFunction", "ScriptModule", "TopLevelTracedModule",
           "TracedModule", "TracerWarning", "annotate", "export", "freeze", "ignore", "interface", "is_scripting",
           "is_tracing", "load", "optimize_for_inference", "save", "script", "script_if_tracing", "script_method",
           "trace", "trace_module", "unused", "_drop", "_overload", "_overload_method", "_script_if_tracing",
           "_unwrap_optional"]

_T = TypeVar("_T")

# torch's, with TorchScript enabled (its default): what a module's __init__ stores is the named tuple itself
Attribute = collections.namedtuple("Attribute", ["value", "type"])


class TracerWarning(Warning):
    """torch's warning for code that a trace would not record faithfully. tracegrad never traces, so nothing
    issues it; libraries name it to filter or issue it themselves (``filterwarnings(..., category=TracerWarning)``).
    """

    @staticmethod
    def ignore_lib_warnings() -> None:
        """Silence it from the library's own modules but its jit, as torch does (for ``tracegrad`` modules)."""
        warnings.filterwarnings("ignore", category=TracerWarning, module="tracegrad.(?!jit)")


def _unwrap_optional(x: _T | None) -> _T:
    """``x``, which must not be None (TorchScript's refinement of an Optional, eagerly a check)."""
    if x is None:
        raise AssertionError("Unwrapping null optional")
    return x


def annotate(the_type: Any, the_value: _T) -> _T:
    """``the_value``: the type is a hint for the TorchScript compiler only."""
    return the_value


def is_tracing() -> bool:
    """True while ``torch.jit.trace`` runs the code, which tracegrad never does."""
    return False


def _script_if_tracing(fn: Callable) -> Callable:
    """``fn`` behind a wrapper that would script it when called during tracing: in tracegrad it just calls ``fn``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    # torch's marks, which its own code reads to find the wrapped function
    wrapper.__original_fn = fn
    wrapper.__script_if_tracing_wrapper = True
    return wrapper


def script_if_tracing(fn: Callable) -> Callable:
    """``fn``, scripted when first called during tracing: in tracegrad (which never traces) it runs as written."""
    return _script_if_tracing(fn)
