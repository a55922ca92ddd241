"""How ``torch.tensor`` reads nested Python data, and the errors it gives for data it cannot read.

torch reads in three passes (tensor_new.cpp): the sizes, from the first item at each depth; the dtype, folded
over every item (when none is given); then each item is stored, checking each sequence's length against those
sizes and converting each leaf to a number. The first failing pass names the error, so a ragged list with a
``None`` in it reports the ``None``. tracegrad makes the same three checks and leaves the copy to NumPy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._warnings import warn_at_caller, warn_once
from .backend import dtypes as _dt

_MAX_DIMS = 128  # torch's limit on nesting depth (a str is a sequence of strs, so it is what stops "abc")
_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def _is_tensor(obj: Any) -> bool:
    from ._tensor import Tensor

    return isinstance(obj, Tensor)


def _is_sequence(obj: Any) -> bool:
    """Python's sequence protocol, as torch's PySequence_Check sees it (a tensor is read as a leaf)."""
    return isinstance(obj, (Sequence, np.ndarray)) and not _is_tensor(obj)


def _type_name(obj: Any) -> str:
    kind = type(obj)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def refuse_text(data: Any) -> None:
    """A string is not data, at any nesting (torch checks the whole object first)."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")


_PLAIN = {bool, int, float, complex}


def _all_plain(rows: list) -> bool:
    """Lists (of lists...) of Python numbers only, checked a row at a time (``map`` runs in C)."""
    if type(rows[0]) is list:
        return all(type(row) is list and row and _all_plain(row) for row in rows)
    return set(map(type, rows)) <= _PLAIN


def plain_array(data: Any) -> np.ndarray | None:
    """The common case, read by NumPy in one go: a non-empty list (of lists) of Python bools, ints, floats and
    complexes, rectangular and within int64. None for anything else, which takes torch's three passes (and
    their errors)."""
    if type(data) is not list or not data or not _all_plain(data):
        return None
    try:
        array = np.array(data)
    except (ValueError, OverflowError):  # ragged: the slow passes word the error
        return None
    return array if array.dtype.kind in "bifc" else None  # (uint64 or object: an int beyond int64)


def dtype_of_plain(array: np.ndarray) -> _dt.dtype:
    """torch's inferred dtype for Python numbers: bool, int64, or the default float or its complex."""
    return _dt.default_dtype_for_category("bifc".index(array.dtype.kind))


def sizes_of(data: Any) -> list[int]:
    """The shape torch reads off the first item at each depth."""
    sizes: list[int] = []
    obj = data
    while _is_sequence(obj):
        length = len(obj)
        sizes.append(length)
        if len(sizes) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(obj).__name__}'")
        if length == 0:
            break
        obj = obj[0]
    return sizes


def infer_dtype(data: Any) -> _dt.dtype:
    """torch's infer_scalar_type: Python numbers give bool, int64, the default float or its complex; NumPy and
    tensor items their own dtype; sequences fold their items with promote_types (empty: the default float)."""
    found: _dt.dtype | None = None

    def fold(d: _dt.dtype) -> None:
        nonlocal found
        found = d if found is None else _dt.promote_types(found, d)

    def walk(obj: Any) -> None:
        if isinstance(obj, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(obj).__name__}'")
        if isinstance(obj, (np.ndarray, np.generic)):  # (before Python's numbers: np.float64 is a float)
            fold(_dt.from_numpy_dtype(obj.dtype))
        elif isinstance(obj, (bool, int, float, complex)):
            fold(_dt.default_dtype_for_category(_dt.scalar_category(obj)))
        elif _is_tensor(obj):
            fold(_dt.from_numpy_dtype(obj._data.dtype))
        elif isinstance(obj, Sequence):
            if len(obj) == 0:
                fold(_dt.DEFAULT.value)
            for item in obj:
                walk(item)
                if found is _COMPLEX128:  # (torch stops there: no dtype promotes past it, nor is refused with it)
                    return
        else:
            raise RuntimeError(f"Could not infer dtype of {_type_name(obj)}")

    try:
        walk(data)
    finally:
        walk = None  # (a recursive closure refers to itself: break that cycle, left to the collector)
    return found or _dt.DEFAULT.value


_UINT64 = np.dtype(np.uint64)
_COMPLEX128 = _dt.complex128


def _check_int_range(value: int, target: np.dtype) -> None:
    """torch reads a Python int for an integer tensor as int64, and for a uint64 one as an unsigned 64-bit
    integer (so up to 2**64 - 1, never negative), in CPython's words."""
    if target == _UINT64:
        if value < 0:
            raise OverflowError("can't convert negative int to unsigned")
        if value >> 64:
            raise OverflowError("int too big to convert")
    elif not _INT64[0] <= value <= _INT64[1]:
        raise ValueError("Overflow when unpacking long long")


def _check_float_range(value: float, target: np.dtype) -> None:
    """c10's overflow check of a float read into an integer dtype, compared in double: NaN and anything below the
    lowest or above the largest value is refused (-0.5 for an unsigned dtype; infinities always)."""
    info = np.iinfo(target)
    if not float(info.min) <= value <= float(info.max):
        raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")


