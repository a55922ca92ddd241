"""ATen's CPU vector arithmetic, as NumPy reproduces it: fused multiply-adds, lane counts, and the
``vec::map*_reduce_all`` sums.

Most of PyTorch's CPU kernels are registered for its AVX2 build only (``REGISTER_DISPATCH`` leaves AVX-512 out), so
a ``Vectorized<T>`` is 32 bytes on every x86 machine: 8 floats or 4 doubles. That build fuses multiply-adds where
the CPU has FMA, in intrinsics and, through the compiler's contraction, in some plain expressions; each caller
names which of its steps are fused.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import numpy as np

_VECTOR_BYTES = 32  # ATen's AVX2 (and DEFAULT) Vectorized<T>


# The dtypes whose fused multiply-adds are emulated (half computes in float; integers need no rounding)
FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def vector_lanes(dtype) -> int:
    """Lanes of ATen's ``Vectorized<T>`` in its AVX2 build: 8 floats, 4 doubles."""
    return _VECTOR_BYTES // np.dtype(dtype).itemsize


@functools.cache
def _cpuinfo_field(name: str) -> str:
    """The first processor's ``name`` line of ``/proc/cpuinfo``; empty where it cannot be read."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == name:
                    return value.strip()
    except OSError:
        pass
    return ""


@functools.cache
def cpu_flags() -> frozenset:
    """The CPU's feature flags (``/proc/cpuinfo``); empty where they cannot be read."""
    return frozenset(_cpuinfo_field("flags").split())


def mkl_fuses_multiply_adds() -> bool:
    """Whether the LAPACK of PyTorch's x86 builds (MKL) updates with fused multiply-adds on this processor. MKL
    picks its code by vendor: on Intel's processors with FMA it fuses (a singular matrix's last LU pivot comes
    out as a rounding residue such as 2e-16), on AMD's it was seen to round products and sums apart (that pivot
    is exactly 0)."""
    return _cpuinfo_field("vendor_id") != "AuthenticAMD" and cpu_has_fma()


AVX512_FLAGS = frozenset({"avx512f", "avx512bw", "avx512dq", "avx512vl", "fma"})


@functools.cache
def aten_float_lanes() -> int:
    """Float lanes of ``Vectorized<float>`` for the kernels registered for AVX-512 too
    (``ALSO_REGISTER_AVX512_DISPATCH``): 16 (AVX-512), 8 (AVX2), 0 (the DEFAULT build, whose vector functions
    are the scalar ones). ``ATEN_CPU_CAPABILITY`` lowers it as it lowers PyTorch's choice, read once as PyTorch
    reads it."""
    flags = cpu_flags()
    best = 16 if flags >= AVX512_FLAGS else 8 if {"avx2", "fma"} <= flags else 0
    wanted = {"avx512": 16, "avx2": 8, "default": 0}.get(os.environ.get("ATEN_CPU_CAPABILITY", "").lower(), 16)
    return min(best, wanted)


def cpu_has_fma() -> bool:
    """Whether ATen's vector code runs with fused multiply-adds here (its AVX2 build: avx2 and fma). Where the
    flags cannot be read, the common case."""
    flags = cpu_flags()
    return not flags or {"avx2", "fma"} <= flags


# (the float64 bits below a float's last bit, and their value at a midpoint between two floats)
FLOAT_MIDPOINT_BITS, FLOAT_MIDPOINT = np.int64(2**29 - 1), np.int64(2**28)


def offset_from_midpoint(wide: np.ndarray, band, out: np.ndarray | None = None) -> np.ndarray:
    """The float64 bits that rounding ``wide`` to float drops (its low 29: 2**28 is the midpoint between two
    floats, 2**29 one float ulp), shifted so that those within ``band`` of the midpoint (from -band up to, not
    including, +band) read below ``2 * band``: where a result computed otherwise could round to another float
    than the float64 one. ``out``: int64 scratch, which may be ``wide``'s own bits."""
    out = np.asarray(np.subtract(wide.view(np.int64), FLOAT_MIDPOINT - band, out=out))  # (0-d too)
    return np.bitwise_and(out, FLOAT_MIDPOINT_BITS, out=out)


