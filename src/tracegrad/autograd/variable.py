"""``torch.autograd.Variable``: the legacy wrapper, kept for ``Variable._execution_engine``."""

from __future__ import annotations

import warnings

from .._arg_parser import tp_name
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

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False, _grad_fn=None,
                name: str | None = None) -> Tensor:
        # As torch's legacy constructor: always a new leaf (the data detached), never the tensor given
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if _grad_fn is not None and not _is_python_function_node(_grad_fn):
            raise TypeError(f"_grad_fn has to be a Function object or None, but got {tp_name(_grad_fn)}")
        var = _legacy_data(data)
        if _grad_fn is not None:
            raise RuntimeError("_grad_fn argument to legacy Variable constructor is no longer supported.  Instead, "
                               "please invoke your _grad_fn to produce a variable with it as the _grad_fn.")
        if requires_grad and not (var.dtype.is_floating_point or var.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        var.requires_grad = bool(requires_grad)
        return var


def _is_python_function_node(obj) -> bool:
    """torch's THPFunction_Check: a custom Function's node (its ctx), not a built-in node like MulBackward0."""
    from .function import BackwardCFunction

    return isinstance(obj, BackwardCFunction)


def _legacy_data(data) -> Tensor:
    """What a legacy Variable holds: the data detached, or an empty tensor of the default dtype for None."""
    if data is None:
        from .._factories import empty

        return empty(0)
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {tp_name(data)}")
    return data.detach()


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
