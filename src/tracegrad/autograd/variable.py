"""``torch.autograd.Variable``: the legacy wrapper, kept for ``Variable._execution_engine``."""

from __future__ import annotations

import operator
import warnings

from .._arg_parser import tp_name
from .._tensor import Tensor
from . import engine
from .grad_mode import is_multithreading_enabled, set_multithreading_enabled  # noqa: F401 - (their old home)


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

    def __new__(cls, *args, **kwargs) -> Tensor:
        # As torch's legacy constructor: always a new leaf (the data detached), never the tensor given
        data, requires_grad, volatile, _grad_fn, name = _parsed_arguments(args, kwargs)
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


# torch's ``PyArg_ParseTupleAndKeywords(args, kwds, "|ObbOz", ...)``: the parameters and each one's conversion
_PARAMETERS = ("data", "requires_grad", "volatile", "_grad_fn", "name")
_UCHAR_MAX, _LONG_MAX = 255, 2**63 - 1


def _parsed_arguments(args: tuple, kwargs: dict) -> tuple:
    """The five arguments, converted and refused in CPython's words, in its order: too many arguments, each
    argument's conversion, one given by name and position, then an unknown keyword."""
    given = len(args) + len(kwargs)
    if given > len(_PARAMETERS):
        keyword = "" if args else "keyword "
        raise TypeError(f"function takes at most {len(_PARAMETERS)} {keyword}arguments ({given} given)")
    values = [None, 0, 0, None, None]
    for position, parameter in enumerate(_PARAMETERS):
        if position < len(args):
            value = args[position]
        elif parameter in kwargs:
            value = kwargs[parameter]
        else:
            continue
        values[position] = _converted(position, value)
    for position, parameter in enumerate(_PARAMETERS[:len(args)]):
        if parameter in kwargs:
            raise TypeError(f"argument for function given by name ('{parameter}') and position ({position + 1})")
    for keyword in kwargs:
        if keyword not in _PARAMETERS:
            raise TypeError(f"'{keyword}' is an invalid keyword argument for this function")
    return tuple(values)


def _converted(position: int, value):
    """One argument as its format unit converts it: "b" (an unsigned byte) for the flags, "z" (str or None) for the
    name, "O" (anything) for the others."""
    if position in (1, 2):
        number = operator.index(value)  # (PyLong_AsLong: __index__, refusing floats and None in its words)
        if number > _LONG_MAX or number < -_LONG_MAX - 1:
            raise OverflowError("Python int too large to convert to C long")
        if number < 0:
            raise OverflowError("unsigned byte integer is less than minimum")
        if number > _UCHAR_MAX:
            raise OverflowError("unsigned byte integer is greater than maximum")
        return number
    if position == 4 and value is not None and not isinstance(value, str):
        raise TypeError(f"argument 5 must be str or None, not {tp_name(value)}")
    return value


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
