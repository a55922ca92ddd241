"""How ``torch.tensor`` reads nested Python data, and the errors it gives for data it cannot read.

torch reads in three passes (tensor_new.cpp): the sizes, from the first item at each depth; the dtype, folded
over every item (when none is given); then each item is stored, checking each sequence's length against those
sizes and converting each leaf to a number. The first failing pass names the error, so a ragged list with a
``None`` in it reports the ``None``. tracegrad makes the same three checks and leaves the copy to NumPy.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._arg_parser import tp_name
from ._tensor import Tensor
from ._warnings import is_warn_always_enabled, warn_at_caller, warn_once_at_caller
from .backend import dtypes as _dt

_MAX_DIMS = 128  # torch's limit on nesting depth (a str is a sequence of strs, so it is what stops "abc")
_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def _is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def follows_sequence_protocol(obj: Any) -> bool:
    """CPython's PySequence_Check, which torch asks: any object whose type has ``__getitem__``, a dict (or a dict
    subclass) excepted. A class need not be registered as a ``collections.abc.Sequence``, nor have a ``__len__``
    (torch then fails asking for its length). A NumPy scalar's ``__getitem__`` is a mapping's only (no sq_item),
    but NumPy's text scalars are str and bytes, sequences."""
    if isinstance(obj, (Sequence, np.ndarray)):
        return True
    return hasattr(type(obj), "__getitem__") and not isinstance(obj, (dict, np.generic))


def _is_sequence(obj: Any) -> bool:
    """Python's sequence protocol, as torch's PySequence_Check sees it (a tensor is read as a leaf)."""
    return follows_sequence_protocol(obj) and not _is_tensor(obj)


