"""float32 and float64 softmax and log_softmax, forward and backward, as PyTorch's CPU kernels compute them on
``get_num_threads()`` threads.

aten/src/ATen/native/cpu/SoftMaxKernel.cpp and LogSoftmaxKernelImpl.h take one of two routes:

* the softmax dim is the last one: per row, the max (``vec::reduce_all``), Sleef's exp of ``x - max`` summed
  across vector lanes (``vec::map_reduce_all`` / ``reduce_all``), then Sleef's log of the sum (log_softmax:
  ``x - max - log(sum)``) or its reciprocal (softmax: ``exp * (1 / sum)``).
* any other dim: the input is seen as (outer, dim, inner) and each inner column is reduced along the dim one
  element after another. Columns that fill a whole vector use Sleef's exp, the leftover columns of each block
  glibc's ``expf``; softmax divides by the sum.

All of them are registered for the AVX-512 build as well (``ALSO_REGISTER_AVX512_DISPATCH``): 16 lanes there, 8
under AVX2 (``ATEN_CPU_CAPABILITY`` lowers it, as it lowers PyTorch's choice).

Backward: log_softmax ``grad - exp(output) * sum(grad)``, softmax ``output * (grad - sum(grad * output))``, with the
same lane and column structure.

Threads: every kernel hands at::parallel_for a grain of 0. Most split whole rows or whole blocks of columns, which
any thread computes alike; softmax along another dim splits its outer * inner columns, and a thread's range ends
a run of vector columns (``_softmax_vector_columns``). And where the work goes to the thread pool at all (more than
one thread and one unit), the compiler's second copy of the kernel's body can round apart from the serial one:
float's softmax backward along the last dim rounds its leftover products before it adds them.

float64 runs the same kernels with half as many lanes (8 under AVX-512, 4 under AVX2): Sleef's double exp and log
(sleef_double), glibc's ``exp`` in the scalar columns, the lanes folded one after another. Checked against torch
2.13 bit for bit (tests/nn/test_softmax_float64_bits_vs_torch.py).
"""

from __future__ import annotations

import math

import numpy as np

from ..._runtime import get_num_threads
from ..._torch_rng_libm import libm
from ..aten_loops import scalar_mask
from ..aten_vec import (
    aten_float_lanes,
    block_rows,
    fma,
    fold_in_order,
    map_reduce_sum,
    product_error,
    row_blocks,
    row_maxima,
)
from ..bfloat16_in_float import rounded_in_float
from .glibc_float_math import exp_float
from .sleef_double import sleef_exp, sleef_log
from .sleef_float import sleef_expf, sleef_logf

_F32 = np.float32
_ONE = _F32(1)
_AVX2_LANES = 8  # (the fold's last three steps; wider vectors first add their halves)
_BLOCK_BYTES = 128 * 1024  # the non-last-dim kernels' block: columns per chunk = this / (dim size * itemsize)
_F64 = np.dtype(np.float64)


def exact_dtype(a: np.ndarray) -> bool:
    """Whether the emulation applies: float32 or float64 on an x86 build with AVX2."""
    return a.dtype in (np.float32, np.float64) and aten_float_lanes() >= _AVX2_LANES


def exact_half(a: np.ndarray) -> bool:
    """Whether a float16 kernel is emulated (on an x86 build with AVX2)."""
    return a.dtype == np.float16 and aten_float_lanes() >= _AVX2_LANES


def _lanes(dtype) -> int:
    """Lanes of ``Vectorized<T>``: a double takes two float lanes."""
    return aten_float_lanes() // (2 if dtype == _F64 else 1)


def _vector_exp(z: np.ndarray) -> np.ndarray:
    """``Vectorized<T>::exp``: Sleef's expf16/expf8 or expd8/expd4."""
    return sleef_exp(z) if z.dtype == _F64 else sleef_expf(z)


