"""Source tracking: which user line (and notebook cell) created each graph node.

While tracking is on, a subscriber to ``node_created`` events stores ``(file, line, cell_id, execution_count)`` in
the new node's instance dict; the source text is looked up with ``linecache`` only when a snapshot asks.
"""

from __future__ import annotations

import contextlib
import linecache
import sys
from collections.abc import Iterator

from .._events import MODULE_CALLS, OWN_FILES, is_own_file
from ..nn.modules.module import _observed_forward
from . import events
from .inspect import shared

_SOURCE_KEY = "_viz_source"

_cell: list = [None, None]  # current (cell_id, execution_count)
_MODULE_CALL_CODE = _observed_forward.__code__


def set_cell_context(cell_id: str | None, execution_count: int | None) -> None:
    """The notebook cell that nodes created from now on are attributed to."""
    _cell[0], _cell[1] = cell_id, execution_count


def _on_event(kind: str, payload: dict) -> None:
    # Called for every node created while tracking. Inside one of tracegrad's modules, the line is the one
    # found for an earlier node of the same model call (see _events.MODULE_CALLS); otherwise the frames are
    # walked up to the first one that is not tracegrad's (_events.OWN_FILES, read inline: this loop is hot).
    # (User code that tracegrad itself runs inside such a module's forward, a saved-tensor pack hook, thus
    # counts as part of the model call.)
    d = payload["node"].__dict__
    if _SOURCE_KEY in d:
        return
    calls = MODULE_CALLS
    if calls:
        top = calls[-1]
        if top[0] and top[1] is not None:
            d[_SOURCE_KEY] = top[1]
            return
    frame = sys._getframe(2)  # 0 is this function, 1 the bus's emit, 2 the code that made the node
    own_files = OWN_FILES
    crossed = False  # whether the walk passed the innermost module call: the user's line is above it
    while frame is not None:
        code = frame.f_code
        if code is _MODULE_CALL_CODE:
            crossed = True
        file = code.co_filename
        inside = own_files.get(file)
        if inside is None:
            inside = is_own_file(file)
        if not inside:
            rec = d[_SOURCE_KEY] = (file, frame.f_lineno, _cell[0], _cell[1])
            if crossed:
                _note_model_call(calls, rec)
            return
        frame = frame.f_back


def _note_model_call(calls: list, rec: tuple) -> None:
    """``rec`` was found above the innermost module call and only tracegrad's code ran in between: it is the
    line of that call, and of the calls of tracegrad modules around it up to the first user module."""
    for entry in reversed(calls):
        if not entry[0] or entry[1] is not None:
            return
        entry[1] = rec


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
    return None if rec is None else shared(memo, rec, _source_dict)


def _source_dict(rec: tuple) -> dict:
    file, line, cell_id, count = rec
    return {"file": file, "line": line, "code": linecache.getline(file, line).strip(), "cell_id": cell_id,
            "execution_count": count}
