"""torch's ``_jit_internal.boolean_dispatch``, by which its Python picks one of two functions by a flag
(``max_pool2d``'s ``return_indices``, ``unique``'s ``return_inverse``, ``lu``'s ``get_infos``): the function picked
gets the arguments as given, so Python's own errors for a wrong call name it, as torch's do."""

from __future__ import annotations

import types
from collections.abc import Callable


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
