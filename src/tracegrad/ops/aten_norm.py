"""ATen's CPU vector p-norm (``norm_stub``, which ``linalg.vector_norm``, ``torch.norm`` and ``Tensor.norm`` run)
in NumPy: the same operations in the same order, so float16/32/64 norms carry PyTorch's bits (one thread).

How ATen computes it (``linalg_vector_norm`` in LinearAlgebra.cpp, ``norm_kernel_tensor_iterator_impl`` in
cpu/ReduceOpsKernel.cpp, the ops of SharedReduceOps.h, ``binary_kernel_reduce`` and ``is_reduce_lastdim`` in
cpu/Reduce.h):
- Where every reduced dim has size 1 (a 0-d input too), no reduction: ``|x|``, or ``x != 0`` for p = 0.
- p = 2 over one contiguous run (TensorIterator's dims, sorted and merged as for a sum, hold one reduced dim,
  the fastest, of stride 1) for float and double: per output, 32-byte vectors (8 floats, 4 doubles: the kernel
  is registered for the AVX2 build only) accumulate ``acc += x * x`` lane by lane, product then sum; the lanes
  are added in order; the leftover elements are added one by one (:func:`_norm_two_lastdim`).
- Everything else (p = 0, 1, +-inf and other p; p = 2 elsewhere and for half): ``binary_kernel_reduce``, one
  accumulator per output that the terms are added to one after another, in the iterator's order of the reduced
  dims (fastest first), in the accumulate type (float for half and float, double for double), products and
  sums rounded apart; then sqrt or ``pow(acc, 1 / p)``, ``1 / p`` in the accumulate type.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math

import numpy as np

from .aten_sum import ordered_sum, rows_in_iterator_order
from .aten_vec import cpu_has_fma, fma, vector_lanes

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_SUPPORTED = frozenset((_F16, _F32, _F64))
_FEW_VECTORS = 32  # (up to this many vectors in all, add.reduce over them is as quick as einsum, or quicker)
_LIBM_POW_LIMIT = 1 << 16  # powers up to this many elements go through libm itself, one call each


def supports(dtype: np.dtype) -> bool:
    """Whether :func:`vector_norm_as_aten` reproduces ATen's norm for arrays of ``dtype``."""
    return dtype in _SUPPORTED


def vector_norm_as_aten(a: np.ndarray, ord: float, dims: tuple | None) -> np.ndarray:
    """``torch.linalg.vector_norm(a, ord, dims)`` on the CPU, without the reduced dims, in ``a``'s dtype
    (float16/32/64). ``dims``: non-negative dims, or None for all. The caller has refused the norms that have
    no identity (``ord`` < 0 or inf over an empty dim)."""
    out_shape = () if dims is None else tuple(s for d, s in enumerate(a.shape) if d not in dims)
    if a.size == 1 if dims is None else all(a.shape[d] == 1 for d in dims):
        # (linalg_vector_norm's shortcut where one element is reduced per output: |x|, or x != 0 for ord 0)
        return (np.abs(a) if ord != 0 else (a != 0).astype(a.dtype)).reshape(out_shape)
    if a.size == 0:  # (ATen fills the output: 0, or inf where ord < 0 and nothing is reduced over)
        return np.full(out_shape, np.inf if ord < 0 else 0, a.dtype)
    rows, inner_run = rows_in_iterator_order(a, dims)
    contiguous_run = inner_run == rows.shape[1]  # (ATen's ``is_reduce_lastdim``: one contiguous reduced run)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # (overflow to inf, as there, silently)
        if ord == 2 and contiguous_run and a.dtype != _F16:
            return _norm_two_lastdim(rows).reshape(out_shape)
        acc_dtype = _F64 if a.dtype == _F64 else _F32
        norms = _sequential_norm(rows.astype(acc_dtype, copy=False), ord)
        return norms.astype(a.dtype, copy=False).reshape(out_shape)


def vector_powsum_as_aten(a: np.ndarray, ord: float) -> np.ndarray:
    """``torch._foreach_powsum``'s per-tensor result: the sum of ``|x| ** ord`` over all of ``a`` as the norm kernel
    adds it (its p = 2 lanes over a contiguous run too), without the norm's projection, and without its shortcuts:
    one element is ``|x| ** ord`` and an empty tensor 0, whatever ``ord``."""
    if a.size == 0:
        return np.zeros((), a.dtype)
    rows, inner_run = rows_in_iterator_order(a, None)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if ord == 2 and inner_run == rows.shape[1] and a.dtype != _F16:
            return _sum_of_squares_lastdim(rows).reshape(())
        acc_dtype = _F64 if a.dtype == _F64 else _F32
        rows = rows.astype(acc_dtype, copy=False)
        terms = np.abs(rows) if ord == 1 else rows * rows if ord == 2 else _libm_pow(np.abs(rows), acc_dtype.type(ord))
        return _sum_in_order(terms).astype(a.dtype, copy=False).reshape(())


# ---- the contiguous-run kernel (p = 2) ---------------------------------------------------------------------


def _norm_two_lastdim(rows: np.ndarray) -> np.ndarray:
    """The p = 2 lambda of ``norm_kernel_tensor_iterator_impl`` on each row of ``rows`` (float32/float64)."""
    return np.sqrt(_sum_of_squares_lastdim(rows))


