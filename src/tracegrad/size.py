"""``torch.Size``: a tuple subclass printed like PyTorch's."""

from __future__ import annotations

import math
import operator

import numpy as np


def _type_name(value) -> str:
    """The type as CPython's tp_name words it: extension types (NumPy's scalars) carry their module."""
    cls = type(value)
    return f"numpy.{cls.__name__}" if cls.__module__ == "numpy" else cls.__name__


def _size_item(value, position: int) -> int:
    """One dimension as torch.Size reads it: an int, anything with ``__index__``, or a one-element integer
    (or bool) tensor; anything else is refused in torch's words."""
    from ._tensor import Tensor

    if isinstance(value, Tensor):
        if value._data.size == 1 and value._data.dtype.kind in "biu":
            return int(value._data.reshape(()))
    else:
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"torch.Size() takes an iterable of 'int' (item {position} is '{_type_name(value)}')")


_tuple_new, _tuple_add = tuple.__new__, tuple.__add__


def _non_int(value) -> TypeError:
    """CPython's refusal of a sequence repeated by something other than an integer, naming it as torch's tp_name."""
    name = "torch.Size" if isinstance(value, Size) else _type_name(value)
    return TypeError(f"can't multiply sequence by non-int of type '{name}'")


class Size(tuple):
    __module__ = "tracegrad"  # (torch's C type prints as <class 'torch.Size'>)

    def __init_subclass__(cls, **kwargs) -> None:
        raise TypeError("type 'torch.Size' is not an acceptable base type")  # (torch's is a final C type)

    def __new__(cls, sizes=()):
        out = tuple.__new__(cls, sizes)
        for value in out:
            if value.__class__ is not int:  # (rare: shapes built here hold ints; only the others are read)
                return tuple.__new__(cls, [_size_item(v, i) for i, v in enumerate(out)])
        return out

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, item):
        out = super().__getitem__(item)
        return tuple.__new__(Size, out) if isinstance(item, slice) else out

    def __add__(self, other):
        if not isinstance(other, tuple):
            if isinstance(other, (np.ndarray, np.generic)):  # (NumPy's reflected operator adds elementwise)
                return NotImplemented
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to torch.Size")
        for value in other:  # (only the other's items can be other than ints)
            if value.__class__ is not int:
                return Size(_tuple_add(self, other))  # (checked there: the item named at its place in the sum)
        return _tuple_new(Size, _tuple_add(self, other))

    def __radd__(self, other):  # (a tuple before a Size: a Size too, as torch's)
        if not isinstance(other, tuple):
            return NotImplemented
        for value in other:
            if value.__class__ is not int:
                return Size(_tuple_add(other, self))
        return _tuple_new(Size, _tuple_add(other, self))

    def __mul__(self, times):
        if not hasattr(times, "__index__"):
            raise _non_int(times)
        return tuple.__new__(Size, tuple(self) * times)

    def __rmul__(self, times):
        if not hasattr(times, "__index__"):
            # (CPython repeats the left operand where it is a sequence: this Size is then the non-int)
            raise _non_int(self if isinstance(times, (tuple, list, str, bytes, bytearray)) else times)
        return tuple.__new__(Size, tuple(self) * times)

    def __reduce__(self):
        return Size, (tuple(self),)
