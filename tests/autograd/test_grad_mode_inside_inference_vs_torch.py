"""Grad mode switched inside inference mode, compared with torch.

torch's inference mode takes autograd out of the dispatch, so nothing records inside it whatever the grad mode:
``enable_grad``/``set_grad_enabled(True)`` there only set the flag ``is_grad_enabled()`` shows (results neither
require grad nor get a ``grad_fn``), and the flag is restored by each context on exit. ``inference_mode(False)``
inside it records again. Before, tracegrad recorded a graph (with inference-tensor results) under
``enable_grad`` inside inference mode.
"""

from __future__ import annotations

import pytest

from tests._lib import tg, torch


def _transcript(lib, program) -> list:
    lines: list = []
    program(lib, lines.append)
    return lines


def _described(lib, t) -> tuple:
    return t.requires_grad, t.is_inference(), t.grad_fn is None


def _enable_grad_inside(lib, show):
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        show(lib.is_grad_enabled())
        with lib.enable_grad():
            show((lib.is_grad_enabled(), lib.is_inference_mode_enabled(), _described(lib, x * 2)))
            with lib.inference_mode(False):
                show((lib.is_grad_enabled(), _described(lib, x * 2)))
            show(lib.is_grad_enabled())
        show(lib.is_grad_enabled())
    show(lib.is_grad_enabled())


def _set_grad_enabled_inside(lib, show):
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        lib.set_grad_enabled(True)
        show((lib.is_grad_enabled(), _described(lib, x.sum())))
        with lib.set_grad_enabled(False):
            show(lib.is_grad_enabled())
        show(lib.is_grad_enabled())
    show((lib.is_grad_enabled(), _described(lib, x.sum())))


def _under_no_grad(lib, show):
    x = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        with lib.inference_mode():
            show(lib.is_grad_enabled())
            with lib.inference_mode(False):
                show((lib.is_grad_enabled(), _described(lib, x * 2)))
            with lib.enable_grad():
                show((lib.is_grad_enabled(), _described(lib, x * 2)))
        show(lib.is_grad_enabled())


def _decorated(lib, show):
    x = lib.ones(2, requires_grad=True)

    @lib.enable_grad()
    def step():
        return lib.is_grad_enabled(), _described(lib, x * 3)

    @lib.inference_mode()
    def predict():
        return step()

    show(predict())
    show(lib.is_grad_enabled())


def _backward_inside(lib, show):
    x = lib.ones(2, requires_grad=True)
    loss = (x * x).sum()
    with lib.inference_mode(), lib.enable_grad():
        loss.backward()
    show(x.grad.tolist())


@pytest.mark.parametrize("program", [_enable_grad_inside, _set_grad_enabled_inside, _under_no_grad, _decorated,
                                     _backward_inside], ids=lambda p: p.__name__.lstrip("_"))
def test_grad_mode_inside_inference_mode_as_torch(program):
    assert _transcript(tg, program) == _transcript(torch, program)