def _vector_log(z: np.ndarray) -> np.ndarray:
    """``Vectorized<T>::log``: Sleef's logf or logd (u10)."""
    return sleef_log(z) if z.dtype == _F64 else sleef_logf(z)


def _scalar_exp(z: np.ndarray) -> np.ndarray:
    """``std::exp`` of the scalar columns: glibc's expf or exp."""
    return libm(math.exp, z) if z.dtype == _F64 else exp_float(z)


# ---- vector columns -----------------------------------------------------------------------------------------


def _in_thread_pool(units: int) -> bool:
    """Whether at::parallel_for (grain 0) hands ``units`` to the thread pool rather than calling the kernel's body
    itself: with more than one unit and more than one thread."""
    return units > 1 and get_num_threads() > 1


def _softmax_vector_columns(outer: int, inner: int, step: int) -> np.ndarray | slice:
    """Which inner columns ``_vec_softmax`` runs as vectors of ``step`` columns. Its threads share the outer * inner
    columns, a range each, and a vector starts where the last one ended but crosses neither the end of an inner
    row nor that of a range. In one range: all but each row's last ``inner % step``, a slice; else an (outer,
    inner) mask."""
    if not _in_thread_pool(outer * inner):
        return slice(0, inner - inner % step)
    scalar = scalar_mask(outer * inner, inner, step, 1)  # (a grain of 1 cuts the ranges as ATen's 0 does)
    return slice(0, inner) if scalar is None else ~scalar.reshape(outer, inner)


