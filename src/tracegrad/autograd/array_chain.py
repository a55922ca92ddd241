"""The engine's inner loop for a plain backward through nodes with raw-NumPy rules (``ops/raw_backward.py``).

A node class may carry ``_array_rule(node, grad_array) -> tuple of arrays (one per edge) or None``. In a plain
``backward()`` (no graph of the gradient, nothing special active, every node to run), a run of such nodes
without hooks, each of which is the only node ready next, is executed here on the arrays: no gradient
tensor, input list or node-stack entry is made between them. That is exactly what the general loop would
do, in the same order: it too runs a node that is the only one ready directly, and these rules run no
user code (so nothing can observe the current node or register a hook meanwhile). An observer of node
executions (``STATE.observed`` without ``special``) is told of each node run here. A leaf's hook-free
AccumulateGrad that receives its only gradient ends the run by accumulating it, as the general loop would do
next. A fused linear's node hands out its three gradients here too where the general loop's order is plain
(``_fan_out``). Otherwise the run ends at the first node that needs anything else; its gradients are handed back
as tensors.
"""

from __future__ import annotations

import numpy as np

from .._events import emit as _emit_event
from .._state import STATE
from .._tensor import Tensor, _new
from .accumulate import accumulate_into, adds_on_arrival, runs_on_arrival
from .saved import released

_ndarray = np.ndarray
_asarray = np.asarray
_UNKNOWN = object()  # (see ``known`` in ``run``)


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


def run(fn, grad: Tensor, task, buffers: dict, heap: list, keep_graph: bool) -> tuple:
    """Run ``fn`` (un-hooked, with an ``_array_rule``) on ``grad``, then the nodes after it as far as possible.

    Returns ``(node, tensors, ran)``: with ``ran``, the last node run and its output gradients (its saved
    values already released, its successors' dependencies not yet counted down); otherwise a node that must
    run the usual way, with its input gradients (its rule declined). ``task.deps`` may be counted meanwhile."""
    gd = grad._data
    # None while not counted (engine._lazy_counts): every node so far had one edge, so the next one is ready alone
    deps = task.deps
    # Nothing is queued or buffered inside this loop, so whether it may go on past a node depends on the
    # queue only through whether it was empty on entry.
    alone = not heap
    observed = STATE.observed  # (rules run no user code: nobody can start observing meanwhile)
    rule = fn._array_rule
    # The shared (shape, dtype) record ``gd`` is known to match (node_meta.py), or _UNKNOWN (never a node's record,
    # not even a missing one, None): a gradient handed on as it came (add's) needs no check against an input of that
    # very record.
    known = _UNKNOWN
    while True:
        res = rule(fn, gd)
        if res is None:
            return fn, [as_tensor(gd, grad)], False
        if observed:  # after the rule, so a declined node is not reported twice (rules run no user code)
            _emit_event("node_executed", node=fn)
        if not keep_graph:
            fn._saved = released(fn._saved)  # (OpNode.release_variables outside special mode)
        # Go on only along a single gradient to a node that is ready now and runs the same way.
        n = len(res)
        if n == 1:
            d = res[0]
            nxt = fn._edges[0][0]
            if nxt is None or d is None:
                return fn, as_tensors(res, grad), True
            i = 0
            fits = fn._keeps_meta
            meta = fn._in_meta
            m = meta[0] if meta else None
        elif n == 2 and alone:  # a binary op with one edge (the other operand a constant)
            (nxt, _), (nxt1, _) = fn._edges
            if nxt1 is None:
                i = 0
                d = res[0]
            elif nxt is None:
                i = 1
                nxt = nxt1
                d = res[1]
            else:
                return fn, as_tensors(res, grad), True  # several edges: the general loop hands them out
            if d is None or nxt is None:  # (or no edge at all: an operand viewed under no_grad has none)
                return fn, as_tensors(res, grad), True
            fits = False  # (no binary op's rule is in raw_backward.KEEPS_META)
            meta = fn._in_meta
            m = meta[i] if len(meta) > i else None
        elif n == 3 and alone and not observed:
            if deps is None:
                deps = task.count_from(fn)  # (a weight may also be reached through the input's branch)
            nxt = _fan_out(fn, res, gd, grad, deps, buffers, keep_graph)
            if nxt is False:
                return fn, as_tensors(res, grad), True
            if nxt is None:
                return fn, [], True  # (nothing left to hand on: the engine takes the next node from the queue)
            fn = nxt
            gd = res[1]
            rule = nxt._array_rule
            known = _UNKNOWN
            continue
        else:
            return fn, as_tensors(res, grad), True
        if deps is not None and (deps[nxt] != 1 or (buffers and nxt in buffers)):
            return fn, as_tensors(res, grad), True
        rule = nxt._array_rule  # (the next node's rule, read once)
        if rule is not None:
            if not alone or nxt._hooked:
                return fn, as_tensors(res, grad), True
        elif not runs_on_arrival(nxt) and not adds_on_arrival(nxt, d):
            return fn, as_tensors(res, grad), True
        if not fits and (d is not gd or m is not known) and (m is None or d.dtype is not m[1] or d.shape != m[0]):
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
        known = m


