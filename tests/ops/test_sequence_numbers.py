"""Every graph node's sequence number, relative to the first one, is PyTorch's.

Sequence numbers order the backward engine's ready queue (a node made later runs earlier) and link each node to
its forward call in the profiler. A node-less call must not use one (a comparison, ``any``, a cast to an integer
dtype), and an operator composed of others must make its intermediate nodes in PyTorch's order, including those
it discards (an in-place ``clamp_min_`` records the copy of its input it saves). For the first three float64
samples of every differentiable operator of the database, the recorded graph's nodes and their relative numbers
must be torch's.
"""

from __future__ import annotations

import pytest
from _lib import tg, torch
from opinfo import op_db
from opinfo.core import Call, flatten_outputs, resolve

_NO_SEQUENCE = 1 << 63  # AccumulateGrad's number (UINT64_MAX): no operator made it


def _numbered_graph(lib, op, index: int) -> list[tuple[str, int]]:
    call = Call(lib, op, op.samples("float64")[index], requires_grad=True)
    outs = [t for t in flatten_outputs(call.run(resolve(lib, op.name))) if getattr(t, "requires_grad", False)]
    seen, nodes = set(), []

    def visit(fn) -> None:
        if fn is None or id(fn) in seen:
            return
        seen.add(id(fn))
        nodes.append((fn.name(), fn._sequence_nr()))
        for nxt, _ in fn.next_functions:
            visit(nxt)

    for out in outs:
        visit(out.grad_fn)
    numbered = [seq for _, seq in nodes if seq < _NO_SEQUENCE]
    first = min(numbered, default=0)
    return sorted((name, seq - first if seq < _NO_SEQUENCE else -1) for name, seq in nodes)


CASES = [pytest.param(op, index, id=f"{op.id}-{index}") for op in op_db if op.differentiable
         for index in range(min(3, len(op.samples("float64"))))]


@pytest.mark.parametrize(("op", "index"), CASES)
def test_sequence_numbers_match_torch(op, index):
    assert _numbered_graph(tg, op, index) == _numbered_graph(torch, op, index)


@pytest.mark.parametrize("call", [
    lambda y, L: y > 5, lambda y, L: y.eq(y), lambda y, L: y.isnan(), lambda y, L: (y == y).any(),
    lambda y, L: y.long(), lambda y, L: y.bool(), lambda y, L: y.to(L.int32), lambda y, L: y.signbit(),
    lambda y, L: y.argmax(), lambda y, L: y.sign(), lambda y, L: y.floor(), lambda y, L: y.sort()[1],
    lambda y, L: y.topk(1), lambda y, L: y.masked_fill(y > 5, 0), lambda y, L: y.clamp_min_(0),
], ids=["gt", "eq", "isnan", "any", "long", "bool", "to_int32", "signbit", "argmax", "sign", "floor",
        "sort_indices", "topk", "masked_fill", "clamp_min_"])
def test_numbers_used_by_a_call_match_torch(call):
    def used(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        before = (x * 1).grad_fn._sequence_nr()
        call(y, lib)
        return (x * 1).grad_fn._sequence_nr() - before - 1

    assert used(tg) == used(torch)


def _gradient_roots(lib, op, index: int) -> list[int]:
    """The order in which the backward formula made each input's gradient (``create_graph``): the rank of the
    sequence number of each gradient's node."""
    call = Call(lib, op, op.samples("float64")[index], requires_grad=True)
    outs = [t for t in flatten_outputs(call.run(resolve(lib, op.name))) if t.requires_grad]
    grads = lib.autograd.grad(outs, call.diff_inputs, [lib.ones_like(o) for o in outs], create_graph=True,
                              allow_unused=True)
    seqs = [g.grad_fn._sequence_nr() for g in grads if g is not None and g.grad_fn is not None]
    return sorted(range(len(seqs)), key=seqs.__getitem__)


GRADGRAD_CASES = [pytest.param(op, index, id=f"{op.id}-{index}") for op in op_db
                  if op.differentiable and op.supports_gradgrad
                  for index in range(min(3, len(op.samples("float64"))))]


@pytest.mark.parametrize(("op", "index"), GRADGRAD_CASES)
def test_gradients_are_made_in_torchs_order(op, index):
    """PyTorch's generated backward computes its inputs' gradients last to first (``b``'s before ``a``'s for
    ``a * b``): with ``create_graph`` that order is the sequence numbers of the gradients' nodes, which decide
    the order of a double backward. (Inside one formula, PyTorch's C++ also evaluates the right operand of an
    operator before the left, which tracegrad's Python formulas do not follow: the nodes within one gradient
    may be numbered differently.)"""
    assert _gradient_roots(tg, op, index) == _gradient_roots(torch, op, index)
