"""prod's zero-safe backward over a dim of size 1: PyTorch's prod_safe_zeros_backward returns the incoming gradient
itself there, so with create_graph the gradient has no graph of the input's (a second grad through it is refused)."""

from __future__ import annotations

import pytest
from _lib import assert_same_bits, raised, recorded_graph, tg, torch


def _gradient(lib, dtype: str):
    x = lib.tensor([[0.0], [2.0]], dtype=getattr(lib, dtype), requires_grad=True)
    y = x.prod(1)
    (g,) = lib.autograd.grad((y.abs() if y.is_complex() else y).sum(), [x], create_graph=True)
    return x, g


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_size_one_dim_gradient_as_torch(dtype):
    ours, theirs = _gradient(tg, dtype)[1], _gradient(torch, dtype)[1]
    assert_same_bits(ours, theirs)
    assert ours.requires_grad == theirs.requires_grad
    assert recorded_graph([ours]) == recorded_graph([theirs])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_second_gradient_refused_as_torch(dtype):
    errors = [raised(lib, lambda lib: lib.autograd.grad(*(lambda x, g: (g.sum(), [x]))(*_gradient(lib, dtype))))
              for lib in (tg, torch)]
    assert errors[1] is not None
    assert errors[0] == errors[1]
