"""The profiler's results: events, their averages, and the tables PyTorch prints (``torch.autograd.profiler_util``).

A :class:`FunctionEvent` is one timed range (an operator, a backward node, a ``record_function`` block); an
:class:`EventList` holds them, links each to the innermost range that encloses it on its thread
(``cpu_parent`` / ``cpu_children``), averages them by name (:meth:`EventList.key_averages`) and prints them.
Times are in microseconds.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "_format_memory", "_format_time"]


def _format_time(time_us: float) -> str:
    """``1.234ms``-style, as PyTorch's tables print times."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN" if time_us == 0 else "inf"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes: int) -> str:
    """``12.50 Kb``-style, as PyTorch's tables print memory."""
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} Gb"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} Mb"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} Kb"
    return f"{nbytes} b"


class Interval:
    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start

    def __repr__(self) -> str:
        return f"Interval(start={self.start}, end={self.end})"


class _Stats:
    """What events and averages share: per-call averages and percentages from the totals."""

    count: int
    cpu_time_total: float
    device_time_total: float

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    @property
    def cpu_time_str(self) -> str:
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return _format_time(self.self_cpu_time_total)  # type: ignore[attr-defined]


class FunctionEvent(_Stats):
    """One profiled range."""

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float, overload_name: str = "",
                 fwd_thread: int | None = None, input_shapes: list | None = None, stack: list | None = None,
                 scope: int = 0, use_device: str | None = None, cpu_memory_usage: int = 0,
                 device_memory_usage: int = 0, is_async: bool = False, is_remote: bool = False,
                 sequence_nr: int = -1, node_id: int = -1, device_type: str = "CPU", device_index: int = 0,
                 device_resource_id: int | None = None, is_legacy: bool = False, flops: int | None = None,
                 trace_name: str | None = None, concrete_inputs=None, kwinputs=None,
                 is_user_annotation: bool = False) -> None:
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels: list = []
        self.count = 1
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.input_shapes = input_shapes
        self.concrete_inputs = concrete_inputs
        self.kwinputs = kwinputs or {}
        self.stack = stack
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = thread if device_resource_id is None else device_resource_id
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1

    def append_cpu_child(self, child: FunctionEvent) -> None:
        if not isinstance(child, FunctionEvent):
            raise AssertionError(f"Expected a FunctionEvent, got {type(child).__name__}")
        if child.id == self.id:
            raise AssertionError("An event cannot be its own child")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        """Set the immediate CPU parent; events without one are the top-level events."""
        if not isinstance(parent, FunctionEvent):
            raise AssertionError(f"Expected a FunctionEvent, got {type(parent).__name__}")
        if self.cpu_parent is not None:
            raise AssertionError("This event already has a CPU parent")
        self.cpu_parent = parent

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return 0.0 if self.is_async else self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        if self.is_async:
            return 0.0
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def device_time_total(self) -> float:
        return 0.0  # tracegrad times host code only; device work is inside the operators that launch it

    @property
    def self_device_time_total(self) -> float:
        return 0.0

    @property
    def self_cpu_memory_usage(self) -> int:
        if self.is_async:
            return 0
        return self.cpu_memory_usage - sum(child.cpu_memory_usage for child in self.cpu_children)

    @property
    def self_device_memory_usage(self) -> int:
        return 0

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
                f"device_type={self.device_type} node_id={self.node_id} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[child.id for child in self.cpu_children]} thread={self.thread} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"is_async={self.is_async} is_remote={self.is_remote} seq_nr={self.sequence_nr} "
                f"is_legacy={self.is_legacy}>")


