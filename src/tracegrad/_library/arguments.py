"""How PyTorch's boxed-call parser (``createStackForSchema``) reads the arguments of a library operator: how many,
which keywords, and whether each value converts to its schema type, refused in PyTorch's words.

Only the checks: the values reach the kernels as given (PyTorch's conversion of a 0-d tensor to an ``int`` and
the like is not repeated). Types the table does not know (``Generator``, ``Dimname``...) are passed unchecked."""

from __future__ import annotations

import re

import numpy as np

from .._tensor import Tensor
from ..backend.device import device
from ..backend.dtypes import dtype

_PYBIND_DETAILS = "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)"


class CastError(Exception):
    """A value that does not convert; its message is PyTorch's "details" line."""


def _unable(value) -> CastError:
    cls = "<class 'torch.Tensor'>" if type(value) is Tensor else repr(type(value))  # (torch.Tensor's own repr)
    return CastError(f"Cast error details: Unable to cast Python instance of type {cls} to C++ type '?' "
                     f"{_PYBIND_DETAILS}")


def _is_int(value) -> bool:
    """pybind's int: Python ints (bools too), NumPy integers and 0-d tensors."""
    return (isinstance(value, (int, np.integer)) or (isinstance(value, Tensor) and value.dim() == 0))


def _check_int(value) -> None:
    if not _is_int(value):
        raise _unable(value)


def _check_int_or_dtype(value) -> None:  # (a ScalarType is an int to the parser, and so is a dtype)
    if not (_is_int(value) or isinstance(value, dtype)):
        raise _unable(value)


def _check_float(value) -> None:
    if not (isinstance(value, (int, float, np.integer, np.floating))
            or (isinstance(value, Tensor) and value.dim() == 0)):
        raise _unable(value)


def _check_bool(value) -> None:
    if isinstance(value, (str, list, tuple, dtype, device, np.ndarray)) or (
            isinstance(value, Tensor) and value.dim() != 0):
        raise _unable(value)


def _check_str(value) -> None:
    if not isinstance(value, str):
        raise _unable(value)


def _check_scalar(value) -> None:
    if not isinstance(value, (int, float, complex)):  # (NumPy floats are floats; NumPy ints and tensors are not)
        raise CastError(f"Cast error details: Cannot cast {value} to number")


def _check_tensor(value) -> None:
    if value is not None and not isinstance(value, Tensor):  # (None: an undefined tensor, as in PyTorch)
        raise CastError(f"Cast error details: Unable to cast {value} to Tensor")


def _check_tensor_list(value) -> None:
    if not (isinstance(value, (list, tuple)) and all(isinstance(t, Tensor) for t in value)):
        raise _unable(value)


def _list_of(check_item):
    def check(value) -> None:
        if isinstance(value, str) or isinstance(value, Tensor) and value.dim() != 0:
            raise _unable(value)
        try:
            items = iter(value)
        except TypeError as exc:
            raise CastError(f" Python error details: TypeError: {exc}") from None
        for item in items:
            check_item(item)

    return check


def _check_device(value) -> None:
    if not isinstance(value, (device, str, int)):
        raise _unable(value)


# schema type (without "?") -> (the type's name in PyTorch's messages, its check)
_CHECKS = {
    "Tensor": ("Tensor", _check_tensor),
    "Tensor[]": ("List[Tensor]", _check_tensor_list),
    "SymInt": ("int", _check_int), "int": ("int", _check_int),
    "ScalarType": ("int", _check_int_or_dtype), "Layout": ("int", _check_int), "MemoryFormat": ("int", _check_int),
    "float": ("float", _check_float), "bool": ("bool", _check_bool), "str": ("str", _check_str),
    "Scalar": ("number", _check_scalar), "Device": ("Device", _check_device),
    "SymInt[]": ("List[int]", _list_of(_check_int)), "int[]": ("List[int]", _list_of(_check_int)),
    "float[]": ("List[float]", _list_of(_check_float)), "bool[]": ("List[bool]", _list_of(_check_bool)),
}


_SIZED_LIST = re.compile(r"\[\d+\]$")
_INT_LISTS = ("int[]", "SymInt[]")

# What PyTorch's parser takes for a Tensor where it allows numbers as tensors (THPUtils_checkScalar: Python
# numbers and bools, and NumPy's scalars, its bool_ too)
_NUMBERS = (int, float, complex, np.number, np.bool_)


def check_value(op, index: int, value, numbers_as_tensors: bool = False) -> None:
    """Refuse ``value`` for parameter ``index`` of ``op`` where PyTorch's parser cannot convert it (a Python
    number taken for a tensor where ``numbers_as_tensors``)."""
    schema_type = op.schema.params[index].type
    optional = schema_type.endswith("?")
    base = schema_type[:-1] if optional else schema_type
    if _SIZED_LIST.search(base):  # (``int[2]``: a list of ints, or one int that PyTorch repeats)
        base = _SIZED_LIST.sub("[]", base)
        if base in _INT_LISTS and _is_int(value):
            return
    found = _CHECKS.get(base)
    if found is None or (optional and value is None):
        return
    if numbers_as_tensors and base == "Tensor" and isinstance(value, _NUMBERS):
        return
    name, check = found
    try:
        check(value)
    except CastError as exc:
        expected = f"Optional[{name}]" if optional else name
        details = str(exc)
        raise RuntimeError(
            f"{op.qualname}() Expected a value of type '{expected}' for argument '{op.param_names[index]}' but "
            f"instead found type '{type(value).__name__}'.\nPosition: {index}\nValue: {value!r}\n"
            f"Declaration: {op.declaration()}\n{details}") from None


def bind(op, args: tuple, kwargs: dict, numbers_as_tensors: bool = False) -> tuple:
    """The full argument tuple of a call of ``op``, each value checked, in the order of PyTorch's parser: the
    count, then positional values, then keywords and defaults, then keywords it did not use. ``op`` has a
    ``schema``, a ``qualname``, ``param_names``, ``defaults`` and a ``declaration()``."""
    params = op.schema.params
    n_params = len(params)
    given = len(args) + len(kwargs)
    if given > n_params:
        raise RuntimeError(f"{op.qualname}() expected at most {n_params} argument(s) but received {given} "
                           f"argument(s). Declaration: {op.declaration()}")
    full = []
    for i, value in enumerate(args):
        if params[i].kwarg_only:
            raise RuntimeError(f"{op.qualname}() takes {i} positional argument(s) but {len(args)} was/were given.  "
                               f"Declaration: {op.declaration()}")
        check_value(op, i, value, numbers_as_tensors)
        full.append(value)
    used = 0
    for i in range(len(args), n_params):
        name = params[i].name
        if name in kwargs:
            check_value(op, i, kwargs[name], numbers_as_tensors)
            full.append(kwargs[name])
            used += 1
        elif params[i].has_default:
            full.append(op.defaults[i])
        else:
            raise RuntimeError(f"{op.qualname}() is missing value for argument '{name}'. "
                               f"Declaration: {op.declaration()}")
    if used != len(kwargs):
        raise RuntimeError(_kwargs_error(op, kwargs))
    return tuple(full)


def _kwargs_error(op, kwargs: dict) -> str:
    """PyTorch's ``FunctionSchema::findErrorInKwargs``: an unknown keyword, else one given positionally too."""
    names = op.param_names
    for key in kwargs:
        if key not in names:
            return f"Unknown keyword argument '{key}' for operator '{op.qualname}'. Schema: {op.declaration()}"
    for name in names:
        if name in kwargs:
            return (f"Argument '{name}' specified both as positional and keyword argument. "
                    f"Schema: {op.declaration()}")
    return ""
