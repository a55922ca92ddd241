"""The ready queue breaks ties as PyTorch's does.

PyTorch's engine pops the ready node with the highest sequence number from a ``std::priority_queue``. Every
leaf's AccumulateGrad has the same (largest) number, so when one node makes several of them ready, the order in
which they run, and their hooks fire, is the heap algorithm's: for four leaves of one ``cat``, 0, 2, 1, 3.
tracegrad's queue (``autograd/ready_queue.py``) is that algorithm; these tests hold it to torch's behaviour,
including when some leaves run on arrival (no hooks) and others are queued, and when hooks read other leaves'
``.grad`` (which shows the order hook-free leaves ran in).
"""

from __future__ import annotations

import itertools

import pytest
from _lib import tg, torch

from tracegrad.autograd import ready_queue


@pytest.mark.parametrize("n", range(2, 10))
def test_leaf_hooks_of_one_cat_fire_in_torchs_order(n):
    def order(lib):
        fired = []
        leaves = [lib.ones(2, requires_grad=True) for _ in range(n)]
        for i, leaf in enumerate(leaves):
            leaf.register_hook(lambda g, i=i: fired.append(i))
        lib.cat(leaves).sum().backward()
        return fired

    assert order(tg) == order(torch)


def _mixed(lib, pattern: str) -> list:
    """``h``: a hooked leaf whose hook records which leaves have a .grad; ``f``: a leaf without hooks; ``x``: a
    non-leaf (its node is queued like any other)."""
    fired = []
    leaves = [lib.ones(2, requires_grad=True) for _ in pattern]
    inputs = []
    for i, (kind, leaf) in enumerate(zip(pattern, leaves)):
        if kind == "h":
            leaf.register_hook(lambda g, i=i: fired.append((i, [x.grad is not None for x in leaves])))
        inputs.append(leaf * 2 if kind == "x" else leaf)
    lib.cat(inputs).sum().backward()
    return fired


@pytest.mark.parametrize("length", range(2, 7))
def test_mixed_leaves_and_nodes_run_in_torchs_order(length):
    for pattern in itertools.product("hfx", repeat=length):
        pattern = "".join(pattern)
        assert _mixed(tg, pattern) == _mixed(torch, pattern), pattern


def test_queue_is_libstdcxx_heap_order():
    """Distinct numbers leave highest first; equal ones in the heap algorithm's order."""

    class Item:
        def __init__(self, name, seq):
            self.name, self._seq = name, seq

    heap: list = []
    for name, seq in [("a", 5), ("b", 9), ("c", 9), ("d", 1), ("e", 9), ("f", 9), ("g", 7)]:
        ready_queue.push(heap, Item(name, seq))
    popped = [ready_queue.pop(heap).name for _ in range(7)]
    assert popped[4:] == ["g", "a", "d"]
    assert sorted(popped[:4]) == ["b", "c", "e", "f"] and popped[0] == "b"
