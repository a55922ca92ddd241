"""What ``torch.jit`` compiles, traces, saves or loads: tracegrad has no TorchScript, so each of these refuses with
one clear message rather than pretending (a "scripted" function that is the Python function would differ from
torch's in type, attributes, errors and saved files).

``ScriptModule``, ``ScriptFunction`` and the module classes scripting and tracing make (``RecursiveScriptModule``,
``TracedModule``, ``TopLevelTracedModule``: torch's hierarchy) exist so that library checks such as
``isinstance(m, torch.jit.ScriptModule)`` run (and are False, as no tracegrad object is scripted); making one
refuses like ``script``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from ..nn.modules.module import Module

__all__ = ["script", "trace", "trace_module", "script_method", "interface", "load", "save", "freeze",
           "optimize_for_inference", "RecursiveScriptModule", "ScriptFunction", "ScriptModule", "TopLevelTracedModule",
           "TracedModule"]


def no_torchscript_error(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.jit.{name}: tracegrad has no TorchScript, so it cannot script, trace, save or load TorchScript "
        "programs. Run the module or function eagerly instead (in tracegrad torch.jit.is_scripting() and "
        "torch.jit.is_tracing() are always False).")


def _refusing(name: str) -> Callable[..., NoReturn]:
    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise no_torchscript_error(name)

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``torch.jit.{name}``, which needs TorchScript: refused."
    return refuse


script = _refusing("script")
trace = _refusing("trace")
trace_module = _refusing("trace_module")
script_method = _refusing("script_method")
interface = _refusing("interface")
load = _refusing("load")
save = _refusing("save")
freeze = _refusing("freeze")
optimize_for_inference = _refusing("optimize_for_inference")


class ScriptModule(Module):
    """torch's compiled module: never made in tracegrad."""

    def __new__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        raise no_torchscript_error("ScriptModule")


class RecursiveScriptModule(ScriptModule):
    """What ``torch.jit.script`` makes of a module: never made in tracegrad."""


class TracedModule(ScriptModule):
    """What ``torch.jit.trace`` makes of a module: never made in tracegrad."""


class TopLevelTracedModule(TracedModule):
    """The outermost traced module: never made in tracegrad."""


class ScriptFunction:
    """torch's compiled function: never made in tracegrad."""

    def __new__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        raise no_torchscript_error("ScriptFunction")
