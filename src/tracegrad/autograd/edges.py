"""Gradient edges: where the gradient of a tensor flows in the backward graph."""

from __future__ import annotations

import weakref

from .._tensor import Tensor
from .accumulate import AccumulateGrad

NO_EDGE = (None, 0)


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The (cached, weakly held) AccumulateGrad node of a leaf that requires grad."""
    ref = t._acc_ref
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        acc._edge = (acc, 0)
        t._acc_ref = weakref.ref(acc)
    return acc


def release_grad_accumulator(t: Tensor) -> None:
    """Let ``t``'s AccumulateGrad die with the last graph that reaches it, as PyTorch's (weakly cached) one does.
    The node's cached edge ``(acc, 0)`` refers to the node itself, so a dead graph would leave node and leaf to
    the cycle collector, and the leaf's ``.grad`` with a reference that stops the engine from adopting it."""
    ref = t._acc_ref
    acc = ref() if ref is not None else None
    if acc is not None:
        t._acc_ref = None  # the next use makes a fresh node (with its own edge)
        acc._edge = None


def gradient_edge(t: Tensor) -> tuple:
    """``(grad_fn, output_nr)`` for a non-leaf, ``(AccumulateGrad, 0)`` for a leaf requiring grad."""
    if t._base is not None:
        from .views import refresh_view_grad_fn

        refresh_view_grad_fn(t)
    fn = t._gfn
    if fn is not None:
        return (fn, t._output_nr)
    if t._rg:
        ref = t._acc_ref  # the live accumulator, inline: every op on a parameter asks for it
        acc = ref() if ref is not None else None
        return (acc if acc is not None else grad_accumulator(t))._edge
    return NO_EDGE
