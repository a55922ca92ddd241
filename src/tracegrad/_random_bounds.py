"""The bounds of ``random_(from, to)`` and ``randint`` as ATen's ``random_from_to_impl`` settles them
(``ATen/native/DistributionTemplates.h``): ``from < to``; on a floating dtype, the bounds moved to values the dtype
holds (``update_from``/``update_to``), refused beyond its largest value and warned about beyond its exact integers;
on an integer or bool dtype, refused beyond its range.
"""

from __future__ import annotations

import numpy as np

from ._torch_rng import FLOAT_DIGITS
from ._warnings import warn_at_caller
from .backend.dtypes import cpp_type_name, is_floating_np

__all__ = ["INT64_MIN", "largest_float", "random_range"]

INT64_MIN = -(2 ** 63)
_RANDOM_BOUNDS_TYPES = "check_random_bounds handles only integral, floating-point and boolean types"


def random_range(dtype: np.dtype, from_: int, to: int | None) -> tuple[int, int]:
    """[low, high] (high inclusive) that ``random_(from_, to)`` draws from on ``dtype`` (NumPy's; ml_dtypes' for
    bfloat16), ``to=None`` meaning the dtype's limit, or torch's refusal."""
    if to is not None and from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    if is_floating_np(dtype):
        return _float_range(dtype, from_, to)
    low, high = from_, _default_high(dtype) if to is None else to - 1
    _check_integral_range(dtype, low, high)
    return low, high


def _default_high(dtype: np.dtype) -> int:
    """The largest value ``random_(from, None)`` draws (inclusive): 2**digits for floats, the max for integers."""
    if dtype.kind == "b":
        return 1
    if is_floating_np(dtype):
        return 2 ** FLOAT_DIGITS[dtype.name]
    if dtype.kind == "c":
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and boolean types")
    return int(np.iinfo(dtype).max)


def _check_integral_range(dtype: np.dtype, low: int, high: int) -> None:
    """``check_from_to_in_range`` of an integer or bool dtype (``high`` inclusive)."""
    if dtype.kind not in "iub":
        raise RuntimeError(_RANDOM_BOUNDS_TYPES)
    lowest, largest = (0, 1) if dtype.kind == "b" else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    name = cpp_type_name(dtype)
    if not lowest <= low <= largest:
        raise RuntimeError(f"from is out of bounds for {name}")
    if not lowest <= high <= largest:
        raise RuntimeError(f"to - 1 is out of bounds for {name}")


def _float_range(dtype: np.dtype, from_: int, to: int | None) -> tuple[int, int]:
    """The floating dtypes' bounds: moved to values the dtype holds, then checked (see the module docstring)."""
    from_ = _update_from(from_, dtype)
    if to is None:
        high = _default_high(dtype)
        if from_ >= high:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
                               f"to dtype, but got from={from_} > to_inc={high}")
    else:
        to = _update_to(to, dtype)
        if from_ >= to:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but "
                               f"got from={from_} >= to={to}")
        high = to - 1
    _check_float_range(dtype, from_, high)
    return from_, high


def _cast_and_back(value: int, dtype: np.dtype) -> int:
    """``static_cast<int64_t>(static_cast<scalar_t>(value))``: half precision converts through float, as c10 does;
    a value beyond int64 (an inf) reads as x86's int64 minimum."""
    wrapped = (value - INT64_MIN) % 2 ** 64 + INT64_MIN  # (C's int64 sum wraps)
    as_float = np.array(wrapped, dtype=np.int64).astype(np.float64 if dtype.name == "float64" else np.float32)
    if dtype.itemsize == 2:
        as_float = as_float.astype(dtype).astype(np.float32)
    back = float(as_float)
    return int(back) if -(2.0 ** 63) <= back < 2.0 ** 63 else INT64_MIN


def _highest_bit(value: int) -> int:
    """The position of ``value``'s highest set bit (0 for 0 and 1)."""
    return max(value.bit_length() - 1, 0)


def _update_from(from_: int, dtype: np.dtype) -> int:
    """ATen's ``update_from``: move ``from`` right where the dtype rounds ``from + 1`` below it."""
    from_plus_1 = _cast_and_back(from_ + 1, dtype)
    if from_plus_1 < from_:
        return from_plus_1 + (1 << (_highest_bit(abs(from_ + 1)) - FLOAT_DIGITS[dtype.name] + 1))
    return from_


def _update_to(to: int, dtype: np.dtype) -> int:
    """ATen's ``update_to``: move ``to`` left where the dtype rounds ``to - 1`` up to it or beyond."""
    to_minus_1 = _cast_and_back(to - 1, dtype)
    if to_minus_1 >= to:
        return to_minus_1 - (1 << (_highest_bit(abs(to - 1)) - FLOAT_DIGITS[dtype.name] + 1))
    return to


def _check_float_range(dtype: np.dtype, low: int, high: int) -> None:
    """``check_from_to_in_range`` of a floating dtype: refused beyond its largest value, warned beyond 2**digits."""
    largest, digits, name = largest_float(dtype), FLOAT_DIGITS[dtype.name], cpp_type_name(dtype)
    bounds = (("from", low), ("to - 1", high))
    for what, value in bounds:
        if not -largest <= value <= largest:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    for what, value in bounds:
        if abs(value) > 1 << digits:
            warn_at_caller(f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                           f"{name} can support discrete uniform distribution only within this range. This warning "
                           "will become an error in version 1.7 release, please fix the code in advance", UserWarning)


_BFLOAT16_MAX = (2 - 2.0 ** -7) * 2.0 ** 127  # (NumPy's finfo does not know ml_dtypes' bfloat16)


def largest_float(dtype: np.dtype) -> float:
    """``std::numeric_limits<scalar_t>::max()`` of a floating dtype (NumPy's; ml_dtypes' for bfloat16)."""
    return _BFLOAT16_MAX if dtype.name == "bfloat16" else float(np.finfo(dtype).max)
