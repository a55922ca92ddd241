"""Strides of gradients of tensors with no elements, as torch gives them: ``.grad`` by the gradient layout contract
(the leaf's strides where it is dense, an expanded or transposed empty leaf's included), the gradients
``autograd.grad`` returns (``sum``'s backward is an expand: zero strides; a pointwise op on such an expand is laid
out by TensorIterator, contiguous, not with NumPy's zero strides), and a ``.grad`` the user set to an expanded empty
tensor, which accumulation keeps. Also modules with an empty parameter: Embedding(5, 0)'s backward, Bilinear's
check of ``in1_features``."""

from __future__ import annotations

import pytest
from _lib import tg, torch

SHAPES = [(0,), (0, 1), (1, 0), (0, 3), (3, 0), (0, 0), (2, 0, 4), (1, 0, 1), (0, 1, 1), (2, 0, 1), (1, 0, 3)]


def _expanded(lib, shape):
    return lib.zeros(()).expand(*shape)


def _leaf(lib, shape):
    return lib.zeros(shape, requires_grad=True)


# name -> program(lib, shape) giving a tensor whose strides are compared
PROGRAMS = {
    "expand of a 0-d tensor": _expanded,
    "expand times 2": lambda lib, s: _expanded(lib, s) * 2,
    "expand cloned": lambda lib, s: _expanded(lib, s).clone(),
    "empty_like of an expand": lambda lib, s: lib.empty_like(_expanded(lib, s)),
    "autograd.grad of sum": lambda lib, s: (lambda p: lib.autograd.grad(p.sum(), p)[0])(_leaf(lib, s)),
    "autograd.grad of mul": lambda lib, s: (lambda p: lib.autograd.grad((p * 2).sum(), p)[0])(_leaf(lib, s)),
    "autograd.grad of mul, create_graph": lambda lib, s: (
        lambda p: lib.autograd.grad((p * 2).sum(), p, create_graph=True)[0])(_leaf(lib, s)),
    ".grad of sum": lambda lib, s: _grad_after(lib, _leaf(lib, s), lambda p: p.sum()),
    ".grad of mul": lambda lib, s: _grad_after(lib, _leaf(lib, s), lambda p: (p * 2).sum()),
    ".grad set to an expand, then accumulated": lambda lib, s: _grad_after(
        lib, _leaf(lib, s), lambda p: (p * 2).sum(), first=_expanded(lib, s)),
    ".grad of an expanded leaf": lambda lib, s: _grad_after(
        lib, lib.zeros((1,) * len(s)).expand(*s).requires_grad_(), lambda p: (p * 1).sum()),
    ".grad of a transposed leaf": lambda lib, s: _grad_after(
        lib, lib.zeros(s[::-1]).permute(*range(len(s) - 1, -1, -1)).requires_grad_(), lambda p: (p * 1).sum()),
    ".grad from a hook returning an expand": lambda lib, s: _grad_after(
        lib, _leaf(lib, s), lambda p: (p * 2).sum(), hook=lambda g: _expanded(lib, s)),
}


def _grad_after(lib, p, loss, first=None, hook=None):
    if first is not None:
        p.grad = first
    if hook is not None:
        p.register_hook(hook)
    loss(p).backward()
    return p.grad


def _layout(lib, program, shape):
    t = program(lib, shape)
    return tuple(t.shape), t.stride()


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_strides_of_empty_gradients_as_torch(name):
    mismatches = [f"{shape}: tracegrad {ours}, torch {theirs}" for shape in SHAPES
                  if (ours := _layout(tg, PROGRAMS[name], shape)) != (theirs := _layout(torch, PROGRAMS[name], shape))]
    assert not mismatches


@pytest.mark.parametrize("indices", [[1, 2], [[1, 2], [3, 4]]], ids=["1-d", "2-d"])
def test_embedding_with_empty_rows_backward_as_torch(indices):
    def grad(lib):
        m = lib.nn.Embedding(5, 0)
        m(lib.tensor(indices)).sum().backward()
        return tuple(m.weight.grad.shape), m.weight.grad.stride()

    assert grad(tg) == grad(torch)


def test_bilinear_without_first_features_refused_as_torch():
    def error(lib):
        with pytest.raises(Exception) as caught:
            lib.nn.Bilinear(0, 2, 3)
        return type(caught.value).__name__, str(caught.value)

    assert error(tg) == error(torch)
