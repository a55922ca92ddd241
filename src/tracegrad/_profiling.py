"""The recording side of the autograd profiler, at the bottom layer so operators and the engine can report to it.

While a profiler runs, ``STATE.profiler`` holds a :class:`Collector` and ``STATE.special`` is True, so every
operator call leaves the fast paths and passes ``OpDef.__call__``, which times it here; the engine times each
node it runs, and ``record_function`` labels blocks of user code. Nothing here runs while no profiler is on.

What is recorded follows PyTorch's profiler:

- an operator is ``aten::<name>``; a top-level one carries the sequence number the next graph node will get
  (the one its own node gets if it records one), an operator running inside another operator or inside a
  backward node carries -1;
- the engine's run of a node is ``autograd::engine::evaluate_function: <node name>`` (hooks included) around
  ``<node name>`` (the node's own computation), both with the node's sequence number;
- ``record_function(name)`` is a range named ``name``; ranges need not nest (one may end inside another).

Times are ``perf_counter_ns`` on the thread that ran the range. Threads are numbered 1, 2, ... in the order
they first record, like PyTorch's ``RecordFunction`` thread ids.
"""

from __future__ import annotations

import itertools
import os
import threading
import traceback
import weakref
from time import perf_counter_ns

import numpy as np

from ._state import STATE

_thread_numbers = itertools.count(1)
_local = threading.local()


def thread_number() -> int:
    """This thread's small profiler id (1 for the first thread that recorded anything)."""
    number = getattr(_local, "number", None)
    if number is None:
        number = _local.number = next(_thread_numbers)
    return number


def _depth() -> int:
    return getattr(_local, "depth", 0)


class Record:
    """One timed range. ``end`` is None while it is open."""

    __slots__ = ("id", "name", "start", "end", "thread", "seq", "fwd_thread", "shapes", "memory", "stack", "flops",
                 "user_annotation", "overload")

    def __init__(self, rid: int, name: str, thread: int, seq: int, fwd_thread: int) -> None:
        self.id = rid
        self.name = name
        self.thread = thread
        self.seq = seq
        self.fwd_thread = fwd_thread
        self.shapes: list = []
        self.memory = 0
        self.stack: list[str] = []
        self.flops = 0
        self.user_annotation = False
        self.overload = ""
        self.start = perf_counter_ns()
        self.end: int | None = None


