"""Process-wide switches read on every operator call.

They live on one object with slots so the eager fast path pays a single attribute load per check:
``special`` is True whenever anything needs the general path (a transform is active, an observer wants
every operator call or the saved-tensor events, anomaly mode, inference mode, the profiler, an op interceptor,
a TorchFunctionMode or CPU autocast is on). An observer of nodes, hooks and backward runs only sets
``observed``: the fast paths stay on and emit those events.
``special`` is recomputed by the setters of those switches.
Grad mode is process-wide rather than thread-local: tracegrad runs one Python thread of autograd.
"""

from __future__ import annotations

import itertools


class _State:
    __slots__ = ("grad_enabled", "special", "_stack", "observed", "observed_ops", "_anomaly", "_inference",
                 "anomaly_check_nan", "_fw_levels", "saved_hooks", "saved_hooks_disabled", "engine_depth", "_seq",
                 "in_formula", "_profiler", "before_write", "_interceptors", "inference_seen", "torch_function",
                 "torch_function_mode", "op_call_checks", "_autocast", "inference_grad_mode")

    def __init__(self) -> None:
        self.grad_enabled = True
        self.special = False
        self._stack: list = []  # active transform interpreters (bottom = eager, implicit)
        self.observed = False  # the event bus has subscribers (set by _events; read on hot paths, so a slot)
        self.observed_ops = False  # ... and one of them needs the general path (call refresh() after setting)
        self._anomaly = False
        self._inference = False  # inference_mode: tensors made here are inference tensors
        # True once inference mode was entered (never reset): no inference tensor exists before, so the fast paths
        # read this slot before a tensor's ``_inference`` (a class attribute's default: a slower, unspecialized read)
        self.inference_seen = False
        # The grad mode is_grad_enabled() shows inside inference mode, where nothing records whatever it is (torch's
        # inference mode leaves autograd out of the dispatch; enable_grad inside it only sets the flag): grad_enabled
        # stays False there, so every recording decision reads one slot
        self.inference_grad_mode = False
        self.anomaly_check_nan = True
        self._fw_levels: list = []  # forward-AD dual levels
        self.saved_hooks: list = []  # saved_tensors_hooks (pack, unpack) stack
        self.saved_hooks_disabled: str | None = None  # message when disable_saved_tensors_hooks is active
        self.engine_depth = 0  # reentrant backward depth
        # A built-in backward formula is being recorded (create_graph): its numbers are PyTorch's C++ Scalars
        # (ops/scalar_overloads.py)
        self.in_formula = False
        self._seq = itertools.count()
        self._profiler = None  # the collector of an active autograd profiler (tracegrad._profiling)
        # Called with a tensor just before an operator writes into it in place (allow_mutation_on_saved_tensors)
        self.before_write = None
        # Op interceptors (tracegrad.utils._python_dispatch.OpInterceptor), in the order they were entered. While
        # any is active, ``OpDef.__call__`` hands each operator call to the last one instead of running it (the
        # check sits behind ``special``, so the eager fast path pays nothing for them); call refresh() after
        # mutating the list in place.
        self._interceptors: list = []
        # The __torch_function__ protocol is live: a Tensor subclass overriding it exists or a mode is active
        # (set by _torch_function, which calls refresh()). Its routing wrappers catch every public entry point, so
        # a live subclass leaves ``special`` alone; only a mode (which also sees calls made inside tracegrad's
        # Python functions) or a module's forward given a subclass instance (_torch_function.GeneralPath) takes
        # the general path.
        self.torch_function = False
        self.torch_function_mode = False
        # ``OpDef.__call__`` has something to check: ``special``, or the protocol is live (a subclass operand of
        # an operator that is not a routed name, ``torch.sin``, is checked there; one flag, so its common call
        # pays a single test as before)
        self.op_call_checks = False
        # CPU autocast's lower-precision dtype while it is on (amp/cpu_policy.py casts the arguments of the operators
        # torch lists), None while it is off or suspended inside an operator it has already cast for
        self._autocast = None

    def refresh(self) -> None:
        """Recompute ``special``; call after mutating ``stack`` in place."""
        self.special = bool(self._stack or self.observed_ops or self._anomaly or self._inference or self._fw_levels
                            or self._profiler is not None or self._interceptors or self.torch_function_mode
                            or self._autocast is not None)
        self.op_call_checks = self.special or self.torch_function

    @property
    def stack(self) -> list:
        return self._stack

    @stack.setter
    def stack(self, value: list) -> None:
        self._stack = value
        self.refresh()

    @property
    def fw_grad_levels(self) -> list:
        return self._fw_levels

    @fw_grad_levels.setter
    def fw_grad_levels(self, value: list) -> None:
        self._fw_levels = value
        self.refresh()

    def set_observation(self, observed: bool, observed_ops: bool) -> None:
        self.observed = observed
        self.observed_ops = observed_ops
        self.refresh()

    @property
    def anomaly(self) -> bool:
        return self._anomaly

    @anomaly.setter
    def anomaly(self, value: bool) -> None:
        self._anomaly = value
        self.refresh()

    @property
    def inference(self) -> bool:
        return self._inference

    @inference.setter
    def inference(self, value: bool) -> None:
        self._inference = value
        if value:
            self.inference_seen = True
        self.refresh()

    @property
    def op_interceptors(self) -> list:
        return self._interceptors

    @op_interceptors.setter
    def op_interceptors(self, value: list) -> None:
        self._interceptors = value
        self.refresh()

    @property
    def autocast(self):
        return self._autocast

    @autocast.setter
    def autocast(self, value) -> None:
        self._autocast = value
        self.refresh()

    @property
    def profiler(self):
        return self._profiler

    @profiler.setter
    def profiler(self, value) -> None:
        self._profiler = value
        self.refresh()

    def peek_sequence_nr(self) -> int:
        """The sequence number the next node will get, without consuming it (``repr`` of a count is
        ``count(N)``)."""
        return int(repr(self._seq)[6:-1])

    @property
    def next_sequence_nr(self) -> int:
        """The next node's sequence number (reading it consumes it)."""
        return next(self._seq)


STATE = _State()
next_sequence_nr = STATE._seq.__next__
