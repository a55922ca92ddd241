"""The backward engine: PyTorch's GraphTask run on one thread, without recursion.

1. Count, for every node reachable from the roots, how many edges lead into it (dependencies). In a backward
   without ``inputs`` this waits until a node first hands gradients to several nodes (see ``_lazy_counts``).
2. With ``inputs`` given, mark which nodes must run (``needed``) and where gradients are captured.
3. Pop nodes from a priority queue (AccumulateGrad first, then the highest sequence number, i.e. the
   node created last in the forward pass) once all their dependencies have delivered; run hooks in
   PyTorch's order around each node; hand the results to the next nodes' input buffers.

A backward started inside a node (reentrant backward) is simply a nested call and finishes before the
outer one continues, as PyTorch's reentrant ordering requires.
"""

from __future__ import annotations

import contextvars
import itertools

from .. import _profiling
from .._events import emit as _emit_event
from .._state import STATE
from .._tensor import Tensor, _wrap
from .._torch_function import BuiltinFormula
from ..ops._util import check_differentiable_grad, expands_to, sum_to_shape
from ..ops.aten_vec import as_caller, quietly_for_caller
from . import accumulate as _accumulate
from . import array_chain, ready_queue, reshaped_outputs
from .accumulate import AccumulateGrad, accumulate_into, add_to_buffer, runs_on_arrival
from .node import GraphRoot, Node, collect_hook_fns

_task_ids = itertools.count()


class GraphTask:
    """State of one backward call; ``current_graph_task`` callbacks hang off it."""

    __slots__ = ("keep_graph", "create_graph", "exec_info", "captures", "captured", "callbacks",
                 "deps", "in_graph", "graph_root", "id", "__weakref__")

    def __init__(self, keep_graph: bool, create_graph: bool, graph_root: Node, deps: dict | None) -> None:
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.exec_info: dict | None = None  # node -> needed (bool); None means "run everything"
        self.captures: dict = {}  # node -> list of (output_nr, capture index)
        self.captured: list = []
        self.callbacks: list = []
        # node -> edges into it not yet used (the run counts them down); None until counted (``_lazy_counts``),
        # and then only for the nodes below the node counted from
        self.deps = deps
        self.in_graph: dict | None = None  # PyTorch's nodes_in_graph (its keys; made when first asked for)
        self.graph_root = graph_root
        self.id = next(_task_ids)

    def count_from(self, fn: Node) -> dict:
        """Count the dependencies now, from ``fn``, the node about to hand on gradients (see ``_lazy_counts``)."""
        deps = self.deps = compute_dependencies(fn)
        return deps

    def will_execute(self, fn) -> bool:
        """Whether ``fn`` runs (or has its gradient captured) in this backward call."""
        if fn is not self.graph_root:
            if self.in_graph is None:
                self.in_graph = _nodes_in_graph(self.graph_root)
            if fn not in self.in_graph:
                return False
        if self.exec_info is None:
            return True
        return bool(self.exec_info.get(fn, False)) or fn in self.captures


def _nodes_in_graph(graph_root: Node) -> dict:
    """PyTorch's ``nodes_in_graph`` (the keys): the nodes reachable from its graph root, which is the root edge's
    node itself where there is one root edge (no GraphRoot): that node is then left out."""
    # (counted afresh: the task's own counts may have been made from a node further down, see _lazy_counts)
    in_graph = compute_dependencies(graph_root)
    edges = graph_root._edges
    if len(edges) == 1:
        in_graph.pop(edges[0][0], None)
    return in_graph


_TASKS: list[GraphTask] = []


_RUNNING: list = []  # nodes being executed (innermost last)


def current_graph_task() -> GraphTask | None:
    return _TASKS[-1] if _TASKS else None


def current_node():
    return _RUNNING[-1] if _RUNNING else None


def queue_callback(callback) -> None:
    """Run ``callback`` when the current backward call finishes (``Variable._execution_engine``)."""
    task = current_graph_task()
    if task is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    task.callbacks.append(callback)


def planned_execution_order(task: GraphTask) -> list:
    """Simulate the ready queue to list, in order, the nodes this backward will execute."""
    deps = compute_dependencies(task.graph_root)  # (the task's own counts are being used up by the run)
    heap = [task.graph_root]
    order = []
    while heap:
        fn = ready_queue.pop(heap)
        if fn is not task.graph_root:
            if task.exec_info is not None and not _should_execute(task, fn):
                continue
            order.append(fn)
            if task.exec_info is not None and not task.exec_info.get(fn, False):
                continue
        for nxt, _ in fn._edges:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0 and (task.exec_info is None or _should_execute(task, nxt)):
                ready_queue.push(heap, nxt)
    return order


