"""HTML renderers: the graph as SVG (or a table when ``dot`` is missing), saved tensors and timelines."""

from __future__ import annotations

from html import escape

from .dot import graph_svg
from .text import SAVED_COLUMNS, TIMELINE_COLUMNS, memory_text, saved_cells, saved_rows, timeline_cells
from .view import build_view, shape_str

NO_DOT_NOTE = "Graphviz's dot program was not found, so the graph is shown as a table (install graphviz to draw it)."
TOO_BIG_NOTE = "The graph has {n} nodes after collapsing, too many to draw; it is shown as a table."
MAX_DRAWN_NODES = 2000


def _table(columns: list[str], rows: list[list[str]], cls: str) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def graph_table(msg: dict, *, collapse: bool = True) -> str:
    view = build_view(msg, collapse)
    rows = []
    for did, item in view.items.items():
        inputs = ", ".join(item.children)
        if item.group is not None:
            g = item.group
            rows.append([did, f"{g['label']}", "group", f"{len(g['members'])} nodes", "", "", inputs])
            continue
        n = item.node
        leaf = n.get("leaf")
        shape = shape_str(leaf) if leaf else ", ".join(shape_str(o) for o in n.get("outputs", ()))
        rows.append([did, n["name"], n.get("op") or "", shape,
                     ", ".join(f"{s['name']}{shape_str(s)}" for s in n["saved"]),
                     ", ".join(f"{h['kind']}:{h['name']}" for h in n["hooks"]), inputs])
    return _table(["id", "node", "op", "shape", "saved", "hooks", "inputs"], rows, "tracegrad-graph")


def graph_html(msg: dict, *, collapse: bool = True, saved: bool = False, depth: int | None = None) -> str:
    """The SVG drawing, or an HTML table with a one-line note when it cannot be drawn. Never raises."""
    try:
        n = len(build_view(msg, collapse).items)
        if n > MAX_DRAWN_NODES:
            note = TOO_BIG_NOTE.format(n=n)
        else:
            svg = graph_svg(msg, collapse=collapse, saved=saved, depth=depth)
            if svg is not None:
                return f'<div class="tracegrad-graph">{svg}</div>'
            note = NO_DOT_NOTE
        return f'<div class="tracegrad-graph"><p><em>{escape(note)}</em></p>{graph_table(msg, collapse=collapse)}</div>'
    except Exception as exc:  # noqa: BLE001 - a rendering must never break the output it belongs to
        reason = f"{type(exc).__name__}: {exc}"
        return f"<p><em>tracegrad could not render this graph ({escape(reason)})</em></p>"


def saved_html(msg: dict) -> str:
    rows = saved_rows(msg)
    errors = "".join(f"<p><strong>{escape(r['node_name'])}._saved_{escape(r['name'])}</strong>: "
                     f"{escape(r['error'])}</p>" for r in rows if r.get("error"))
    return (_table(SAVED_COLUMNS, [saved_cells(r) for r in rows], "tracegrad-saved") + errors
            + f"<p>{escape(memory_text(msg))}</p>")


def timeline_html(msg: dict) -> str:
    head = f"<p>{escape(msg['call'])} {escape(msg['backward_id'])}: {len(msg['events'])} events</p>"
    return head + _table(TIMELINE_COLUMNS, [timeline_cells(e) for e in msg["events"]], "tracegrad-timeline")
