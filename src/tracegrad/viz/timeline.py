"""The hook and execution timeline of each backward call, as ``hooks_fired`` messages.

The recorder's subscriber does as little as possible per event: it appends a tuple of plain values (node
id, names, shape) to the innermost running backward's list, so no tensor or node stays referenced. The
message is built when that backward finishes.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Iterator

from ..autograd.node import GraphRoot
from . import events
from .ids import node_id
from .inspect import dtype_name, hook_name
from .protocol_meta import envelope

MAX_EVENTS = 100_000  # per backward call; beyond it the message says truncated
# Hooks that tracegrad itself installs to implement module full backward hooks; the module hooks they call
# are reported as module_pre / module_post instead.
_INTERNAL_HOOK_MODULES = ("tracegrad.nn.modules._backward_hook",)
_backward_ids = itertools.count(1)


class _Run:
    __slots__ = ("call", "roots", "t0", "events", "truncated", "last_node")

    def __init__(self, call: str, roots: list[str]) -> None:
        self.call = call
        self.roots = roots
        self.t0 = time.perf_counter()
        self.events: list[tuple] = []
        self.truncated = False
        self.last_node: tuple = (None, None)  # (id, name) of the node running: saved_freed belongs to it


def _meta(t) -> tuple | None:
    if t is None or not hasattr(t, "_data"):
        return None
    return (t._data.shape, t._data.dtype)


class TimelineRecorder:
    """Records one ``hooks_fired`` message per backward()/autograd.grad() call while started."""

    def __init__(self, cell_id: str | None = None, on_finish: Callable[[dict], None] | None = None) -> None:
        self.cell_id = cell_id
        self.on_finish = on_finish
        self.timelines: list[dict] = []
        self._stack: list[_Run] = []
        self._unsubscribe: Callable[[], None] | None = None

    def start(self) -> TimelineRecorder:
        if self._unsubscribe is None:
            self._unsubscribe = events.subscribe(self._on_event)
        return self

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._stack.clear()

    @property
    def active(self) -> bool:
        return self._unsubscribe is not None

    # ---- the subscriber ----------------------------------------------------------------------------------

    def _on_event(self, kind: str, payload: dict) -> None:
        if kind == "backward_started":
            task = payload["task"]
            self._stack.append(_Run("grad" if task.captures else "backward",
                                    [node_id(fn) for fn, _ in payload["roots"] if fn is not None]))
            return
        if not self._stack:
            return
        run = self._stack[-1]
        if kind == "backward_finished":
            self._stack.pop()
            self._finish(run)
            return
        if kind == "op":
            return
        if len(run.events) >= MAX_EVENTS:
            run.truncated = True
            return
        t = time.perf_counter() - run.t0
        if kind == "node_executed":
            node = payload["node"]
            if node.__class__ is GraphRoot:  # the engine's entry point, not a graph node (as in PyTorch)
                return
            run.last_node = (node_id(node), node.name())
            run.events.append(("node_executed", None, *run.last_node, None, None, None, None, t))
        elif kind == "hook":
            hook = payload["hook"]
            if payload["kind"] not in ("retain_grad",) and getattr(hook, "__module__", None) in _INTERNAL_HOOK_MODULES:
                return
            node = payload["node"]
            module = payload.get("module")
            run.events.append(("hook", payload["kind"], node_id(node) if node is not None else None,
                               node.name() if node is not None else None, hook_name(hook),
                               _meta(payload.get("tensor")), payload.get("output_nr"),
                               type(module).__name__ if module is not None else None, t))
        elif kind == "saved_unpacked":
            node = payload["node"]
            ident = (node_id(node), node.name()) if node is not None else run.last_node
            run.events.append((kind, None, *ident, None, None, None, None, t))
        elif kind == "saved_freed":
            run.events.append((kind, None, *run.last_node, None, None, None, None, t))
        elif kind == "saved_packed":
            run.events.append((kind, None, None, None, None, _meta(payload.get("tensor")), None, None, t))

    def _finish(self, run: _Run) -> None:
        msg = envelope("hooks_fired")
        msg.update({"backward_id": f"b{next(_backward_ids)}", "cell_id": self.cell_id, "call": run.call,
                    "roots": run.roots, "events": [_event_dict(k, e) for k, e in enumerate(run.events)],
                    "duration_us": (time.perf_counter() - run.t0) * 1e6, "truncated": run.truncated})
        self.timelines.append(msg)
        if self.on_finish is not None:
            self.on_finish(msg)


def _event_dict(seq: int, e: tuple) -> dict:
    event, kind, node, node_name, hook, meta, output_nr, module, t = e
    out = {"seq": seq, "event": event, "kind": kind, "node": node, "node_name": node_name, "hook": hook,
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
