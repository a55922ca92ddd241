"""Review of set 18's higher-order fixes (linear's bias, the ELU family, upsampling's backward ops, cumprod with
zeros, stack), compared with torch:

- cumprod's gradient along a dim of one element (or of a tensor of at most one element) is the incoming gradient
  itself in PyTorch's cumprod_backward, before any zero test; tracegrad took the zero-free rule,
  ``result * g / x``, an ulp off ``g`` (a first-order value, and, inside the O(n^2) loop for zeros, whose last
  slice is a cumprod of one element, a second-order one);
- stack's gradients are selects (aten::select in a profile) even where a plain backward takes them from one
  unbind for speed.
"""

from __future__ import annotations

import pytest
from _lib import assert_same_bits, tg, torch


@pytest.mark.parametrize("shape, dim", [((1,), 0), ((4, 1), 1), ((1, 4), 0), ((3, 1, 2), -2), ((1, 1), 0), ((), 0)],
                         ids=str)
@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
def test_cumprod_gradient_along_a_dim_of_one_is_the_incoming_gradient(shape, dim, create_graph):
    def program(lib):
        lib.manual_seed(0)
        x = (lib.rand(shape, dtype=lib.float64) * 3 + 0.1).requires_grad_()
        v = (lib.rand(shape, dtype=lib.float64) * 0.3).requires_grad_()
        g, = lib.autograd.grad(x.cumprod(dim), x, v, create_graph=create_graph)
        return g, g.grad_fn is None

    (ours, ours_leaf), (theirs, theirs_leaf) = program(tg), program(torch)
    assert_same_bits(ours, theirs)
    assert ours_leaf == theirs_leaf


def test_cumprod_with_a_zero_second_order_bit_for_bit():
    """The loop's last slice takes the cumprod of one element, whose gradient is handed on as it is."""
    def program(lib):
        x = lib.tensor([-0.8840250045832653, -1.2755469302148053, 0.0, -0.8664416019125772], dtype=lib.float64,
                       requires_grad=True)
        w = lib.tensor([-0.25289846946006805, -0.36018000135378847, 0.9393532606557873, 1.16142070644801],
                       dtype=lib.float64)
        g, = lib.autograd.grad((x.cumprod(0) * w).sum(), x, create_graph=True)
        return g, lib.autograd.grad((g * g).sum(), x)[0]

    for ours, theirs in zip(program(tg), program(torch)):
        assert_same_bits(ours, theirs)


@pytest.mark.parametrize("count", [1, 3])
def test_stack_plain_backward_selects_in_a_profile(count):
    def program(lib):
        xs = [lib.randn(2, 3, requires_grad=True) for _ in range(count)]
        s = lib.stack(xs, 1).sum()
        with lib.autograd.profiler.profile() as prof:
            s.backward()
        return [e.name for e in prof.function_events if e.name in ("aten::select", "aten::unbind")]

    assert program(tg) == program(torch) == ["aten::select"] * count


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_stack_plain_backward_gradients_as_torch(dim):
    def program(lib):
        lib.manual_seed(0)
        a, b = lib.randn(3, 4, requires_grad=True), lib.randn(3, 4, dtype=lib.complex64, requires_grad=True)
        s = lib.stack([a, b, a[:, :]], dim)
        (s * lib.arange(float(s.numel())).reshape(s.shape)).sum().abs().backward()
        return a.grad, b.grad, a.grad.stride(), a.grad._is_view()

    ours, theirs = program(tg), program(torch)
    assert_same_bits(ours[0], theirs[0])
    assert_same_bits(ours[1], theirs[1])
    assert ours[2:] == theirs[2:]
