"""The hook and execution timeline of each backward call, as ``hooks_fired`` messages.

The recorder's subscribers do as little as possible per event: each appends a tuple to the innermost running
backward's list. A tuple holds the graph node itself (its id and name are looked up when the message is
built, so the frequent ``node_executed`` event costs one append) and plain values otherwise: no tensor is
kept. Nodes are held only until the message is built, which ``build_messages=False`` defers to first use
(live mode builds only the latest timeline of a loop); the engine frees their saved tensors as usual.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Iterator

from ..autograd.node import GraphRoot
from . import events
from .ids import _ID_KEY, node_id
from .inspect import dtype_name, hook_name
from .protocol_meta import envelope

MAX_EVENTS = 100_000  # per backward call; beyond it the message says truncated
# Hooks that tracegrad itself installs to implement module full backward hooks; the module hooks they call
# are reported as module_pre / module_post instead.
_INTERNAL_HOOK_MODULES = ("tracegrad.nn.modules._backward_hook",)
_backward_ids = itertools.count(1)
_clock = time.perf_counter


class _Run:
    __slots__ = ("call", "roots", "t0", "events", "truncated", "last_node")

    def __init__(self, call: str, roots: list[str]) -> None:
        self.call = call
        self.roots = roots
        self.t0 = time.perf_counter()
        self.events: list[tuple] = []
        self.truncated = False
        self.last_node = None  # the node running: a saved_freed event belongs to it


def _meta(t) -> tuple | None:
    if t is None or not hasattr(t, "_data"):
        return None
    return (t._data.shape, t._data.dtype)


class PendingTimeline:
    """A finished backward's ``hooks_fired`` message, built on first use."""

    __slots__ = ("_build", "_message", "n_events")
    type = "hooks_fired"

    def __init__(self, build: Callable[[], dict], n_events: int) -> None:
        self._build = build
        self._message: dict | None = None
        self.n_events = n_events

    def message(self) -> dict:
        if self._message is None:
            self._message, self._build = self._build(), None
        return self._message


