"""The live feed's two small parts: the throttling outbox and the namespace watcher."""

from __future__ import annotations

import tracegrad as tg
from tracegrad.notebook.namespace import NamespaceWatcher
from tracegrad.notebook.outbox import Outbox, message_cost
from tracegrad.notebook.protocol import envelope
from tracegrad.viz import validate


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def timeline(n_events: int) -> dict:
    events = [{"seq": i, "event": "node_executed", "kind": None, "node": f"n{i}", "node_name": "MulBackward0"}
              for i in range(n_events)]
    return envelope("hooks_fired", backward_id="b1", cell_id=None, call="backward", roots=[], events=events,
                    duration_us=1.0, truncated=False)


def test_outbox_throttles_to_one_send_per_interval():
    sent, clock = [], Clock()
    box = Outbox(sent.append, interval_s=0.1, clock=clock)
    box.put(timeline(1))  # first message: the interval has long passed
    box.put(timeline(2))
    box.put(timeline(3))
    assert len(sent) == 1 and box.pending == 2
    clock.now = 0.1
    box.put(timeline(4))
    assert len(sent) == 2 and sent[1]["type"] == "batch" and len(sent[1]["messages"]) == 3
    box.put(envelope("cell_finished", cell_id=None, execution_count=1), flush=True)
    assert sent[2]["type"] == "cell_finished"  # a lone message is sent as itself
    for message in sent:
        validate(message)
    box.flush()
    assert len(sent) == 3  # nothing queued, nothing sent


def test_outbox_drops_oldest_bulky_messages_but_keeps_cell_boundaries():
    sent, clock = [], Clock()
    box = Outbox(sent.append, interval_s=1.0, max_cost=25, clock=clock)
    box.put(envelope("cell_started", cell_id="c", execution_count=1), flush=True)
    box.put(envelope("cell_started", cell_id="c2", execution_count=2))
    for n in (10, 11, 12):
        box.put(timeline(n))
    box.flush()
    batch = sent[-1]
    assert [m["type"] for m in batch["messages"]] == ["cell_started", "hooks_fired"]
    assert len(batch["messages"][1]["events"]) == 12 and batch["dropped"] == 2
    assert message_cost(timeline(12)) == 13


def test_outbox_keeps_a_single_oversized_message():
    sent = []
    box = Outbox(sent.append, max_cost=5)
    box.put(timeline(50))
    assert len(sent[0]["events"]) == 50


def test_watcher_reports_new_rebound_and_inplace_changed_tensors():
    watcher = NamespaceWatcher()
    w = tg.ones(3, requires_grad=True)
    ns = {"w": w, "n": 3, "plain": tg.ones(2)}
    assert watcher.changed(ns) == ({}, 0)  # a leaf has no grad_fn: nothing to draw
    ns["a"] = w * 2
    ns["_hidden"] = w * 3
    assert list(watcher.changed(ns)[0]) == ["a"]
    assert watcher.changed(ns) == ({}, 0)
    ns["a"] = ns["a"] + 1
    assert list(watcher.changed(ns)[0]) == ["a"]
    ns["b"] = ns["a"].clone()
    assert list(watcher.changed(ns)[0]) == ["b"]
    ns["b"].mul_(2)  # in place: same tensor, new grad_fn
    assert list(watcher.changed(ns)[0]) == ["b"]
    ns["c"] = ns["b"]  # a new name for a known tensor is still new to that name
    assert list(watcher.changed(ns)[0]) == ["c"]


def test_watcher_cap_keeps_the_latest_and_reset_forgets_the_backlog():
    watcher = NamespaceWatcher(max_roots=2)
    w = tg.ones(3, requires_grad=True)
    ns = {name: w * i for i, name in enumerate("abcd")}
    changed, left_out = watcher.changed(ns)
    assert list(changed) == ["c", "d"] and left_out == 2
    ns["e"] = w * 5
    watcher.reset(ns)
    assert watcher.changed(ns) == ({}, 0)


def test_outbox_coalesces_timelines_within_one_interval():
    sent = []
    box = Outbox(sent.append, interval_s=10.0, clock=lambda: 0.0)
    box.put(envelope("cell_started", cell_id="c", execution_count=1), flush=True)
    for k in range(5):
        box.put(envelope("hooks_fired", backward_id=f"b{k}", cell_id="c", call="backward", roots=[], events=[],
                         duration_us=1.0, truncated=False), coalesce=True)
    box.put(envelope("cell_finished", cell_id="c", execution_count=1, ok=True, error=None, duration_ms=1.0),
            flush=True)
    batch = sent[-1]
    validate(batch)
    assert [m["type"] for m in batch["messages"]] == ["hooks_fired", "cell_finished"]
    assert batch["messages"][0]["backward_id"] == "b4" and batch["dropped"] == 4
