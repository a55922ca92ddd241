"""The engine's inner loop for a plain backward through nodes with raw-NumPy rules (``ops/raw_backward.py``).

A node class may carry ``_array_rule(node, grad_array) -> tuple of arrays (one per edge) or None``. In a plain
``backward()`` (no graph of the gradient, nothing special active, every node to run), a run of such nodes
without hooks, each of which is the only node ready next, is executed here on the arrays: no gradient
tensor, input list or node-stack entry is made between them. That is exactly what the general loop would
do, in the same order: it too runs a node that is the only one ready directly, and these rules run no
user code (so nothing can observe the current node or register a hook meanwhile). An observer of node
executions (``STATE.observed`` without ``special``) is told of each node run here. A leaf's hook-free
AccumulateGrad that receives its only gradient ends the run by accumulating it, as the general loop would do
next. Otherwise the run ends at the first node that needs anything else; its gradients are handed back as
tensors.
"""

from __future__ import annotations

import numpy as np

from .._events import emit as _emit_event
from .._state import STATE
from .._tensor import Tensor, _new
from .accumulate import accumulate_into, runs_on_arrival
from .saved import _FREED as _SAVED_FREED
from .saved import _NONE as _SAVED_NONE
from .saved import SavedTensor

_ndarray = np.ndarray
_asarray = np.asarray


def as_tensor(data, original: Tensor) -> Tensor:
    """A gradient array as a tensor. The incoming gradient passed through unchanged (``add``'s rule) stays the
    same tensor object, as with the dispatched rule; a computed array becomes a fresh tensor, as an operator
    returns it under no_grad (ufuncs return NumPy scalars for 0-d operands)."""
    if data is original._data:
        return original
    out = _new(Tensor)
    out._data = data if data.__class__ is _ndarray else _asarray(data)
    out._rg = False
    out._gfn = None
    out._vc = None
    return out


def as_tensors(arrays: tuple, original: Tensor) -> list:
    """``as_tensor`` for each gradient (None stays None); the same array twice gives the same tensor twice."""
    if len(arrays) == 1:
        a = arrays[0]
        return [None if a is None else as_tensor(a, original)]
    out = []
    for k, a in enumerate(arrays):
        if a is None:
            out.append(None)
            continue
        j = 0  # (a while loop: no range object for each gradient)
        while j < k:
            if arrays[j] is a:
                out.append(out[j])
                break
            j += 1
        else:
            out.append(as_tensor(a, original))
    return out


def run(fn, grad: Tensor, deps: dict, buffers: dict, heap: list, keep_graph: bool) -> tuple:
    """Run ``fn`` (un-hooked, with an ``_array_rule``) on ``grad``, then the nodes after it as far as possible.

    Returns ``(node, tensors, ran)``: with ``ran``, the last node run and its output gradients (its saved
    values already released, its successors' dependencies not yet counted down); otherwise a node that must
    run the usual way, with its input gradients (its rule declined)."""
    gd = grad._data
    # Nothing is queued or buffered inside this loop, so whether it may go on past a node depends on the
    # queue only through whether it was empty on entry.
    alone = not heap
    observed = STATE.observed  # (rules run no user code: nobody can start observing meanwhile)
    rule = fn._array_rule
    while True:
        res = rule(fn, gd)
        if res is None:
            return fn, [as_tensor(gd, grad)], False
        if observed:  # after the rule, so a declined node is not reported twice (rules run no user code)
            _emit_event("node_executed", node=fn)
        if not keep_graph:
            # OpNode.release_variables outside special mode, inlined for saved tensors (every array rule is an
            # OpNode's)
            for s in fn._saved:
                if s.__class__ is SavedTensor:
                    if s._kind != _SAVED_NONE:
                        s._kind = _SAVED_FREED
                        s._ref = s._extra = None
                elif s is not None:
                    fn.release_variables()  # a saved Tensor[] or number (releasing twice is harmless)
                    break
        # Go on only along a single gradient to a node that is ready now and runs the same way.
        n = len(res)
        if n == 1:
            i = 0
            d = res[0]
            nxt = fn._edges[0][0]
        elif n == 2 and alone:  # a binary op with one live gradient (the other operand a constant)
            (nxt, _), (nxt1, _) = fn._edges
            d, d1 = res
            if d is not None and nxt is not None:
                if d1 is not None and nxt1 is not None:
                    return fn, as_tensors(res, grad), True  # several: the general loop hands them out
                i = 0
            elif d1 is not None and nxt1 is not None:
                i = 1
                nxt = nxt1
                d = d1
            else:
                return fn, as_tensors(res, grad), True
        else:
            return fn, as_tensors(res, grad), True
        if nxt is None or d is None or deps[nxt] != 1 or (buffers and nxt in buffers):
            return fn, as_tensors(res, grad), True
        rule = nxt._array_rule  # (the next node's rule, read once)
        if not (alone and not nxt._hooked if rule is not None else runs_on_arrival(nxt)):
            return fn, as_tensors(res, grad), True
        if not fn._keeps_meta:
            meta = fn._in_meta
            m = meta[i] if len(meta) > i else None
            if m is None or d.dtype is not m[1] or d.shape != m[0]:
                return fn, as_tensors(res, grad), True  # reduced or cast by the general loop
        # (``deps[nxt]`` is left at 1, not counted down: its one edge is used up here, and nothing reads the count
        # of a node that has run)
        if rule is None:
            # A leaf's AccumulateGrad, run on arrival as the general loop would (see engine.py); nothing follows it.
            if observed:
                _emit_event("node_executed", node=nxt)
            accumulate_into(nxt.variable, as_tensor(d, grad))
            return nxt, [], True
        fn = nxt
        gd = d
