"""``torch.compiler`` as eager code meets it: nothing is ever being compiled, so ``is_compiling()`` and its
relatives are False and the markers for the compiler (``allow_in_graph``, ``assume_constant_result``) return the
function unchanged, as torch's do.

``disable(fn)`` returns a wrapper that calls ``fn`` (torch's is a wrapper too: ``__wrapped__`` is ``fn``, and
wrapping it again wraps ``fn`` itself), a class unchanged, and no ``fn``, a decorator. Torch wraps an ``nn.Module``
instance in its compiled-module class (whose ``state_dict`` keys gain ``_orig_mod.``): tracegrad has no compiled
modules, so that refuses.

There is no ``torch.compile``/``torch.compiler.compile``: an identity "compile" would hide that nothing is compiled
(its graph breaks, recompilations and errors would all be missing), and code that tests for it with ``hasattr``
still runs eagerly. Compiling is for a later tracegrad, not a pretence now.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["allow_in_graph", "assume_constant_result", "disable", "is_compiling", "is_dynamo_compiling",
           "is_exporting"]


def is_compiling() -> bool:
    """True while torch.compile or torch.export traces the code, which tracegrad never does."""
    return False


def is_dynamo_compiling() -> bool:
    return False


def is_exporting() -> bool:
    return False


def allow_in_graph(fn: Any) -> Any:
    """``fn`` (each of a list or tuple of them, as a list), for the compiler to put into its graph untraced."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(each) for each in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    """``fn``, marked for the compiler to treat its result as a constant."""
    fn._dynamo_marked_constant = True
    return fn


def _innermost(fn: Callable) -> Callable:
    """The function behind ``disable``'s wrappers, which is the one wrapped again. Only a wrapper whose
    ``_torchdynamo_wrapper_id`` is its own id is unwrapped, as in torch: a bound method of one reads the wrapper's
    marks through ``__func__`` (unwrapping would drop ``self``), and ``functools.wraps`` copies them onto another
    function (unwrapping would drop that function)."""
    while hasattr(fn, "_torchdynamo_orig_callable") and getattr(fn, "_torchdynamo_wrapper_id", None) == id(fn):
        fn = fn._torchdynamo_orig_callable
    return fn


def _disabled(fn: Any, reason: str | None, recursive: bool) -> Any:
    fn = _innermost(fn)
    if not callable(fn):
        raise AssertionError("fn must be callable")
    if isinstance(fn, type):
        return fn
    from .nn.modules.module import Module

    if isinstance(fn, Module):
        raise NotImplementedError("torch.compiler.disable: tracegrad has no torch.compile, so it cannot wrap a module "
                                  "in a compiled module (torch's OptimizedModule); call the module itself instead.")

    @functools.wraps(fn)
    def call_eagerly(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    # torch's marks, which code that inspects a disabled function reads
    call_eagerly._torchdynamo_disable = True
    call_eagerly._torchdynamo_disable_msg = reason
    call_eagerly._torchdynamo_orig_callable = fn
    call_eagerly._torchdynamo_disable_recursive = recursive
    call_eagerly._torchdynamo_wrapper_id = id(call_eagerly)
    return call_eagerly


class _DisableDecorator:
    """``disable()`` without a function: a decorator, which (as torch's) is not a context manager."""

    def __init__(self, reason: str | None) -> None:
        self.reason = reason

    def __call__(self, fn: Any) -> Any:
        if not callable(fn):
            raise AssertionError(f"A callable function is expected, but {type(fn)} is provided.")
        return _disabled(fn, self.reason, recursive=True)

    def __enter__(self) -> None:
        raise RuntimeError("torch._dynamo.optimize(...) is used with a context manager. Please refer to "
                           "https://pytorch.org/tutorials/intermediate/torch_compile_tutorial.html to use "
                           "torch._dynamo.optimize(...) as an annotation/decorator. ")

    def __exit__(self, *exc_info: Any) -> None:
        pass


def disable(fn: Any = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """``fn`` kept out of compilation (so, in tracegrad, called as it is); without ``fn``, the decorator."""
    if fn is not None:
        return _disabled(fn, reason, recursive)
    if recursive:
        return _DisableDecorator(reason)

    def wrap(fn: Any) -> Any:  # (torch's non-recursive decorator is a plain function)
        return _disabled(fn, reason, recursive=False)

    return wrap
