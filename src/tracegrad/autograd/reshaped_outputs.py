"""Gradients checked against the node that receives them, where ``.data = ...`` reshaped a node's output.

PyTorch's validate_outputs checks each gradient a node hands on against the metadata its *receiver* recorded for that
output when the receiver was made. tracegrad's engine checks it against the *giver's* record of its input
(``_in_meta``), which is the same record unless ``y.data = t`` gave ``y`` another shape between the two nodes'
making: ``y = x * 2; y.data = torch.zeros(3); y.sum().backward()`` must fail as PyTorch's does, with "Function
SumBackward0 returned an invalid gradient ...", not later inside MulBackward0 (or with NumPy's broadcasting error).

So that no backward pays for this, a node whose output was reshaped is remembered (weakly), and only while one is
alive does a backward look for the nodes that hand gradients to it: their root gradients are checked at once, and
those givers go through the engine's checked path (``_hooked``), where :func:`check_receivers` runs."""

from __future__ import annotations

import weakref

from ..ops._util import expands_to
from .node import Node

# Nodes one of whose outputs ``.data = ...`` gave a shape other than the one the node recorded for it.
_RESHAPED: weakref.WeakSet = weakref.WeakSet()


def note_new_data(tensor, shape: tuple) -> None:
    """``tensor.data = t`` with ``t`` of ``shape``: remember ``tensor``'s node if its record of the output differs."""
    fn = tensor._gfn
    meta = getattr(fn, "_out_meta", None)
    nr = tensor._output_nr
    if meta and nr < len(meta) and meta[nr] is not None and meta[nr][0] != shape:
        _RESHAPED.add(fn)


def any_reshaped() -> bool:
    """Whether some live node's output was reshaped (the engine's one check per backward)."""
    return bool(_RESHAPED)


def prepare(graph_root: Node, grads: list) -> None:
    """Before a backward while a reshaped node lives: check the root gradients against their receivers (PyTorch's
    message for the roots names no function), and send every node of the graph that hands a gradient to a reshaped
    node through the checked path."""
    for i, (nxt, nr) in enumerate(graph_root._edges):
        g = grads[i]
        if g is not None and nxt in _RESHAPED:
            _check(nxt, nr, g._data.shape, f"invalid gradient at index {i}")
    seen = {graph_root}
    stack = [graph_root]
    while stack:
        fn = stack.pop()
        for nxt, _ in fn._edges:
            if nxt is None:
                continue
            if nxt in _RESHAPED and fn is not graph_root:
                fn._checks_receivers = True
                fn._hooked = True
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)


def check_receivers(fn: Node, outputs) -> None:
    """PyTorch's shape check of the gradients ``fn`` returned, against what each receiver recorded."""
    for i, ((nxt, nr), g) in enumerate(zip(fn._edges, outputs)):
        if g is not None and nxt in _RESHAPED:
            _check(nxt, nr, g._data.shape, f"Function {fn.name()} returned an invalid gradient at index {i}")


def _check(receiver: Node, nr: int, shape: tuple, what: str) -> None:
    expected = receiver._out_meta[nr][0]
    if not expands_to(expected, shape):
        raise RuntimeError(f"{what} - got {list(shape)} but expected shape compatible with {list(expected)}")
