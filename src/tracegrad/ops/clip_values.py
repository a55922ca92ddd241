"""Clamping values as ATen's CPU kernels do.

ATen's clamp kernels come in a scalar and a vector version that agree on every value and NaN (from ``x`` or from
a bound) but not on ties between zeros of opposite signs: the scalar ``std::min(std::max(x, lo), hi)`` keeps the
first operand (``relu(-0.0)`` and ``clamp(-0.0, min=0.0)`` are ``-0.0``), the vector ``maximum``/``minimum`` give
the second, the bound. The Scalar overloads (and ``relu``, ``hardtanh``) tie like the scalar version throughout;
the Tensor overloads split their elements between the two versions as ATen's loop does (``clip_by_tensors``).

With 0-d bounds, NumPy's ``clip`` ufunc does a clamp in one vectorised pass, where ``maximum`` then ``minimum``
takes two (and ``maximum`` with a scalar runs a slower loop): ``relu`` of a (256, 1024) float32 array takes about
21 us instead of 81. How it breaks ties is not documented, so the first use per dtype probes it (NumPy 2.4 keeps
``x``); where it ties otherwise, the zeros of the result are recomputed with the rule. With array bounds ``clip``
runs a scalar loop, and ``maximum``/``minimum`` give the values; where a bound holds a zero, the ties are
decided by bit selection.
"""

from __future__ import annotations

import functools

import numpy as np

from .aten_loops import loop_block, vector_and_scalar
from .select import UNSIGNED_OF_SIZE, select

try:  # (the ufunc itself: np.clip adds a Python wrapper that costs more than the pass on small arrays)
    from numpy._core.umath import clip as _clip_ufunc
except ImportError:  # NumPy 1.x
    from numpy.core.umath import clip as _clip_ufunc


