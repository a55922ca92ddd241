"""torch's ``_jit_internal``: what its Python uses in eager mode from TorchScript's vocabulary.

``boolean_dispatch``, by which torch's Python picks one of two functions by a flag (``max_pool2d``'s
``return_indices``, ``unique``'s ``return_inverse``, ``lu``'s ``get_infos``): the function picked gets the arguments
as given, so Python's own errors for a wrong call name it, as torch's do.

The decorators model code carries for TorchScript (``export``, ``unused``, ``ignore``, ``_overload_method``...):
outside a script they only mark the function (``_torchscript_modifier``, with torch's values) and return it
unchanged, so the decorated code runs eagerly as in torch. tracegrad never scripts, so ``is_scripting()`` is False.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
import warnings
from collections.abc import Callable
from typing import Any, Final  # noqa: F401 - torch.jit.Final is typing.Final, re-exported from here as in torch


def boolean_dispatch(arg_name: str, arg_index: int, if_true: Callable, if_false: Callable,
                     name: str | None = None) -> Callable:
    """``if_true`` or ``if_false`` by the truth of one argument, given by keyword or at ``arg_index``."""

    def dispatch(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else arg_index < len(args) and args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if name is not None:
        dispatch.__name__ = dispatch.__qualname__ = name
    dispatch.__doc__ = if_false.__doc__ or if_true.__doc__
    return dispatch


def renamed(fn: Callable, name: str) -> Callable:
    """A copy of ``fn`` under ``name``, which Python's errors about its arguments print."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = name
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def is_scripting() -> bool:
    """True inside a TorchScript compilation, which tracegrad never runs."""
    return False


class FunctionModifiers:
    """How TorchScript would treat a marked function (torch's strings, which its marks hold)."""

    UNUSED = "unused (ignored and replaced with raising of an exception)"
    IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
    EXPORT = "export (compile this function even if nothing calls it)"
    DEFAULT = "default (compile if called from an exported function / forward)"
    COPY_TO_SCRIPT_WRAPPER = "if this method is not scripted, copy the python method onto the scripted model"
    _DROP = "_drop (function is fully ignored, declaration can be unscriptable)"


def _marked(fn: Callable, modifier: str) -> Callable:
    fn._torchscript_modifier = modifier
    return fn


def export(fn: Callable) -> Callable:
    """``fn``, marked as a TorchScript entry point."""
    return _marked(fn, FunctionModifiers.EXPORT)


def unused(fn: Callable) -> Callable:
    """``fn``, marked for TorchScript to replace by a raise; a property has its getter and setter marked."""
    if isinstance(fn, property):
        for accessor in (fn.fget, fn.fset):
            if accessor is not None:
                _marked(accessor, FunctionModifiers.UNUSED)
        return fn
    return _marked(fn, FunctionModifiers.UNUSED)


def _drop(fn: Callable) -> Callable:
    return _marked(fn, FunctionModifiers._DROP)


def _copy_to_script_wrapper(fn: Callable) -> Callable:
    return _marked(fn, FunctionModifiers.COPY_TO_SCRIPT_WRAPPER)


def ignore(drop: Any = False, **kwargs: Any) -> Callable:
    """``@ignore`` marks ``fn`` as left to Python; ``@ignore(drop)`` returns the decorator (``drop=True``, deprecated,
    marks it unused instead)."""
    if callable(drop):
        return _marked(drop, FunctionModifiers.IGNORE)
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now drop the function call "
                      "on compilation. Use torch.jit.unused now. {}", FutureWarning, stacklevel=2)
        drop = drop_on_export
    elif drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function call on compilation. "
                      "Use torch.jit.unused now. {}", FutureWarning, stacklevel=2)
    modifier = FunctionModifiers.UNUSED if drop else FunctionModifiers.IGNORE
    return lambda fn: _marked(fn, modifier)


# ---- overload declarations: torch checks each declaration's body when it is declared ------------------------

_OVERLOAD_EXAMPLE = """
Example usage of overload function:
@torch.jit._overload
def my_function(x: type0) -> type0: # decl 1
    pass

@torch.jit._overload
def my_function(x: type1) -> type1: # decl 2
    pass

def my_function(x):                 # implementation
    if isinstance(x, type0):
        return x
    elif isinstance(x, type1):
        return x
"""


def _is_placeholder_body(statement: ast.stmt) -> bool:
    """``pass`` or ``...``: the only body an overload declaration may have."""
    return isinstance(statement, ast.Pass) or (isinstance(statement, ast.Expr)
                                               and isinstance(statement.value, ast.Constant)
                                               and statement.value.value is Ellipsis)


def _check_overload_body(func: Callable) -> None:
    try:
        lines, first_line = inspect.getsourcelines(func)
    except OSError:  # (no source to read: torch only warns)
        warnings.warn(f"Unable to retrieve source for @torch.jit._overload function: {func}.", stacklevel=2)
        return
    source = "".join(lines)
    module = ast.parse(textwrap.dedent(source))
    # a lambda's lines are the statement around it, an ``async def`` is no declaration TorchScript reads
    if len(module.body) != 1 or not isinstance(module.body[0], ast.FunctionDef):
        raise RuntimeError(f"Expected a single top-level function: {inspect.getsourcefile(func)}:{first_line}")
    body = module.body[0].body
    if len(body) != 1 or not _is_placeholder_body(body[0]):
        raise RuntimeError("Only `pass` statement or `...` can be the body of overload declaration:\n"
                           + "\n".join(source.split("\n")[:3]) + " <- Expecting `pass` or `...` here!\n"
                           + _OVERLOAD_EXAMPLE)


def _overload(func: Callable) -> Callable:
    """A declaration of one signature of an overloaded function, for TorchScript: checked and returned as it is
    (eagerly, the implementation defined after the declarations is the one called)."""
    _check_overload_body(func)
    return func


def _overload_method(func: Callable) -> Callable:
    """``_overload`` for a method declared in a class body."""
    _check_overload_body(func)
    return func