def compute_dependencies(root: Node) -> dict:
    """``node -> number of edges into it`` for every node reachable from ``root``."""
    deps: dict = {}
    stack = [root]
    pop, push = stack.pop, stack.append
    while stack:
        fn = pop()
        while fn is not None:
            # The first new node is visited next without a trip through the stack (most graphs are long chains).
            follow = None
            for nxt, _ in fn._edges:
                if nxt is None:
                    continue
                if nxt in deps:  # seen before (the root has no incoming edge, so it never appears here)
                    deps[nxt] += 1
                elif follow is None:
                    deps[nxt] = 1
                    follow = nxt
                else:
                    deps[nxt] = 1
                    push(nxt)
            fn = follow
    return deps


def compute_needed(root: Node, targets: set) -> dict:
    """``node -> True`` for every node from which a target node can be reached (targets included)."""
    return _reach(root, targets)[0]


def _reach(root: Node, targets: set) -> tuple[dict, set]:
    """``compute_needed``'s map, and the set of nodes with an edge to a node that reaches a target."""
    needed: dict = {}
    above: set = set()
    # Iterative post-order DFS; a node's result goes up to the node that reached it as it is popped (a graph has no
    # cycles, so each child is either done already or pushed from here).
    stack = [(root, iter(root._edges))]
    on_stack = {root}
    while stack:
        fn, it = stack[-1]
        for nxt, _ in it:
            if nxt is None:
                continue
            if nxt in needed:
                if needed[nxt]:
                    above.add(fn)
                continue
            if nxt in on_stack:
                continue
            on_stack.add(nxt)
            stack.append((nxt, iter(nxt._edges)))
            break
        else:
            stack.pop()
            on_stack.discard(fn)
            result = needed[fn] = fn in targets or fn in above
            if result and stack:
                above.add(stack[-1][0])
    return needed, above


# Beyond this many nested (reentrant) backward calls, each further one runs on a fresh thread so that
# deep reentrancy cannot exhaust the Python stack (PyTorch hands deep reentrant work to other threads too).
MAX_REENTRANT_DEPTH_ON_STACK = 32


def execute(roots: list[tuple], grads: list, keep_graph: bool, create_graph: bool,
            outputs: list[tuple] | None = None, accumulate_grad: bool = True) -> list:
    if STATE.engine_depth >= MAX_REENTRANT_DEPTH_ON_STACK and STATE.engine_depth % MAX_REENTRANT_DEPTH_ON_STACK == 0:
        return _execute_on_new_thread(roots, grads, keep_graph, create_graph, outputs, accumulate_grad)
    return _execute(roots, grads, keep_graph, create_graph, outputs, accumulate_grad)


def _execute_on_new_thread(*args) -> list:
    import threading

    result: list = []
    error: list = []

    context = contextvars.copy_context()  # (the caller's NumPy error state, which a new thread would not inherit)

    def target() -> None:
        try:
            result.append(context.run(_execute, *args))
        except BaseException as exc:  # re-raised on the calling thread
            error.append(exc)

    worker = threading.Thread(target=target, name="tracegrad-reentrant-backward")
    worker.start()
    worker.join()
    if error:
        raise error[0]
    return result[0]


def _execute(roots: list[tuple], grads: list, keep_graph: bool, create_graph: bool,
             outputs: list[tuple] | None = None, accumulate_grad: bool = True) -> list:
    """Run backward from ``roots`` (gradient edges) seeded with ``grads``.

    ``outputs``: gradient edges whose incoming gradient is wanted. With ``accumulate_grad`` they are
    executed (``backward(inputs=...)``); without, their gradient is captured and returned (``grad``).
    """
    graph_root = GraphRoot(roots, grads)
    if reshaped_outputs.RESHAPED:  # (validated before the cast, as PyTorch's validate_outputs does)
        grads = _root_grads_for_receivers(graph_root, grads)
        reshaped_outputs.mark_givers(graph_root)
    graph_root._grads = grads = _cast_root_grads(roots, grads)
    # Without ``inputs``, every node runs: the counts may wait (``_lazy_counts``)
    deps = None if outputs is None else compute_dependencies(graph_root)
    task = GraphTask(keep_graph, create_graph, graph_root, deps)
    if outputs is not None:
        targets = {fn for fn, _ in outputs if fn is not None}
        if accumulate_grad:
            task.exec_info = compute_needed(graph_root, targets)
        else:
            for k, (fn, nr) in enumerate(outputs):
                if fn is not None:
                    task.captures.setdefault(fn, []).append((nr, k))
            task.exec_info = _needed_for_capture(graph_root, targets)
        task.captured = [None] * len(outputs)
    prev_grad = STATE.grad_enabled
    prev_saved_hooks = list(STATE.saved_hooks)  # hooks entered/exited inside backward must not leak out
    STATE.grad_enabled = create_graph
    STATE.engine_depth += 1
    _TASKS.append(task)
    if STATE.observed:
        _emit_event("backward_started", task=task, roots=roots)
    # (an error must not leave the profiler's ranges open, or the operators after it nested in them)
    # (a profiler makes ``special`` true: the slot is read first, the property only then)
    profiling = _profiling.Nesting(STATE.profiler) if STATE.special and STATE.profiler is not None else None
    try:
        # PyTorch computes inf/nan silently; NumPy would warn from inside backward formulas. The user's callbacks
        # (hooks, a custom Function's backward) run under the caller's error state again (``as_caller``).
        quietly_for_caller(_run, task, graph_root)
        i = 0
        while i < len(task.callbacks):  # queue_callback: callbacks may queue more callbacks
            task.callbacks[i]()
            i += 1
    except BaseException:
        if profiling is not None:
            profiling.restore()
        raise
    finally:
        _TASKS.pop()
        STATE.engine_depth -= 1
        STATE.grad_enabled = prev_grad
        STATE.saved_hooks[:] = prev_saved_hooks
        if STATE.observed:
            _emit_event("backward_finished", task=task)
    return task.captured


