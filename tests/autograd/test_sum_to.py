"""Broadcast gradients are summed back to their input's shape as PyTorch's ``sum_to`` does.

PyTorch's engine reduces a gradient whose shape was broadcast with ``at::sum_to``: a sum over the broadcast
dimensions kept as size 1 (SumBackward1) and, when the input had fewer dimensions, a view (ViewBackward0).
Under ``create_graph=True`` those are the nodes of the gradient's graph; ``Tensor.sum_to_size`` is the same
function.
"""

from __future__ import annotations

import pytest
from _lib import np, recorded_graph, run_both

# (input shape, other operand's shape): which dimensions are reduced, and whether leading ones are dropped
BROADCASTS = {
    "leading_and_inner": ((3, 1), (2, 3, 4)),
    "leading_only": ((4,), (2, 3, 4)),
    "inner_only": ((2, 1, 4), (2, 3, 4)),
    "to_a_scalar": ((), (2, 3)),
    "same_shape": ((2, 3), (2, 3)),
}
OPS = {
    "mul": lambda a, b: a * b,
    "add": lambda a, b: a + b,
    "div": lambda a, b: (a - b) / (b * b + 1),
    "expand": lambda a, b: a.expand(b.shape) * b,
}


def _leaf(lib, shape, seed):
    data = np.random.default_rng(seed).uniform(0.5, 1.5, size=shape)
    return lib.tensor(data, dtype=lib.float64, requires_grad=True)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("case", BROADCASTS)
def test_gradient_of_a_broadcast_input_records_sum_and_view(op: str, case: str):
    def program(lib):
        a, b = _leaf(lib, BROADCASTS[case][0], 0), _leaf(lib, BROADCASTS[case][1], 1)
        (ga,) = lib.autograd.grad(OPS[op](a, b).sum(), a, create_graph=True)
        graph = recorded_graph([ga]) if ga.requires_grad else None
        second = None
        if ga.requires_grad:  # the gradient's graph differentiates as torch's does
            (gga,) = lib.autograd.grad((ga * ga).sum(), (a,), allow_unused=True, materialize_grads=True)
            second = np.round(gga.numpy(), 12).tolist()
        return graph, tuple(ga.shape), np.round(ga.detach().numpy(), 12).tolist(), second

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("size", [(3, 1), (1, 1, 4), (4,), (), (2, 3, 4)])
def test_sum_to_size(size: tuple):
    def program(lib):
        y = _leaf(lib, (2, 3, 4), 2) * 1
        z = y.sum_to_size(size)
        return z is y, recorded_graph([z]), z.shape, z.stride(), np.round(z.detach().numpy(), 12).tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("size", [(5,), (2, 2, 3, 4), (3, 2)])
def test_sum_to_size_refuses_a_size_it_does_not_broadcast_to(size: tuple):
    def program(lib):
        try:
            lib.ones(2, 3, 4).sum_to_size(size)
        except RuntimeError as exc:
            return str(exc)
        return None

    ours, theirs = run_both(program)
    assert ours == theirs and theirs is not None
