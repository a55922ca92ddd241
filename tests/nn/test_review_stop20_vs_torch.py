"""Behaviours reviewers of this stop's changes found (each the same program on tracegrad and torch).

- The overwritten part of ``copy_`` (and so of ``x[i] = v``) gets a zero gradient, not ``g * 0``: an inf or NaN
  incoming gradient gives 0 there, and under ``create_graph`` no node is recorded for it (PyTorch's CopyBackwards).
- ``LBFGS.step(None)`` fails as torch's does, calling the missing closure.
- ``div_(rounding_mode=None)`` of an integer or bool tensor names true division's float result in its cast error.
"""

from __future__ import annotations

import pytest
from _lib import tg, torch


def _setitem_gradients(lib):
    a = lib.ones(3, requires_grad=True)
    b = a * 1
    t = lib.zeros(2, requires_grad=True)
    b[0:2] = t
    b.backward(lib.tensor([float("inf"), float("nan"), 1.0]))
    return repr(a.grad.tolist()), repr(t.grad.tolist())


def _copy_double_backward(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 1
    y.copy_(lib.ones(2))
    (r,) = lib.autograd.grad(y, x, lib.ones(2, requires_grad=True), create_graph=True)
    return r.tolist(), r.requires_grad, r.grad_fn is None


def _lbfgs_without_closure(lib):
    p = lib.nn.Parameter(lib.ones(2))
    with pytest.raises(TypeError) as info:
        lib.optim.LBFGS([p]).step(None)
    return str(info.value)


def _bool_true_division_in_place(lib):
    errors = []
    for divisor in (lib.tensor([2, 3]), 2, lib.tensor([2, 3], dtype=lib.uint8)):
        with pytest.raises(RuntimeError) as info:
            lib.tensor([True, False]).div_(divisor, rounding_mode=None)
        errors.append(str(info.value))
    return errors


@pytest.mark.parametrize("program", [_setitem_gradients, _copy_double_backward, _lbfgs_without_closure,
                                     _bool_true_division_in_place], ids=lambda p: p.__name__.lstrip("_"))
def test_as_in_torch(program):
    assert program(tg) == program(torch)
