"""Gradients validated against the node that receives them, where ``.data = ...`` changed a node's output.

PyTorch's validate_outputs checks each gradient a node hands on against the metadata its *receiver* recorded for that
output when the receiver was made: it reduces a gradient of a shape that expands to the recorded one (else refuses
it), and casts it to the recorded dtype. tracegrad's engine does this against the *giver's* record of its input
(``_in_meta``), which is the same record unless ``y.data = t`` gave ``y`` another shape or dtype between the two
nodes' making: ``y = x * 2; y.data = torch.zeros(3); y.sum().backward()`` must fail as PyTorch's does, with
"Function SumBackward0 returned an invalid gradient ...", not later inside MulBackward0 (or with NumPy's
broadcasting error); ``y.data = torch.zeros(2, 5)`` for a ``y`` of shape (5,) sums the gradient to (5,), and
``y.data = t.double()`` casts it back to float32 before ``y``'s hooks see it.

So that no backward pays for this, a node whose output was changed is remembered (weakly), and only while one is
alive does a backward look for the nodes that hand gradients to it (:func:`mark_givers`): those givers go through the
engine's checked path (``_hooked``), where its validate_outputs fixes their gradients for the receivers too."""

from __future__ import annotations

import weakref

from .node import Node

# Weak references to the nodes one of whose outputs ``.data = ...`` gave a shape or dtype other than the one the node
# recorded for it (a plain set, not a WeakSet: the engine's check per backward is one truth test, no Python call)
RESHAPED: set = set()


def note_new_data(tensor, data) -> None:
    """``tensor.data = t`` with ``t``'s array ``data``: remember ``tensor``'s node if its record of the output
    differs from it."""
    fn = tensor._gfn
    meta = getattr(fn, "_out_meta", None)
    nr = tensor._output_nr
    if meta and nr < len(meta) and meta[nr] is not None and (meta[nr][0] != data.shape or meta[nr][1] != data.dtype):
        RESHAPED.add(weakref.ref(fn, RESHAPED.discard))


def is_reshaped(fn: Node | None) -> bool:
    return fn is not None and weakref.ref(fn) in RESHAPED  # (live weak references compare by their objects)


def mark_givers(graph_root: Node) -> None:
    """Before a backward while a changed node lives: send every node of the graph that hands a gradient to one
    through the checked path (the root's gradients the engine fixes itself)."""
    seen = {graph_root}
    stack = [graph_root]
    while stack:
        fn = stack.pop()
        for nxt, _ in fn._edges:
            if nxt is None:
                continue
            if fn is not graph_root and is_reshaped(nxt):
                fn._checks_receivers = True
                fn._hooked = True
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
