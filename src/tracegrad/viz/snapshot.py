"""Snapshots of an autograd graph as protocol messages: ``graph``, ``saved_tensors`` and ``memory``.

The graph is walked breadth first, without recursion, from the roots' nodes along ``next_functions``. The
walk holds nodes only while the snapshot runs; the message holds ids and plain data.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
from collections.abc import Iterator, Mapping, Sequence

from .._tensor import Tensor
from ..autograd.accumulate import AccumulateGrad
from ..autograd.edges import gradient_edge
from ..autograd.node import Node
from . import inspect
from .collapse import find_groups
from .ids import node_id
from .protocol_meta import envelope
from .sources import node_source

_graph_ids = itertools.count(1)


class _Root:
    __slots__ = ("label", "node", "tensor")

    def __init__(self, label: str, node, tensor) -> None:
        self.label, self.node, self.tensor = label, node, tensor


def _normalize_roots(roots, labels: Mapping | None) -> list[_Root]:
    """Tensors, nodes, gradient edges, sequences of those, or a mapping label -> tensor."""
    names = {id(v): k for k, v in labels.items()} if labels else {}
    if isinstance(roots, Mapping):
        items = list(roots.items())
    elif isinstance(roots, (Tensor, Node)) or _is_edge(roots):
        items = [(None, roots)]
    elif isinstance(roots, Sequence):
        items = [(None, r) for r in roots]
    else:
        raise TypeError(f"graph roots must be tensors, nodes or gradient edges, not {type(roots).__name__}")
    out = []
    for k, (label, r) in enumerate(items):
        if isinstance(r, Tensor):
            node = gradient_edge(r)[0] if r.requires_grad else None
            default = "output" if len(items) == 1 else f"output{k}"
            out.append(_Root(str(label or names.get(id(r)) or default), node, r))
        elif isinstance(r, Node):
            out.append(_Root(str(label or r.name()), r, None))
        elif _is_edge(r):
            out.append(_Root(str(label or r[0].name()), r[0], None))
        else:
            raise TypeError(f"graph roots must be tensors, nodes or gradient edges, not {type(r).__name__}")
    return out


def _is_edge(r) -> bool:
    """A GradientEdge (which also carries an ownership token), or a plain ``(node, output_nr)`` pair."""
    from ..autograd.graph import GradientEdge

    if isinstance(r, GradientEdge):
        return True
    return isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], Node) and isinstance(r[1], int)


def _walk(start: list, depth: int | None, max_nodes: int) -> tuple[list, list[int], int]:
    """Nodes reachable from ``start`` (BFS order), their depths, and how many are reachable in all."""
    index = {}
    order, depths = [], []
    frontier = []
    for n in start:
        if n is not None and n not in index:
            index[n] = len(order)
            order.append(n)
            depths.append(0)
            frontier.append(n)
    level = 0
    total = len(order)
    seen = set(order)
    while frontier:
        level += 1
        nxt = []
        for n in frontier:
            for child, _ in n._edges:
                if child is None or child in seen:
                    continue
                seen.add(child)
                total += 1
                nxt.append(child)
                if (depth is None or level <= depth) and len(order) < max_nodes:
                    index[child] = len(order)
                    order.append(child)
                    depths.append(level)
        frontier = nxt
    return order, depths, total


def _memory(saved: list[tuple[dict, int]], leaves: list) -> dict:
    """Totals over ``(saved entry, storage bytes)`` pairs and leaf tensors."""
    storages: dict = {}
    saved_bytes = alive_bytes = alive_count = 0
    for entry, storage_bytes in saved:
        saved_bytes += entry["bytes"]
        if entry["state"] == "alive":
            alive_count += 1
            alive_bytes += entry["bytes"]
            storages.setdefault(entry["storage_id"], storage_bytes)
    leaf_bytes = grad_bytes = 0
    for var in leaves:
        leaf_bytes += int(var._data.nbytes)
        if var._grad is not None:
            grad_bytes += int(var._grad._data.nbytes)
    return {"saved_count": len(saved), "saved_bytes": saved_bytes, "unique_bytes": sum(storages.values()),
            "alive_bytes": alive_bytes, "freed_count": len(saved) - alive_count, "unique_storages": len(storages),
            "leaf_bytes": leaf_bytes, "grad_bytes": grad_bytes}


def _node_saved(node) -> list[tuple[dict, int]]:
    rows = []
    for name, role, s, nominal in inspect.iter_saved(node):
        row = inspect.saved_entry(node, name, role, s, nominal)
        if row is not None:
            rows.append(row)
    return rows


def _leaf_vars(nodes: list) -> list:
    return [n.variable for n in nodes if n.__class__ is AccumulateGrad]


class _Collected:
    """Everything the three message kinds are built from: one walk, one pass over saved tensors."""

    def __init__(self, roots, depth, max_nodes, labels, with_saved: bool) -> None:
        self.roots = _normalize_roots(roots, labels)
        self.labels = {id(v): k for k, v in labels.items()} if labels else None
        self.nodes, self.depths, self.total = _walk([r.node for r in self.roots], depth, max_nodes)
        self.ids = [node_id(n) for n in self.nodes]
        self.saved = [_node_saved(n) for n in self.nodes] if with_saved else None

    def memory(self) -> dict:
        return _memory([row for per_node in self.saved or () for row in per_node], _leaf_vars(self.nodes))


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """A snapshot allocates many small containers and frees none: a cyclic collection in the middle would
    only traverse the (large) graph for nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def graph_snapshot(roots, *, saved: bool = True, hooks: bool = True, depth: int | None = None,
                   collapse: bool = True, max_nodes: int = 20000, cell_id: str | None = None,
                   graph_id: str | None = None, labels: Mapping | None = None) -> dict:
    """A ``graph`` message for the graph reachable from ``roots`` (see the protocol's graph.schema.json).

    ``labels`` maps names to tensors: roots and leaves found among them are named (e.g. ``dict(
    model.named_parameters())``). ``depth`` limits the walk to that many edges from the roots."""
    with gc_paused():
        return _graph_message(roots, saved, hooks, depth, collapse, max_nodes, cell_id, graph_id, labels)