def _ready_alone(node, deps: dict, buffers: dict) -> bool:
    """Whether ``node`` is made ready by its one incoming gradient, with no input buffer of its own yet."""
    return deps[node] == 1 and not (buffers and node in buffers)


def _fits(node, i: int, d) -> bool:
    """Whether gradient ``d`` of ``node``'s edge ``i`` has its input's shape and dtype (no reduction or cast)."""
    if node._keeps_meta:
        return True
    meta = node._in_meta
    m = meta[i] if len(meta) > i else None
    return m is not None and d.dtype is m[1] and d.shape == m[0]


def _fan_out(fn, res: tuple, gd, grad: Tensor, deps: dict, buffers: dict, keep_graph: bool):
    """The three gradients of a fused linear's node (bias, input, weight.t()) handed out as the general loop does,
    with the queue empty (``alone``) and nobody told of node runs (``observed``: the order is not seen): the bias's
    leaf accumulates on arrival; the weight's TBackward0 and the input's node become ready, and the queue runs the
    one created later (TBackward0, as in ``nn.Linear``) and its leaf first; the input's node is then the only one
    ready. Returns that node (its gradient ``res[1]``), None where the input has none, or False, having changed
    nothing, for any other case (the general loop hands them out)."""
    (bias, _), (nxt, _), (t, _) = fn._edges
    db, dx, dwt = res
    if t is None or dwt is None or t._hooked or t._array_rule is None or len(t._edges) != 1:
        return False
    w = t._edges[0][0]
    if w is None or not _ready_alone(t, deps, buffers) or not _ready_alone(w, deps, buffers) or not runs_on_arrival(w):
        return False
    if bias is not None and (db is None or not _ready_alone(bias, deps, buffers) or not runs_on_arrival(bias)):
        return False
    if nxt is not None and (dx is None or nxt._array_rule is None or nxt._hooked or nxt._seq >= t._seq
                            or not _ready_alone(nxt, deps, buffers)):
        return False
    # Distinct, fresh arrays: each becomes its own tensor, as the general loop's would (so accumulation adopts it
    # exactly when it would there)
    if dwt is gd or dwt is db or dwt is dx or (bias is not None and (db is gd or db is dx)) or (
            nxt is not None and dx is gd):
        return False
    if not (_fits(fn, 2, dwt) and (bias is None or _fits(fn, 0, db)) and (nxt is None or _fits(fn, 1, dx))):
        return False
    # TBackward0's rule runs no user code and changes nothing: it may run before the bias's leaf accumulates
    out = t._array_rule(t, dwt)
    if out is None or len(out) != 1 or out[0] is None or out[0] is gd or not _fits(t, 0, out[0]):
        return False
    if bias is not None:
        accumulate_into(bias.variable, as_tensor(db, grad))
    if not keep_graph:
        t._saved = released(t._saved)
    accumulate_into(w.variable, as_tensor(out[0], grad))
    return nxt