class Collector:
    """The ranges of one profiling session, in the order they started."""

    def __init__(self, *, record_shapes: bool = False, profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False) -> None:
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.records: list[Record] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.t0 = perf_counter_ns()

    def open(self, name: str, seq: int = -1, fwd_thread: int = 0) -> Record:
        """A range that only times (``record_function``, and the parts of a factory)."""
        with self._lock:  # (ids and list order agree across threads)
            rec = Record(next(self._ids), name, thread_number(), seq, fwd_thread)
            self.records.append(rec)
        return rec

    @staticmethod
    def close(rec: Record) -> None:
        if rec.end is None:
            rec.end = perf_counter_ns()

    # Ranges of work (operators, nodes, factories) nest: what runs inside one is not top-level (sequence number
    # -1), and with ``profile_memory`` its allocations count in every range around it.

    def _begin(self, name: str, seq: int = -1, fwd_thread: int = 0, *, node: bool = False) -> tuple:
        depth = _depth()
        rec = self.open(name, seq if node or not depth else -1, fwd_thread)
        if self.with_stack and not depth:
            rec.stack = user_stack()
        _local.depth = depth + 1
        if self.profile_memory:
            _frames().append(_MemoryFrame())
        return rec, depth

    def _end(self, opened: tuple, result=None) -> None:
        rec, depth = opened
        _local.depth = depth
        self.close(rec)
        if self.profile_memory:
            frames = _frames()
            frame = frames.pop()
            frame.count(result)
            rec.memory = frame.bytes
            if frames:
                frames[-1].absorb(frame)

    def begin(self, name: str, seq: int = -1) -> tuple:
        """Open a range of work done in Python (a custom Function's forward, named after its class) that
        :meth:`end` closes; ``seq`` is kept for a top-level one."""
        return self._begin(name, seq)

    def end(self, opened: tuple, result=None) -> None:
        self._end(opened, result)

    # ---- operators ---------------------------------------------------------------------------------------

    @staticmethod
    def timing(op) -> bool:
        """Whether this call of ``op`` is the one :meth:`op_call` makes (the call it times)."""
        if getattr(_local, "timing", None) is op:
            _local.timing = None
            return True
        return False

    def op_call(self, op, args: tuple, kwargs: dict):
        """``op(*args, **kwargs)`` timed as ``aten::<op>``; a top-level call gets the sequence number its node
        will have. (``OpDef.__call__`` sends each call here, and runs the one made here.)"""
        opened = self._begin(profiler_name(op), STATE.peek_sequence_nr())
        rec = opened[0]
        if "." in op.schema.full_name:
            rec.overload = op.schema.full_name.partition(".")[2]
        if self.record_shapes:
            rec.shapes = [input_shape(a) for a in _bound(op, args, kwargs)]
        result = None
        _local.timing = op
        try:
            result = op(*args, **kwargs)
        finally:
            _local.timing = None
            self._end(opened, result)
        if self.with_flops:
            rec.flops = op_flops(op.public_name, args, result)
        return result

    def composite(self, name: str, args: tuple, fn, *, graphed: bool = True):
        """``fn(*args)``, a composite operator written in Python (``F.linear``), timed as ``name``. Unless
        ``graphed`` is False (PyTorch's implicit ``ones_like`` of ``backward()``), a top-level one gets the
        sequence number of the next node, as an operator does."""
        opened = self._begin(name, STATE.peek_sequence_nr() if graphed else -1)
        if self.record_shapes:
            opened[0].shapes = [input_shape(a) for a in args]
        result = None
        try:
            result = fn(*args)
        finally:
            self._end(opened, result)
        return result

    def factory(self, name: str, fill_name: str | None, shape: tuple, dtype, values) -> np.ndarray:
        """A factory (``aten::randn``): an ``aten::empty`` allocation, then the values (``values()``) written into
        it as ``fill_name`` (``aten::normal_``), both inside ``name``, as PyTorch's factories run. Factories get
        no sequence number: they are not recorded in graphs."""
        opened = self._begin(name)
        array = None
        try:
            empty = self._begin("aten::empty")
            if self.record_shapes:
                empty[0].shapes = [[], [], [], [], [], []]  # (sizes, dtype, layout, device, pin_memory, format)
            array = np.empty(shape, dtype=dtype)
            self._end(empty, array)
            if fill_name is None:
                array[...] = values()
            else:
                part = self._begin(fill_name)
                if self.record_shapes:
                    part[0].shapes = [list(shape)]
                try:
                    array[...] = values()
                finally:
                    self._end(part)
        finally:
            self._end(opened)
        return array

    # ---- the engine --------------------------------------------------------------------------------------

    def begin_node(self, node) -> tuple:
        """Open the engine's run of ``node`` (its hooks and its computation): PyTorch's
        ``autograd::engine::evaluate_function: <name>``. Returns what :meth:`end_node` needs."""
        seq = node._seq
        accumulate = seq >= (1 << 63)  # AccumulateGrad's UINT64_MAX: no forward operator made it
        # (tracegrad records graphs and runs backward on the calling thread: the forward thread is this one)
        fwd_thread = 0 if accumulate else thread_number()
        return self._begin("autograd::engine::evaluate_function: " + node.name(), -1 if accumulate else seq,
                           fwd_thread, node=True)

    def end_node(self, opened: tuple) -> None:
        self._end(opened)

    def apply_node(self, outer: tuple, run, node, inputs: list):
        """``run(node, inputs)``, the node's own computation inside its evaluate range, timed as ``<name>``."""
        evaluate = outer[0]
        opened = self._begin(node.name(), evaluate.seq, evaluate.fwd_thread, node=True)
        if self.record_shapes:
            opened[0].shapes = [input_shape(g) for g in inputs]
        outputs = None
        try:
            outputs = run(node, inputs)
        finally:
            self._end(opened, outputs)
        return outputs


def profiler_name(op) -> str:
    """``aten::<name>`` as PyTorch's profiler names the operator; tracegrad's own fused operators that have no
    PyTorch twin are ``tracegrad::<name>``."""
    name = _NAMES.get(op)
    if name is None:
        internal = op.name.startswith("_nn_")
        name = _NAMES[op] = _ATEN_TWINS.get(op.name) or (("tracegrad::" if internal else "aten::") + op.public_name)
    return name


