"""Gradient edges: where the gradient of a tensor flows in the backward graph."""

from __future__ import annotations

import weakref

from .._tensor import Tensor
from .accumulate import AccumulateGrad
from .node_meta import ONLY, meta_forms

NO_EDGE = (None, 0)


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The AccumulateGrad node of a leaf that requires grad: the live one, or a new one.

    As in PyTorch, the leaf holds its node weakly and the node holds the leaf: the graphs that reach the node
    keep it (and the leaf) alive, and it dies with the last of them, so a leaf nobody else holds is freed as
    soon as its graphs are, with no reference cycle left for the cycle collector. The price is a new node for
    each graph that reaches a leaf after the last one died (``new_grad_accumulator``, kept lean)."""
    ref = t._acc_ref
    acc = ref() if ref is not None else None
    return acc if acc is not None else new_grad_accumulator(t)


def new_grad_accumulator(t: Tensor, in_meta: tuple | None = None) -> AccumulateGrad:
    """A new AccumulateGrad node for leaf ``t``, cached (weakly) as its live one: AccumulateGrad(t), unrolled.
    ``in_meta``: the node's input metadata (``meta_forms(shape, dtype)[ONLY]`` of t), where a caller has it."""
    acc = _new_node(AccumulateGrad)
    acc.variable = t
    if in_meta is None:
        data = t._data
        in_meta = meta_forms(data.shape, data.dtype)[ONLY]
    acc._in_meta = in_meta
    t._acc_ref = _weakref(acc)
    return acc


_new_node, _weakref = object.__new__, weakref.ref


def gradient_edge(t: Tensor) -> tuple:
    """``(grad_fn, output_nr)`` for a non-leaf, ``(AccumulateGrad, 0)`` for a leaf requiring grad."""
    if t._base is not None:
        (_refresh_view_grad_fn or _bind_refresh())(t)
    fn = t._gfn
    if fn is not None:
        return (fn, t._output_nr)
    if t._rg:
        ref = t._acc_ref  # the live accumulator, inline: every op on a parameter asks for it
        acc = ref() if ref is not None else None
        # (a fresh edge each time: one cached on the node would refer to the node itself, a cycle that would keep
        # a dead graph's node and leaf waiting for the cycle collector; PyTorch frees them at once)
        return (acc if acc is not None else new_grad_accumulator(t), 0)
    return NO_EDGE


_refresh_view_grad_fn = None  # (autograd.views', which imports this module: bound at first use, as a global)


def _bind_refresh():
    global _refresh_view_grad_fn
    from .views import refresh_view_grad_fn

    _refresh_view_grad_fn = refresh_view_grad_fn
    return refresh_view_grad_fn