def _graph_message(roots, saved, hooks, depth, collapse, max_nodes, cell_id, graph_id, labels) -> dict:
    data = _Collected(roots, depth, max_nodes, labels, with_saved=True)
    nodes, ids = data.nodes, data.ids
    index = {n: i for i, n in enumerate(nodes)}
    out_nodes = []
    edges = []
    succ: list[list[int]] = []
    sources: dict = {}
    outputs: dict = {}  # shared lists and dicts: nodes of one line / one shape are alike (read-only after)
    for i, n in enumerate(nodes):
        kind, op = inspect.node_kind_op(n)
        leaf = kind == "accumulate"
        entry = {"id": ids[i], "name": n.name(), "kind": kind, "seq": inspect.node_seq(n), "op": op,
                 "source": node_source(n, sources), "outputs": inspect.node_outputs(n, outputs),
                 "saved": [e for e, _ in data.saved[i]] if saved else [],
                 # (a node without the _hooked flag has no hooks; a leaf's post-accumulate ones live on it)
                 "hooks": inspect.node_hooks(n) if hooks and (leaf or n._hooked) else [],
                 "leaf": inspect.leaf_info(n, data.labels) if leaf else None, "group": None,
                 "depth": data.depths[i]}
        out_nodes.append(entry)
        children = []
        for k, (child, nr) in enumerate(n._edges):
            j = index.get(child) if child is not None else None
            if j is None:
                continue
            edges.append({"src": ids[i], "dst": ids[j], "input_nr": k, "output_nr": nr})
            if j not in children:
                children.append(j)
        succ.append(children)
    groups = []
    if collapse:
        names = [e["name"] for e in out_nodes]
        for g in find_groups(names, succ):
            gid = f"g{len(groups) + 1}"
            for k in g.members:
                out_nodes[k]["group"] = gid
            groups.append({"id": gid, "label": g.label, "pattern": g.pattern, "repeats": g.repeats,
                           "members": [ids[k] for k in g.members], "collapsed": True})
    msg = envelope("graph")
    msg.update({"graph_id": graph_id or f"g{next(_graph_ids)}", "cell_id": cell_id,
                "roots": [_root_entry(r, index, ids) for r in data.roots], "nodes": out_nodes, "edges": edges,
                "groups": groups, "total_nodes": data.total, "truncated": data.total > len(nodes),
                "memory": data.memory()})
    return msg


def _root_entry(r: _Root, index: dict, ids: list) -> dict:
    entry = {"node": ids[index[r.node]] if r.node is not None else None, "label": r.label}
    if r.tensor is not None:
        entry["tensor"] = {**inspect.tensor_meta(r.tensor), "device": str(r.tensor.device)}
    return entry


def saved_snapshot(roots, *, cell_id: str | None = None, graph_id: str | None = None,
                   labels: Mapping | None = None) -> dict:
    """A ``saved_tensors`` message: one row per saved tensor of the graph, with memory totals."""
    with gc_paused():
        data = _Collected(roots, None, 1 << 62, labels, with_saved=True)
    rows = []
    for i, n in enumerate(data.nodes):
        name = n.name()
        for entry, _ in data.saved[i]:
            rows.append({"node": data.ids[i], "node_name": name, **entry})
    msg = envelope("saved_tensors")
    msg.update({"graph_id": graph_id or f"g{next(_graph_ids)}", "cell_id": cell_id, "rows": rows,
                "memory": data.memory()})
    return msg


def graph_saved_rows(graph: dict) -> list[dict]:
    """The saved tensors listed on a ``graph`` message's nodes, as ``saved_tensors`` rows."""
    return [{"node": node["id"], "node_name": node["name"], **entry} for node in graph["nodes"]
            for entry in node["saved"]]


def saved_from_graph(graph: dict) -> dict:
    """The ``saved_tensors`` message of an existing ``graph`` message, without walking the graph again.

    It covers the nodes the graph lists (all of them unless the graph was truncated) and reuses its totals.
    """
    msg = envelope("saved_tensors")
    msg.update({"graph_id": graph["graph_id"], "cell_id": graph["cell_id"], "rows": graph_saved_rows(graph),
                "memory": dict(graph["memory"])})
    return msg


def memory_snapshot(roots, *, cell_id: str | None = None, graph_id: str | None = None) -> dict:
    """A ``memory`` message: totals of the saved tensors and leaves of the graph."""
    with gc_paused():
        data = _Collected(roots, None, 1 << 62, None, with_saved=True)
    msg = envelope("memory")
    msg.update({"graph_id": graph_id or f"g{next(_graph_ids)}", "cell_id": cell_id, **data.memory()})
    return msg
