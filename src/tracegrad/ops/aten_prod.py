"""ATen's CPU prod (``prod_kernel_impl``: ``binary_kernel_reduce_vec`` with ``*``) in NumPy: the same products in
the same order, so a float product carries PyTorch's bits.

Each output starts at 1 and takes the input's elements in TensorIterator's order, one product at a time, except
along a contiguous fastest reduced run (``vectorized_inner_reduction``): there the whole blocks of four vectors
go first into four vector accumulators (``reduction128``: the first block loaded, each later one multiplied in
lane by lane). The accumulators fold as ``(a0 * a1) * (a2 * a3)``, that vector's lanes fold left to right, and
the output takes the result; the run's elements after its last whole block follow one by one. The vectors are
those of ATen's AVX2 build, which ``prod_stub`` runs on AVX-512 machines too. With several threads, a full
product over more than ``GRAIN_SIZE`` elements is split into the threads' ranges first (``_two_pass``). A half
product is rounded to half at every step there as here (``c10::Half``'s and ``Vectorized<Half>``'s products).
"""

from __future__ import annotations

import numpy as np

from .aten_loops import GRAIN_SIZE, thread_chunks
from .aten_sum import ordered_reduce, rows_in_iterator_order
from .aten_vec import vector_lanes

_ACCUMULATORS = 4  # reduction128's vector accumulators
_SUPPORTED = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))


def supports(dtype: np.dtype) -> bool:
    """Whether :func:`prod_as_aten` reproduces ATen's order for arrays of ``dtype`` (an integer product does
    not depend on it; a complex one is left to NumPy)."""
    return dtype in _SUPPORTED


def prod_as_aten(a: np.ndarray, dims: tuple | None) -> np.ndarray:
    """``a.prod(dims)`` on the CPU, without the reduced dims, in ``a``'s dtype. ``dims``: non-negative dims, or
    None for all."""
    out_shape = () if dims is None else tuple(s for d, s in enumerate(a.shape) if d not in dims)
    if a.size == 0:
        return np.ones(out_shape, a.dtype)
    rows, run = rows_in_iterator_order(a, dims)
    block = _ACCUMULATORS * vector_lanes(a.dtype)
    with np.errstate(all="ignore"):  # (overflow to inf, 0 * inf to NaN: silently, as there)
        if rows.shape[0] == 1 and (run == rows.size or run < block) and len(thread_chunks(rows.size, GRAIN_SIZE)) > 1:
            return _two_pass(rows[0], run, block).reshape(out_shape)
        factors = _vector_blocks_folded(rows, run, block) if run >= block else rows
        # (a copy: a product over one element is that element, and no view of the input)
        return np.array(ordered_reduce(factors, 1, np.multiply)).reshape(out_shape)


def _two_pass(flat: np.ndarray, run: int, block: int) -> np.ndarray:
    """ATen's ``two_pass_reduction`` of a full product over several threads' ranges (``thread_chunks``): each
    range reduced from 1 into a buffer of its own, as one run starting there, then the buffers multiplied in
    order. (For one contiguous run, or runs too short for the vector blocks.)"""
    starts = thread_chunks(flat.size, GRAIN_SIZE)
    ends = np.append(starts[1:], flat.size)
    partials = []
    for start, end in zip(starts, ends):
        piece = flat[start:end][None]
        factors = _vector_blocks_folded(piece, piece.size, block) if run >= block else piece
        partials.append(ordered_reduce(factors, 1, np.multiply)[0])
    return ordered_reduce(np.array(partials, flat.dtype)[None], 1, np.multiply)[0]


def _vector_blocks_folded(rows: np.ndarray, run: int, block: int) -> np.ndarray:
    """Each row's factors as the output takes them: per contiguous run of ``run`` elements, the folded product
    of its whole blocks, then the elements after them."""
    outputs = rows.shape[0]
    runs = rows.reshape(outputs, -1, run)
    whole = run - run % block
    lanes = block // _ACCUMULATORS
    blocks = runs[:, :, :whole].reshape(outputs, runs.shape[1], whole // block, _ACCUMULATORS, lanes)
    acc = np.multiply.reduce(blocks, axis=2)  # (over the middle axis NumPy multiplies in order)
    vector = (acc[:, :, 0] * acc[:, :, 1]) * (acc[:, :, 2] * acc[:, :, 3])
    folded = np.multiply.accumulate(vector, axis=-1)[..., -1:]
    return np.concatenate([folded, runs[:, :, whole:]], axis=-1).reshape(outputs, -1)
