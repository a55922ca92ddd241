"""The backward engine's ready queue, ordered exactly as PyTorch's.

PyTorch keeps ready nodes in a ``std::priority_queue`` that pops the highest sequence number first. Nodes with
equal numbers (every leaf's AccumulateGrad has the largest one) leave in the order the heap algorithm happens to
give, which is not first-in first-out: the hooks of four leaves made ready by one ``cat`` fire in the order
0, 2, 1, 3. These two functions are libstdc++'s ``push_heap`` and ``pop_heap`` on a list of nodes, so that ties
break as they do in PyTorch (built with libstdc++, as its Linux and macOS wheels are).
"""

from __future__ import annotations


def push(heap: list, node) -> None:
    """``std::push_heap``: append, then move up past every parent with a smaller sequence number."""
    hole = len(heap)
    heap.append(node)
    if not hole:
        return
    seq = node._seq
    while hole:
        parent = (hole - 1) >> 1
        above = heap[parent]
        if above._seq >= seq:
            break
        heap[hole] = above
        hole = parent
    heap[hole] = node


def pop(heap: list):
    """``std::pop_heap`` then ``pop_back``: take the top; the last element fills the hole left by moving the
    larger child up level by level (the right one when the children are equal), then moves up."""
    last = heap.pop()
    n = len(heap)
    if not n:
        return last
    top = heap[0]
    hole = child = 0
    while child < (n - 1) >> 1:
        child = 2 * (child + 1)
        if heap[child]._seq < heap[child - 1]._seq:
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if not n & 1 and child == (n - 2) >> 1:
        child = 2 * (child + 1)
        heap[hole] = heap[child - 1]
        hole = child - 1
    seq = last._seq
    while hole:
        parent = (hole - 1) >> 1
        above = heap[parent]
        if above._seq >= seq:
            break
        heap[hole] = above
        hole = parent
    heap[hole] = last
    return top


class _Ran:
    """Stands in the queue for an AccumulateGrad the engine already ran on arrival, where PyTorch would have
    queued it (its place decides how later ties break); popping it runs nothing."""

    __slots__ = ()
    _seq = (1 << 64) - 1


RAN = _Ran()
