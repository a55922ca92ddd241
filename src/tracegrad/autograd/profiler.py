"""The autograd profiler (``torch.autograd.profiler``): what ran, in which order, for how long.

``with profile() as prof:`` records every operator call (``aten::mul``), every node the backward engine runs
(``autograd::engine::evaluate_function: MulBackward0`` around ``MulBackward0``) and every
``record_function`` block; ``prof.key_averages().table()`` prints them as PyTorch does. A forward operator and
the backward node it recorded share a sequence number, which is how a node is traced back to its operator.

While a profiler runs, operators leave the eager fast paths (each call is timed), so it measures the general
path: use it to see where time goes relative to other operators, and ``benchmarks/`` for absolute speed.
"""

from __future__ import annotations

import functools
import warnings

from .. import _torch_function as _tf
from .._profiling import Collector, thread_number
from .._state import STATE
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg, events_from_records

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]

_UNFINISHED = "<unfinished torch.autograd.profile>"


class profile:
    """Profile the operators, backward nodes and ``record_function`` blocks run inside the ``with`` block.

    ``record_shapes`` keeps each operator's input shapes; ``profile_memory`` the bytes of the buffers each
    operator returned; ``with_stack`` the user's source lines that called each top-level operator;
    ``with_flops`` the floating-point operations of matrix products, 2-D convolutions, ``mul`` and ``add``.
    ``with_modules`` is accepted as in PyTorch, where it applies to TorchScript models only: nothing is recorded
    for it. ``use_kineto``, ``use_cpu``, ``experimental_config``, ``custom_trace_id_callback`` are accepted and
    change nothing: there is one tracer, and it times host code."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config=None, acc_events: bool = False,
                 custom_trace_id_callback=None) -> None:
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.use_device = "cuda" if use_cuda else use_device
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
        if self.use_device not in (None, "cpu"):
            warnings.warn(f"tracegrad's profiler times host code only: work on {self.use_device!r} is timed as "
                          "part of the operators that launch it, and device times read 0.", stacklevel=2)
        self._collector: Collector | None = None
        self._function_events: EventList | None = None

    # ---- recording ---------------------------------------------------------------------------------------

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        if STATE.profiler is not None:
            raise RuntimeError("A profiler is already running: tracegrad profiles one block at a time; end the "
                               "running profile first")
        self.entered = True
        if not self.acc_events:
            self._function_events = None
        self._collector = Collector(record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                                    with_stack=self.with_stack, with_flops=self.with_flops)
        thread_number()  # the thread that starts profiling is thread 1, as in PyTorch, if it is the first
        STATE.profiler = self._collector
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        if not self.enabled:
            return
        collector = self._collector
        if STATE.profiler is collector:
            STATE.profiler = None
        for rec in collector.records:  # ranges still open (a record_function not yet exited) end here
            collector.close(rec)
        events = events_from_records(collector.records, collector.t0)
        if self.acc_events and self._function_events is not None:
            events = list(self._function_events) + events
        self._function_events = EventList(events, use_device=self.use_device, profile_memory=self.profile_memory,
                                          with_flops=self.with_flops)
        self._function_events._build_tree()
        self._collector = None
        self.entered = False

    # ---- results -----------------------------------------------------------------------------------------

    def _results(self) -> EventList:
        if self._function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._function_events

    @property
    def function_events(self) -> EventList | None:
        return self._function_events

    def __repr__(self) -> str:
        return _UNFINISHED if self._function_events is None else repr(self._function_events)

    def __str__(self) -> str:
        return _UNFINISHED if self._function_events is None else str(self._function_events)

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        return self._results().table(sort_by=sort_by, row_limit=row_limit,
                                     max_src_column_width=max_src_column_width,
                                     max_name_column_width=max_name_column_width,
                                     max_shapes_column_width=max_shapes_column_width, header=header,
                                     top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self._results().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self) -> FunctionEventAvg:
        return self._results().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The summed self times of all events, in microseconds."""
        return self._results().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        self._results().export_chrome_trace(path)

    export_chrome_trace.__doc__ = EventList.export_chrome_trace.__doc__

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self._results().export_stacks(path, metric)


class _RangeRecord:
    """What ``_record_function_enter_new`` hands back (torch's ``_RecordFunction`` object): the range it opened in
    the running profiler, or none outside one."""

    __slots__ = ("collector", "range")

    def __init__(self, collector: Collector | None = None, opened=None) -> None:
        self.collector = collector
        self.range = opened


def _record_function_enter_new(name: str, args: str | None = None) -> _RangeRecord:
    """``torch.ops.profiler._record_function_enter_new``: open a range named ``name`` in the running profiler. An
    active ``TorchFunctionMode`` sees the call first, as it sees torch's operator call."""
    if STATE.torch_function_mode and _tf.is_torch_function_mode_enabled():
        return _tf.handle(_record_function_enter_new, [], (name, args), {})
    collector = STATE.profiler
    if collector is None:
        return _RangeRecord()
    opened = collector.open(name)
    opened.user_annotation = True
    return _RangeRecord(collector, opened)


def _record_function_exit(record: _RangeRecord) -> None:
    """``torch.ops.profiler._record_function_exit._RecordFunction``: close the range ``record`` opened."""
    if STATE.torch_function_mode and _tf.is_torch_function_mode_enabled():
        return _tf.handle(_record_function_exit, [], (record,), {})
    if record.range is not None:
        record.collector.close(record.range)
        record.range = record.collector = None
    return None


# (the names handlers read off torch's operators: ``resolve_name`` gives ``str(op)``, ``<owner>.<name>``)
_record_function_enter_new.__module__ = _record_function_exit.__module__ = "torch._ops.profiler"
_record_function_enter_new._torch_owner = "profiler"
_record_function_exit.__name__ = "_record_function_exit._RecordFunction"
_record_function_exit.__qualname__ = "profiler::_record_function_exit._RecordFunction"
_record_function_exit._torch_owner = "profiler._record_function_exit"
_record_function_exit._torch_name = "_RecordFunction"
_record_function_enter_new._torch_refusal_name = "torch.opsprofiler._record_function_enter_new"
_record_function_exit._torch_refusal_name = "torch.opsprofiler._record_function_exit"


class record_function:
    """Label a block of code (``with record_function("name"):``) or every call of a function (as a decorator)
    in the profiler's results. Outside a profiler it does nothing."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self.record: _RangeRecord | None = None

    def __enter__(self) -> record_function:
        self.record = _record_function_enter_new(self.name, self.args)
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        # Ranges may end in any order (one may end inside another that began after it).
        with _tf.DisableTorchFunctionSubclass():
            _record_function_exit(self.record)

    def __call__(self, fn):
        @functools.wraps(fn)
        def labelled(*args, **kwargs):
            with record_function(self.name, self.args):  # a fresh range per call: calls may nest (recursion)
                return fn(*args, **kwargs)

        return labelled


def _profiler_enabled() -> bool:
    """Whether a profiler is recording (``torch.autograd._profiler_enabled``)."""
    return STATE.profiler is not None
