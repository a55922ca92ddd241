"""The public functions and Tensor methods named as torch's, and placed where pickle finds them.

tracegrad builds many public callables from shared pieces: argument guards (``functools.wraps`` of the operator
they guard, so ``torch.arccos`` read ``'acos'``), closures (``Tensor.float`` was ``'cast'``), lambdas and aliases
(``torch.clip`` was ``clamp``). torch's are builtins named for their own binding: ``torch.arccos.__name__`` is
``'arccos'``, ``torch.linalg.inv.__name__`` ``'linalg_inv'``, ``torch.Tensor.view.__name__`` ``'view'``, and
``pickle.dumps(torch.arccos)`` stores a reference to it. Once at import, each public function gets torch's
``__name__`` (``_torch_function.torch_names``, which the routing wrappers use too) and, as ``__module__`` and
``__qualname__``, its public home (``tracegrad``/``arccos``; ``tracegrad._tensor``/``Tensor.view``): torch's
qualified names (``_VariableFunctionsClass.arccos`` of module ``torch``) name classes tracegrad does not have, and
pickle looks a function up by them. An operator (an ``OpDef``) held by a namespace notes its home, by which it
pickles (``OpDef.__reduce_ex__``). All on the objects themselves: no call pays for it.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

from ._torch_function import torch_names

# tracegrad's namespaces -> torch's, in the order a function held by two of them takes its first one's home
_NAMESPACES = (("tracegrad", "torch"), ("tracegrad.nn.functional", "torch.nn.functional"),
               ("tracegrad.linalg", "torch.linalg"), ("tracegrad.special", "torch.special"),
               ("tracegrad.fft", "torch.fft"))
_TENSOR_HOME = "tracegrad._tensor"


def name_public_callables() -> None:
    """Name each public function of the namespaces and each public Tensor method as torch does (see the module's
    docstring). A function held under names torch gives different ``__name__``s (an alias tracegrad did not wrap)
    becomes one copy per such name, distinct objects as torch's are; names torch gives one object share one."""
    from .ops.registry import OpDef

    first_home: dict[int, tuple] = {}  # id(function) -> (its __name__ at its first home, the function there)
    for holder, module_name, owner, attr, value in _public_entries():
        if isinstance(value, OpDef):
            value.__dict__.setdefault("_public_home", (module_name, _qualname(holder, attr)))
            continue
        if not isinstance(value, types.FunctionType):
            continue
        name, torch_qualname, torch_module = torch_names(owner, attr)
        seen = first_home.get(id(value))
        if seen is None:
            first_home[id(value)] = (name, value)
        elif seen[0] != name:
            value = _copy_of(value)
            setattr(holder, attr, value)
        else:
            continue  # (another name of the same object, as in torch: F.adaptive_avg_pool1d is torch's)
        value.__name__ = name
        if _binding_owner(torch_module) not in (None, owner):
            value._torch_owner = _binding_owner(torch_module)
        value.__module__, value.__qualname__ = module_name, _home_qualname(module_name, holder, attr, torch_qualname,
                                                                           value)


def _public_entries() -> Iterator[tuple]:
    """``(holder, home module, torch's owner, attribute, value)`` of every public name: the namespaces' then the
    Tensor methods (dunders have their names from ``_tensor_compat.name_special_methods_as_torch``)."""
    from ._tensor import Tensor

    for module_name, owner in _NAMESPACES:
        module = sys.modules[module_name]
        for attr, value in list(vars(module).items()):
            if not attr.startswith("_"):
                yield module, module_name, owner, attr, value
    for attr, value in list(vars(Tensor).items()):
        if not attr.startswith("_"):
            yield Tensor, _TENSOR_HOME, "torch.Tensor", attr, value


def _binding_owner(torch_module: str | None) -> str | None:
    """How torch's C++ messages name the namespace of a builtin from ``torch_module`` (``F.gelu``, of
    ``torch._C._nn``: ``torch.nn.gelu``; ``F.conv2d``, torch's own: ``torch.conv2d``); None for a Python function."""
    if torch_module is None or not (torch_module == "torch" or torch_module.startswith("torch._C")):
        return None
    return torch_module.replace("._C._", ".")


def _qualname(holder: object, attr: str) -> str:
    return f"{holder.__name__}.{attr}" if isinstance(holder, type) else attr


def _home_qualname(module_name: str, holder: object, attr: str, torch_qualname: str,
                   value: types.FunctionType) -> str:
    """torch's ``__qualname__`` where the home module holds the function under it too (``F.threshold`` is
    ``_threshold``, which Python's errors about its arguments print), else the name it is held by."""
    found = sys.modules[module_name]
    for part in torch_qualname.split("."):
        found = getattr(found, part, None)
    return torch_qualname if found is value else _qualname(holder, attr)


def _copy_of(function: types.FunctionType) -> types.FunctionType:
    """A distinct function running the same code with the same closure, defaults and attributes."""
    copy = types.FunctionType(function.__code__, function.__globals__, function.__name__, function.__defaults__,
                              function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__doc__ = function.__doc__
    copy.__annotations__ = function.__annotations__
    copy.__dict__.update(function.__dict__)
    return copy
