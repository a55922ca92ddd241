"""Observation: the event bus, snapshots in the JSON protocol (``viz/protocol/``), and static renderers.

Layer 8: it reads the engine's objects and never changes them. ``tracegrad.viz.render`` holds the text,
Graphviz and HTML renderers of the messages built here.
"""

from __future__ import annotations

from . import events
from .ids import node_id
from .protocol_meta import PROTOCOL, VERSION, load_schema, validate
from .snapshot import graph_snapshot, memory_snapshot, saved_from_graph, saved_snapshot
from .sources import SourceTracker, set_cell_context, track_sources
from .timeline import PendingTimeline, TimelineRecorder, record_backward

__all__ = ["events", "node_id", "PROTOCOL", "VERSION", "load_schema", "validate", "graph_snapshot",
           "memory_snapshot", "saved_snapshot", "saved_from_graph", "SourceTracker", "set_cell_context",
           "track_sources", "PendingTimeline", "TimelineRecorder", "record_backward"]
