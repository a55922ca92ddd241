"""tracegrad's observer modes for workload 5 (per-op overhead of the viz event bus).

- ``off``: nobody listens (the default state); must cost at most 2 % over the plain op.
- ``off, after a listener``: a subscriber was attached and removed before timing; the flag must be back off.
- ``subscriber``: one subscriber that only counts events: the bus's own per-op cost.
- ``live``: what the notebook's live mode attaches: a timeline recorder (nodes and hooks, no saved-tensor
  events, messages built lazily) plus source tracking. Neither needs the general path, so the fast paths
  stay on and only emit ``node_created`` / ``node_executed`` / ``hook`` events.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

OFF = "off"
AFTER_LISTENER = "off, after a listener"
SUBSCRIBER = "subscriber"
LIVE = "live"


@contextlib.contextmanager
def _after_listener() -> Iterator[None]:
    from tracegrad.viz import events

    events.subscribe(lambda kind, payload: None)()
    yield


@contextlib.contextmanager
def _subscriber() -> Iterator[None]:
    from tracegrad.viz import events

    count = [0]

    def listener(kind: str, payload: dict) -> None:
        count[0] += 1

    unsubscribe = events.subscribe(listener)
    try:
        yield
    finally:
        unsubscribe()


@contextlib.contextmanager
def _live() -> Iterator[None]:
    from tracegrad import viz

    recorder = viz.TimelineRecorder(saved_events=False, build_messages=False).start()
    try:
        with viz.track_sources("benchmark", 1):
            yield
    finally:
        recorder.stop()


CONTEXTS: dict[str, Callable[[], AbstractContextManager[Any]]] = {
    OFF: contextlib.nullcontext,
    AFTER_LISTENER: _after_listener,
    SUBSCRIBER: _subscriber,
    LIVE: _live,
}