def _cast_root_grads(roots: list[tuple], grads: list) -> list:
    """The root gradients, each cast to the dtype its node expects (PyTorch's validate_outputs on the root edges): the
    root's tensor's dtype, or a leaf's ``grad_dtype``. The root keeps the cast tensors, so a leaf's ``.grad`` copies
    them, as it copies any root gradient."""
    cast = None
    for k, (fn, nr) in enumerate(roots):
        g = grads[k]
        if g is None or fn is None:
            continue
        dtype = _root_dtype(fn, nr)
        if dtype is not None and g._data.dtype is not dtype and g._data.dtype != dtype:
            if cast is None:
                cast = list(grads)
            cast[k] = _cast_grad(g, dtype)
    return grads if cast is None else cast


def _root_dtype(fn: Node, nr: int):
    """The dtype of the gradient that input ``nr`` of ``fn`` expects (a leaf's ``grad_dtype``; None: any)."""
    if fn.__class__ is AccumulateGrad:
        # (the leaf's dtype now: ``x.data = ...`` of another dtype gives PyTorch's leaf a fresh accumulator, where
        # tracegrad's keeps the metadata it was made with)
        return _leaf_grad_dtype(fn, fn.variable._data.dtype)
    meta = getattr(fn, "_out_meta", None)
    if not meta or nr >= len(meta) or meta[nr] is None:
        return None
    return meta[nr][1]


def _needed_for_capture(graph_root: Node, targets: set) -> dict:
    """For ``grad()``: a node runs if a target lies strictly below it; targets themselves only capture."""
    below, above = _reach(graph_root, targets)
    return {fn: reach and (fn not in targets or fn in above) for fn, reach in below.items()}