def _vector_columns(inner: int, dim_size: int, lanes: int, itemsize: int = 4) -> np.ndarray | slice:
    """Which inner columns a non-last-dim kernel runs vectorised: per block of columns, all but the block's
    ``size % lanes`` last ones. A slice when that is one leading run (the common case), else a mask."""
    chunk = max(_BLOCK_BYTES // dim_size // itemsize, lanes) // lanes * lanes
    if inner <= chunk:
        return slice(0, inner - inner % lanes)
    column = np.arange(inner)
    start = column - column % chunk
    size = np.minimum(chunk, inner - start)
    return column - start < size - size % lanes


def _exp_by_column(z: np.ndarray, vector) -> np.ndarray:
    """exp of a (outer, dim, inner) array: Sleef's in the vectorised columns, glibc's in the others."""
    if isinstance(vector, slice) and vector.stop == z.shape[2]:
        return _vector_exp(z)
    if not isinstance(vector, slice) and vector.ndim == 2:  # (a mask per outer row)
        return _exp_by_element(z, np.broadcast_to(vector[:, None, :], z.shape))
    if z.dtype == _F64:  # (glibc's exp one element at a time: only on the scalar columns)
        out = np.empty_like(z)
        scalar = ~_column_mask(vector, z.shape[2])
        out[:, :, scalar] = _scalar_exp(z[:, :, scalar])
    else:
        out = exp_float(z)
    if isinstance(vector, slice):
        if vector.stop:
            out[:, :, vector] = _vector_exp(np.ascontiguousarray(z[:, :, vector]))
    else:
        out[:, :, vector] = _vector_exp(z[:, :, vector])
    return out


def _exp_by_element(z: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """exp of ``z``: Sleef's where the mask ``vector`` (of z's shape) is set, the scalar one elsewhere."""
    out = np.empty_like(z)
    scalar = ~vector
    out[scalar] = _scalar_exp(z[scalar])
    out[vector] = _vector_exp(z[vector])
    return out


def _column_mask(vector, inner: int) -> np.ndarray:
    """``_vector_columns``' answer as a boolean mask."""
    if not isinstance(vector, slice):
        return vector
    mask = np.zeros(inner, bool)
    mask[vector] = True
    return mask


def _sum_along_dim(values: np.ndarray) -> np.ndarray:
    """The running sum down the dim of a (outer, dim, inner) array, element after element. NumPy's reduction
    keeps that order while the inner columns are its inner loop; with a single column the dim itself would
    become that loop, summed pairwise, so that case accumulates."""
    if values.shape[2] == 1:
        return np.add.accumulate(values, axis=1)[:, -1:]
    return np.add.reduce(values, axis=1, keepdims=True)


def _split(a: np.ndarray, dim: int) -> np.ndarray:
    """The input made contiguous (as ATen does) and viewed as (outer, dim, inner)."""
    shape = a.shape
    outer = int(np.prod(shape[:dim], dtype=np.int64))
    return np.ascontiguousarray(a).reshape(outer, shape[dim], -1)


# ---- forward ---------------------------------------------------------------------------------------------


def softmax_forward(a: np.ndarray, dim: int, log: bool) -> np.ndarray:
    """softmax (or log_softmax) of float32 or float64 ``a`` along ``dim`` (non-negative, size > 0), PyTorch's
    bits."""
    if dim == a.ndim - 1:
        return _lastdim_forward(_as_rows(a), log).reshape(a.shape)
    return _inner_forward(_split(a, dim), log).reshape(a.shape)


def reduced_log_softmax(x: np.ndarray, dim: int, storage: np.dtype) -> np.ndarray:
    """log_softmax along ``dim`` of ``x``, the float32 copy of a ``storage`` (bfloat16 or float16) tensor, as
    PyTorch's reduced-precision kernels compute it; the result as float32 holding ``storage`` values."""
    if dim == x.ndim - 1:
        return _reduced_lastdim_log_forward(_as_rows(x), storage).reshape(x.shape)
    # (LogSoftmaxKernelImpl.h's reduced-float range: the float kernel's steps on a float32 buffer, with vectors and
    # blocks counted in two-byte elements, and one rounding at the end)
    return rounded_in_float(_inner_forward(_split(x, dim), True, storage), storage).reshape(x.shape)


def reduced_softmax(x: np.ndarray, dim: int, storage: np.dtype) -> np.ndarray:
    """softmax along ``dim`` of ``x``, the float32 copy of a ``storage`` (bfloat16 or float16) tensor, as PyTorch's
    reduced-precision kernels compute it (in float, rounded to ``storage`` once at the end); the result as float32
    holding ``storage`` values."""
    if dim == x.ndim - 1:
        return rounded_in_float(_reduced_lastdim_forward(_as_rows(x)), storage).reshape(x.shape)
    return _reduced_inner_forward(_split(x, dim), storage).reshape(x.shape)


def _reduced_lastdim_forward(x: np.ndarray) -> np.ndarray:
    """SoftMaxKernel.cpp's reduced-type ``_vec_softmax_lastdim`` on float rows: the exponentials of whole float
    vectors (Sleef's) sum lane by lane and fold; those of the leftover elements (glibc's ``expf``) then add one after
    another. Each exponential is multiplied by ``1 / sum``."""
    lanes = aten_float_lanes()
    length = x.shape[1]
    whole = length - length % lanes
    z = x - row_maxima(x)
    if whole == length:
        e = sleef_expf(z)
    else:
        e = exp_float(z)
        if whole:
            e[:, :whole] = sleef_expf(np.ascontiguousarray(z[:, :whole]))
    total = map_reduce_sum([e[:, :whole]], lanes=lanes) if whole else np.zeros(x.shape[0], _F32)
    for column in range(whole, length):
        total += e[:, column]
    e *= np.divide(_ONE, total)[:, None]
    return e


def _reduced_inner_forward(x: np.ndarray, storage: np.dtype) -> np.ndarray:
    """The reduced-type ``_vec_softmax`` on a (outer, dim, inner) float array: vectors of two-byte elements (twice the
    float lanes); the scalar columns store each exponential in the tensor's type before they divide it by the float
    sum (which took it unrounded)."""
    outer, inner = x.shape[0], x.shape[2]
    vector = _softmax_vector_columns(outer, inner, 2 * aten_float_lanes())
    e = _exp_by_column(x - np.maximum.reduce(x, axis=1, keepdims=True), vector)
    total = _sum_along_dim(e)
    if isinstance(vector, slice):
        if vector.stop < inner:
            e[:, :, vector.stop:] = rounded_in_float(e[:, :, vector.stop:], storage)
    else:
        scalar = np.broadcast_to(~vector[:, None, :], e.shape)
        e[scalar] = rounded_in_float(e[scalar], storage)
    e /= total
    return rounded_in_float(e, storage)


def reduced_softmax_backward(grad: np.ndarray, out: np.ndarray, dim: int, storage: np.dtype) -> np.ndarray:
    """The gradient of softmax from float32 copies of ``storage`` (bfloat16 or float16) tensors, as PyTorch's
    reduced-type kernels compute it: ``(grad - sum(grad * out)) * out`` in float, rounded once. Along the last dim the
    sum is functional_bfloat16.h's ``map2_reduce_all``; along another the float kernel's running sum."""
    if dim == out.ndim - 1:
        g, y = _as_rows(grad), _as_rows(out)
        result = (g - _reduced_row_sums(g, y)[:, None]) * y
    else:
        result = _inner_backward(_split(grad, dim), _split(out, dim), log=False)
    return rounded_in_float(result, storage).reshape(out.shape)


def reduced_log_softmax_backward(grad: np.ndarray, out: np.ndarray, dim: int, storage: np.dtype) -> np.ndarray:
    """The gradient of log_softmax from float32 copies of ``storage`` (bfloat16 or float16) tensors, as PyTorch's
    reduced-type kernels compute it: ``grad - exp(out) * sum(grad)`` in float (Sleef's exp, the product and the
    difference fused), rounded once; the sum stays a float. Along the last dim the sum is functional_bfloat16.h's
    ``map_reduce_all`` and every element takes the vector path (``vec::map2`` loads the tail as a partial vector);
    along another the float kernel's running sum, with vectors of two-byte elements."""
    if dim == out.ndim - 1:
        g, y = _as_rows(grad), _as_rows(out)
        result = _minus_exp_times(g, _reduced_row_sums(g)[:, None], sleef_expf(y))
    else:
        result = _inner_backward(_split(grad, dim), _split(out, dim), log=True, storage=storage)
    return rounded_in_float(result, storage).reshape(out.shape)


def _reduced_lastdim_log_forward(x: np.ndarray, storage: np.dtype) -> np.ndarray:
    """serial_vec_log_softmax_lastdim_range on a reduced type: its per-row buffers are of the tensor's type, so the
    sum of exponentials is rounded to it, its log rounded again, and each ``x - max - log`` rounded once."""
    z = x - row_maxima(x)
    total = rounded_in_float(_reduced_row_sums(_vector_exp(z)), storage)
    log_total = rounded_in_float(_vector_log(total), storage)
    z -= log_total[:, None]
    return rounded_in_float(z, storage)


def _reduced_row_sums(*factors: np.ndarray) -> np.ndarray:
    """functional_bfloat16.h's ``map_reduce_all(+)`` (one factor) or ``map2_reduce_all(*, +)`` (two) of each row:
    two float vectors per reduced vector. A row of at least one reduced vector accumulates as one double-width
    vector whose halves then add; a shorter one adds its second float vector into the first's leading lanes, then
    sums those lanes in order."""
    lanes = 2 * aten_float_lanes()
    length = factors[0].shape[1]
    if length >= lanes:  # (a product of two reduced values is exact in float: fused or not, the same sum)
        return map_reduce_sum(list(factors), fused_tail=False, lanes=lanes)
    terms = factors[0] if len(factors) == 1 else np.multiply(*factors)
    half = lanes // 2
    if length <= half:
        return fold_in_order(terms)
    acc = terms[:, :half].copy()
    acc[:, : length - half] += terms[:, half:]
    return fold_in_order(acc)


def _as_rows(a: np.ndarray) -> np.ndarray:
    """``a`` made contiguous (as ATen does) and viewed as rows of its last dim; a C-contiguous matrix as it is (the
    kernels only read it: a view of it would compute the same)."""
    if a.ndim == 2 and a.flags.c_contiguous:
        return a
    return np.ascontiguousarray(a).reshape(-1, a.shape[-1])


def _lastdim_forward(x: np.ndarray, log: bool) -> np.ndarray:
    lanes = _lanes(x.dtype)
    z = x - row_maxima(x)
    e = _vector_exp(z)
    total = map_reduce_sum([e], lanes=lanes)
    if log:
        # (vec::map over the sums: Sleef's log in every lane, the partial last vector included)
        z -= _vector_log(total)[:, None]
        return z
    e *= np.divide(x.dtype.type(1), total)[:, None]
    return e


def _inner_forward(x: np.ndarray, log: bool, storage: np.dtype | None = None) -> np.ndarray:
    """``storage``: the tensor's dtype where ``x`` is its float32 copy (Half: its vectors hold twice the lanes
    and its blocks count two-byte elements)."""
    dim_size, inner = x.shape[1], x.shape[2]
    lanes = _lanes(x.dtype) * (2 if storage is not None else 1)
    z = x - np.maximum.reduce(x, axis=1, keepdims=True)
    if log:
        vector = _vector_columns(inner, dim_size, lanes, (storage or x.dtype).itemsize)
        total = _sum_along_dim(_exp_by_column(z, vector))
        z -= _vector_log(total)
        return z
    e = _exp_by_column(z, _softmax_vector_columns(x.shape[0], inner, lanes))
    e /= _sum_along_dim(e)
    return e


# ---- backward --------------------------------------------------------------------------------------------


def softmax_backward(grad: np.ndarray, out: np.ndarray, dim: int, log: bool) -> np.ndarray:
    """The gradient of softmax (or log_softmax) from its float32 or float64 output, PyTorch's bits."""
    if dim == out.ndim - 1:
        return _lastdim_backward(_as_rows(grad), _as_rows(out), log).reshape(out.shape)
    return _inner_backward(_split(grad, dim), _split(out, dim), log).reshape(out.shape)


def _lastdim_backward(g: np.ndarray, y: np.ndarray, log: bool) -> np.ndarray:
    """A block of rows at a time."""
    if y.dtype == _F64:
        return _lastdim_backward_double(g, y, log)
    lanes = aten_float_lanes()
    if log and block_rows(*y.shape) == y.shape[0]:  # (one block: no slicing, no scratch kept; small inputs)
        return _minus_exp_times(g, map_reduce_sum([g], lanes=lanes)[:, None], sleef_expf(y))
    out = np.empty(y.shape, _F32)
    wide = np.empty((block_rows(*y.shape), y.shape[1])) if log else None  # (scratch of the fused step)
    # (softmax's leftover products are fused into the sum in the serial copy of the kernel, not in the pool's)
    fused_tail = not _in_thread_pool(y.shape[0])
    for block in row_blocks(*y.shape):
        if log:
            total = map_reduce_sum([g[block]], lanes=lanes)[:, None]
            _minus_exp_times(g[block], total, sleef_expf(y[block]), out[block], wide)
        else:
            total = map_reduce_sum([g[block], y[block]], fused_tail=fused_tail, lanes=lanes)[:, None]
            np.multiply(np.subtract(g[block], total, out=out[block]), y[block], out=out[block])
    return out


def _lastdim_backward_double(g: np.ndarray, y: np.ndarray, log: bool) -> np.ndarray:
    """float64: ``g - exp(y) * sum(g)`` with the product and the difference fused, or ``(g - sum(g * y)) * y``."""
    lanes = _lanes(y.dtype)
    if log:
        total = map_reduce_sum([g], lanes=lanes)[:, None]
        return _minus_exp_times_double(g, total, _vector_exp(y))
    # (the leftover products are rounded before they are added here, unlike float's: measured against torch)
    total = map_reduce_sum([g, y], fused_tail=False, lanes=lanes)[:, None]
    return (g - total) * y


def _minus_exp_times_double(g: np.ndarray, total: np.ndarray, e: np.ndarray) -> np.ndarray:
    """float64 ``g - e * total``, fused (one rounding). A NaN comes out with the sign it went in with (the fused
    step negates no NaN): where the result is NaN, the NaN of the plain product and difference, as float's path
    gives it, not that of the negated ``-e``."""
    out = fma(-e, total, g)
    nan = np.isnan(out)
    if nan.any():
        with np.errstate(invalid="ignore"):
            out[nan] = np.broadcast_to(g - e * total, out.shape)[nan]
    return out


def _minus_exp_times(g: np.ndarray, total: np.ndarray, e: np.ndarray, out: np.ndarray | None = None,
                     wide: np.ndarray | None = None) -> np.ndarray:
    """``g - exp(y) * total`` with the product and the difference fused (one rounding), into ``out`` (default
    ``e``); ``wide`` is float64 scratch of ``g``'s shape, or at least as many rows."""
    wide = np.multiply(e, total, dtype=np.float64, out=None if wide is None else wide[:e.shape[0]])  # (exact)
    np.subtract(g, wide, e if out is None else out, casting="same_kind")
    return e if out is None else out


def _inner_backward(g: np.ndarray, y: np.ndarray, log: bool, storage: np.dtype | None = None) -> np.ndarray:
    """``storage``: as ``_inner_forward``'s (read by log_softmax only: softmax's backward takes no exp, so where its
    vectors end leaves no trace)."""
    dim_size, inner = y.shape[1], y.shape[2]
    if log:
        total = _sum_along_dim(g)
        lanes = _lanes(y.dtype) * (2 if storage is not None else 1)
        e = _exp_by_column(y, _vector_columns(inner, dim_size, lanes, (storage or y.dtype).itemsize))
        return _minus_exp_times_double(g, total, e) if y.dtype == _F64 else _minus_exp_times(g, total, e)
    return y * (g - _fused_sum_along_dim(g, y))


def _fused_sum_along_dim_double(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """float64 ``sum = fma(g, y, sum)`` down the dim: ``aten_vec.fma``'s arithmetic with the products and their
    exact errors taken for the whole array up front, so that each step is a two-sum (the running sum is
    sequential)."""
    with np.errstate(invalid="ignore", over="ignore"):
        products = g * y
        errors = product_error(g, y, products)
        total = np.zeros((g.shape[0], 1, g.shape[2]))
        for p, error in zip(np.moveaxis(products, 1, 0), np.moveaxis(errors, 1, 0)):
            plain = p + total[:, 0]
            back = plain - p
            fused = plain + (((p - (plain - back)) + (total[:, 0] - back)) + error)
            # (infinities and NaNs: the plain sum, as aten_vec.fma gives it)
            total[:, 0] = fused if np.isfinite(fused).all() else np.where(np.isfinite(fused), fused, plain)
    return total


def _fused_sum_along_dim(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``sum += g * y`` down the dim of (outer, dim, inner) arrays, each step one fused multiply-add (the
    compiler contracts it, vector and scalar columns alike)."""
    if y.dtype == _F64:
        return _fused_sum_along_dim_double(g, y)
    products = np.multiply(g, y, dtype=np.float64)  # (exact)
    total = np.zeros((g.shape[0], 1, g.shape[2]), _F32)
    for i in range(g.shape[1]):  # (each step adds in double and rounds to float before the next)
        np.add(products[:, i : i + 1], total, total, casting="same_kind")
    return total
