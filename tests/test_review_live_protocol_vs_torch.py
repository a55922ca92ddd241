"""Review of the cheap live ``__torch_function__`` protocol (430ebc0..38a261a): property setters and a module's
forward on the general path, given a subclass instance, as torch's."""

from __future__ import annotations

import warnings

import pytest
from _lib import raised, tg, torch


def _logging_subclass(lib, seen: list) -> type:
    class Log(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append((func.__name__, [t.__name__ for t in types]))
            return super().__torch_function__(func, types, args, kwargs or {})

    return Log


def _setters(lib) -> list:
    """torch's setters look at ``self`` only (``handle_torch_function_setter``): a subclass value calls no handler,
    not even through the setter's own reads of it; a subclass ``self`` does, its type alone."""
    seen: list = []
    Log = _logging_subclass(lib, seen)
    Other = _logging_subclass(lib, seen)
    p = lib.ones(3, requires_grad=True)
    p.grad = lib.ones(3).as_subclass(Log)
    y = lib.ones(3)
    y.data = lib.zeros(3).as_subclass(Log)
    s = lib.ones(3).as_subclass(Log)
    s.grad = lib.ones(3).as_subclass(Other)
    s.requires_grad = True
    return [seen, type(p.grad).__name__, type(y).__name__]


def test_setters_route_on_self_only():
    assert _setters(tg) == _setters(torch)


@pytest.mark.parametrize("program", [
    # a module given a subclass instance runs its forward on the general path (the protocol live)
    lambda lib: lib.nn.Linear(4, 2)(lib.randn(2, 3).as_subclass(type("MyT", (lib.Tensor,), {}))),
    # the same general path under anomaly mode, plain tensors
    lambda lib: _with_anomaly(lib, lambda: lib.nn.Linear(4, 2)(lib.randn(2, 3))),
    lambda lib: _with_anomaly(lib, lambda: lib.nn.Linear(4, 2, bias=False)(lib.randn(2, 3))),
])
def test_linear_general_path_shape_error(program):
    assert raised(tg, program) == raised(torch, program)


def _with_anomaly(lib, body):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (anomaly mode's own warning)
        with lib.autograd.detect_anomaly():
            return body()