def _run(task: GraphTask, graph_root: Node) -> None:
    exec_info = task.exec_info
    deps = task.deps  # (None until counted: ``_lazy_counts``)
    keep_graph = task.keep_graph
    buffers: dict = {}
    heap: list = []  # ready nodes, in PyTorch's priority-queue order (ready_queue)
    pop, push, ran_marker = ready_queue.pop, ready_queue.push, ready_queue.RAN
    running = _RUNNING
    state = STATE
    # ``fn``/``inputs`` is the node to run next. When a node makes exactly one successor ready and nothing
    # else is queued, that successor is run directly, skipping the queue (the order is the same).
    fn, inputs = graph_root, []
    profiled = None  # the profiler's open range of the node running, while a profiler records
    view_slots = None  # the (node, input) buffers holding what PyTorch's engine would hold as a view (a set)
    leaf_casts = _accumulate.grad_dtype_set  # whether a leaf's grad_dtype may ask for a cast its node's inputs do not
    edges = graph_root._edges
    if len(edges) == 1 and exec_info is None and not state.observed:
        # ``loss.backward()``: the root's only gradient goes straight to its node, which GraphRoot's own run
        # (unobservable here: nobody is told of node runs) would make the one node ready next (its only edge in: the
        # counts are not made yet).
        first, nr = edges[0]
        if first is not None and nr == 0 and first._n_out == 1:
            fn, inputs = first, graph_root.apply(inputs)
    del edges
    while True:
        if fn is None:  # the next node from the queue
            if not heap:
                break
            fn = pop(heap)
            while fn is ran_marker:
                if not heap:
                    return
                fn = pop(heap)
            inputs = buffers.pop(fn)
        if exec_info is not None and fn is not graph_root:
            needed = exec_info.get(fn, False)
            captures = task.captures.get(fn)
            if not needed:
                inputs = call_tensor_pre_hooks(fn, inputs)
            if captures:
                for nr, k in captures:
                    task.captured[k] = inputs[nr]
            if needed:
                # Only the input gradients that lead somewhere wanted are computed (should_compute_output).
                fn._needs = tuple([e[0] is not None and _should_execute(task, e[0]) for e in fn._edges])
        else:
            needed = True
        if needed:
            ran = False
            if not fn._hooked and not state.special:
                if (fn._array_rule is not None and exec_info is None and not state.grad_enabled
                        and inputs[0] is not None):
                    # A plain backward through raw-NumPy rules: as many nodes as possible on the arrays.
                    fn, inputs, ran = array_chain.run(fn, inputs[0], task, buffers, heap, keep_graph)
                    deps = task.deps  # (the loop may have counted them)
                if ran:
                    if not inputs:  # the run ended in a leaf's AccumulateGrad: nothing to hand on
                        del inputs
                        fn = None
                        continue
                    outputs = inputs  # ``fn`` ran, and its saved values are released
                else:
                    # The common case, inlined: no hooks; at most an observer of nodes and hooks.
                    if state.observed:
                        _emit_event("node_executed", node=fn)
                    running.append(fn)
                    try:
                        outputs = fn.apply(inputs)
                    finally:
                        running.pop()
                    if fn._post_hooks is not None:  # registered while the node ran (e.g. by an unpack hook)
                        outputs = _call_post_hooks(fn, list(outputs), [None] * len(inputs))
            elif state.profiler is None or fn is graph_root:
                outputs = call_function(task, fn, inputs)
            else:
                # PyTorch's evaluate_function range: the node with its hooks, then handing its gradients on
                profiled = state.profiler.begin_node(fn)
                outputs = call_function(task, fn, inputs, profiled)
            del inputs
            if exec_info is not None and fn is not graph_root:
                del fn._needs
            if not keep_graph and not ran:
                fn.release_variables()
            edges = fn._edges
            n_edges = len(edges)
            if len(outputs) != n_edges:
                raise RuntimeError(f"function {fn.name()} returned an incorrect number of gradients (expected "
                                   f"{n_edges}, got {len(outputs)})")
            meta = fn._in_meta
            if len(meta) != n_edges:
                meta = None
            # ready: the first node this one made ready, run directly if it is the only one; reduced: the edge whose
            # gradient was reduced to its input's shape (which PyTorch would hold as a view)
            ready = ready_inputs = reduced = None
            later_views = None  # edges ``_fix_later_edges`` reduced to what PyTorch would hold as a view
            # The first leaf AccumulateGrad this node makes ready may run on arrival (see below): the queue would
            # run it first of all. Later ones are queued, and PyTorch's queue breaks their tie in its own order.
            on_arrival = exec_info is None and not state.grad_enabled and not state.special
            # Once one ran on arrival: the queue before it, ``ran_marker`` in its place, then what PyTorch would
            # have queued since; if another AccumulateGrad must be queued, the queue is rebuilt from this as
            # PyTorch's would be (the order of ties depends on everything pushed).
            arrivals = None
            if deps is None:
                counts = _lazy_counts(task, fn)
                deps = task.deps
            else:
                counts = deps
            i = -1
            for nxt, nr in edges:
                i += 1
                if nxt is None:
                    continue
                remaining = counts[nxt] - 1
                counts[nxt] = remaining
                if exec_info is not None and not _should_execute(task, nxt):
                    continue
                grad = outputs[i]
                if grad is not None and meta is not None:
                    m = meta[i]
                    data = grad._data
                    # (dtype identity first: NumPy's builtin dtypes are singletons, and ``!=`` costs more)
                    if (data.dtype is not m[1] or data.shape != m[0]) and (data.shape != m[0] or data.dtype != m[1]):
                        grad, as_view = _fix_for_edge(fn, i, grad, m, nxt, nr)
                        if as_view:
                            reduced = i
                    elif leaf_casts and nxt.__class__ is AccumulateGrad:
                        # Cast to the leaf's grad_dtype here, as PyTorch's validate_outputs: its input buffer, its
                        # hooks and autograd.grad see the cast gradient
                        grad = _fix_gradient(fn, i, grad, m)
                if remaining == 0 and nxt.__class__ is AccumulateGrad:
                    if on_arrival and grad is not None and nxt not in buffers and runs_on_arrival(nxt):
                        # The queue would run it next (AccumulateGrad first, and of several made ready by this node
                        # the first in edge order): run it now, without a queue entry or an input buffer.
                        if state.observed:
                            _emit_event("node_executed", node=nxt)
                        # References to ``grad`` as if it ran from the queue: ``outputs[i]`` stands for its input
                        # buffer, and the slots of edges already handed out are dropped (their buffers count
                        # instead), so accumulate_into adopts the buffer exactly when the queue's run would.
                        if outputs.__class__ is not list:
                            outputs = list(outputs)
                        for j in range(i):
                            outputs[j] = None
                        if meta is not None:
                            later_views = _fix_later_edges(fn, outputs, i + 1, meta, leaf_casts)
                        accumulate_into(nxt.variable, grad)
                        outputs[i] = None
                        del grad
                        on_arrival = False
                        arrivals = heap[:]
                        if ready is not None:
                            arrivals.append(ready)
                        arrivals.append(ran_marker)
                        continue
                    on_arrival = False  # queued: a later AccumulateGrad must not overtake it
                    if arrivals is not None:
                        _requeue(heap, arrivals)
                        arrivals = None
                        if ready is not None:  # (now in the queue, where PyTorch would have put it)
                            buffers[ready] = ready_inputs
                            ready = ready_inputs = None
                if remaining == 0 and ready is None and not heap and nxt._n_out == 1 and nxt not in buffers:
                    # Its only gradient, and it may be the next node to run: keep it out of the buffers.
                    ready = nxt
                    ready_inputs = [grad]
                    del grad
                    if arrivals is not None:
                        arrivals.append(nxt)
                    continue
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * nxt._n_out
                if grad is not None:
                    if buf[nr] is None:
                        buf[nr] = grad
                        if remaining and (i == reduced or _held_as_view(fn, i)
                                          or (later_views is not None and i in later_views)):
                            if view_slots is None:
                                view_slots = set()
                            view_slots.add((nxt, nr))
                    else:
                        # PyTorch moves each gradient out of the node's outputs as it hands it on: drop the slots
                        # handed out, so that whether the buffer may add in place sees only PyTorch's references.
                        if outputs.__class__ is not list:
                            outputs = list(outputs)
                        for j in range(i + 1):
                            outputs[j] = None
                        view = view_slots is not None and (nxt, nr) in view_slots
                        buf[nr] = add_to_buffer(buf, nr, grad, view)
                        if view:
                            view_slots.discard((nxt, nr))  # (a sum: a fresh tensor)
                del grad
                if remaining == 0:
                    if arrivals is not None:
                        arrivals.append(nxt)
                    if ready is None and not heap:
                        ready = nxt
                        ready_inputs = buffers.pop(nxt)
                    else:
                        if ready is not None:
                            buffers[ready] = ready_inputs
                            push(heap, ready)
                            ready = ready_inputs = None
                        push(heap, nxt)
            # (the last buffer handed to may be the next node's inputs: no stale local may count as a reference to
            # a gradient that an input buffer or AccumulateGrad would otherwise add into or adopt)
            del outputs
            buf = data = None
            if profiled is not None:
                state.profiler.end_node(profiled)
                profiled = None
            if ready is not None:
                # The queue is empty and nothing else became ready: this is the node the queue would give.
                fn = ready
                inputs = ready_inputs
                del ready, ready_inputs
                continue
        else:
            del inputs
        fn = None


