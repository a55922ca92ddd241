"""Source tracking: which user line (and notebook cell) created each graph node.

While tracking is on, a subscriber to ``node_created`` events stores ``(file, line, cell_id, execution_count)`` in
the new node's instance dict; the source text is looked up with ``linecache`` only when a snapshot asks.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import sys
from collections.abc import Iterator

from . import events

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../tracegrad
_SOURCE_KEY = "_viz_source"

_cell: list = [None, None]  # current (cell_id, execution_count)
_internal_files: dict[str, bool] = {}  # file name -> whether it is tracegrad's own code


def set_cell_context(cell_id: str | None, execution_count: int | None) -> None:
    """The notebook cell that nodes created from now on are attributed to."""
    _cell[0], _cell[1] = cell_id, execution_count


def _on_event(kind: str, payload: dict) -> None:
    # Called for every node created while tracking: the frame walk is inlined, and whether a file belongs
    # to tracegrad is remembered per file name (a dict hit is cheaper than a prefix test).
    d = payload["node"].__dict__
    if _SOURCE_KEY in d:
        return
    frame = sys._getframe(2)  # 0 is this function, 1 the bus's emit, 2 the code that made the node
    internal = _internal_files
    while frame is not None:
        file = frame.f_code.co_filename
        inside = internal.get(file)
        if inside is None:
            inside = internal[file] = file.startswith(_PACKAGE_DIR)
        if not inside:
            d[_SOURCE_KEY] = (file, frame.f_lineno, _cell[0], _cell[1])
            return
        frame = frame.f_back


class SourceTracker:
    """Start/stop source tracking (nestable); the context manager form is :func:`track_sources`."""

    def __init__(self, cell_id: str | None = None, execution_count: int | None = None) -> None:
        self.cell_id = cell_id
        self.execution_count = execution_count
        self._unsubscribe = None
        self._prev_cell = None

    def start(self) -> SourceTracker:
        if self._unsubscribe is None:
            self._prev_cell = tuple(_cell)
            if self.cell_id is not None or self.execution_count is not None:
                set_cell_context(self.cell_id, self.execution_count)
            self._unsubscribe = events.subscribe(_on_event, ("node_created",))
        return self

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
            set_cell_context(*self._prev_cell)


@contextlib.contextmanager
def track_sources(cell_id: str | None = None, execution_count: int | None = None) -> Iterator[SourceTracker]:
    """Record the user's source line (and the notebook cell) of every graph node created inside."""
    tracker = SourceTracker(cell_id, execution_count).start()
    try:
        yield tracker
    finally:
        tracker.stop()


def node_source(node, memo: dict | None = None) -> dict | None:
    """The recorded source of ``node`` as a protocol dict, or None. With a ``memo`` dict, nodes made by the
    same line of the same cell share one (read-only) dict, and the line is read from ``linecache`` once."""
    rec = node.__dict__.get(_SOURCE_KEY)
    if rec is None:
        return None
    if memo is None:
        return _source_dict(rec)
    out = memo.get(rec)
    if out is None:
        out = memo[rec] = _source_dict(rec)
    return out


def _source_dict(rec: tuple) -> dict:
    file, line, cell_id, count = rec
    return {"file": file, "line": line, "code": linecache.getline(file, line).strip(), "cell_id": cell_id,
            "execution_count": count}
