"""Which elements ATen's CPU loops (``cpu_kernel_vec``) compute with vector code, and which with scalar code.

A pointwise kernel with a vector and a scalar version runs the vector one on whole blocks of
``2 * Vectorized<T>::size()`` elements from the start of each contiguous inner run (a coalesced inner dimension,
cut where a thread's range starts) and the scalar one on what is left of the run; an inner dimension that is
neither contiguous nor broadcast runs scalar throughout. Where the two versions round differently (half precision
kept in half by the scalar one, a multiply-add fused only in the vector one), the split shows in the bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._runtime import get_num_threads
from .._strides import empty_strided, torch_strides
from .aten_vec import aten_float_lanes, vector_lanes

GRAIN_SIZE = 32768  # (at::internal::GRAIN_SIZE: elements per thread's range, at the least)


def thread_chunks(n: int, grain: int) -> np.ndarray:
    """Starts of at::parallel_for's (OpenMP) ranges over n elements: ceil(n / tasks) each."""
    threads = get_num_threads()
    if n <= grain or threads == 1:
        return np.zeros(1, np.int64)
    tasks = min(threads, -(-n // grain))
    return np.arange(0, n, -(-n // tasks), dtype=np.int64)


def scalar_mask(n: int, run: int, block: int, grain: int) -> np.ndarray | None:
    """Which of n elements (in iteration order) take the scalar code: each contiguous run (a coalesced inner
    dimension of ``run`` elements, cut where a thread's range starts) goes in blocks of ``block`` from its
    start and leaves its last ``length % block`` elements to the scalar loop. None: none do."""
    if block == 0 or run < block:
        return np.ones(n, bool)
    if run == n and (n <= grain or get_num_threads() == 1):  # (one run, one thread: only its tail is scalar)
        tail = n % block
        if not tail:
            return None
        mask = np.zeros(n, bool)
        mask[n - tail:] = True
        return mask
    starts = np.union1d(np.arange(0, n, run, dtype=np.int64), thread_chunks(n, grain))
    ends = np.append(starts[1:], n)
    tails = ends - (ends - starts) % block
    if not np.any(tails < ends):
        return None
    edges = np.zeros(n + 1, np.int8)
    np.add.at(edges, tails, 1)
    np.add.at(edges, ends, -1)
    return np.cumsum(edges[:-1], dtype=np.int8) > 0


def iteration_order(x: np.ndarray, others: tuple) -> tuple[tuple, int]:
    """The axes in TensorIterator's order (outermost first, by x's strides) and the length of the coalesced
    contiguous inner run (1: the inner dimension is strided, so every element takes the scalar loop). Operands
    in ``others`` may be broadcast (stride 0) along the run."""
    if x.flags.c_contiguous and all(o.flags.c_contiguous and o.shape == x.shape for o in others):
        return tuple(range(x.ndim)), x.size
    axes = [d for d in range(x.ndim) if x.shape[d] != 1]
    axes.sort(key=lambda d: -abs(x.strides[d]))  # (stable: ties keep their order)
    # an operand runs along with x (contiguous) or stays put (broadcast, stride 0) through the whole run:
    # one that is broadcast along some of its dimensions only cuts the run there (TensorIterator's coalescing)
    broadcast = [o.strides[axes[-1]] == 0 if axes else False for o in others]
    if sum(broadcast) > 1:  # (the vector code takes one broadcast operand at most: the loop runs scalar)
        return tuple(d for d in range(x.ndim) if x.shape[d] == 1) + tuple(axes), 1
    run = 1
    for d in reversed(axes):
        if x.strides[d] != run * x.itemsize or any(
                o.strides[d] != (0 if still else run * o.itemsize) for o, still in zip(others, broadcast)):
            break
        run *= x.shape[d]
    return tuple(d for d in range(x.ndim) if x.shape[d] == 1) + tuple(axes), run


def loop_block(dtype, also_avx512: bool) -> int:
    """Elements of one vector step of ``cpu_kernel_vec``: two ``Vectorized<T>``. A kernel registered for AVX-512
    too (``also_avx512``) takes that build's vectors where the CPU has it (as many bytes as ``aten_float_lanes``
    floats: twice as many halves, half as many doubles); the others take the AVX2 build's 32 bytes. 0: ATen's
    DEFAULT build, scalar code throughout."""
    if not also_avx512:
        return 2 * vector_lanes(dtype)
    return 2 * aten_float_lanes() * 4 // np.dtype(dtype).itemsize


def vector_and_scalar(formula: Callable, operands: tuple, block: int, out_like: np.ndarray | None = None,
                      grain: int = GRAIN_SIZE) -> np.ndarray:
    """``formula(*operands, vector=True)`` where ATen's loop runs vector code and ``formula(*operands,
    vector=False)`` where it runs scalar code, elementwise, in blocks of ``block`` elements, in the shape and
    iteration order of ``out_like`` (the output's layout; the operands broadcast to it). By default the output
    is laid out as TensorIterator lays out a new result (``torch_strides``). ``formula`` takes and
    returns arrays of one shape."""
    if out_like is None or out_like.flags.c_contiguous:
        done = _one_run(formula, operands, block, grain, None if out_like is None else out_like.shape)
        if done is not None:
            return done
    out_like, wide = _laid_out(operands, out_like)
    shape = out_like.shape
    order, run = iteration_order(out_like, wide)
    mask = scalar_mask(out_like.size, run, block, grain)
    if mask is None:
        return np.asarray(formula(*wide, vector=True))
    flat = tuple(np.ascontiguousarray(o.transpose(order)).reshape(-1) for o in wide)
    out = formula(*flat, vector=not mask.all())
    if not mask.all():
        out[mask] = formula(*(f[mask] for f in flat), vector=False)
    return out.reshape([shape[d] for d in order]).transpose(np.argsort(order))


def _laid_out(operands: tuple, out_like: np.ndarray | None) -> tuple[np.ndarray, tuple]:
    """The output's layout (``out_like``, else as TensorIterator lays out a new result) and the operands broadcast
    to its shape."""
    shape = np.broadcast_shapes(*(np.shape(o) for o in operands))
    if out_like is None:
        first = operands[0]
        if first.shape == shape and first.flags.c_contiguous:
            out_like = first
        else:  # (the output as TensorIterator lays it out: an expanded operand's stride-0 dims are not its own)
            out_like = empty_strided(shape, torch_strides(shape, operands), first.dtype)
    return out_like, tuple(np.broadcast_to(o, out_like.shape) for o in operands)


def takes_basic_loop(operands: tuple, out_like: np.ndarray | None = None) -> bool:
    """Whether ``cpu_kernel_vec`` runs its outer ``basic_loop`` (the scalar lambda called from the loop itself, not
    from the vector loop's tail): a 0-d result (TensorIterator's strides are zero there), an inner dimension
    neither contiguous nor broadcast, or two operands broadcast along it. A kernel whose scalar function the
    compiler inlines there but not into the vector loop's tail rounds differently in the two."""
    out_like, wide = _laid_out(operands, out_like)
    if out_like.ndim == 0:
        return True
    return out_like.size > 1 and iteration_order(out_like, wide)[1] == 1


def _one_run(formula: Callable, operands: tuple, block: int, grain: int, shape: tuple | None) -> np.ndarray | None:
    """``vector_and_scalar`` for the common case, without its set-up: operands that are C-contiguous arrays of one
    shape, or 0-d ones (a scalar gradient), one thread's range. Then the elements form a single contiguous run:
    vector code up to its last ``n % block`` elements, which take the scalar code (all scalar where two operands
    are broadcast, as ATen's loop takes one at most). ``shape``: a C-ordered output's, if given. None: another
    case."""
    for o in operands:
        if o.__class__ is not np.ndarray:
            return None
        if o.ndim:
            if not o.flags.c_contiguous or (shape is not None and o.shape != shape):
                return None
            shape = o.shape
    if shape is None:
        return None
    n = math.prod(shape)
    if n > grain and get_num_threads() > 1:
        return None
    scalars = sum(1 for o in operands if not o.ndim)
    full = tuple(o if o.ndim else _expanded(o, shape) for o in operands)
    if block == 0 or n < block or scalars > 1:
        return np.asarray(formula(*full, vector=False))
    out = np.asarray(formula(*full, vector=True))
    tail = n % block
    if tail:
        if not out.flags.c_contiguous:
            return None
        ends = tuple(o.reshape(-1)[n - tail:] if o.ndim else _expanded(o, (tail,)) for o in operands)
        out.reshape(-1)[n - tail:] = formula(*ends, vector=False)
    return out


def _expanded(a: np.ndarray, shape: tuple) -> np.ndarray:
    """A 0-d array seen as ``shape`` (stride 0): what np.broadcast_to gives, at a fraction of its cost."""
    return np.ndarray(shape, a.dtype, buffer=a, strides=(0,) * len(shape))


def float_kernel(formula: Callable, operands: tuple, also_avx512: bool = True,
                 out_like: np.ndarray | None = None) -> np.ndarray:
    """A ``cpu_kernel_vec`` kernel of float32 or float16 operands (one dtype) split as ``vector_and_scalar``
    splits it, with the blocks of their dtype: ``formula(*operands, vector=...)`` takes and returns float32, so
    half computes in float and rounds once (as ATen's reduced-float kernels widen each ``Vectorized<Half>``, and
    cast in their scalar loops); inf and NaN come out silently, as in the C kernels."""
    dtype = operands[0].dtype

    def in_float(*arrays: np.ndarray, vector: bool) -> np.ndarray:
        out = formula(*(a.astype(np.float32, copy=False) for a in arrays), vector=vector)
        return out.astype(dtype, copy=False)

    with np.errstate(all="ignore"):
        return vector_and_scalar(in_float, operands, loop_block(dtype, also_avx512), out_like)