def _lazy_counts(task: GraphTask, fn: Node) -> dict:
    """The dependencies for a node's gradients to be handed on against, where none were counted yet.

    Counting waits while no node has handed gradients to more than one edge. Up to then the nodes run form a path
    from the root, each made ready by the one before through its one edge, and this node is the only one active
    (nothing queued or buffered). A graph has no cycles, so an edge into a node below this one starts at this node
    or below it, never on the path: where this node has one edge, the node it leads to has no other (its count is
    1, and no count is needed); where it has several, the counts made now, from this node, are those made from the
    root less the edges already used (all of which lead to nodes of the path)."""
    live = None
    for nxt, _ in fn._edges:
        if nxt is not None:
            if live is not None:
                return task.count_from(fn)
            live = nxt
    return {} if live is None else {live: 1}


def _requeue(heap: list, pushed: list) -> None:
    """Rebuild the queue as PyTorch's would be: ``pushed`` is the queue before a node's first AccumulateGrad ran on
    arrival, followed by everything PyTorch would have queued since, in order."""
    start = pushed.index(ready_queue.RAN)
    heap[:] = pushed[:start]  # the queue as it was (with a node held back to run next, if one was)
    for node in pushed[start:]:
        ready_queue.push(heap, node)


def _fix_for_edge(fn: Node, i: int, grad: Tensor, meta: tuple, nxt: Node, nr: int) -> tuple[Tensor, bool]:
    """Gradient ``i`` of ``fn``, whose shape or dtype differs from its input's record ``meta``, reduced and cast for
    its receiver ``(nxt, nr)``; and whether PyTorch's sum_to leaves it a view (it drops leading dims and casts not; to
    no dims at all it is ``sum()``, a fresh tensor)."""
    if fn._checks_receivers:  # (validate_outputs fixed it for its receiver)
        meta = _receiver_record(fn, meta, nxt, nr)
    data = grad._data
    fixed = _fix_gradient(fn, i, grad, meta)
    return fixed, data.ndim > len(meta[0]) > 0 and fixed._data.dtype is data.dtype


