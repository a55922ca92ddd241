"""Plain-text renderers: the graph as an indented tree, and tables of saved tensors, timelines, memory."""

from __future__ import annotations

from ..snapshot import graph_saved_rows
from .view import Item, build_view, human_bytes, shape_str


def _item_label(item: Item) -> str:
    if item.group is not None:
        g = item.group
        return f"[{g['label']}]  {g['id']}  ({len(g['members'])} nodes)"
    n = item.node
    parts = [n["name"], n["id"]]
    leaf = n.get("leaf")
    if leaf is not None:
        name = f"{leaf['name']} " if leaf.get("name") else ""
        grad = f", grad {shape_str(leaf['grad'])}" if leaf.get("grad") else ""
        parts.append(f"leaf {name}{shape_str(leaf)}{grad}")
    if n.get("saved"):
        parts.append("saved " + ", ".join(f"{s['name']}{shape_str(s)}" + ("†" if s["state"] == "freed" else "")
                                          for s in n["saved"]))
    if n.get("hooks"):
        parts.append("hooks " + ", ".join(f"{h['kind']}:{h['name']}" for h in n["hooks"]))
    return "  ".join(parts)


def graph_text(msg: dict, *, collapse: bool = True, depth: int | None = None) -> str:
    """The graph as an indented tree from each root, like printing a graph: a node with one input continues
    on the next line, several inputs branch with ├─ / └─; a node already shown is referred to by its id."""
    view = build_view(msg, collapse)
    lines = [f"graph {msg['graph_id']}: {len(msg['nodes'])} nodes, {len(msg['edges'])} edges"
             + (f", {len(msg['groups'])} groups" if msg["groups"] else "")
             + (f" (truncated: {msg['total_nodes']} in all)" if msg["truncated"] else "")]
    shown: set[str] = set()
    for root, did in view.roots:
        tensor = root.get("tensor")
        lines.append(f"{root['label']} {shape_str(tensor)}".rstrip() + ("" if did else "  (no grad_fn)"))
        if did is None:
            continue
        stack = [(did, "", "", 0)]
        while stack:
            did, prefix, connector, level = stack.pop()
            item = view.items[did]
            if did in shown:
                lines.append(f"{prefix}{connector}{item.node['name'] if item.node else item.group['label']}  "
                             f"{did}  (shown above)")
                continue
            shown.add(did)
            lines.append(f"{prefix}{connector}{_item_label(item)}")
            children = item.children
            if not children:
                continue
            inner = prefix + {"├─ ": "│  ", "└─ ": "   "}.get(connector, "")
            if depth is not None and level >= depth:
                lines.append(f"{inner}…")
                continue
            if len(children) == 1:
                stack.append((children[0], inner, "", level + 1))
            else:
                for k in range(len(children) - 1, -1, -1):
                    stack.append((children[k], inner, "└─ " if k == len(children) - 1 else "├─ ", level + 1))
    return "\n".join(lines)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header).rstrip(), *(fmt.format(*map(str, r)).rstrip() for r in rows)]


def saved_rows(msg: dict) -> list[dict]:
    """Rows of a ``saved_tensors`` message, or built from a ``graph`` message's nodes."""
    return msg["rows"] if msg["type"] == "saved_tensors" else graph_saved_rows(msg)


SAVED_COLUMNS = ["node", "saved", "shape", "dtype", "bytes", "role", "version", "state", "hook", "storage"]


def saved_cells(r: dict) -> list[str]:
    version = f"{r['version_saved']}→{r['version_now']}" if r["version_now"] != r["version_saved"] else \
        str(r["version_saved"])
    known = r["dtype"] != "unknown"  # a freed tensor whose shape the node's metadata does not record
    return [f"{r['node_name']} {r['node']}", f"_saved_{r['name']}", shape_str(r) if known else "—",
            r["dtype"] if known else "—", human_bytes(r["bytes"]) if known else "—",
            r["role"], version, r["state"], "yes" if r["packed_by_hook"] else "", r["storage_id"]]


def saved_text(msg: dict) -> str:
    rows = saved_rows(msg)
    lines = _table(SAVED_COLUMNS, [saved_cells(r) for r in rows]) if rows else ["no saved tensors"]
    lines += [f"! {r['node_name']}._saved_{r['name']}: {r['error']}" for r in rows if r.get("error")]
    lines.append(memory_text(msg["memory"]))
    return "\n".join(lines)


TIMELINE_COLUMNS = ["#", "event", "kind", "node", "hook", "tensor", "t (µs)"]


def timeline_cells(e: dict) -> list[str]:
    node = f"{e['node_name']} {e['node']}" if e.get("node") else (e.get("node_name") or "")
    if e.get("module"):
        node = f"{e['module']} {node}".rstrip()
    tensor = e.get("tensor")
    return [str(e["seq"]), e["event"], e.get("kind") or "", node, e.get("hook") or "",
            f"{shape_str(tensor)} {tensor['dtype']}" if tensor else "", f"{e.get('t_us', 0):.0f}"]


def timeline_text(msg: dict) -> str:
    head = (f"{msg['call']} {msg['backward_id']}: {len(msg['events'])} events in {msg['duration_us']:.0f} µs"
            + (" (truncated)" if msg["truncated"] else ""))
    return "\n".join([head, *_table(TIMELINE_COLUMNS, [timeline_cells(e) for e in msg["events"]])])


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def memory_text(msg: dict) -> str:
    """Memory totals of a ``memory`` message (or of the ``memory`` of a graph / saved_tensors message)."""
    m = msg.get("memory", msg)
    return (f"saved: {_count(m['saved_count'], 'tensor')}, {human_bytes(m['saved_bytes'])} "
            f"({human_bytes(m['alive_bytes'])} alive, {m['freed_count']} freed); "
            f"unique storage {human_bytes(m['unique_bytes'])} in {_count(m['unique_storages'], 'storage')}; "
            f"leaves {human_bytes(m['leaf_bytes'])}, grads {human_bytes(m['grad_bytes'])}")