def _sum_of_squares_lastdim(rows: np.ndarray) -> np.ndarray:
    """That lambda's sum of squares, before its square root."""
    n = rows.shape[1]
    lanes = vector_lanes(rows.dtype)
    whole = n - n % lanes
    squares = np.multiply(rows, rows, order="C")
    if whole:
        total = np.add.accumulate(_lane_sums(squares[:, :whole], lanes), axis=1)[:, -1]  # buffer[0] += buffer[j]
    else:
        total = np.zeros(rows.shape[0], rows.dtype)
    if whole < n:
        total = _add_leftover_squares(total, rows[:, whole:], squares[:, whole:])
    return total


def _lane_sums(squares: np.ndarray, lanes: int) -> np.ndarray:
    """``acc_vec += x * x`` over each row's whole vectors: per lane, the vectors' squares added in order."""
    vectors = squares.reshape(squares.shape[0], -1, lanes)
    if vectors.shape[0] * vectors.shape[1] <= _FEW_VECTORS:
        return np.add.reduce(vectors, axis=1)  # (over the middle axis it adds in order; cheaper to call)
    # (einsum's loop runs along the lanes and adds the vectors one after another too; add.reduce pays one loop of
    # ``lanes`` per vector: four to eight times slower from a few dozen vectors on, as a 64x64 norm over its rows)
    return np.einsum("mvl->ml", vectors)


def _add_leftover_squares(total: np.ndarray, leftover: np.ndarray, squares: np.ndarray) -> np.ndarray:
    """``buffer[0] += x * x`` for the leftover elements (fewer than a vector) in turn. The AVX2 build fuses each
    into one FMA, except that for floats GCC first takes groups of four through a 4-wide multiply (a product
    rounded, then the sum): what PyTorch's results show, not its source."""
    count = leftover.shape[1]
    unfused = count if not cpu_has_fma() else count - count % 4 if leftover.dtype == _F32 else 0
    for j in range(unfused):
        total = total + squares[:, j]
    for j in range(unfused, count):
        total = fma(leftover[:, j], leftover[:, j], total)
    return total


# ---- binary_kernel_reduce ----------------------------------------------------------------------------------


def _sequential_norm(rows: np.ndarray, ord: float) -> np.ndarray:
    """NormOps and its special cases over each row (in the accumulate dtype): the terms added in order, then
    the projection."""
    if ord == math.inf or ord == -math.inf:  # (max and min are exact: the order does not matter; NaN wins)
        return (np.max if ord > 0 else np.min)(np.abs(rows), axis=1)
    if ord == 0:  # the count of nonzeros, which a float accumulator stops adding to at 2**24
        count = np.count_nonzero(rows, axis=1)
        return np.minimum(count, 2 ** 24).astype(rows.dtype) if rows.dtype == _F32 else count.astype(rows.dtype)
    if ord == 1:
        return _sum_in_order(np.abs(rows))
    if ord == 2:
        return np.sqrt(_sum_in_order(rows * rows))
    p = rows.dtype.type(ord)
    return _libm_pow(_sum_in_order(_libm_pow(np.abs(rows), p)), rows.dtype.type(1) / p)


def _sum_in_order(terms: np.ndarray) -> np.ndarray:
    """``acc = acc + term`` from zero along each row of ``terms`` (the terms are >= +0 or NaN, so the zero start
    shows in no sign). Summed down the columns of the transpose: there NumPy's innermost loop runs across the
    rows and adds the terms in order, faster than an ``accumulate`` along each row."""
    return ordered_sum(np.ascontiguousarray(terms.T), axis=0)


def _libm_pow(x: np.ndarray, p: np.floating) -> np.ndarray:
    """``std::pow`` as glibc computes it, element by element up to a size (powf through ctypes, pow through
    Python's math.pow: both libm's own); beyond it NumPy's, within an ulp (float32 as a double power rounded
    once, which agrees with glibc's powf for all but about one value in a thousand)."""
    powf = _glibc_powf() if x.dtype == _F32 else None
    if x.size > _LIBM_POW_LIMIT or (x.dtype == _F32 and powf is None):
        if x.dtype == _F32:
            return np.power(x.astype(_F64), float(p)).astype(_F32)
        return np.power(x, p)
    exponent = float(p)
    if powf is not None:
        values = [powf(v, exponent) for v in x.ravel().tolist()]
    else:
        values = [_pow_or_inf(v, exponent) for v in x.ravel().tolist()]
    return np.array(values, x.dtype).reshape(x.shape)


@functools.cache
def _glibc_powf():
    """The C library's powf (PyTorch's ``std::pow`` of floats), or None where it cannot be loaded."""
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        powf = libm.powf
    except (OSError, AttributeError):
        return None
    powf.restype, powf.argtypes = ctypes.c_float, [ctypes.c_float, ctypes.c_float]
    return powf


def _pow_or_inf(base: float, exponent: float) -> float:
    """math.pow, but with C's answers where Python raises: inf for 0 to a negative power and on overflow."""
    try:
        return math.pow(base, exponent)
    except (ValueError, OverflowError):
        return math.inf