def clip_values(x: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> np.ndarray:
    """``x`` clamped into ``[lo, hi]`` with the ties of ATen's scalar kernel; ``lo``/``hi`` are arrays of ``x``'s dtype
    that broadcast to it, or None for no bound on that side. NaN in ``x`` or in a bound gives NaN; ``lo > hi``
    gives ``hi``."""
    if (lo is not None and lo.ndim) or (hi is not None and hi.ndim):
        return _clip_by_arrays(x, lo, hi)
    result = _clip_ufunc(x, _lowest(x.dtype) if lo is None else lo, _highest(x.dtype) if hi is None else hi)
    if result.__class__ is not np.ndarray:  # (a 0-d input gives a NumPy scalar)
        result = np.asarray(result)
    if x.dtype.kind != "f" or not _has_zero(lo, hi) or _clip_ties_as_scalar_kernel(x.dtype):
        return result
    return _with_zeros_recomputed(result, x, lo, hi, vector=False)


def relu_values(x: np.ndarray) -> np.ndarray:
    """``clip_values(x, 0, None)`` for float ``x``, with less to decide (relu's fast path runs it on every call)."""
    zero, infinity = _RELU_BOUNDS[x.dtype]
    result = _clip_ufunc(x, zero, infinity)
    if result.__class__ is not np.ndarray:  # (a 0-d input gives a NumPy scalar)
        result = np.asarray(result)
    if _clip_ties_as_scalar_kernel(x.dtype):
        return result
    return _with_zeros_recomputed(result, x, zero, None, vector=False)


def clip_by_tensors(x: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> np.ndarray:
    """``clip_values`` for the Tensor overloads (``clamp.Tensor``, ``clamp_min.Tensor``, ``clamp_max.Tensor``): the
    elements that ATen's loop runs through its vector code (``aten_loops``: blocks of two AVX2 vectors from the
    start of each contiguous run) tie toward the bound, the others toward ``x``."""
    if not _ties_matter(x, lo, hi):
        return _extremes(x, lo, hi)
    bounds = tuple(bound for bound in (lo, hi) if bound is not None)

    def formula(values: np.ndarray, *given: np.ndarray, vector: bool) -> np.ndarray:
        return _ties_broken(values, given[0] if lo is not None else None, given[-1] if hi is not None else None,
                            vector)

    with np.errstate(invalid="ignore"):
        return vector_and_scalar(formula, (x,) + bounds, loop_block(x.dtype, also_avx512=False))


def _extremes(x: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> np.ndarray:
    """``minimum(maximum(x, lo), hi)``: the clamp's values and NaNs, ties between zeros aside (with array bounds
    NumPy's vector loops, several times faster than ``clip``'s general loop)."""
    result = x if lo is None else np.maximum(x, lo)
    return np.asarray(result if hi is None else np.minimum(result, hi))


def _clip_by_arrays(x: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> np.ndarray:
    """The clamp with array bounds and the scalar kernel's ties."""
    return _ties_broken(x, lo, hi, vector=False) if _ties_matter(x, lo, hi) else _extremes(x, lo, hi)


def _ties_matter(x: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None) -> bool:
    """Whether a -0.0 can meet a +0.0 in the clamp (float ``x``, a zero in a bound, a -0.0 anywhere)."""
    return x.dtype.kind == "f" and _has_zero(lo, hi) and _negative_zero(x, lo, hi)


def _ties_broken(x: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None, vector: bool) -> np.ndarray:
    """The clamp with array bounds, ties between zeros broken as ATen's vector code (``vector``: the bound) or its
    scalar code (``x``) breaks them, by bit selection (no branch per element)."""
    result = x
    if vector:  # (Vectorized maximum then minimum: NaN from either operand, the second on a tie)
        if lo is not None:
            result = select((result > lo) | np.isnan(result), result, lo)
        if hi is not None:
            result = select((result < hi) | np.isnan(result), result, hi)
        return np.asarray(result)
    # std::min(std::max(x, lo), hi): x on a tie, and NaN wherever a bound is NaN
    if lo is not None:
        result = select(result < lo, lo, result)
    if hi is not None:
        result = select(result > hi, hi, result)
    for bound in (lo, hi):
        if bound is not None and np.isnan(bound).any():
            result = select(np.isnan(np.broadcast_to(bound, np.shape(result))), bound, result)
    return np.asarray(result)


def _with_zeros_recomputed(result: np.ndarray, x: np.ndarray, lo, hi, vector: bool) -> np.ndarray:
    """``result`` (right but for the signs of its zeros) with its zeros recomputed by ATen's rule: the scalar
    kernel's ties keep the first operand, the vector kernel's the second."""
    zeros = np.nonzero(result == 0)
    if not zeros[0].size:
        return result
    shape = result.shape
    value = np.broadcast_to(x, shape)[zeros]
    for bound, upper in ((lo, False), (hi, True)):
        if bound is None:
            continue
        limit = np.broadcast_to(bound, shape)[zeros]
        if vector:  # (maximum(value, lo) / minimum(value, hi): the bound on a tie)
            value = np.where(value < limit if upper else value > limit, value, limit)
        else:  # (std::max(value, lo) / std::min(value, hi): value on a tie)
            value = np.where(value > limit if upper else value < limit, limit, value)
    result[zeros] = value
    return result


@functools.cache
def _clip_ties_as_scalar_kernel(dtype: np.dtype) -> bool:
    """Whether NumPy's ``clip`` with 0-d bounds gives the scalar kernel's bits where zeros tie, in every loop it
    runs for ``dtype``: contiguous and strided input, short and long."""
    x = np.resize(np.array([-0.0, 0.0, 1.0, -1.0, np.nan], dtype), 203)  # (a vector body and a tail)
    pairs = [(0.0, np.inf), (-0.0, np.inf), (-np.inf, 0.0), (-np.inf, -0.0), (-0.0, 0.0), (0.0, -0.0), (1.0, -0.0)]
    for sample in (x, x[::2], x[:3], x[1:4]):
        for lo, hi in pairs:
            lo, hi = np.asarray(lo, dtype), np.asarray(hi, dtype)
            got = np.asarray(_clip_ufunc(sample, lo, hi))
            wanted = _with_zeros_recomputed(got.copy(), sample, lo, hi, vector=False)
            if not np.array_equal(np.signbit(got), np.signbit(wanted)):
                return False
    return True


_RELU_BOUNDS = {np.dtype(t): (np.zeros((), t), np.asarray(np.inf, t)) for t in (np.float16, np.float32, np.float64)}


def _lowest(dtype: np.dtype) -> np.ndarray:
    """The bound that clamps nothing from below."""
    if dtype.kind == "f":
        return np.asarray(-np.inf, dtype)
    if dtype.kind == "b":
        return np.asarray(False)
    return np.asarray(np.iinfo(dtype).min, dtype)


def _highest(dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "f":
        return np.asarray(np.inf, dtype)
    if dtype.kind == "b":
        return np.asarray(True)
    return np.asarray(np.iinfo(dtype).max, dtype)


def _negative_zero(*arrays) -> bool:
    """Whether an array holds -0.0: without one every zero is +0.0, and a tie between zeros gives +0.0 whichever
    operand it takes (a clamp at a zeros tensor, the usual case, needs no tie-breaking then)."""
    for a in arrays:
        if a is not None:
            bits = UNSIGNED_OF_SIZE[a.dtype.itemsize]
            if (a.view(bits) == bits.type(1 << (8 * a.dtype.itemsize - 1))).any():
                return True
    return False


def _has_zero(*bounds) -> bool:
    """Whether a bound holds a zero (only then can a zero tie with it)."""
    # (item() for a 0-d bound: np.all's Python wrapper costs more than relu's pass on a small tensor)
    return any(bound is not None and (bound.item() == 0 if bound.ndim == 0 else not bound.all()) for bound in bounds)