_NAMES: dict = {}
# Internal operators that are PyTorch operators under another name (their public name is what the
# visualization shows: ``linear`` for the fused node of ``F.linear``).
_ATEN_TWINS = {"_nn_addmm": "aten::addmm", "_nn_linear_addmm": "aten::addmm", "_nn_linear_mm": "aten::mm",
               "_nn_mm_nt": "aten::mm", "_nn_mm_tn": "aten::mm", "_nn_weight_t": "aten::t", "_nn_abs": "aten::abs",
               "_nn_sign": "aten::sign", "_nn_clamp_min": "aten::clamp_min", "_nn_xlogy": "aten::xlogy",
               "_nn_conv": "aten::convolution", "_nn_norm": "aten::norm", "_nn_vector_norm": "aten::linalg_vector_norm",
               "_nn_nll_loss": "aten::nll_loss", "_nn_nll_loss2d": "aten::nll_loss2d",
               "_nn_nll_loss_backward": "aten::nll_loss_backward",
               "_nn_nll_loss2d_backward": "aten::nll_loss2d_backward", "_nn_layer_norm": "aten::native_layer_norm",
               "_nn_group_norm": "aten::native_group_norm",
               "_nn_max_pool2d_with_indices_backward": "aten::max_pool2d_with_indices_backward"}


class _MemoryFrame:
    """The bytes a range allocated (buffers returned by the operators inside it, each counted once)."""

    __slots__ = ("bytes", "seen")

    def __init__(self) -> None:
        self.bytes = 0
        self.seen: dict[int, weakref.ref] = {}  # id -> weak reference (an id alone could be a reused address)

    def count(self, result) -> None:
        for data in _fresh_buffers(result):
            known = self.seen.get(id(data))
            if known is None or known() is not data:
                self.seen[id(data)] = weakref.ref(data)
                self.bytes += data.nbytes

    def absorb(self, inner: _MemoryFrame) -> None:
        self.bytes += inner.bytes
        self.seen.update(inner.seen)


class Nesting:
    """This thread's nesting of ranges, put back by :meth:`restore` after an error unwound past open ranges
    (which end there)."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.depth = _depth()
        self.frames = len(_frames())
        self.first = len(collector.records)

    def restore(self) -> None:
        _local.depth = self.depth
        del _frames()[self.frames:]
        thread = thread_number()
        for rec in self.collector.records[self.first:]:
            if rec.end is None and rec.thread == thread:
                self.collector.close(rec)


def _frames() -> list:
    frames = getattr(_local, "frames", None)
    if frames is None:
        frames = _local.frames = []
    return frames


def _fresh_buffers(result):
    """The arrays an operator returned that own their memory (a view allocates nothing)."""
    outs = result if result.__class__ in (tuple, list) else (result,)
    for out in outs:
        data = getattr(out, "_data", out)
        if isinstance(data, np.ndarray) and data.base is None:
            yield data


def _bound(op, args: tuple, kwargs: dict) -> tuple:
    """Every argument of the schema, defaults included, as PyTorch lists them (the call's own when it is bad:
    the operator then raises its error)."""
    try:
        return op.bind(args, kwargs)
    except TypeError:
        return args + tuple(kwargs.values())


def input_shape(value) -> list:
    """PyTorch's entry in ``input_shapes``: a tensor's sizes, ``[]`` for anything else."""
    data = getattr(value, "_data", None)
    if data is not None and hasattr(data, "shape"):
        return list(data.shape)
    if value.__class__ in (list, tuple) and value and all(hasattr(v, "_data") for v in value):
        return [list(v._data.shape) for v in value]
    return []


def _shape(value) -> tuple:
    data = getattr(value, "_data", None)
    return tuple(data.shape) if data is not None else ()


def op_flops(name: str, args: tuple, result) -> int:
    """Floating-point operations of the operators PyTorch's profiler counts (``with_flops``): matrix products,
    2-D convolutions, and elementwise ``mul``/``add`` (one per output element); 0 for the others."""
    if name in ("mm", "addmm", "bmm", "baddbmm", "matmul"):
        a, b = (args[0], args[1]) if name in ("mm", "bmm", "matmul") else (args[1], args[2])
        sa, sb = _shape(a), _shape(b)
        if len(sa) < 2 or len(sb) < 2:
            return 0
        out = _shape(result)
        return 2 * int(np.prod(out)) * sa[-1]
    if name in ("conv2d", "convolution", "conv"):
        weight, out = _shape(args[1]), _shape(result)
        if len(weight) != 4 or len(out) != 4:
            return 0
        return 2 * int(np.prod(out)) * weight[1] * weight[2] * weight[3]
    if name in ("mul", "add"):
        return int(np.prod(_shape(result)))
    return 0


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_stack() -> list[str]:
    """The calling Python frames outside tracegrad, innermost first, as PyTorch prints them:
    ``path(line): function``."""
    frames = traceback.extract_stack()[:-1]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if not f.filename.startswith(_PACKAGE_DIR)]
