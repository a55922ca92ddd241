"""``torch.profiler``: the profiler with activities, a step schedule and trace handlers.

It records with the autograd profiler (``tracegrad.autograd.profiler``) and adds what training loops use:
``schedule(wait=, warmup=, active=, repeat=)`` decides per ``prof.step()`` whether a step is recorded, each
recorded step is a ``ProfilerStep*`` range, and ``on_trace_ready(prof)`` runs at the end of every recorded
cycle (``tensorboard_trace_handler(dir)`` writes each cycle as a Chrome trace file). tracegrad times host code
only: ``ProfilerActivity.CPU`` is what is recorded, whichever activities are asked for.
"""

from __future__ import annotations

import enum
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable

from ..autograd.profiler import profile as _autograd_profile
from ..autograd.profiler import record_function
from ..autograd.profiler_util import EventList

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does during a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set[ProfilerActivity]:
    return {ProfilerActivity.CPU}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """A schedule that skips ``skip_first`` steps, then cycles: ``wait`` idle steps, ``warmup`` steps, ``active``
    recorded steps (the last one saves the trace); ``repeat`` cycles (0: until the profiler stops).
    ``skip_first_wait`` leaves out the first cycle's wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        phase = step % cycle
        if phase < wait:
            return ProfilerAction.NONE
        if phase < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if phase < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[[profile], None]:
    """An ``on_trace_ready`` that writes each cycle to ``dir_name`` as ``<worker>.<ms>.pt.trace.json`` (``.gz``
    with ``use_gzip``), the files TensorBoard's profiler plugin reads."""

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json")
        if use_gzip:
            import gzip
            import shutil

            prof.export_chrome_trace(path)
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
        else:
            prof.export_chrome_trace(path)

    return handler


class profile:
    """Profile a block, or the steps of a loop under a ``schedule`` (call ``prof.step()`` once per step)."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[profile], object] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda: bool | None = None, custom_trace_id_callback=None) -> None:
        self.activities = set(activities) if activities is not None else supported_activities()
        if ProfilerActivity.CPU not in self.activities:
            warnings.warn("tracegrad's profiler records host (CPU) activity only; the activities asked for "
                          f"({sorted(a.name for a in self.activities)}) are recorded as CPU activity", stacklevel=2)
        self.schedule = schedule if schedule is not None else _always_record
        self.record_steps = schedule is not None  # steps are ranges of their own only under a schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.profiler: _autograd_profile | None = None  # the recording (or last recorded) cycle
        self._recording = False
        self._step_range: record_function | None = None
        self._saved: list = []  # events of earlier cycles, with acc_events

    # ---- control -----------------------------------------------------------------------------------------

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self.stop()

    def start(self) -> None:
        if self.current_action in _RECORDING:
            self._start_cycle()

    def stop(self) -> None:
        if self._recording:
            self._end_cycle(save=True)

    def step(self) -> None:
        """End this step and begin the next, recording or not as the schedule says."""
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if previous in _RECORDING and self._recording:
            if previous == ProfilerAction.RECORD_AND_SAVE or self.current_action not in _RECORDING:
                self._end_cycle(save=True)
            else:
                self._close_step_range()
                self._open_step_range()
        if self.current_action in _RECORDING and not self._recording:
            self._start_cycle()

    def _start_cycle(self) -> None:
        self.profiler = _autograd_profile(record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                                          with_stack=self.with_stack, with_flops=self.with_flops,
                                          with_modules=self.with_modules)
        self.profiler.__enter__()
        self._recording = True
        self._open_step_range()

    def _end_cycle(self, save: bool) -> None:
        self._close_step_range()
        self.profiler.__exit__(None, None, None)
        self._recording = False
        if self.acc_events:
            self._saved.extend(self.profiler.function_events)
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _open_step_range(self) -> None:
        if not self.record_steps:
            return
        self._step_range = record_function(f"ProfilerStep#{self.step_num}")
        self._step_range.__enter__()

    def _close_step_range(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    # ---- results -----------------------------------------------------------------------------------------

    def events(self) -> EventList:
        """The events of the last recorded cycle (of every cycle, with ``acc_events``). A step's range is named
        ``ProfilerStep*`` so that steps average together; its trace name keeps the step number."""
        if self.profiler is None or self.profiler.function_events is None:
            raise RuntimeError("No profiling results: the profiler has not recorded a complete cycle yet")
        events = self._saved if self.acc_events else list(self.profiler.function_events)
        for evt in events:
            if evt.name.startswith("ProfilerStep#"):
                evt.trace_name, evt.name = evt.name, "ProfilerStep*"
        result = EventList(events, profile_memory=self.profile_memory, with_flops=self.with_flops)
        result._tree_built = True
        return result

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self.events().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path: str) -> None:
        self.events().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self.events().export_stacks(path, metric)

    def table(self, *args, **kwargs) -> str:
        return self.events().table(*args, **kwargs)