class TimelineRecorder:
    """Records one ``hooks_fired`` message per backward()/autograd.grad() call while started.

    ``saved_events=False`` leaves out the engine's saved-tensor unpacked/freed/packed events (pack and unpack
    *hook* calls stay): live mode uses it, because those events are as frequent as node executions and the
    saved-tensor table already shows which tensors were freed.

    ``build_messages=False`` hands out (in ``timelines`` and to ``on_finish``) :class:`PendingTimeline`
    objects instead of messages: live mode keeps only the latest of a training loop's many backward calls,
    so most timelines are never turned into JSON-ready dicts at all.
    """

    def __init__(self, cell_id: str | None = None, on_finish: Callable[[dict], None] | None = None, *,
                 saved_events: bool = True, build_messages: bool = True) -> None:
        self.cell_id = cell_id
        self.on_finish = on_finish
        self.saved_events = saved_events
        self.build_messages = build_messages
        self.timelines: list[dict] = []
        self._stack: list[_Run] = []
        self._unsubscribes: list[Callable[[], None]] = []

    def start(self) -> TimelineRecorder:
        if not self._unsubscribes:
            # One subscription per event kind, so the bus calls the right handler directly and never calls
            # this recorder for the kinds it does not record.
            handlers = {"backward_started": self._on_started, "backward_finished": self._on_finished,
                        "node_executed": self._on_node, "hook": self._on_hook}
            if self.saved_events:
                handlers.update(saved_unpacked=self._on_unpacked, saved_freed=self._on_freed,
                                saved_packed=self._on_packed)
            self._unsubscribes = [events.subscribe(fn, (kind,)) for kind, fn in handlers.items()]
        return self

    def stop(self) -> None:
        for unsubscribe in self._unsubscribes:
            unsubscribe()
        self._unsubscribes = []
        self._stack.clear()

    @property
    def active(self) -> bool:
        return bool(self._unsubscribes)

    # ---- the subscribers: each appends a tuple of plain values to the innermost running backward -----------

    def _recording(self) -> _Run | None:
        if not self._stack:
            return None
        run = self._stack[-1]
        if len(run.events) >= MAX_EVENTS:
            run.truncated = True
            return None
        return run

    def _on_started(self, kind: str, payload: dict) -> None:
        task = payload["task"]
        self._stack.append(_Run("grad" if task.captures else "backward",
                                [node_id(fn) for fn, _ in payload["roots"] if fn is not None]))

    def _on_finished(self, kind: str, payload: dict) -> None:
        if self._stack:
            self._finish(self._stack.pop())

    def _on_node(self, kind: str, payload: dict) -> None:
        # The most frequent event: _recording() is inlined, and the node's id and name wait for the build.
        if not self._stack:
            return
        run = self._stack[-1]
        node = payload["node"]
        if node.__class__ is GraphRoot:  # the engine's entry point is no graph node (as in PyTorch)
            return
        events_ = run.events
        if len(events_) >= MAX_EVENTS:
            run.truncated = True
            return
        run.last_node = node
        events_.append(("node_executed", None, node, None, None, None, None, _clock() - run.t0))

    def _on_hook(self, kind: str, payload: dict) -> None:
        run = self._recording()
        if run is None:
            return
        hook = payload["hook"]
        if payload["kind"] != "retain_grad" and getattr(hook, "__module__", None) in _INTERNAL_HOOK_MODULES:
            return
        module = payload.get("module")
        run.events.append(("hook", payload["kind"], payload["node"], hook_name(hook), _meta(payload.get("tensor")),
                           payload.get("output_nr"), type(module).__name__ if module is not None else None,
                           _clock() - run.t0))

    def _on_unpacked(self, kind: str, payload: dict) -> None:
        run = self._recording()
        if run is None:
            return
        node = payload["node"]
        run.events.append((kind, None, node if node is not None else run.last_node, None, None, None, None,
                           _clock() - run.t0))

    def _on_freed(self, kind: str, payload: dict) -> None:
        run = self._recording()
        if run is not None:
            run.events.append((kind, None, run.last_node, None, None, None, None, _clock() - run.t0))

    def _on_packed(self, kind: str, payload: dict) -> None:
        run = self._recording()
        if run is not None:
            run.events.append((kind, None, None, None, _meta(payload.get("tensor")), None, None, _clock() - run.t0))

    def _finish(self, run: _Run) -> None:
        head = {"backward_id": f"b{next(_backward_ids)}", "cell_id": self.cell_id, "call": run.call,
                "roots": run.roots}
        tail = {"duration_us": (time.perf_counter() - run.t0) * 1e6, "truncated": run.truncated}

        def build() -> dict:
            msg = envelope("hooks_fired")
            msg.update(head)
            msg["events"] = [_event_dict(k, e) for k, e in enumerate(run.events)]
            msg.update(tail)
            return msg

        item = build() if self.build_messages else PendingTimeline(build, len(run.events))
        self.timelines.append(item)
        if self.on_finish is not None:
            self.on_finish(item)


def _event_dict(seq: int, e: tuple) -> dict:
    event, kind, node, hook, meta, output_nr, module, t = e
    nid, name = (None, None) if node is None else (node.__dict__.get(_ID_KEY) or node_id(node), node.name())
    out = {"seq": seq, "event": event, "kind": kind, "node": nid, "node_name": name, "hook": hook,
           "tensor": None if meta is None else {"shape": list(meta[0]), "dtype": dtype_name(meta[1])},
           "output_nr": output_nr, "module": module, "t_us": t * 1e6}
    return out


@contextlib.contextmanager
def record_backward(*, cell_id: str | None = None,
                    on_finish: Callable[[dict], None] | None = None) -> Iterator[TimelineRecorder]:
    """Record a ``hooks_fired`` message for each backward()/autograd.grad() call run inside the block."""
    recorder = TimelineRecorder(cell_id, on_finish).start()
    try:
        yield recorder
    finally:
        recorder.stop()
