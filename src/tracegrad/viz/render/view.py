"""What renderers draw: a graph message with its collapsed groups folded into single display nodes.

Collapsing is a view: every node of a collapsed group maps to the group's display node, edges inside a
group disappear and edges crossing its border are redirected (and deduplicated).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Item:
    id: str
    node: dict | None = None  # the graph node, or None for a group
    group: dict | None = None
    children: list[str] = field(default_factory=list)


@dataclass
class View:
    items: dict[str, Item]
    roots: list[tuple[dict, str | None]]  # (root entry, display id of its node)
    edges: list[tuple[str, str]]


def build_view(msg: dict, collapse: bool = True) -> View:
    folded = {g["id"]: g for g in msg.get("groups", ()) if collapse and g.get("collapsed", True)}
    display: dict[str, str] = {}
    items: dict[str, Item] = {}
    for n in msg["nodes"]:
        gid = n.get("group")
        if gid in folded:
            display[n["id"]] = gid
            if gid not in items:
                items[gid] = Item(gid, group=folded[gid])
        else:
            display[n["id"]] = n["id"]
            items[n["id"]] = Item(n["id"], node=n)
    edges: list[tuple[str, str]] = []
    seen = set()
    for e in msg["edges"]:
        src, dst = display.get(e["src"]), display.get(e["dst"])
        if src is None or dst is None or src == dst or (src, dst) in seen:
            continue
        seen.add((src, dst))
        edges.append((src, dst))
        items[src].children.append(dst)
    roots = [(r, display.get(r["node"]) if r.get("node") else None) for r in msg["roots"]]
    return View(items, roots, edges)


def shape_str(meta: dict | None) -> str:
    if not meta:
        return ""
    return "(" + ", ".join(str(d) for d in meta["shape"]) + ")"


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
