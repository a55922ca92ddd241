"""``torch.overrides``: the Python side of the ``__torch_function__`` protocol (see ``tracegrad._torch_function``)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable
from typing import Any

from . import _torch_function as _tf
from ._tensor import Tensor
from ._torch_function import default_nowrap_functions as get_default_nowrap_functions

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_default_nowrap_functions",
           "handle_torch_function", "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "is_tensor_method_or_property", "wrap_torch_function", "enable_reentrant_dispatch",
           "TorchFunctionMode", "BaseTorchFunctionMode", "resolve_name"]


def _overrides(kind: type) -> bool:
    """torch's C++ test: a type whose ``__torch_function__`` is called (a plain Tensor's never is)."""
    return kind is not Tensor and _tf.defines_torch_function(kind)


def has_torch_function(relevant_args: Iterable) -> bool:
    """Whether a call with these arguments goes to a ``__torch_function__`` (an overriding type's, or a mode's)."""
    if not _tf.is_torch_function_enabled():
        return _tf.is_torch_function_mode_enabled()
    return _tf.is_torch_function_mode_enabled() or any(_overrides(type(arg)) for arg in relevant_args)


def has_torch_function_unary(arg: Any) -> bool:
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    return has_torch_function(args)


def _get_overloaded_args(relevant_args: Iterable, get_type_fn: Callable | None = None) -> list:
    """The arguments whose types' ``__torch_function__`` is tried, in torch's order (a plain Tensor's included,
    as torch's Python version includes it)."""
    if get_type_fn is not None and get_type_fn is not type:
        raise NotImplementedError("get_type_fn other than type() is not supported")
    return _tf.overloaded_args(relevant_args, _tf.defines_torch_function)


def handle_torch_function(public_api: Callable, relevant_args: Iterable, *args: Any, **kwargs: Any) -> Any:
    """Hand ``public_api(*args, **kwargs)`` to the active mode and the overloaded arguments' handlers."""
    overloaded = _get_overloaded_args(relevant_args) if _tf.is_torch_function_enabled() else []
    return _tf.handle(public_api, overloaded, args, kwargs, python_api=True)


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """Decorator: the function goes through the protocol for the arguments ``dispatcher`` picks."""
    def inner(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


def is_tensor_like(inp: Any) -> bool:
    """A Tensor, or an object that takes part in the protocol (a class attribute ``__torch_function__``)."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether ``func`` is a Tensor method, or a property's ``__get__`` (what handlers get for attribute reads)."""
    name = getattr(func, "__name__", None)
    return name == "__get__" or (name is not None and any(
        value is func or getattr(value, "__wrapped__", None) is func for value in vars(Tensor).values()))


def resolve_name(f: Callable) -> str | None:
    """The qualified name of a torch function (``torch.add``, ``torch.Tensor.add``), None if unknown."""
    if getattr(f, "__name__", None) is None or getattr(f, "_torch_unlisted", False):
        return None
    return _tf.public_name(f)


_IGNORED = ("is_tensor", "is_storage", "set_default_dtype", "get_default_dtype", "manual_seed", "seed",
            "initial_seed", "set_printoptions", "is_grad_enabled", "typename", "compile")


def get_ignored_functions() -> set:
    """The public functions that never go through the protocol."""
    from . import __dict__ as namespace

    return {namespace[name] for name in _IGNORED if name in namespace} | {
        Tensor.__init_subclass__, Tensor.__torch_function__, Tensor._make_subclass, Tensor.as_subclass}


def get_overridable_functions() -> dict:
    """Namespace -> the functions in it that go through the protocol."""
    import types

    from . import linalg, special
    from .nn import functional

    result: dict = {}
    for owner in (__import__("tracegrad"), functional, linalg, special):
        result[owner] = [value for name, value in vars(owner).items()
                         if not name.startswith("_") and name not in _IGNORED
                         and (isinstance(value, types.FunctionType) or hasattr(value, "schema"))]
    result[Tensor] = [value for name, value in vars(Tensor).items()
                      if not name.startswith("_") and callable(value)]
    return result


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """torch's guard for reentrant dispatch: nothing to set up here."""
    yield


class TorchFunctionMode:
    """Sees every torch function, Tensor method and operator called while it is entered (innermost first),
    for plain tensors too. Its own calls inside ``__torch_function__`` reach the modes entered before it."""

    inner: TorchFunctionMode | None

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any):
        import warnings

        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every function as called."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _push_mode(mode: TorchFunctionMode) -> None:
    _tf.push_mode(mode)


def _pop_mode() -> TorchFunctionMode:
    return _tf.pop_mode()


@contextlib.contextmanager
def _pop_mode_temporarily():
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


def _get_current_function_mode() -> TorchFunctionMode | None:
    stack = _tf.mode_stack()
    return stack[-1] if stack else None


def _get_current_function_mode_stack() -> list:
    return list(_tf.mode_stack())


def _is_torch_function_mode_enabled() -> bool:
    return _tf.is_torch_function_mode_enabled()