def refuse_text(data: Any) -> None:
    """A string is not data, at any nesting (torch checks the whole object first)."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{tp_name(data)}'")


_PLAIN = {bool, int, float, complex}


def _plain_types(rows: list) -> set | None:
    """The types of the items of lists (of lists...) of Python numbers only, checked a row at a time (``map`` runs
    in C); None where anything else is met."""
    if type(rows[0]) is not list:
        types = set(map(type, rows))
        return types if types <= _PLAIN else None
    found: set = set()
    for row in rows:
        types = _plain_types(row) if type(row) is list and row else None
        if types is None:
            return None
        found |= types
    return found


def plain_array(data: Any) -> np.ndarray | None:
    """The common case, read by NumPy in one go: a non-empty list (of lists) of Python bools, ints, floats and
    complexes, rectangular and within int64. None for anything else, which takes torch's three passes (and
    their errors)."""
    types = _plain_types(data) if type(data) is list and data else None
    if types is None:
        return None
    try:
        array = np.array(data)
    except (ValueError, OverflowError):  # ragged: the slow passes word the error
        return None
    if array.dtype.kind == "f" and float not in types:  # (ints beyond int64 beside others NumPy reads as floats)
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
        if isinstance(obj, (np.ndarray, np.generic)):  # (before Python's: np.float64 is a float, np.str_ a str)
            fold(_dt.from_numpy_dtype(obj.dtype))
        elif isinstance(obj, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(obj).__name__}'")
        elif isinstance(obj, (bool, int, float, complex)):
            fold(_dt.default_dtype_for_category(_dt.scalar_category(obj)))
        elif _is_tensor(obj):
            fold(_dt.from_numpy_dtype(obj._data.dtype))
        elif follows_sequence_protocol(obj):
            if len(obj) == 0:
                fold(_dt.DEFAULT.value)
            for item in obj:
                walk(item)
                if found is _COMPLEX128:  # (torch stops there: no dtype promotes past it, nor is refused with it)
                    return
        else:
            raise RuntimeError(f"Could not infer dtype of {tp_name(obj)}")

    try:
        walk(data)
    finally:
        walk = None  # (a recursive closure refers to itself: break that cycle, left to the collector)
    return found or _dt.DEFAULT.value


_UINT64 = np.dtype(np.uint64)
_COMPLEX128 = _dt.complex128


def _check_float_range(value: float, target: np.dtype) -> None:
    """c10's overflow check of a float read into an integer dtype, compared in double: NaN and anything below the
    lowest or above the largest value is refused (-0.5 for an unsigned dtype; infinities always)."""
    info = np.iinfo(target)
    if not float(info.min) <= value <= float(info.max):
        raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")


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


# ---- one item, read as torch's store_scalar reads it: through CPython's number protocols ---------------------
# Each reader calls the item's own conversion where CPython's C API would (its __index__, __float__, __complex__),
# so a NumPy scalar, a 0-d array, a tensor or any other object gives its own error in its own words.

def _read_int64(obj: Any) -> int:
    """THPUtils_unpackLong: the item's __index__ (CPython's own refusal of a type without one), within int64."""
    value = operator.index(obj)
    if not _INT64[0] <= value <= _INT64[1]:
        raise ValueError("Overflow when unpacking long long")
    return value


def _read_double(obj: Any) -> None:
    """PyFloat_AsDouble: a float as it is, else the type's __float__, else its __index__. NumPy's str_ and bytes_
    have str's and bytes' number slots, without a __float__ (whatever their Python attributes say); a NumPy complex
    warns and gives its real part (warned at the caller: NumPy's own warning, raised here, would read as
    tracegrad's cast)."""
    if isinstance(obj, float):
        return
    if isinstance(obj, np.complexfloating):
        warn_at_caller("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning)
        return
    kind = type(obj)
    if not isinstance(obj, (str, bytes)):
        if hasattr(kind, "__float__"):
            kind.__float__(obj)
            return
        if hasattr(kind, "__index__"):
            float(operator.index(obj))  # (an int too large for a double: CPython's OverflowError)
            return
    raise TypeError(f"must be real number, not {tp_name(obj)}")


def _read_complex(obj: Any) -> None:
    """PyComplex_AsCComplex: a complex as it is, else the type's __complex__, else read as a float."""
    if isinstance(obj, complex):
        return
    convert = getattr(type(obj), "__complex__", None)
    if convert is not None:
        convert(obj)
    else:
        _read_double(obj)


def _read_bool(obj: Any) -> None:
    """THPUtils_unpackNumberAsBool: a NumPy bool, a float or a complex as they are, else the item's __index__ (any
    int: an overflow of int64 reads as True)."""
    if not isinstance(obj, (np.bool_, float, complex)):
        operator.index(obj)


def _read_uint64(obj: Any) -> None:
    """PyLong_AsUnsignedLongLong: Python ints only (no __index__), never negative, below 2**64."""
    if not isinstance(obj, int):
        raise TypeError("an integer is required")
    if obj < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if obj >> 64:
        raise OverflowError("int too big to convert")


def _read_integer(obj: Any, target: np.dtype) -> None:
    """unpackIntegral: a float checked in double against the dtype's range, anything else read as an int64 and
    checked against the dtype (an unsigned one wraps down to minus its largest)."""
    if isinstance(obj, float):
        _check_float_range(obj, target)
    else:
        _check_int_fits(_read_int64(obj), target)


def _kind(target: np.dtype) -> str:
    """A NumPy dtype's kind, bfloat16's (ml_dtypes', of kind "V") read as a float's."""
    return "f" if _dt.is_floating_np(target) else target.kind


def read_item(obj: Any, target: np.dtype) -> None:
    """Read one item into ``target`` as torch's store_scalar does, raising its error for an item it refuses."""
    kind = _kind(target)
    if kind == "f":
        _read_double(obj)
    elif kind == "c":
        _read_complex(obj)
    elif kind == "b":
        _read_bool(obj)
    elif target == _UINT64:
        _read_uint64(obj)
    else:
        _read_integer(obj, target)


# ---- an array or a tensor standing for the innermost lists -----------------------------------------------------

def _is_numeric_block(obj: Any) -> bool:
    """A tensor, or an array of numbers: read by its shape and values. An array of strings, bytes (each a sequence
    of ints to torch) or Python objects is walked item by item, as a list."""
    return _is_tensor(obj) or (isinstance(obj, np.ndarray) and (obj.dtype.kind not in "OSU" or obj.ndim == 0))


def _element(block: Any, flat_index: int) -> Any:
    """The element at ``flat_index`` (C order) as torch's walk meets it: a NumPy scalar or a 0-d tensor."""
    return block[tuple(int(i) for i in np.unravel_index(flat_index, block.shape))]


def _first_refused_by_value(block: Any, target: np.dtype) -> int | None:
    """The flat index of the first element refused for its value alone, once the first element was read (so its
    type is known to be taken); None if none is. Only a float64 array (Python floats) or integer values reach an
    integer dtype this far."""
    values = block._data if _is_tensor(block) else block
    source = values.dtype.kind
    flat = values.reshape(-1)
    refused = None
    if target.kind in "iu":
        if source == "f":
            info = np.iinfo(target)
            refused = ~((flat >= float(info.min)) & (flat <= float(info.max)))
        elif source in "iu":
            lowest, highest = _int_bounds(target)
            refused = (flat < lowest) | (flat > highest)
    elif _kind(target) == "f" and source == "c":
        refused = flat.imag != 0  # (a tensor's: c10's checked conversion; a NumPy complex gives its real part)
    elif target.kind == "b" and source == "u" and values is not block:
        refused = flat > _INT64[1]  # (a uint64 tensor's __index__ refuses what int64 cannot hold)
    if refused is None or not refused.any():
        return None
    return int(refused.argmax())


def _arrays_met(shape: tuple[int, ...], flat_index: int) -> int:
    """How many sub-arrays torch's walk of an array of ``shape`` has met (each warned of) when it reaches the
    element at ``flat_index``: at each inner level, those started so far."""
    met, inner = 0, 1
    for size in reversed(shape[1:]):
        inner *= size
        met += flat_index // inner + 1
    return met


def _is_complex_item(obj: Any) -> bool:
    """Whether an item holds complex values (read as real, they are to be copied quietly: warned of already)."""
    if isinstance(obj, (np.ndarray, np.generic)):
        return obj.dtype.kind == "c"
    return _is_tensor(obj) and obj._data.dtype.kind == "c"


class _Store:
    """torch's store pass over nested data (recursive_store): every sequence as long as the first one at its depth,
    every leaf read as a number (``read_item``), NumPy arrays met in the lists counted (each warned of, once the
    pass is over: torch's C++ warnings wait for its call to return)."""

    def __init__(self, sizes: list[int], target: np.dtype) -> None:
        self.sizes, self.target = sizes, target
        self.arrays_met = 0
        self.complex_read_as_real = False

    def store(self, obj: Any, dim: int) -> None:
        if isinstance(obj, np.ndarray):
            self.arrays_met += 1
        if dim == len(self.sizes):
            self.leaf(obj)
        elif _is_numeric_block(obj):
            self.block(obj.detach() if _is_tensor(obj) else obj, dim)
        else:
            if not _is_sequence(obj):
                raise TypeError("not a sequence")
            if len(obj) != self.sizes[dim]:
                raise ValueError(f"expected sequence of length {self.sizes[dim]} at dim {dim} (got {len(obj)})")
            for item in obj:
                self.store(item, dim + 1)

    def leaf(self, obj: Any) -> None:
        target = self.target
        if obj.__class__ is complex and _kind(target) in "fiu":  # (a NumPy complex gives its real part, as torch)
            from ._factories import complex_into_real

            raise complex_into_real(target)
        read_item(obj, target)
        self.complex_read_as_real |= target.kind != "c" and _is_complex_item(obj)

    def block(self, block: Any, dim: int) -> None:
        """An array or a tensor inside the lists (a tensor as torch iterates it, below autograd: its elements do not
        require grad). Its shape says how the walk goes; its elements are read in order. They share one type, so
        the first meets every refusal that type brings; after it only values are refused, and the first such
        element is read to give its error. A NumPy complex array read as real is read element by element (each
        warns)."""
        shape, depth = block.shape, len(self.sizes) - dim
        counted = isinstance(block, np.ndarray)
        for level, got in enumerate(shape[:depth]):
            if got != self.sizes[dim + level]:
                self.arrays_met += counted * _arrays_met(shape[:level + 1], 0)
                raise ValueError(f"expected sequence of length {self.sizes[dim + level]} at dim {dim + level} "
                                 f"(got {got})")
        if len(shape) != depth:
            self.arrays_met += counted * _arrays_met(shape[:depth + 1], 0)
            if len(shape) < depth:
                raise TypeError("not a sequence")
            self.leaf(block[(0,) * depth])
            return
        self.arrays_met += counted * _arrays_met(shape, 0)
        if counted and block.dtype.kind == "c" and _kind(self.target) == "f":
            for position in np.ndindex(shape):
                read_item(block[position], self.target)
        else:
            read_item(_element(block, 0), self.target)
            refused = _first_refused_by_value(block, self.target)
            self.arrays_met += counted * (_arrays_met(shape, math.prod(shape) - 1 if refused is None else refused)
                                          - _arrays_met(shape, 0))
            if refused is not None:
                read_item(_element(block, refused), self.target)
        self.complex_read_as_real |= self.target.kind != "c" and _is_complex_item(block)


def check_items(data: Any, sizes: list[int], target: np.dtype) -> bool:
    """torch's store pass (``_Store``). torch skips it when the result has no elements (``[[], [1]]`` is a (2, 0)
    tensor). Returns whether complex items go into a real dtype (warned of here, as torch warns: their real parts
    are to be copied quietly)."""
    if 0 in sizes:
        return False
    walk = _Store(sizes, target)
    try:
        walk.store(data, 0)
    finally:
        _warn_of_arrays_in_lists(walk.arrays_met)
    return walk.complex_read_as_real


def _warn_of_arrays_in_lists(count: int) -> None:
    """torch's advice against lists of arrays: once a process (TORCH_WARN_ONCE), or once an array met under
    warn-always."""
    for _ in range(count if is_warn_always_enabled() else min(count, 1)):
        warn_once_at_caller("tensor_from_ndarray_list", "Creating a tensor from a list of numpy.ndarrays is extremely "
                            "slow. Please consider converting the list to a single numpy.ndarray with numpy.array() "
                            "before converting to a tensor.")