def _fix_later_edges(fn: Node, outputs: list, start: int, meta: tuple, leaf_casts: bool) -> set | None:
    """Fix ``fn``'s gradients from edge ``start`` on, in place in ``outputs``, before a leaf's AccumulateGrad runs on
    arrival at edge ``start - 1``: PyTorch's validate_outputs fixes every gradient of a node before handing any on, so
    a broadcast copy reduced for a later edge no longer holds the incoming gradient when the leaf decides whether to
    adopt it, and an invalid later gradient raises before any leaf accumulates. Returns the edges left a view (see
    ``_fix_for_edge``), or None."""
    views = None
    edges = fn._edges
    for j in range(start, len(edges)):
        grad = outputs[j]
        nxt, nr = edges[j]
        if grad is None or nxt is None:
            continue
        m = meta[j]
        data = grad._data
        if data.shape != m[0] or data.dtype != m[1]:
            outputs[j], as_view = _fix_for_edge(fn, j, grad, m, nxt, nr)
            if as_view:
                views = {j} if views is None else views | {j}
        elif leaf_casts and nxt.__class__ is AccumulateGrad:
            outputs[j] = _fix_gradient(fn, j, grad, m)
    return views


def _fix_gradient(fn: Node, i: int, grad: Tensor, meta: tuple) -> Tensor:
    """Reduce a broadcast gradient to its input's shape and cast it to the input's dtype (a leaf's ``grad_dtype``)."""
    shape, dtype = meta
    if grad._data.shape != shape:
        grad = _reduce_to_shape(fn, i, grad, shape)
    check_grad_kind(grad, dtype)
    dtype = _leaf_grad_dtype(fn._edges[i][0], dtype)
    if dtype is not None and grad._data.dtype != dtype:
        grad = _cast_grad(grad, dtype)
        check_differentiable_grad(grad._data.dtype)  # (PyTorch's validate_outputs asserts it last)
    return grad




_GRAD_KIND_MISMATCH = ("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be "
                       "true, but got false.  (Could this error message be improved?  If so, please report an "
                       "enhancement request to PyTorch.)")


def check_grad_kind(grad: Tensor, input_dtype) -> None:
    """PyTorch's validate_outputs refuses a complex gradient for a real input, and an integer or bool one for a
    complex input (a floating gradient suits any input). It checks the input's own dtype, whatever a leaf's
    ``grad_dtype`` says."""
    kind = grad._data.dtype.kind
    if kind != "f" and (kind == "c") != (input_dtype.kind == "c"):
        raise RuntimeError(_GRAD_KIND_MISMATCH)


def _cast_grad(grad: Tensor, dtype) -> Tensor:
    """Cast a gradient to the dtype its input expects, as ``grad.to(dtype)`` (a complex leaf whose ``grad_dtype``
    is real: the real part, with PyTorch's warning)."""
    from .. import _functional_core as F

    return F.to_numpy_dtype(grad, dtype)


def _leaf_grad_dtype(nxt, dtype):
    """The dtype a gradient into ``nxt`` is cast to: a leaf's ``grad_dtype`` if set (None: no cast)."""
    if nxt.__class__ is AccumulateGrad:
        d = nxt.variable.__dict__
        if "_grad_dtype" in d:
            gd = d["_grad_dtype"]
            return None if gd is None else gd.np
    return dtype


def _held_as_view(fn: Node, i: int) -> bool:
    """Whether PyTorch's engine would hold gradient ``i`` of ``fn`` as a view (whose base keeps its storage shared),
    which its input buffer never adds into, where tracegrad hands on a fresh array: TBackward0 returns ``grad.t()``
    (tracegrad's fused weight transpose, a fresh array), and AddmmBackward0's gradient of a bias of fewer than 2 dims
    is reduced by sum_to, which ends in a view for a 1-d bias (tracegrad's fused linear sums it itself); a 0-d
    bias's is ``sum()``, a fresh tensor."""
    name = fn.__class__._name
    if name == "TBackward0":
        return True
    meta = fn._in_meta
    return name == "AddmmBackward0" and i == 0 and len(meta) > 0 and meta[0] is not None and len(meta[0][0]) == 1


