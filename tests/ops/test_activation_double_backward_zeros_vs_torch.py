"""Backward ops of piecewise-linear activations differentiated with respect to their input, as torch: its formula
for ``self`` is ``zeros_like(grad)`` (threshold, hardtanh, leaky_relu, hard- and softshrink, and the activations
built on them), so a second ``autograd.grad`` to the input gives zeros, not None."""

from __future__ import annotations

import pytest
from _lib import tg, torch

ACTIVATIONS = {
    "relu": lambda F, x: F.relu(x),
    "threshold": lambda F, x: F.threshold(x, 0.25, -2.0),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "relu6": lambda F, x: F.relu6(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.1),
    "rrelu_eval": lambda F, x: F.rrelu(x, training=False),
    "hardshrink": lambda F, x: F.hardshrink(x),
    "softshrink": lambda F, x: F.softshrink(x, 0.25),
}


def _second_order(lib, name: str, dtype: str) -> tuple:
    x = lib.tensor([-1.5, -0.1, 0.4, 2.0], dtype=getattr(lib, dtype), requires_grad=True)
    v = lib.tensor([1.0, -2.0, 3.0, 0.5], dtype=getattr(lib, dtype), requires_grad=True)
    (g,) = lib.autograd.grad(ACTIVATIONS[name](lib.nn.functional, x), x, v, create_graph=True)
    to_x = lib.autograd.grad(g.sum(), x, allow_unused=True, retain_graph=True)[0]
    to_both = lib.autograd.grad((g * g).sum(), (x, v), allow_unused=True)

    def seen(t):
        return None if t is None else (str(t.dtype).split(".")[-1], t.tolist(), t.requires_grad)

    return g.grad_fn.name(), seen(to_x), [seen(t) for t in to_both]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_second_derivative_to_the_input_is_zeros_as_torch(name, dtype):
    assert _second_order(tg, name, dtype) == _second_order(torch, name, dtype)


def test_materialised_zero_joins_other_gradients_as_torch():
    def run(lib):
        x = lib.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.leaky_relu(x, 0.2).sum(), x, create_graph=True)
        (g * x).sum().backward()
        return x.grad.tolist()

    assert run(tg) == run(torch)
