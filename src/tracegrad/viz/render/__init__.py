"""Static renderers of protocol messages: text, Graphviz DOT / SVG, HTML."""

from __future__ import annotations

from .dot import graph_dot, graph_svg
from .html import graph_html, saved_html, timeline_html
from .text import graph_text, memory_text, saved_text, timeline_text

__all__ = ["graph_text", "graph_dot", "graph_svg", "graph_html", "saved_text", "saved_html", "timeline_text",
           "timeline_html", "memory_text"]
