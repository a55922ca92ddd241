"""Live mode: the kernel side of the ``tracegrad.inspector`` comm that feeds the JupyterLab sidebar.

The frontend opens the comm (the kernel only registers the target), and the kernel answers ``hello``. While
live mode is on and at least one frontend listens, every cell is bracketed by ``cell_started`` /
``cell_finished``; backward calls in the cell are recorded into ``hooks_fired`` timelines, nodes created in the
cell remember their source line and cell, and at the end of the cell the graphs and saved tensors of the
tensors the cell created or changed are sent. With no frontend listening nothing is recorded at all, so live
mode costs nothing until a sidebar connects; turning it off unsubscribes every observer.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Callable
from typing import Any

from .namespace import NamespaceWatcher, leaf_labels
from .outbox import Outbox, built
from .protocol import COMM_TARGET, describe_exception, envelope, error, hello

Comm = Any  # comm.base_comm.BaseComm, or anything with send / on_msg / on_close
PendingTimeline = Any  # tracegrad.viz.timeline.PendingTimeline (viz is imported lazily)


class _CellRecording:
    """What live mode has switched on for the running cell: a timeline recorder and source tracking."""

    def __init__(self, cell_id: str | None, execution_count: int | None, on_timeline: Callable[[dict], None]) -> None:
        from ..viz import TimelineRecorder, track_sources

        self.cell_id = cell_id
        self.execution_count = execution_count
        self.started = time.perf_counter()
        self.backwards = 0  # backward calls finished in the cell
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(track_sources(cell_id=cell_id, execution_count=execution_count))
        self.recorder = TimelineRecorder(cell_id=cell_id, on_finish=on_timeline, saved_events=False,
                                         build_messages=False)
        self.recorder.start()
        self._stack.callback(self.recorder.stop)

    def stop(self) -> None:
        self._stack.close()

    @property
    def duration_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0


class LiveFeed:
    """Per-kernel live state: open comms, the live switch, the running cell's recording, and the outbox."""

    def __init__(self, shell: Any, *, comm_manager: Any = None, interval_s: float = 0.1,
                 max_cost: int = 50_000, max_roots: int = 8, max_nodes: int = 2_000) -> None:
        self.shell = shell
        self.live = False
        self.max_nodes = max_nodes
        self._comm_manager = comm_manager
        self._comms: list[Comm] = []
        self._outbox = Outbox(self._broadcast, interval_s=interval_s, max_cost=max_cost)
        self._watcher = NamespaceWatcher(max_roots=max_roots)
        self._cell: _CellRecording | None = None
        self._shown: dict[str, weakref.ref] = {}  # the roots of the graph sent last (weakly: never kept alive)
        self._shown_cell: str | None = None  # the cell that made them
        self._latest_timeline: PendingTimeline | None = None  # for request_state
        self.cell_id: str | None = None  # the running cell's id, also when live mode is off (for the magics)

    # ---- lifecycle ----------------------------------------------------------------------------------------

    def attach(self) -> None:
        """Register the comm target and the cell callbacks."""
        self._comms_manager().register_target(COMM_TARGET, self.open_comm)
        self.shell.events.register("pre_run_cell", self.pre_run_cell)
        self.shell.events.register("post_run_cell", self.post_run_cell)

    def detach(self) -> None:
        """Undo :meth:`attach`: stop recording, close the comms, forget the target."""
        self.set_live(False)
        self._drop_cell()
        for name, callback in (("pre_run_cell", self.pre_run_cell), ("post_run_cell", self.post_run_cell)):
            with contextlib.suppress(ValueError):
                self.shell.events.unregister(name, callback)
        for comm in list(self._comms):
            with contextlib.suppress(Exception):
                comm.close()
        self._comms.clear()
        with contextlib.suppress(Exception):
            self._comms_manager().unregister_target(COMM_TARGET, self.open_comm)

    def _comms_manager(self) -> Any:
        if self._comm_manager is None:
            from comm import get_comm_manager

            self._comm_manager = get_comm_manager()
        return self._comm_manager

    # ---- the switch ---------------------------------------------------------------------------------------

    def set_live(self, on: bool) -> None:
        if on and not self.live:
            self._watcher.reset(self.shell.user_ns)  # report what cells change from now on, not the backlog
        changed = on != self.live
        self.live = on
        if changed:
            self._broadcast(hello(live=on))  # the sidebar's toggle follows %tracegrad live on|off too
        if not on:
            # Stop observing at once; a cell already announced still gets its cell_finished.
            if self._cell is not None:
                self._cell.stop()
            self._outbox.clear()

    @property
    def listening(self) -> bool:
        return self.live and bool(self._comms)

    def status(self) -> str:
        n = len(self._comms)
        frontends = f"{n} frontend{'s' if n != 1 else ''} connected"
        return f"tracegrad live mode is {'on' if self.live else 'off'} ({frontends})"

    # ---- comm ---------------------------------------------------------------------------------------------

    def open_comm(self, comm: Comm, open_msg: dict | None = None) -> None:
        """The comm target's callback: a frontend opened ``tracegrad.inspector``."""
        self._comms.append(comm)
        comm.on_msg(self._on_comm_msg)
        comm.on_close(lambda msg, comm=comm: self._forget(comm))
        self._send_to(comm, hello(live=self.live))

    def _forget(self, comm: Comm) -> None:
        if comm in self._comms:
            self._comms.remove(comm)
        if not self._comms:
            self._drop_cell()
            self._outbox.clear()

    def _on_comm_msg(self, msg: dict) -> None:
        data = (msg.get("content") or {}).get("data") or {}
        kind = data.get("type")
        if kind == "set_live" and isinstance(data.get("live"), bool):
            if data["live"] == self.live:
                self._broadcast(hello(live=self.live))  # nothing changed, but the frontend asked: answer
            self.set_live(data["live"])
        elif kind == "request_state":
            # A frontend that (re)connected: the graph shown last, as it is now, and the latest timeline.
            self._broadcast(hello(live=self.live))
            roots = self._shown_roots()
            messages = self._graph_messages(roots, self._shown_cell) if roots else []
            if self._latest_timeline is not None:
                messages.append(built(self._latest_timeline))
            for message in messages:
                self._broadcast(message)
        else:
            self._broadcast(error(f"tracegrad.inspector: unknown or malformed client message {data!r}"))

    def _broadcast(self, message: dict) -> None:
        for comm in list(self._comms):
            self._send_to(comm, message)

    def _send_to(self, comm: Comm, message: dict) -> None:
        try:
            comm.send(data=message)
        except Exception:  # noqa: BLE001 - a comm that broke under us (closed socket, dead frontend) is dropped
            self._forget(comm)

    # ---- cells --------------------------------------------------------------------------------------------

    def pre_run_cell(self, info: Any) -> None:
        self.cell_id = getattr(info, "cell_id", None)
        self._drop_cell()  # a cell whose post_run_cell never came (should not happen; be safe)
        if not self.listening:
            return
        count = self.shell.execution_count - 1 if getattr(info, "store_history", False) else None
        self._outbox.put(envelope("cell_started", cell_id=self.cell_id, execution_count=count), flush=True)
        self._cell = _CellRecording(self.cell_id, count, self._on_timeline)

    def post_run_cell(self, result: Any) -> None:
        cell, self._cell = self._cell, None
        if cell is None:
            return
        cell.stop()
        from ..viz.snapshot import gc_paused

        # The messages are built, sent and dropped in one go: with the collector paused meanwhile, their
        # thousands of small containers are freed by reference counting and never traversed.
        with gc_paused():
            if self.listening:
                self._send_changed_graphs(cell.cell_id, ran_backward=cell.backwards > 0)
            failure = result.error_in_exec or result.error_before_exec
            self._outbox.put(envelope("cell_finished", cell_id=cell.cell_id, execution_count=result.execution_count,
                                      ok=failure is None, error=describe_exception(failure) if failure else None,
                                      duration_ms=round(cell.duration_ms, 3)), flush=True)

    def _drop_cell(self) -> None:
        if self._cell is not None:
            cell, self._cell = self._cell, None
            cell.stop()

    def _on_timeline(self, timeline: PendingTimeline) -> None:
        if self._cell is not None:
            self._cell.backwards += 1
        self._latest_timeline = timeline
        self._outbox.put(timeline, coalesce=True)
        # The recorder also keeps its timelines; live mode hands each one on and keeps only the latest.
        recorder = self._cell.recorder if self._cell is not None else None
        if recorder is not None and isinstance(getattr(recorder, "timelines", None), list):
            del recorder.timelines[:]

    def _send_changed_graphs(self, cell_id: str | None, ran_backward: bool) -> None:
        """Send the graphs of the tensors the cell created or changed; when there are none but the cell ran a
        backward, send the graph shown last again, so the sidebar sees its saved tensors freed and its
        leaves' new ``.grad``."""
        roots, left_out = self._watcher.changed(self.shell.user_ns)
        if roots:
            self._shown = {name: weakref.ref(tensor) for name, tensor in roots.items()}
            self._shown_cell = cell_id
        elif ran_backward:
            roots = self._shown_roots()
        for message in self._graph_messages(roots, cell_id) if roots else ():
            self._outbox.put(message)
        if left_out:
            self._outbox.put(error(f"{left_out} more changed tensors not sent (at most {self._watcher.max_roots} "
                                   "per cell); use %autograd_graph NAME", cell_id=cell_id))

    def _shown_roots(self) -> dict:
        roots = {name: ref() for name, ref in self._shown.items()}
        return {name: tensor for name, tensor in roots.items() if tensor is not None}

    def _graph_messages(self, roots: dict, cell_id: str | None) -> list[dict]:
        """The ``graph`` and ``saved_tensors`` messages of ``roots``, or an ``error`` if the snapshot fails."""
        from ..viz import graph_snapshot, saved_from_graph

        try:
            graph = graph_snapshot(roots, cell_id=cell_id, max_nodes=self.max_nodes,
                                   labels=leaf_labels(self.shell.user_ns))
            return [graph, saved_from_graph(graph)]
        except Exception as exc:  # noqa: BLE001 - a failed snapshot must not fail the user's cell
            return [error(f"could not snapshot {', '.join(roots)}: {describe_exception(exc)}", cell_id=cell_id)]
