"""PyTorch's memory-overlap checks for operators that write into a tensor (ATen's MemOverlap).

An in-place or ``out=`` operator whose written-to tensor shares memory with one of its inputs gives
results that depend on the order elements are written in. PyTorch refuses the cases it can recognise:
TensorIterator operators (the pointwise ones) refuse *partial* overlap (``a[:4].add_(a[2:])``) and allow
the full one (``a.add_(a)``); indexing and joining operators (``index_add_``, ``scatter_``, ``cat(out=)``)
refuse any overlap; linear algebra, reductions and ``masked_scatter_`` do not check. NumPy would compute
something for all of them (it buffers overlapping operands), so without these checks a program PyTorch
rejects would run here and produce numbers PyTorch never gives.
"""

from __future__ import annotations

import enum

import numpy as np

from .._strides import data_address

OVERLAP_MESSAGE = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                   "single memory location. Please clone() the tensor before performing the operation.")


class Overlap(enum.Enum):
    NO = 0
    FULL = 1  # the same elements, laid out the same way
    PARTIAL = 2
    TOO_HARD = 3  # one of them is not dense: PyTorch does not try


class Check(enum.Enum):
    """What an operator refuses, as the ATen kernel behind it does."""

    NONE = 0
    PARTIAL = 1  # TensorIterator: assert_no_partial_overlap
    ANY = 2  # assert_no_overlap


def _dense_span(a: np.ndarray) -> tuple[int, int] | None:
    """The byte range a non-overlapping, dense array covers; None for any other layout."""
    expected = a.itemsize
    for stride, size in sorted((s, n) for s, n in zip(a.strides, a.shape) if n != 1):
        if stride != expected:
            return None
        expected *= size
    begin = data_address(a)
    return begin, begin + a.size * a.itemsize


def overlap_status(a: np.ndarray, b: np.ndarray) -> Overlap:
    """ATen's get_overlap_status for two arrays."""
    if a is b:
        return Overlap.FULL
    if a.size == 0 or b.size == 0 or not np.may_share_memory(a, b):
        return Overlap.NO
    span_a, span_b = _dense_span(a), _dense_span(b)
    if span_a is None or span_b is None:
        return Overlap.TOO_HARD
    if span_a == span_b:
        return Overlap.FULL if a.strides == b.strides else Overlap.PARTIAL
    if span_a[0] < span_b[1] and span_b[0] < span_a[1]:
        return Overlap.PARTIAL
    return Overlap.NO


def check_overlap(check: Check, written: np.ndarray, inputs) -> None:
    """Raise PyTorch's error if ``written`` overlaps one of ``inputs`` (arrays, or lists of arrays) in a way
    ``check`` refuses."""
    if check is Check.NONE:
        return
    refused = (Overlap.PARTIAL,) if check is Check.PARTIAL else (Overlap.PARTIAL, Overlap.FULL)
    for value in inputs:
        for array in (value if isinstance(value, (list, tuple)) else (value,)):
            if isinstance(array, np.ndarray) and overlap_status(written, array) in refused:
                raise RuntimeError(OVERLAP_MESSAGE)


# Operators (schema names without the trailing underscore) whose ATen kernels refuse any overlap between the
# written-to tensor and an input, and those that do not check at all. Every other in-place operator is a
# TensorIterator one (partial overlap refused); for ``out=`` the default is no check, see OUT_PARTIAL.
ANY_OVERLAP_REFUSED = frozenset({
    "index_add", "index_copy", "index_fill", "index_put", "index_reduce", "scatter", "scatter_add",
    "scatter_reduce", "gather", "index_select", "cat", "stack", "_index_put_impl",
})
# (``put_`` refuses any overlap too, but after its own argument checks: its kernel checks, see extra_math)
NOT_CHECKED = frozenset({
    "put", "addmm", "addmv", "addr", "baddbmm", "addbmm", "masked_scatter", "masked_fill", "fill", "bernoulli",
    "rrelu_with_noise", "mm", "bmm", "matmul", "mv", "dot",
})
# ``out=`` operators that run on TensorIterator beyond the pointwise classes: partial overlap refused.
OUT_PARTIAL = frozenset({
    "clamp", "clamp_min", "clamp_max", "where", "lerp", "addcmul", "addcdiv", "pow", "cumsum", "cumprod",
    "xlogy", "copysign", "hypot", "atan2", "fmod", "remainder", "nextafter", "ldexp", "logaddexp", "logaddexp2",
    "float_power", "heaviside", "gcd", "lcm", "igamma", "igammac", "polygamma", "sgn", "sign", "signbit",
    "nan_to_num", "round", "logit", "frexp", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "bitwise_left_shift", "bitwise_right_shift", "logical_and", "logical_or", "logical_xor", "logical_not",
    "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum", "fmax", "fmin", "div", "mul", "add", "sub",
    "true_divide", "floor_divide", "rsub", "special_xlog1py", "special_zeta", "xlog1py", "zeta",
})


# In-place operators whose ATen kernels check their arguments (the index's dims and dtype, the dim) before they
# assert no overlap: a bad index that is the written-to tensor itself is refused for what it is.
ARGUMENTS_CHECKED_FIRST = frozenset({"index_add", "index_fill", "index_reduce", "scatter", "scatter_add",
                                     "scatter_reduce"})


def inplace_check(name: str) -> Check:
    """The check of the in-place operator ``name`` (its schema name, with or without the underscore)."""
    base = name.rstrip("_")
    if base in ANY_OVERLAP_REFUSED:
        return Check.ANY
    if base in NOT_CHECKED:
        return Check.NONE
    return Check.PARTIAL


def out_check(name: str, pointwise: bool) -> Check:
    """The check of ``name(..., out=...)``; ``pointwise``: a unary or binary pointwise operator."""
    if name in ANY_OVERLAP_REFUSED:
        return Check.ANY
    if name in NOT_CHECKED:  # (mm shares the binary operators' fast path)
        return Check.NONE
    if pointwise or name in OUT_PARTIAL:
        return Check.PARTIAL
    return Check.NONE