def _should_execute(task: GraphTask, fn: Node) -> bool:
    return task.exec_info.get(fn, False) or fn in task.captures


# ---- running one node with its hooks ------------------------------------------------------------------

def call_tensor_pre_hooks(fn: Node, inputs: list) -> list:
    hooks = fn._tensor_pre_hooks
    retains = fn._retains_grad_hooks
    if not hooks and not retains:
        return inputs
    # Hooks see their node as the current one, also when its gradient is only captured (PyTorch's NodeGuard).
    _RUNNING.append(fn)
    try:
        return as_caller(_run_tensor_pre_hooks, fn, inputs, hooks, retains)  # (the hooks: the caller's NumPy state)
    finally:
        _RUNNING.pop()


def _run_tensor_pre_hooks(fn: Node, inputs: list, hooks, retains) -> list:
    if hooks:
        for nr, per_output in list(hooks.items()):
            for hook in collect_hook_fns(per_output):
                if STATE.observed:
                    _emit_hook("tensor", fn, hook, nr, inputs[nr])
                result = hook(inputs[nr])
                if result is not None:
                    inputs[nr] = _check_hook_result(result, inputs[nr], hook)
    if retains:
        for nr, hook in list(retains.items()):
            if STATE.observed:
                _emit_hook("retain_grad", fn, hook, nr, inputs[nr])
            hook(inputs[nr])
    return inputs


def _hook_name(hook) -> str:
    """How PyTorch's hook errors name a hook: its ``__name__`` when it is a string, else ``<unknown>``."""
    name = getattr(hook, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def _check_hook_result(result, original, hook):
    """PyTorch's check_single_result: a hook may not turn an undefined gradient into a value, nor change a
    gradient's kind, dtype, device or size."""
    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    if result._data.dtype != original._data.dtype or result.device != original.device:
        from ..backend.dtypes import tensor_type_string  # (Tensor::toString: CPUComplexFloatType for complex)

        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was "
                           f"{tensor_type_string(original._data.dtype)} got {tensor_type_string(result._data.dtype)})")
    if result._data.shape != original._data.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return result


def call_function(task: GraphTask, fn: Node, inputs: list, profiled: tuple | None = None) -> list:
    """Run ``fn`` with its hooks. ``profiled``: the profiler's open range of this run, if one is recording."""
    # Hook helpers are separate functions so that no stray local keeps a gradient alive: AccumulateGrad
    # adopts a gradient only when nobody else holds a reference to it (see accumulate.py).
    # The node is the current one for all its hooks too, as under PyTorch's NodeGuard.
    _RUNNING.append(fn)
    try:
        inputs = call_tensor_pre_hooks(fn, inputs)
        if fn._pre_hooks:
            # (in place: PyTorch moves the buffer into the hooks, so the caller's list must not keep the gradients
            # the hooks replaced, nor count as a reference to them when AccumulateGrad decides to adopt one)
            if inputs.__class__ is list:
                inputs[:] = _call_pre_hooks(fn, inputs)
            else:
                inputs = _call_pre_hooks(fn, inputs)
        if STATE.observed:
            _emit_event("node_executed", node=fn)
        had_post_hooks = bool(fn._post_hooks)
        if STATE.anomaly:
            from . import anomaly_mode

            run = anomaly_mode.run_node
        else:
            run = _apply
        outputs = run(fn, inputs) if profiled is None else STATE.profiler.apply_node(profiled, run, fn, inputs)
        if fn.__class__ is not GraphRoot:
            outputs = validate_outputs(fn, outputs)
        if fn._post_hooks:
            needs = fn._needs
            if needs is not None and fn._masks_unneeded:
                # A built-in formula computes only the gradients that lead somewhere wanted: a post hook sees
                # the others undefined (a custom Function's backward returns them all, and its hooks see them)
                outputs = [out if need else None for out, need in zip(outputs, needs)]
            # PyTorch hands its inputs to the node when it had no post hook yet: a post hook registered
            # while the node ran sees undefined grad_outputs.
            outputs = _call_post_hooks(fn, outputs, inputs if had_post_hooks else [None] * len(inputs))
    finally:
        _RUNNING.pop()
    return outputs


def _apply(fn: Node, inputs: list) -> list:
    if STATE.torch_function and not fn._user_backward:
        # (torch's built-in formulas run in C++: neither a subclass's __torch_function__ nor a mode sees them)
        with BuiltinFormula():
            return fn.apply(inputs)
    return fn.apply(inputs)


def _call_pre_hooks(fn: Node, inputs: list) -> list:
    """The node's pre hooks, under the caller's NumPy error state (``as_caller``: set once for them all)."""
    return as_caller(_run_pre_hooks, fn, inputs)


