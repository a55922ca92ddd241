"""Graphviz rendering in the spirit of torchviz: backward nodes grey, leaves' AccumulateGrad blue with the
leaf's shape, root tensors green, saved tensors orange, a collapsed group as one folder box "× N"."""

from __future__ import annotations

import graphviz

from .view import build_view, shape_str

NODE_ATTR = {"style": "filled", "shape": "box", "align": "left", "fontsize": "10", "ranksep": "0.1",
             "height": "0.2", "fontname": "monospace"}
GREY, BLUE, GREEN, ORANGE, LILAC = "lightgrey", "lightblue", "darkolivegreen1", "orange", "thistle"


def graph_dot(msg: dict, *, collapse: bool = True, saved: bool = False, depth: int | None = None) -> str:
    """The graph as Graphviz DOT source. Edges point the way the forward pass went (input -> consumer)."""
    view = build_view(msg, collapse)
    dot = graphviz.Digraph(name=msg["graph_id"], node_attr=NODE_ATTR, graph_attr={"size": "12,12"})
    keep = _within_depth(view, depth)
    for did, item in view.items.items():
        if did not in keep:
            continue
        if item.group is not None:
            g = item.group
            dot.node(did, f"{' → '.join(g['pattern'])}\n× {g['repeats']}", shape="folder", fillcolor=LILAC)
            continue
        n = item.node
        leaf = n.get("leaf")
        if leaf is not None:
            label = f"{leaf['name']}\n{shape_str(leaf)}" if leaf.get("name") else shape_str(leaf)
            dot.node(did, label or n["name"], fillcolor=BLUE)
        else:
            dot.node(did, n["name"], fillcolor=GREY)
        if saved:
            for s in n["saved"]:
                sid = f"{did}_saved_{s['name']}"
                dot.node(sid, f"{s['name']}\n{shape_str(s)}", fillcolor=ORANGE)
                dot.edge(sid, did, dir="none", style="dashed")
    for src, dst in view.edges:
        if src in keep and dst in keep:
            dot.edge(dst, src)
    for k, (root, did) in enumerate(view.roots):
        rid = f"root{k}"
        dot.node(rid, f"{root['label']}\n{shape_str(root.get('tensor'))}".rstrip(), fillcolor=GREEN)
        if did is not None:
            dot.edge(did, rid)
    return dot.source


def _within_depth(view, depth: int | None) -> set[str]:
    if depth is None:
        return set(view.items)
    keep: set[str] = set()
    frontier = [did for _, did in view.roots if did is not None]
    keep.update(frontier)
    for _ in range(depth):
        frontier = [c for did in frontier for c in view.items[did].children if c not in keep]
        keep.update(frontier)
    return keep


def graph_svg(msg: dict, *, collapse: bool = True, saved: bool = False, depth: int | None = None) -> str | None:
    """The graph drawn by Graphviz as SVG text, or None when the ``dot`` binary is missing (or fails)."""
    source = graph_dot(msg, collapse=collapse, saved=saved, depth=depth)
    try:
        return graphviz.Source(source).pipe(format="svg", encoding="utf-8")
    except (graphviz.ExecutableNotFound, graphviz.CalledProcessError, OSError, RuntimeError):
        return None
