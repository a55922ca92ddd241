"""tracegrad in Jupyter: the IPython extension (``%load_ext tracegrad``), its magics, MIME outputs and live feed.

Loading the extension registers the magics ``%autograd_graph``, ``%%backward_trace``, ``%saved_tensors`` and
``%tracegrad``, and the comm target ``tracegrad.inspector`` that the JupyterLab sidebar opens. Layer 9: it
imports IPython, so nothing below it imports this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .protocol import COMM_TARGET, MIME_GRAPH, MIME_HOOKS, MIME_SAVED

if TYPE_CHECKING:
    from .live import LiveFeed

# IPython and the renderers are imported when the extension loads, not on import: the kernel-spec CLI
# (python -m tracegrad.notebook) needs neither.
__all__ = ["COMM_TARGET", "MIME_GRAPH", "MIME_HOOKS", "MIME_SAVED", "feed_for", "load_ipython_extension",
           "unload_ipython_extension"]

# One feed per shell: %reload_ext tracegrad replaces it instead of registering callbacks twice.
_FEEDS: dict[int, LiveFeed] = {}


def load_ipython_extension(ip: Any) -> None:
    from .live import LiveFeed
    from .magics import TracegradMagics

    unload_ipython_extension(ip)
    feed = LiveFeed(ip)
    feed.attach()
    _FEEDS[id(ip)] = feed
    ip.register_magics(TracegradMagics(ip, feed))


def unload_ipython_extension(ip: Any) -> None:
    feed = _FEEDS.pop(id(ip), None)
    if feed is not None:
        feed.detach()


def feed_for(ip: Any) -> LiveFeed | None:
    """The live feed of a shell that loaded the extension."""
    return _FEEDS.get(id(ip))
