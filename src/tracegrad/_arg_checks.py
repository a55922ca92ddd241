"""torch's argument-parser checks of factory arguments (size, dtype, requires_grad), with its messages.

torch parses a factory's arguments against a C++ signature before running it, so a string dtype, a float size or
``requires_grad="yes"`` is refused up front with a ``TypeError`` naming the function and the argument. These
helpers make the same checks for tracegrad's Python factories.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from ._arg_parser import has_index, tp_name
from .backend import dtypes as _dt

_PYTHON_DTYPES = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def dtype_arg(fn: str, dtype: Any) -> None:
    """``dtype=`` takes a torch dtype or one of the Python types bool, int, float, complex."""
    if dtype is None or isinstance(dtype, _dt.dtype) or builtins.any(dtype is t for t in _PYTHON_DTYPES):
        return
    raise TypeError(f"{fn}(): argument 'dtype' must be torch.dtype, not {tp_name(dtype)}")


def bool_arg(fn: str, name: str, value: Any, position: int | None = None) -> None:
    """A bool argument (``requires_grad``) takes a bool only: 1 and "yes" are refused."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return
    where = f" (position {position})" if position is not None else ""
    raise TypeError(f"{fn}(): argument '{name}'{where} must be bool, not {tp_name(value)}")


def _is_index(value: Any) -> bool:
    """An int as torch's parser takes one for a size: not a bool, but anything with ``__index__`` (a NumPy int, a
    0-d NumPy int array), and a one-element int tensor."""
    from ._tensor import Tensor

    if isinstance(value, Tensor):
        return value.numel() == 1 and value._data.dtype.kind in "iu"
    return not isinstance(value, builtins.bool) and has_index(value)


def size_arg(fn: str, size: tuple, keyword: bool = False) -> tuple[int, ...]:
    """The ``*size`` of a factory (ints, or one sequence of ints) as a shape, refused as torch refuses it."""
    from ._tensor import Tensor

    items: Any = size
    if len(size) == 1 and not _is_index(size[0]):
        items = size[0]
        if not isinstance(items, (tuple, list)):
            where = "" if keyword else " (position 1)"
            raise TypeError(f"{fn}(): argument 'size'{where} must be tuple of ints, not {tp_name(items)}")
        if items and not _is_index(items[0]):
            raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, but found element of "
                            f"type {tp_name(items[0])} at pos 0")
    shape = []
    for pos, item in enumerate(items):
        # (torch checks the first element's type; it reads the others with ``__index__``, which a bool has)
        if not (_is_index(item) or (pos and item.__class__ is builtins.bool)):
            raise TypeError(f"{fn}(): argument 'size' failed to unpack the object at pos {pos + 1} with error "
                            f"\"type must be tuple of ints,but got {tp_name(item)}\"")
        shape.append(int(item.item()) if isinstance(item, Tensor) else operator.index(item))
    return tuple(shape)


def non_negative_shape(fn: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape with no negative size; torch's zeros words this its own way."""
    for s in shape:
        if s < 0:
            if fn == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def int64_args(*values: Any) -> None:
    """The parser reads an ``int`` argument (randint's bounds, random_'s) as a C++ int64: a Python int beyond it is
    refused before anything runs, whatever dtype the result will have (even uint64)."""
    for value in values:
        if isinstance(value, builtins.int) and not -2**63 <= value < 2**63:
            raise ValueError("Overflow when unpacking long long")
