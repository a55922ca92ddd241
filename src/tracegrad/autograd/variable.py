"""``torch.autograd.Variable``: the legacy wrapper, kept for ``Variable._execution_engine``."""

from __future__ import annotations

from .._tensor import Tensor
from . import engine


class _ExecutionEngine:
    """The engine as PyTorch exposes it: ``queue_callback`` and ``run_backward``."""

    @staticmethod
    def queue_callback(callback) -> None:
        engine.queue_callback(callback)


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(t, requires_grad=...)`` returns ``t`` (Variables and Tensors merged long ago)."""

    _execution_engine = _ExecutionEngine()

    def __new__(cls, data, requires_grad: bool = False, volatile: bool = False):
        if requires_grad:
            data = data.detach().requires_grad_(True)
        return data


_MULTITHREADING = [True]


def is_multithreading_enabled() -> bool:
    return _MULTITHREADING[0]


class set_multithreading_enabled:
    """tracegrad's engine always runs backward on the calling thread; the flag is kept because PyTorch's
    execution-order introspection requires it to be off."""

    def __init__(self, mode: bool) -> None:
        self.mode = mode
        self.prev = _MULTITHREADING[0]
        _MULTITHREADING[0] = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _MULTITHREADING[0] = self.prev

    def clone(self):
        return set_multithreading_enabled(self.mode)
