"""Display objects for the magics' outputs: protocol messages shown as MIME bundles.

Each bundle carries the protocol message under its ``application/vnd.tracegrad.*+json`` type (JupyterLab's
renderer draws it interactively), plus ``image/svg+xml`` or ``text/html`` and ``text/plain`` that any
frontend (classic Notebook, VS Code, GitHub's .ipynb viewer) shows, and that stay in the saved notebook.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..viz import render
from .protocol import MIME_GRAPH, MIME_HOOKS, MIME_SAVED, envelope

Bundle = dict[str, Any]


@dataclass(frozen=True)
class GraphView:
    """A ``graph`` message; drawn as SVG when Graphviz's ``dot`` is installed, else as an HTML table."""

    message: dict[str, Any]
    collapse: bool = True
    depth: int | None = None
    saved: bool = False  # draw each node's saved tensors

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Bundle:
        bundle: Bundle = {MIME_GRAPH: self.message, "text/plain": self.text()}
        options = {"collapse": self.collapse, "depth": self.depth, "saved": self.saved}
        svg = render.graph_svg(self.message, **options)
        if svg is not None:
            bundle["image/svg+xml"] = svg
        else:
            bundle["text/html"] = render.graph_html(self.message, **options)
        return bundle

    def text(self) -> str:
        return render.graph_text(self.message, collapse=self.collapse, depth=self.depth)

    def __repr__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class SavedView:
    """A ``saved_tensors`` message as a table with memory totals."""

    message: dict[str, Any]

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Bundle:
        return {MIME_SAVED: self.message, "text/html": render.saved_html(self.message), "text/plain": self.text()}

    def text(self) -> str:
        return render.saved_text(self.message)

    def __repr__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class TimelineView:
    """The ``hooks_fired`` timelines of the backward calls of one cell: one message, or a ``batch`` of them."""

    timelines: tuple[dict[str, Any], ...]

    @property
    def message(self) -> dict[str, Any]:
        if len(self.timelines) == 1:
            return self.timelines[0]
        return envelope("batch", messages=list(self.timelines), dropped=0)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Bundle:
        html = "\n".join(self._section_html(i, msg) for i, msg in enumerate(self.timelines))
        return {MIME_HOOKS: self.message, "text/html": html, "text/plain": self.text()}

    def text(self) -> str:
        return "\n\n".join(self._section_text(i, msg) for i, msg in enumerate(self.timelines))

    def __repr__(self) -> str:
        return self.text()

    def _title(self, index: int, msg: dict[str, Any]) -> str:
        call = "autograd.grad()" if msg.get("call") == "grad" else "backward()"
        prefix = f"#{index + 1} " if len(self.timelines) > 1 else ""
        return f"{prefix}{call}: {len(msg['events'])} events, {msg['duration_us'] / 1000:.2f} ms"

    def _section_text(self, index: int, msg: dict[str, Any]) -> str:
        order = " -> ".join(execution_order(msg)) or "(no node ran)"
        return f"{self._title(index, msg)}\nnode execution order: {order}\n{render.timeline_text(msg)}"

    def _section_html(self, index: int, msg: dict[str, Any]) -> str:
        from html import escape

        order = " &rarr; ".join(escape(name) for name in execution_order(msg)) or "(no node ran)"
        return (f"<div class=\"tracegrad-timeline\"><p><b>{escape(self._title(index, msg))}</b><br>"
                f"node execution order: {order}</p>{render.timeline_html(msg)}</div>")


def execution_order(timeline: dict[str, Any]) -> list[str]:
    """The names of the nodes a ``hooks_fired`` timeline ran, in the order they ran."""
    return [event["node_name"] or "?" for event in timeline["events"] if event["event"] == "node_executed"]