# NumPy warns as it casts a float64 sum beyond float's range ("overflow encountered in cast"), where PyTorch's
# float arithmetic gives inf silently. ``np.errstate`` costs about a microsecond per use, a fifth of an optimizer's
# update of a small parameter, so the casts of fused results set NumPy's error-state context variable themselves
# (a fifth of that), falling back on ``np.errstate`` where NumPy does not have it.
try:
    from numpy._core._multiarray_umath import _make_extobj
    from numpy._core._ufunc_config import _extobj_contextvar as _FP_ERRORS

    _IGNORE_FP_ERRORS = _make_extobj(all="ignore")
except ImportError:  # (another NumPy)
    _FP_ERRORS = None
_QUIET = _IGNORE_FP_ERRORS if _FP_ERRORS is not None else {"all": "ignore"}  # (an error state: see with_fp_errors)


# What NumPy raises for a floating-point event (``inf * 0``) that PyTorch computes silently: a strict warnings filter's
# RuntimeWarning, or the FloatingPointError of a program's ``np.errstate(invalid="raise")``, whose state a user's
# callbacks keep (``as_caller``) and run tracegrad's operators under
FP_SIGNALS = (RuntimeWarning, FloatingPointError)


def has_nan(a: np.ndarray) -> bool:
    """Whether the real array ``a`` holds a NaN: its squares' sum is NaN just then (a sum of squares overflows to
    inf, never to NaN), and BLAS takes a third of the time of ``np.isnan(a).any()`` on a small array (half's dot has
    no BLAS: slower than isnan on large arrays)."""
    if a.dtype == np.float16:
        return bool(np.isnan(a).any())
    return math.isnan(np.vdot(a, a))


