"""A node's gradients are all fixed (reduced, cast, checked) before any is handed on, as PyTorch's validate_outputs
does: a leaf's AccumulateGrad that runs as its gradient arrives must not see an unreduced copy still held for a
later edge. Before, ``(a + b).mean().backward()`` with ``a`` a strided (1,) leaf and ``b`` 0-d gave ``a.grad``
the leaf's stride (2,) (copied, as if shared) where PyTorch adopts the gradient as is, stride (1,); and an invalid
gradient for a later edge raised only after an earlier leaf had accumulated."""

from __future__ import annotations

import pytest
import torch
from _lib import assert_same_bits

import tracegrad


def _leaves(L, b_shape, b_dtype=None):
    a = L.zeros(2)[::2].detach().requires_grad_()  # (shape (1,), stride (2,): dense, so .grad may take either)
    b = L.zeros(b_shape, dtype=b_dtype or L.float32, requires_grad=True)
    return a, b


CASES = {
    "a+b, b 0-d": lambda L, a, b: (a + b).mean(),
    "b+a, b 0-d": lambda L, a, b: (b + a).mean(),
    "a+b+b": lambda L, a, b: (a + b + b).mean(),
    "a+b-c": lambda L, a, b: (a + b - L.ones(2, 1)).sum(),
    "a*1+b": lambda L, a, b: (a * 1 + b).mean(),
}


def _run(L, case, b_shape=(), b_dtype=None):
    a, b = _leaves(L, b_shape, b_dtype and getattr(L, b_dtype))
    CASES[case](L, a, b).backward()
    return a, b


@pytest.mark.parametrize("case", list(CASES))
def test_leaf_adopts_gradient_a_reduced_sibling_no_longer_holds(case):
    theirs, ours = _run(torch, case), _run(tracegrad, case)
    for t, o in zip(theirs, ours):
        assert o.grad.stride() == t.grad.stride()
        assert_same_bits(o.grad, t.grad)


def test_reduced_and_cast_sibling():
    theirs, ours = _run(torch, "a+b, b 0-d", (), "float64"), _run(tracegrad, "a+b, b 0-d", (), "float64")
    for t, o in zip(theirs, ours):
        assert (o.grad.stride(), o.grad.dtype.itemsize) == (t.grad.stride(), t.grad.dtype.itemsize)
        assert_same_bits(o.grad, t.grad)


@pytest.mark.parametrize("b_shape", [(1,), (3, 1)])
def test_shared_or_view_reduced_sibling_unchanged(b_shape):
    # (b (1,): both leaves get the same gradient, so a's is copied with its own layout; b (3, 1): a's is reduced)
    theirs, ours = _run(torch, "a+b, b 0-d", b_shape), _run(tracegrad, "a+b, b 0-d", b_shape)
    for t, o in zip(theirs, ours):
        assert o.grad.stride() == t.grad.stride()
        assert_same_bits(o.grad, t.grad)


def _bad_second_gradient(L):
    class Both(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g, L.ones(5)

    a, b = L.zeros(3, requires_grad=True), L.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        Both.apply(a, b).sum().backward()
    return str(info.value), a.grad


def test_invalid_later_gradient_raises_before_any_leaf_accumulates():
    assert _bad_second_gradient(tracegrad) == _bad_second_gradient(torch)
