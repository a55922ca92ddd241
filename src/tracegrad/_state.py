"""Process-wide switches read on every operator call.

They live on one object with slots so the eager fast path pays a single attribute load per check.
Grad mode is process-wide rather than thread-local: tracegrad runs one Python thread of autograd.
"""

from __future__ import annotations


class _State:
    __slots__ = ("grad_enabled", "inference", "stack", "observed", "anomaly", "anomaly_check_nan",
                 "fw_grad_levels", "saved_hooks", "saved_hooks_disabled", "next_sequence_nr", "engine_depth")

    def __init__(self) -> None:
        self.grad_enabled = True
        self.inference = False  # inference_mode: tensors made here are inference tensors
        self.stack: list = []  # active transform interpreters (bottom = eager, implicit)
        self.observed = False  # the viz event bus has subscribers
        self.anomaly = False
        self.anomaly_check_nan = True
        self.fw_grad_levels: list = []  # forward-AD dual levels
        self.saved_hooks: list = []  # saved_tensors_hooks (pack, unpack) stack
        self.saved_hooks_disabled: str | None = None  # message when disable_saved_tensors_hooks is active
        self.next_sequence_nr = 0
        self.engine_depth = 0  # reentrant backward depth


STATE = _State()