class FunctionEventAvg(_Stats):
    """The totals of the events sharing a key (name, and with grouping the input shapes or stack)."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device: str | None = None
        self.cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.self_device_time_total = 0.0
        self.input_shapes: list | None = None
        self.overload_name: str | None = None
        self.stack: list | None = None
        self.scope: int | None = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children: list | None = None
        self.cpu_parent: FunctionEvent | None = None
        self.device_type = "CPU"
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = False

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        if self.key is None:
            # the first event added sets the key and what every event of the group shares
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.input_shapes = other.input_shapes
            self.overload_name = other.overload_name
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError(f"Expected a FunctionEvent or FunctionEventAvg, got {type(other).__name__}")
        if other.key != self.key:
            raise AssertionError(f"Cannot add an event with key {other.key!r} to an average of {self.key!r}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of events with PyTorch's ways of linking, averaging, printing and exporting them."""

    def __init__(self, *args, use_device: str | None = None, profile_memory: bool = False,
                 with_flops: bool = False) -> None:
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = False

    def _build_tree(self) -> None:
        self._populate_cpu_children()
        self._tree_built = True

    def _populate_cpu_children(self) -> None:
        """Link every synchronous event to the innermost event of its thread that contains it.

        On each thread, events are visited by start time (the longer first when two start together) with a
        stack of open candidates: a candidate that ends before the event starts, or ends before the event
        does, cannot contain it (or anything after it) and is dropped."""
        sync = [evt for evt in self if not evt.is_async and evt.device_type == "CPU"]
        by_thread = sorted(sync, key=lambda evt: (evt.thread, evt.node_id))
        for _, thread_events in itertools.groupby(by_thread, key=lambda evt: (evt.thread, evt.node_id)):
            ordered = sorted(thread_events, key=lambda evt: (evt.time_range.start, -evt.time_range.end))
            open_events: list[FunctionEvent] = []
            for event in ordered:
                while open_events:
                    parent = open_events[-1]
                    if (event.time_range.start >= parent.time_range.end
                            or event.time_range.end > parent.time_range.end):
                        open_events.pop()
                        continue
                    parent.append_cpu_child(event)
                    event.set_cpu_parent(parent)
                    break
                open_events.append(event)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(evt.self_cpu_time_total for evt in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """The events as a table (one row each; use ``key_averages().table()`` for one row per name).

        ``sort_by`` names an attribute (``cpu_time_total``, ``self_cpu_time_total``, ``count``, ...), largest
        first; ``row_limit`` <= 0 prints every row; ``top_level_events_only`` keeps the events without a
        parent."""
        from ._profiler_table import build_table

        return build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                           max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, with_flops=self._with_flops,
                           profile_memory=self._profile_memory, top_level_events_only=top_level_events_only)

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (open it in ``chrome://tracing`` or Perfetto)."""
        trace = []
        for evt in self:
            args = {"Sequence number": evt.sequence_nr} if evt.sequence_nr >= 0 else {}
            if evt.input_shapes:
                args["Input Dims"] = evt.input_shapes
            if evt.fwd_thread:
                args["Fwd thread id"] = evt.fwd_thread
            trace.append({"name": evt.trace_name or evt.name, "ph": "X", "ts": evt.time_range.start,
                          "dur": evt.time_range.elapsed_us(), "tid": evt.thread, "pid": "CPU functions",
                          "cat": "user_annotation" if evt.is_user_annotation else "cpu_op", "args": args})
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write ``frame;frame;... value`` lines (outermost frame first) for flame-graph tools."""
        with open(path, "w") as f:
            for evt in self:
                if evt.stack:
                    value = int(getattr(evt, metric))
                    f.write(";".join(reversed(evt.stack)) + f" {value}\n")

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """One :class:`FunctionEventAvg` per name (and input shapes, the innermost ``group_by_stack_n``
        frames, the overload name, when asked), in the order the names first occur."""
        if not self._tree_built:
            self._build_tree()
        groups: dict[tuple, FunctionEventAvg] = {}
        for evt in self:
            key = [str(evt.key), str(evt.node_id), str(evt.device_type), str(evt.is_legacy),
                   str(evt.is_user_annotation)]
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += (evt.stack or [])[:group_by_stack_n]
            if group_by_overload_name:
                key.append(evt.overload_name)
            groups.setdefault(tuple(key), FunctionEventAvg()).add(evt)
        averages = EventList(groups.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                             with_flops=self._with_flops)
        for avg in averages:
            avg.stack = (avg.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
        averages._tree_built = True
        return averages

    def total_average(self) -> FunctionEventAvg:
        """All events summed into one average keyed ``Total``."""
        total = FunctionEventAvg()
        for evt in self:
            total += evt
            total.key = None
        total.key = "Total"
        return total


def events_from_records(records: Iterable, t0: int) -> list[FunctionEvent]:
    """:class:`FunctionEvent` s from the collector's records (``tracegrad._profiling.Record``), in µs from
    ``t0`` (ns)."""
    events = []
    for rec in records:
        end = rec.end if rec.end is not None else rec.start
        events.append(FunctionEvent(
            id=rec.id, name=rec.name, thread=rec.thread, start_us=(rec.start - t0) / 1e3, end_us=(end - t0) / 1e3,
            overload_name=rec.overload, fwd_thread=rec.fwd_thread, input_shapes=rec.shapes, stack=rec.stack,
            cpu_memory_usage=rec.memory, sequence_nr=rec.seq, flops=rec.flops,
            is_user_annotation=rec.user_annotation))
    return events
