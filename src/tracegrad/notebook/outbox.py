"""Batching and throttling of protocol messages on their way to the comm.

Live mode produces messages in bursts (a training loop finishes a backward every few milliseconds). Sending
each one would cost a JSON encoding and a ZeroMQ message per backward, and flood the browser. The outbox
collects them and sends at most one comm message per ``interval_s`` while a cell runs, plus one when the cell
ends. A size budget keeps the queue bounded: when it is exceeded the oldest droppable messages (timelines,
graphs) go first, and the next batch says how many were dropped. Cell boundaries and errors are never dropped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .protocol import envelope

# Messages the frontend must see for its state to stay right (a cell that never "finishes" would spin forever).
_KEEP = frozenset({"hello", "cell_started", "cell_finished", "error"})
# The list fields whose length stands for a message's size; counting items is far cheaper than encoding JSON.
_BULK_FIELDS = ("nodes", "edges", "events", "rows", "messages")


Message = Any  # a protocol message (dict), or a PendingTimeline whose message() builds one when sent


def message_type(message: Message) -> str:
    return message["type"] if isinstance(message, dict) else message.type


def built(message: Message) -> dict:
    return message if isinstance(message, dict) else message.message()


def message_cost(message: Message) -> int:
    """A rough size of a message in items (nodes, edges, events, rows), at least 1."""
    if not isinstance(message, dict):
        return 1 + message.n_events
    return 1 + sum(len(message.get(field) or ()) for field in _BULK_FIELDS)


class Outbox:
    """Queue messages and hand them to ``send`` as one message or one ``batch``, at most every ``interval_s``."""

    def __init__(self, send: Callable[[dict], None], *, interval_s: float = 0.1, max_cost: int = 50_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._send = send
        self.interval_s = interval_s
        self.max_cost = max_cost
        self._clock = clock
        self._pending: list[dict] = []
        self._cost = 0
        self._dropped = 0
        self._last_flush = float("-inf")

    @property
    def pending(self) -> int:
        return len(self._pending)

    def put(self, message: Message, *, flush: bool = False, coalesce: bool = False) -> None:
        """Queue ``message``; send the queue now if ``flush`` or if the throttle interval has passed.

        ``coalesce``: the message supersedes a queued one of the same type (a training loop finishes many
        backward calls per throttle interval; the sidebar shows the latest), which counts as dropped.
        """
        if coalesce:
            for index in range(len(self._pending) - 1, -1, -1):
                if message_type(self._pending[index]) == message_type(message):
                    self._cost -= message_cost(self._pending.pop(index))
                    self._dropped += 1
                    break
        self._pending.append(message)
        self._cost += message_cost(message)
        self._shed()
        if flush or self._clock() - self._last_flush >= self.interval_s:
            self.flush()

    def flush(self) -> None:
        """Send everything queued (one message, or a ``batch`` when there are several or some were dropped)."""
        self._last_flush = self._clock()
        if not self._pending and not self._dropped:
            return
        messages, dropped = [built(m) for m in self._pending], self._dropped
        self._pending, self._cost, self._dropped = [], 0, 0
        if len(messages) == 1 and not dropped:
            self._send(messages[0])
        else:
            self._send(envelope("batch", messages=messages, dropped=dropped))

    def clear(self) -> None:
        self._pending, self._cost, self._dropped = [], 0, 0

    def _shed(self) -> None:
        """Drop the oldest droppable messages until the queue fits the budget (the newest always stays)."""
        index = 0
        while self._cost > self.max_cost and index < len(self._pending) - 1:
            if message_type(self._pending[index]) in _KEEP:
                index += 1
                continue
            self._cost -= message_cost(self._pending.pop(index))
            self._dropped += 1
