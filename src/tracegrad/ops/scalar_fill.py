"""A Python number converted to a tensor's dtype as PyTorch's ``Scalar::to<T>()`` converts it (``full``,
``full_like``, ``new_full``, ``fill_``): c10's ``checked_convert`` refuses a value the dtype cannot hold
("value cannot be converted to type float without overflow") where NumPy would wrap, saturate, drop an
imaginary part or give NaN silently.

c10's ``overflows`` rules: a complex value with an imaginary part does not fit a real dtype; a float fits an
integer dtype if it is finite and within its range (then truncated toward zero); an integer fits an unsigned
dtype down to minus its maximum (two's complement wraps it, as ``uint8`` takes -1 as 255); a finite float
beyond a float dtype's range does not fit (infinities and NaN do); bool takes any number's truth. A one-element
half tensor is filled without the check (PyTorch's single-element fill converts unchecked: inf).
"""

from __future__ import annotations

import math

import numpy as np

from ..backend.dtypes import c10_type_name, through_float_for_half
from ._util import BEYOND_LARGEST_INT, SMALLEST_INT, int_overflow, opmath_dtype
from .bfloat16_bit_moves import bfloat16_scalar
from .bfloat16_in_float import as_seen


def scalar_for(value, np_dtype: np.dtype, elements: int = 2):
    """``value`` (a bool, int, float or complex) as a NumPy scalar of ``np_dtype``, for a tensor of ``elements``
    elements, refused as PyTorch refuses it when the dtype cannot hold it."""
    np_dtype = np.dtype(np_dtype)
    kind = np_dtype.kind
    if value.__class__ is int and not SMALLEST_INT <= value < BEYOND_LARGEST_INT:
        raise int_overflow(value)  # (torch's parser refuses it before any conversion)
    if kind == "b":
        return np.bool_(bool(value))
    if isinstance(value, complex) and kind != "c":
        if value.imag != 0:
            raise overflow(np_dtype)
        value = value.real
    if kind in "iu":
        return np_dtype.type(_integer(value, np_dtype))
    if kind == "f" and (np_dtype.itemsize > 2 or elements != 1):
        if _beyond(value, np_dtype):
            raise overflow(np_dtype)
        # (within the range: nothing to warn of, so no errstate to enter, ~1 us)
        return np_dtype.type(value) if np_dtype is not _FLOAT16 else _half(value)
    if kind == "c" and any(_beyond(part, np_dtype) for part in (complex(value).real, complex(value).imag)):
        raise overflow(np_dtype)
    if kind == "V":  # (bfloat16: c10's conversion, any NaN as 0x7fc0; a single element unchecked, as half)
        return bfloat16_scalar(value, checked=elements != 1)
    with np.errstate(over="ignore"):  # (a single half element: inf, unchecked)
        return np_dtype.type(value) if np_dtype is not _FLOAT16 else _half(value)


_FLOAT16 = np.dtype(np.float16)


def _half(value) -> np.float16:
    """A Python number as c10::Half takes it: made a float first (c10::Half is built from a float), so a double
    just beyond a midpoint between two halves lands on it and ties to even, where NumPy's one rounding goes up."""
    return np.float16(np.float32(value))


def as_scalar(value):
    """A 0-d tensor's array as the Python number ``value.item()`` gives (what a kernel taking ``Tensor value``
    hands to its Scalar overload); a number as it is."""
    return value.item() if isinstance(value, np.ndarray) else value


def written_value(value, np_dtype: np.dtype, elements: int = 2):
    """What a fill writes into an array of ``np_dtype``: an array (a 0-d tensor's) as it is (float64 bound for
    float16 through float32, as a cast), a number through ``scalar_for``."""
    if isinstance(value, np.ndarray):
        return through_float_for_half(value, np_dtype)
    return scalar_for(value, np_dtype, elements)


def _integer(value, np_dtype: np.dtype) -> int:
    info = np.iinfo(np_dtype)
    if isinstance(value, float):
        # (c10 compares in double, where int64's largest is 2**63: that double passes, and x86's conversion
        # gives int64's smallest for it)
        if not math.isfinite(value) or value < float(info.min) or value > float(info.max):
            raise overflow(np_dtype)
        whole = int(value)  # (truncated toward zero, as C's cast)
        return whole if whole <= info.max else int(info.min)
    whole = int(value)
    if np_dtype.kind == "u" and whole < 0 and -whole <= info.max:
        return whole % (info.max + 1)  # (two's complement: -1 is 255 in uint8)
    if whole < info.min or whole > info.max:
        raise overflow(np_dtype)
    return whole


def _beyond(value, np_dtype: np.dtype) -> bool:
    """A finite number beyond the float type's range (of the real part's type, for a complex dtype)."""
    part = float(value)
    limit = _FLOAT_MAX.get(np_dtype)
    if limit is None:
        limit = _FLOAT_MAX[np_dtype] = float(np.finfo(np_dtype).max)
    return math.isfinite(part) and abs(part) > limit


_FLOAT_MAX: dict = {}  # (np.finfo's max per dtype, as a float: finfo's own cache costs a call and a lookup)


def overflow(np_dtype: np.dtype) -> RuntimeError:
    error = RuntimeError(f"value cannot be converted to type {c10_type_name(np_dtype)} without "
                         "overflow")
    # (ATen converts a Scalar inside its kernel's dtype dispatch: a dispatch that refuses the dtype comes first,
    # see barebones_unsigned._refusal)
    error.raised_after_dispatch = True
    return error


def check_scalar_parameter(value, np_dtype: np.dtype, opmath: bool = False) -> None:
    """A float or complex Scalar argument (``alpha``, a clamp bound, ``where``'s number...) that the kernel
    converts to ``np_dtype`` (to float, for half precision, where ``opmath``: the kernels computing in float),
    refused as PyTorch's ``Scalar::to`` refuses it. A kernel running on float32 copies of bfloat16 operands converts
    to bfloat16 (3.4e38 is beyond it). A Python int can only overflow half among the floating types (70000); one
    converted to an integer type is ``integral_scalar``'s to read."""
    cls = value.__class__
    if cls is float or cls is complex:
        scalar_for(value, opmath_dtype(np_dtype) if opmath else as_seen(np_dtype))
    elif cls is int and not opmath and np_dtype.char == "e":
        scalar_for(value, np_dtype)


def integral_scalar(value, np_dtype: np.dtype):
    """A Scalar argument as an integer kernel reads it (``Scalar::to<scalar_t>()``): a Python int converted to
    the integer ``np_dtype`` with c10's check (300 into int8 is refused; -1 into uint8 is 255, two's
    complement), anything else, or any value for another dtype, as it is. The argument parser only checks that
    an int fits 64 bits, so the kernels that convert their number must refuse the rest."""
    if value.__class__ is int and np_dtype.kind in "iu":
        return np_dtype.type(_integer(value, np_dtype))
    return value