def _check_numpy_item(obj: np.generic, target: np.dtype) -> bool:
    """A NumPy scalar (np.float64 aside: a Python float) as torch stores it, through CPython's number protocols:
    into a floating dtype by ``__float__`` (NumPy's ComplexWarning for a complex one, its real part kept); into an
    integer dtype by ``__index__``, which NumPy's floats, complexes and bools have not, then refused beyond int64
    and beyond the dtype (an unsigned one takes down to minus its largest, wrapped); into bool by ``__index__`` too
    (without the int64 check), bools and Python complexes (np.complex128) aside. (uint64 takes Python ints only:
    refused before.) Returns whether it read a complex one into a real dtype."""
    kind = target.kind
    if kind in "fc":
        if kind == "f" and isinstance(obj, np.complexfloating):
            warn_at_caller("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning)
            return True
        return False
    if kind == "b" and isinstance(obj, (np.bool_, complex)):
        return False
    if not isinstance(obj, np.integer):
        raise TypeError(f"'{_type_name(obj)}' object cannot be interpreted as an integer")
    if kind == "b":  # (any integer: torch's bool reading ignores an overflow of int64)
        return False
    value = int(obj)
    if not _INT64[0] <= value <= _INT64[1]:
        raise ValueError("Overflow when unpacking long long")
    _check_int_fits(value, target)
    return False


def _check_int_fits(value: int, target: np.dtype) -> None:
    """c10's checked conversion of an int64 into an integer dtype (an unsigned one wraps down to minus its largest)."""
    lowest, highest = _int_bounds(target)
    if not lowest <= value <= highest:
        raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")


def _int_bounds(target: np.dtype) -> tuple[int, int]:
    """The int64 values c10's checked conversion takes into an integer dtype (an unsigned one wraps down to minus
    its largest)."""
    info = np.iinfo(target)
    return (-int(info.max) if target.kind == "u" else int(info.min)), int(info.max)


def _check_0d_array_item(obj: np.ndarray, target: np.dtype) -> None:
    """A 0-d NumPy array met as an item (not first at its depth, where torch asks its length and refuses it) read
    as torch reads it, through the array's number protocols: ``__index__`` into an integer or bool dtype, which
    only an integer array has (then checked as a NumPy integer), ``__float__`` into a floating one, which a complex
    array refuses."""
    kind = target.kind
    if kind == "c":
        return
    if kind == "f":
        if obj.dtype.kind == "c":
            raise TypeError("float() argument must be a string or a real number, not 'complex'")
        return
    if obj.dtype.kind not in "iu":
        raise TypeError("only integer scalar arrays can be converted to a scalar index")
    if kind != "b":
        _check_numpy_item(obj[()], target)


def check_items(data: Any, sizes: list[int], target: np.dtype) -> bool:
    """torch's store pass: every sequence as long as the first one at its depth, every leaf a number. torch
    skips it when the result has no elements (``[[], [1]]`` is a (2, 0) tensor), and warns of each NumPy array
    it meets inside the lists (slow, in torch). Returns whether NumPy complex items go into a real dtype (warned
    of here: their real parts are to be read quietly)."""
    if 0 in sizes:
        return False
    integral = target.kind in "iub"
    exact_unsigned = target == _UINT64  # (read with CPython's unsigned conversion: Python ints only)
    fits = _int_bounds(target) if target.kind in "iu" and not exact_unsigned else None
    complex_read_as_real = False

    def leaf(obj: Any) -> None:
        nonlocal complex_read_as_real
        if exact_unsigned and not isinstance(obj, int):
            raise TypeError("an integer is required")
        if obj.__class__ is complex and target.kind in "fiu":  # (a NumPy complex gives its real part, as torch)
            from ._factories import complex_into_real

            raise complex_into_real(target)
        if isinstance(obj, float) and target.kind in "iu":
            _check_float_range(obj, target)
            return
        if isinstance(obj, np.generic) and not isinstance(obj, float):
            complex_read_as_real |= _check_numpy_item(obj, target)
            return
        if isinstance(obj, (bool, float, complex, np.generic)):
            return
        if isinstance(obj, int):
            if integral:
                _check_int_range(obj, target)
                if fits is not None and not fits[0] <= obj <= fits[1]:  # (item by item, as torch stores them)
                    raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")
            return
        if _is_tensor(obj):
            if obj.numel() != 1:
                if integral:
                    raise TypeError("only integer tensors of a single element can be converted to an index")
                raise ValueError("only one element tensors can be converted to Python scalars")
            return
        if isinstance(obj, np.ndarray):
            if obj.ndim:
                if integral:
                    raise TypeError("only integer scalar arrays can be converted to a scalar index")
                raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
            _check_0d_array_item(obj, target)
            return
        if integral:
            raise TypeError(f"'{type(obj).__name__}' object cannot be interpreted as an integer")
        raise TypeError(f"must be real number, not {type(obj).__name__}")

    def store(obj: Any, dim: int) -> None:
        if isinstance(obj, np.ndarray):
            warn_once("tensor_from_ndarray_list", "Creating a tensor from a list of numpy.ndarrays is extremely "
                      "slow. Please consider converting the list to a single numpy.ndarray with numpy.array() "
                      "before converting to a tensor.", stacklevel=dim + 6)  # (the caller of tensor())
        if dim == len(sizes):
            leaf(obj)
            return
        shape = tuple(obj.shape) if isinstance(obj, np.ndarray) or _is_tensor(obj) else None
        if shape is not None:  # an array or tensor inside the lists: its shape says it all
            for offset, got in enumerate(shape[:len(sizes) - dim]):
                if got != sizes[dim + offset]:
                    raise ValueError(f"expected sequence of length {sizes[dim + offset]} at dim {dim + offset} "
                                     f"(got {got})")
            if len(shape) < len(sizes) - dim:
                raise TypeError("not a sequence")
            if len(shape) > len(sizes) - dim:
                leaf(obj[(0,) * (len(sizes) - dim)])
            return
        if not _is_sequence(obj):
            raise TypeError("not a sequence")
        if len(obj) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(obj)})")
        for item in obj:
            store(item, dim + 1)

    try:
        store(data, 0)
    finally:
        store = None  # (the same cycle as infer_dtype's walk)
    return complex_read_as_real