def _run_pre_hooks(fn: Node, inputs: list) -> list:
    grads_out = tuple(inputs)
    del inputs
    for hook in collect_hook_fns(fn._pre_hooks):
        if STATE.observed:
            _emit_hook("pre", fn, hook, None)
        result = hook(grads_out)
        if result is not None and result is not grads_out:
            grads_out = _checked_tuple(result, grads_out, hook)
        del result
    return list(grads_out)


def _call_post_hooks(fn: Node, outputs: list, inputs: list) -> list:
    """The node's post hooks, under the caller's NumPy error state (``as_caller``: set once for them all)."""
    return as_caller(_run_post_hooks, fn, outputs, inputs)


def _run_post_hooks(fn: Node, outputs: list, inputs: list) -> list:
    grad_inputs = tuple(outputs)
    grad_outputs = tuple(inputs)
    for hook in collect_hook_fns(fn._post_hooks):
        if STATE.observed:
            _emit_hook("post", fn, hook, None)
        result = hook(grad_inputs, grad_outputs)
        if result is not None and result is not grad_inputs:
            grad_inputs = _checked_tuple(result, grad_inputs, hook)
    return list(grad_inputs)


def _checked_tuple(result, previous: tuple, hook) -> tuple:
    """PyTorch's check_result for node hooks: a tuple (a list is refused) of the same length, each value checked
    against the one it replaces."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(previous):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of values (got "
                           f"{len(result)}, but expected {len(previous)})")
    for new, old in zip(result, previous):
        if new is not None:
            _check_hook_result(new, old, hook)
    return tuple(result)


def _emit_hook(kind: str, fn: Node, hook, nr, tensor=None) -> None:
    _emit_event("hook", kind=kind, node=fn, hook=hook, output_nr=nr, tensor=tensor)


def validate_outputs(fn: Node, outputs) -> list:
    """PyTorch's validate_outputs: one gradient per edge; reduce broadcast shapes; cast dtypes."""
    edges = fn._edges
    if len(outputs) != len(edges):
        raise RuntimeError(f"function {fn.name()} returned an incorrect number of gradients (expected "
                           f"{len(edges)}, got {len(outputs)})")
    if fn.__class__ is GraphRoot:
        return outputs
    meta = fn._in_meta
    n_meta = len(meta)
    for i in range(len(outputs)):
        g = outputs[i]
        if g is None or i >= n_meta:
            continue
        m = meta[i]
        if m is None or edges[i][0] is None:
            continue
        if fn._checks_receivers:
            m = _receiver_record(fn, m, *edges[i])
        if g._data.shape != m[0] or g._data.dtype != m[1]:
            g = _fix_gradient(fn, i, g, m)
        if g is not outputs[i]:
            if outputs.__class__ is not list:
                outputs = list(outputs)
            outputs[i] = g
    return outputs


def _receiver_record(fn: Node, m: tuple, nxt: Node, nr: int) -> tuple:
    """The ``(shape, dtype)`` record ``fn``'s gradient for ``(nxt, nr)`` is validated against: ``fn``'s own record
    of its input ``m``, or, where ``.data = ...`` changed that output of ``nxt`` since, ``nxt``'s record of it, the one
    PyTorch validates against (reshaped_outputs.py)."""
    if fn._checks_receivers and reshaped_outputs.is_reshaped(nxt):
        return nxt._out_meta[nr]
    return m


def _root_grads_for_receivers(graph_root: GraphRoot, grads: list) -> list:
    """The root gradients, each one for a node whose output ``.data = ...`` changed validated against that node's
    record of the output (reshaped_outputs.py)."""
    grads = list(grads)
    for i, (nxt, nr) in enumerate(graph_root._edges):
        if grads[i] is not None and reshaped_outputs.is_reshaped(nxt):
            grads[i] = _fix_gradient(graph_root, i, grads[i], nxt._out_meta[nr])
    return grads


def _reduce_to_shape(fn: Node, i: int, g: Tensor, shape: tuple) -> Tensor:
    from .. import _functional_core as F

    gshape = g._data.shape
    if not expands_to(shape, gshape):
        # (PyTorch's message for a root gradient names no function)
        what = "invalid gradient" if fn.__class__ is GraphRoot else f"Function {fn.name()} returned an invalid gradient"
        raise RuntimeError(f"{what} at index {i} - got {list(gshape)} but expected shape compatible with "
                           f"{list(shape)}")
    if not STATE.grad_enabled and not STATE.special:
        # a plain backward records nothing: the sum's kernel alone (``sum_to_size`` composes sum and view)
        return _wrap(sum_to_shape(g._data, shape))
    return F.sum_to_size(g, shape)