def quietly(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with NumPy's floating-point warnings off: for casts that may overflow to inf.

    Also the second run of an operator's kernel whose first raised such a warning. NumPy warns where PyTorch
    computes silently (``inf * 0`` is NaN); tracegrad's import-time filter ignores those warnings in its own code,
    but a filter a program installs later (``simplefilter("error")``, pytest's ``filterwarnings = error``) comes
    first and turns them into exceptions. Kernels of out-of-place operators are pure, so running one again gives
    the result the first call computed (impure ones run quietly from the start: ``OpDef.impure_kernel``); doing
    that around every call instead would cost a fifth of a small operator's time."""
    return with_fp_errors(_QUIET, fn, *args, **kwargs)


def quiet(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run ``quietly``: a function of tracegrad's own arithmetic on values that may be inf or NaN (gradient
    clipping: PyTorch scales an inf norm's gradients to NaN without a word)."""

    @functools.wraps(fn)
    def quiet_fn(*args: Any, **kwargs: Any) -> Any:
        return quietly(fn, *args, **kwargs)

    return quiet_fn


def fp_errors() -> Any:
    """NumPy's floating-point error state in force here: what ``with_fp_errors`` brings back inside ``quietly``."""
    return _FP_ERRORS.get() if _FP_ERRORS is not None else np.geterr()


def with_fp_errors(state: Any, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` under NumPy's error state ``state`` (from ``fp_errors``): a user's code called from
    inside tracegrad's quiet code (an optimizer's closure) warns or raises as its caller set NumPy to."""
    if _FP_ERRORS is None:
        with np.errstate(**state):
            return fn(*args, **kwargs)
    token = _FP_ERRORS.set(state)
    try:
        return fn(*args, **kwargs)
    finally:
        _FP_ERRORS.reset(token)


# NumPy's error state where tracegrad last went quiet around work that calls back into a user's code (a backward
# pass, a built-in optimizer's step): the callbacks run under it again (``as_caller``), so the user's own NumPy
# arithmetic warns or raises there as where they called tracegrad, as with PyTorch, which leaves NumPy alone.
_CALLER_FP_ERRORS: ContextVar[Any] = ContextVar("tracegrad_caller_fp_errors", default=None)


def quietly_for_caller(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``quietly(fn, ...)``, keeping the caller's error state for the user's callbacks ``fn`` makes (``as_caller``)."""
    if _FP_ERRORS is None:
        token = _CALLER_FP_ERRORS.set(fp_errors())
        try:
            return quietly(fn, *args, **kwargs)
        finally:
            _CALLER_FP_ERRORS.reset(token)
    # (``fp_errors`` and ``quietly`` inlined: every backward call and built-in optimizer step pays for this frame)
    caller = _CALLER_FP_ERRORS.set(_FP_ERRORS.get())
    quiet = _FP_ERRORS.set(_QUIET)
    try:
        return fn(*args, **kwargs)
    finally:
        _FP_ERRORS.reset(quiet)
        _CALLER_FP_ERRORS.reset(caller)


def as_caller(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, a user's callback, under the error state of the code that called into the quiet work
    running it (``quietly_for_caller``); outside such work, as it is."""
    caller = _CALLER_FP_ERRORS.get()
    if caller is None or _FP_ERRORS is None:
        return fn(*args, **kwargs) if caller is None else with_fp_errors(caller, fn, *args, **kwargs)
    token = _FP_ERRORS.set(caller)  # (``with_fp_errors`` inlined: a hook per node pays it in every backward)
    try:
        return fn(*args, **kwargs)
    finally:
        _FP_ERRORS.reset(token)


def fma32(a, b, c) -> np.ndarray:
    """``a * b + c`` of float32 values rounded once to float32, as a hardware FMA gives it (normal results).

    The product is exact in float64; the float64 sum rounds once more, which changes the float result only where
    that sum lands exactly on a midpoint between two floats (about one sum in 2**29): there the sum's rounding
    error (Knuth's two-sum) says which way the exact value lies."""
    product = np.multiply(a, b, dtype=np.float64)
    total = np.add(product, c, dtype=np.float64)
    out = np.asarray(quietly(total.astype, np.float32))
    tie = (np.asarray(total).view(np.int64) & FLOAT_MIDPOINT_BITS) == FLOAT_MIDPOINT
    if tie.any():
        p, t = np.broadcast_to(product, tie.shape)[tie], np.asarray(total)[tie]
        addend = np.broadcast_to(np.asarray(c, np.float64), tie.shape)[tie]
        back = t - p
        error = (p - (t - back)) + (addend - back)
        toward = np.where(error == 0, t, np.copysign(np.inf, error))  # (0: an exact midpoint, left to the cast)
        nearest = quietly(np.nextafter(t, toward).astype, np.float32)
        if out.ndim:
            out[tie] = nearest
        else:
            out = np.asarray(nearest).reshape(())
    return out


def binade_addend(addend, exponent: int) -> tuple[np.float64, np.float64]:
    """The constants of ``fused_in_binade`` for a float32 ``addend`` and results whose magnitude lies in
    ``[2**exponent, 2**(exponent + 1))``: ``(addend + shift, shift)``, ``shift = 1.5 * 2**(exponent + 29)``.

    Near ``shift`` a float64's ulp is float's ulp in that binade, so a float64 sum with ``shift`` rounds to nearest
    even on float's grid there; the addend, a float of at least ``2**exponent``, lies on that grid, so the
    constant ``addend + shift`` is exact."""
    shift = np.float64(1.5 * 2.0 ** (exponent + 29))
    shifted = shift + np.float64(addend)
    if shifted - shift != np.float64(addend) or abs(addend) < 2.0**exponent:
        raise ValueError(f"{addend!r} is not a float on the grid of the binade 2**{exponent}")
    return shifted, shift


def fused_in_binade(product: np.ndarray, constants: tuple) -> np.ndarray:
    """``fma(a, b, addend)`` in float32, in place on ``product`` (float64: the exact product ``a * b`` of two
    floats), for results known to lie in one binade; ``constants`` from ``binade_addend``. The exact
    ``a * b + addend`` is rounded once, as an FMA rounds it, and the result is a float64 holding that float.
    Two calls and no midpoint check, where ``fma32`` makes several: it counts on small arrays (polynomials)."""
    shifted, shift = constants
    product += shifted
    product -= shift  # (exact: both on float's grid of the binade)
    return product


def fma(a, b, c) -> np.ndarray:
    """``a * b + c`` rounded once, in the dtype of ``a`` (float32 or float64), as ``std::fma`` gives it.

    float32 goes through float64 (``fma32``). float64 splits the product into a rounded part and
    its exact error (Dekker) and adds the pieces with an exact sum (Knuth): correctly rounded but for ties of a
    rare kind."""
    dtype = np.result_type(a, b, c)
    if dtype == np.float32:
        blocked = _blocked_fma(a, b, c)
        if blocked is not None:
            return blocked
        return fma32(*(_widened_if_small(v) for v in (a, b, c)))
    with np.errstate(invalid="ignore", over="ignore"):
        fused = fma64_finite(a, b, c)
    if np.all(np.isfinite(fused)):
        return fused
    # (infinities, NaNs and products near overflow make the splitting meaningless; there a * b + c is the answer)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.isfinite(fused), fused, np.multiply(a, b) + c)


def _blocked_fma(a, b, c) -> np.ndarray | None:
    """``fma32(a, b, c)`` by ``fma32_blocked`` into a fresh array, the same floats, where the operands allow it:
    large C-contiguous float32 arrays of one shape, one factor possibly a number (the other factor first then).
    None where they do not."""
    if np.ndim(a) == 0:
        a, b = b, a  # (the product is the same either way)
    if (a.__class__ is not np.ndarray or a.size < BLOCKED_MIN or c.__class__ is not np.ndarray
            or c.shape != a.shape):
        return None
    return fma_into_blocks(a, b, c, np.empty(a.shape, np.float32))


def fma_into_blocks(a, b, c, out: np.ndarray, check_ties: bool = True) -> np.ndarray | None:
    """``fma32_blocked(a, b, c, out)`` with this thread's scratch where it pays and the operands allow it
    (``out`` of ``BLOCKED_MIN`` elements or more, ``fma_blockable``); None, and nothing written, where not."""
    if out.size < BLOCKED_MIN or not fma_blockable(out, a, b, c):
        return None
    return fma32_blocked(a, b, c, out, _thread_scratch(), check_ties)


BLOCKED_MIN = 1 << 16  # elements: below, fma32's few calls cost less than the block loop
_SCRATCH = threading.local()


def _thread_scratch() -> np.ndarray:
    """This thread's float64 scratch blocks for ``fma32_blocked``, made once (a fresh 512 KiB each call would be
    mapped and faulted in anew)."""
    scratch = getattr(_SCRATCH, "blocks", None)
    if scratch is None:
        scratch = _SCRATCH.blocks = np.empty((2, BLOCK_ELEMENTS))
    return scratch


def fma64_finite(a, b, c) -> np.ndarray:
    """``fma``'s float64 arithmetic for finite operands whose product does not overflow (no check for others): the
    product's exact error (Dekker) and the sum's (Knuth's two-sum) added to the rounded sum."""
    product = np.multiply(a, b)
    error = product_error(np.asarray(a, np.float64), np.asarray(b, np.float64), product)
    total, rounding = two_sum(product, c)
    # (subtracting the negated correction, a +0 where it is zero, leaves a -0 sum -0, as std::fma does: -0 + 0 is +0)
    return total - (0.0 - (rounding + error))


def two_sum(a, b) -> tuple:
    """``(a + b rounded, its exact rounding error)`` by Knuth's steps (any magnitudes, either dtype): Sleef's
    dfadd2/ddadd2 of two numbers."""
    s = np.add(a, b)
    v = np.subtract(s, a)
    return s, np.subtract(a, np.subtract(s, v)) + np.subtract(b, v)


def fma_if_available(a, b, c) -> np.ndarray:
    """A multiply-add the way ATen's vector code does it on this CPU: fused with FMA, else two roundings."""
    return fma(a, b, c) if cpu_has_fma() else a * b + c


def _widened_if_small(v):
    """Small operands (scalars, a broadcast weight) in float64 up front: NumPy's casting loops are slow on
    broadcast inputs, and fast on full float32 arrays."""
    v = np.asarray(v)
    return v.astype(np.float64) if v.size <= 4096 else v


_SPLITTER = 134217729.0  # 2**27 + 1: Veltkamp's split of a double into two 26-bit halves


def product_error(a: np.ndarray, b: np.ndarray, product: np.ndarray) -> np.ndarray:
    """The exact ``a * b - product`` (Dekker's two-product; finite, unscaled inputs)."""
    a_hi, a_lo = veltkamp_split(a)
    b_hi, b_lo = veltkamp_split(b)
    return ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def veltkamp_split(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(hi, lo)``, ``hi + lo == v`` exactly, each half of 26 bits or fewer (products of halves are exact)."""
    scaled = v * _SPLITTER
    hi = scaled - (scaled - v)
    return hi, v - hi


BLOCK_ELEMENTS = 32768  # elements per block of rows: a block's float64 scratch (256 KiB) stays in the L2 cache


def block_rows(rows: int, length: int) -> int:
    """Rows per block of ``row_blocks``."""
    return min(rows, max(1, BLOCK_ELEMENTS // max(length, 1)))


def row_blocks(rows: int, length: int) -> list[slice]:
    """Consecutive blocks of whole rows of about ``BLOCK_ELEMENTS`` elements (at least one row each): the kernels
    emulated here work a block at a time, so their float64 temporaries stay in cache."""
    step = block_rows(rows, length)
    return [slice(start, start + step) for start in range(0, rows, step)]


def fused_row_accumulation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``acc = fma(a[i], b[i], acc)`` for the rows i of two 2-d arrays in turn, from zero: a kernel's buffer that
    each row updates with one rounding."""
    if a.dtype != np.float32:
        acc = np.zeros(a.shape[1], a.dtype)
        for row in range(a.shape[0]):
            acc = fma(a[row], b[row], acc)
        return acc
    accumulator = RoundedRowSum(a.shape)
    for block in row_blocks(*a.shape):
        accumulator.add(a[block], b[block])
    return accumulator.acc


class RoundedRowSum:
    """``acc = fma(a[i], b[i], acc)`` over float32 rows i in turn, from zero, fed a block of rows at a time: the
    exact products in double, each row's sum rounded to float before the next adds to it."""

    def __init__(self, shape: tuple) -> None:
        self.acc = np.zeros(shape[1], np.float32)
        self.wide_acc = np.zeros(shape[1])
        self.wide = np.empty((block_rows(*shape), shape[1]))  # (the products of a block; callers may borrow it)

    def add(self, a: np.ndarray, b: np.ndarray) -> None:
        acc, wide_acc = self.acc, self.wide_acc
        for row in np.multiply(a, b, dtype=np.float64, out=self.wide[:a.shape[0]]):  # (exact)
            np.add(row, wide_acc, wide_acc)
            acc[...] = wide_acc  # (item assignment: the cheapest call for these short rows)
            wide_acc[...] = acc


def fma_into(a, b, c, out: np.ndarray, wide: np.ndarray | None = None) -> np.ndarray:
    """``fma(a, b, c)`` written into ``out``. For float32 without fresh temporaries: the exact product into
    ``wide`` (float64 scratch of ``out``'s shape), the sum rounded there and then to float in one call. Unlike
    ``fma32`` it leaves the float64 sums that land on a float midpoint to the cast: the optimizers' and norms' hot
    loops would pay a third more for a correction that 81 million SGD updates never needed."""
    if out.dtype != np.float32:
        out[...] = fma(a, b, c)
        return out
    if wide is None and a.__class__ is np.ndarray and a.shape == out.shape:
        # (a float64 copy of ``a`` to work in, the other operands cast by the in-place steps: fewer calls than
        # widening each first, which counts on small arrays, such as an optimizer's biases)
        wide = a.astype(np.float64)
        wide *= b
        wide += c
        quietly(np.copyto, out, wide, "same_kind")
        return out
    a, b, c = _widened_if_small(a), _widened_if_small(b), _widened_if_small(c)
    wide = np.multiply(a, b, dtype=np.float64, out=wide)
    return quietly(np.add, wide, c, out=out, casting="same_kind")


def fma32_blocked(a: np.ndarray, b, c: np.ndarray, out: np.ndarray, scratch: np.ndarray,
                  check_ties: bool = True) -> np.ndarray:
    """``fma(a, b, c)`` into ``out``, as ``fma32``, for float32 C-contiguous arrays of ``out``'s shape (``b`` may
    be a number, read as a float) that are ``out`` itself or do not overlap it (``fma_blockable``). ``scratch``:
    float64, of shape (2, n), n elements per block.

    Each block is widened, multiplied, added and cast back in single-dtype calls on L2-resident blocks: NumPy
    runs a ufunc that mixes float32 and float64 through its casting buffers, and that costs more than the casts
    (an optimizer's 784x256 update: 107 us against fma32's 250). A sum on a float midpoint takes ``fma32``'s
    correction (``check_ties``)."""
    factor = np.float64(np.float32(b)) if np.ndim(b) == 0 else None
    flat_a, flat_c, flat_out = a.reshape(-1), c.reshape(-1), out.reshape(-1)
    flat_b = b.reshape(-1) if factor is None else None
    copyto, multiply, add = np.copyto, np.multiply, np.add
    step = scratch.shape[1]
    for start in range(0, flat_out.size, step):
        block = slice(start, start + step)
        out_block = flat_out[block]
        total, other = scratch[0, : out_block.size], scratch[1, : out_block.size]
        copyto(total, flat_a[block])
        if factor is None:
            copyto(other, flat_b[block])
            multiply(total, other, out=total)  # (exact: a product of two floats)
        else:
            multiply(total, factor, out=total)
        copyto(other, flat_c[block])
        add(total, other, out=total)
        ties = _midpoint_sums(total, other) if check_ties else None
        if ties is not None:  # (the operands are read before this block of out is written)
            b_ties = factor if factor is not None else flat_b[block][ties]
            fixed = fma32(flat_a[block][ties], b_ties, flat_c[block][ties])
            quietly(copyto, out_block, total, "same_kind")
            out_block[ties] = fixed
        else:
            quietly(copyto, out_block, total, "same_kind")
    return out


def _midpoint_sums(total: np.ndarray, scratch: np.ndarray) -> np.ndarray | None:
    """The positions where float64 ``total`` lies on a midpoint between two floats (None where there is none):
    there its rounding to float needs the exact sum. ``scratch``: float64 of total's shape, overwritten.

    A midpoint's low 29 bits are 1 followed by 28 zeros: shifted to the top of an int64, the smallest int64.
    A shift and a minimum, where a mask and a comparison would allocate a boolean array (a third slower)."""
    shifted = np.left_shift(total.view(np.int64), _MIDPOINT_SHIFT, out=scratch.view(np.int64))
    if shifted.min() != _INT64_MIN:
        return None
    return np.flatnonzero(shifted == _INT64_MIN)


_MIDPOINT_SHIFT, _INT64_MIN = np.array(35, np.int64), np.iinfo(np.int64).min


def fma_blockable(out: np.ndarray, *operands) -> bool:
    """Whether ``fma32_blocked`` takes these: float32 C-contiguous arrays of ``out``'s shape (numbers pass), each
    ``out`` itself or apart from it (a shifted overlap would read elements a block has already written)."""
    if out.dtype != np.float32 or not out.flags.c_contiguous:
        return False
    for v in operands:
        if np.ndim(v) == 0:
            continue
        if v.dtype != np.float32 or v.shape != out.shape or not v.flags.c_contiguous:
            return False
        if v is not out and np.may_share_memory(v, out):
            return False
    return True


def map_reduce_sum(factors: list, fused_tail: bool = True, lanes: int | None = None) -> np.ndarray:
    """Per row: ``vec::map*_reduce_all(product of factors, +)`` over the last axis of 2-d arrays (all one shape),
    with ``lanes``-wide vectors (the AVX2 build's by default; 16 floats for kernels registered for AVX-512).

    A row shorter than a vector is summed lane by lane. Otherwise the lanes accumulate whole vectors (product,
    then add): here a block of rows at a time, its vectors moved as single 32- or 64-byte items so that vector j
    of every row is one contiguous run, which NumPy's reduction adds run after run (summing the middle axis of
    (rows, vectors, lanes) would run 8-element loops). The leftover elements go into the first lanes (product
    and add fused, as the compiler contracts that step, unless ``fused_tail`` is False), and the lanes fold as
    the reductions shuffle them (floats) or one by one (doubles)."""
    rows, length = factors[0].shape
    dtype = factors[0].dtype
    lanes = vector_lanes(dtype) if lanes is None else lanes
    if length < lanes:
        return fold_in_order(factors[0] if len(factors) == 1 else _product(factors, slice(0, length)))
    whole = length - length % lanes
    acc = np.empty((rows, lanes), dtype)
    vector = np.dtype((np.void, lanes * dtype.itemsize))
    for block in row_blocks(rows, length):
        products = _product([f[block] for f in factors], slice(0, whole))
        by_vector = np.ascontiguousarray(products.view(vector).T).view(dtype)  # (vectors, block rows * lanes)
        np.add.reduce(by_vector, axis=0, out=acc[block].reshape(-1))
    if whole < length:
        k = length - whole
        head = _product(factors[:-1] if len(factors) > 1 else factors, slice(whole, length))
        if len(factors) > 1 and fused_tail:
            acc[:, :k] = fma(head, factors[-1][:, whole:], acc[:, :k])
        else:
            acc[:, :k] = acc[:, :k] + (head * factors[-1][:, whole:] if len(factors) > 1 else head)
    return _fold_float_lanes(acc) if dtype == np.float32 else fold_in_order(acc)


def _product(factors: list, columns: slice) -> np.ndarray:
    """``((f0 * f1) * f2) ...`` over ``columns``, as one C-contiguous array (a copy for a single factor)."""
    out = np.array(factors[0][:, columns], order="C")
    for f in factors[1:]:
        if f.dtype == out.dtype:
            np.multiply(out, f[:, columns], out=out)
        else:  # (NumPy's promotion, as the plain product has it)
            out = out * f[:, columns]
    return out


def fold_in_order(lanes: np.ndarray) -> np.ndarray:
    """Each row's columns added left to right, from the first (``accumulate`` keeps that order; ``reduce`` would pair
    them). Many rows are summed down the columns of a transposed copy instead, where NumPy's reduction adds them
    one after another too, for a fraction of the cost: accumulating along rows pays per row (35 against 5 us,
    1024 x 10)."""
    if not _many_short_rows(lanes):
        return np.add.accumulate(lanes, axis=1)[:, -1]
    # (from -0, which leaves the first term as it is: NumPy's reduction would start from +0, and a row of -0 would
    # sum to +0)
    return np.add.reduce(np.ascontiguousarray(lanes.T), axis=0, initial=-0.0)


MANY_SHORT_ROWS = 32  # (rows from which a transposed copy pays for itself in the reductions of short rows...)
SHORT_ROW = 32  # (...of at most this many elements: longer rows reduce faster along themselves)


def _many_short_rows(x: np.ndarray) -> bool:
    """Whether a 2-d array's rows are reduced faster down the columns of its transposed copy."""
    return x.shape[0] > MANY_SHORT_ROWS and 0 < x.shape[1] <= SHORT_ROW


def row_maxima(x: np.ndarray) -> np.ndarray:
    """``x.max(axis=1, keepdims=True)`` of a 2-d float array (NaN wins). Many short rows take the maxima down the
    columns of a transposed copy, as ``fold_in_order`` does (42 against 5 us, 1024 x 10; long rows would lose).
    The order of the comparisons differs, which can only change the sign of a zero maximum: the softmax family
    subtracts it from its own row, where that sign never reaches a result."""
    if not _many_short_rows(x):
        return np.maximum.reduce(x, axis=1, keepdims=True)
    return np.maximum.reduce(np.ascontiguousarray(x.T), axis=0)[:, None]


_GCC_VECTOR_LANES = {np.dtype(np.float32): 4, np.dtype(np.float64): 2}  # (a 16-byte vector)


def compiled_multiply_add_loop(acc, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``for j: acc += a[..., j] * b[..., j]`` as GCC compiled such scalar loops of ATen's AVX2 build (cdist's, group
    norm's): the products of whole 16-byte vectors along the last axis rounded, then added in order; the products
    after them fused into the sum. (Not every such loop: the norm kernel's leftover squares differ.)"""
    count = a.shape[-1]
    rounded = count - count % _GCC_VECTOR_LANES[a.dtype]
    if rounded:
        from .aten_sum import ordered_sum  # (aten_sum imports this module)

        # (acc and the products, one row per term, added in order down the rows: fast where the sums run across)
        terms = np.empty((rounded + 1,) + a.shape[:-1], np.result_type(a, b))
        terms[0] = acc
        np.multiply(np.moveaxis(a[..., :rounded], -1, 0), np.moveaxis(b[..., :rounded], -1, 0), out=terms[1:])
        acc = ordered_sum(terms, 0)
    for j in range(rounded, count):
        acc = fma(a[..., j], b[..., j], acc)
    return acc


def fold_lanes(lanes: np.ndarray) -> np.ndarray:
    """``vec_reduce_all(+)`` of each row of a 2-d array of vectors: floats as the shuffles fold them (8 or 16
    lanes), doubles lane after lane."""
    return _fold_float_lanes(lanes) if lanes.dtype == np.float32 else fold_in_order(lanes)


def _fold_float_lanes(lanes: np.ndarray) -> np.ndarray:
    """``VecReduceAllSIMD<float>``: halves added while wider than 8 lanes (AVX-512), then AVX2's shuffles: halves
    swapped, pairs of pairs, neighbours (lane 0 is the result)."""
    while lanes.shape[1] > 8:
        half = lanes.shape[1] // 2
        lanes = lanes[:, :half] + lanes[:, half:]
    v = lanes + lanes[:, [4, 5, 6, 7, 0, 1, 2, 3]]
    v = v + v[:, [2, 3, 0, 1, 6, 7, 4, 5]]
    return v[:, 0] + v[:, 1]
