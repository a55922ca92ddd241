"""ATen's CPU sum (``cascade_sum`` in SumKernel.cpp) in NumPy: the same additions in the same order, so ``sum``,
``mean`` and ``nansum`` carry PyTorch's bits (one thread).

How ATen adds, and how this module follows it:
- TensorIterator sorts the dims (reduced ones first, the fastest-moving first) and merges those that are
  contiguous with each other (:func:`iterator_dims`). The kernel sees the first two merged dims at a time;
  any further dims are an outer loop whose results are added into the output one after another.
- Over those two dims the kernel takes one of four paths (:func:`_plane_sums`): the reduced dim contiguous
  ("inner": vectors of 32 bytes summed lane-wise, then the lanes folded), the kept dim contiguous ("outer":
  each column summed down the rows), or a scalar version of either.
- Each row sum is a cascade (``multi_row_sum``): runs of ``2**p`` terms are added in order, their sums again
  in runs, up to four levels (:func:`_cascade`), usually behind four interleaved partial sums (``row_sum``'s
  instruction-level parallelism, :func:`_row_sum`).
The vectors are those of ATen's AVX2 build (8 floats, 4 doubles), which ``sum_stub`` runs on AVX-512
machines too. NumPy's ``add.reduce`` sums pairwise along its innermost loop, so an ordered sum here is an
``add.reduce`` only where another dim keeps the summed one out of that loop, else a loop of whole-array
additions or an ``add.accumulate`` (:func:`ordered_sum`). ATen stores ``0 + sum``, so a zero sum is +0.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._strides import copy_preserving_layout, insertion_sort_dims
from .aten_vec import vector_lanes

_ILP = 4  # row_sum's interleaved partial sums
_LEVELS = 4  # multi_row_sum's accumulator levels
_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_SUPPORTED = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64, np.complex64, np.complex128))


def supports(dtype: np.dtype) -> bool:
    """Whether this module reproduces ATen's sum for arrays of ``dtype``."""
    return dtype in _SUPPORTED


# ---- ordered sums ------------------------------------------------------------------------------------------


def _take(x: np.ndarray, axis: int, index) -> np.ndarray:
    return x[(slice(None),) * axis + (index,)]


def ordered_sum(x: np.ndarray, axis: int) -> np.ndarray:
    """``((x0 + x1) + x2) + ...`` along ``axis``: an accumulator that each term is added to in turn."""
    return ordered_reduce(x, axis, np.add)


def ordered_reduce(x: np.ndarray, axis: int, op: np.ufunc) -> np.ndarray:
    """``((x0 op x1) op x2) op ...`` along ``axis``, each step rounded to ``x``'s dtype (NumPy's own reductions
    add pairwise, and keep a half accumulator in float, along their innermost loop)."""
    n = x.shape[axis]
    if n <= 3:  # (the common short folds, spelled out)
        if n == 0:
            return np.full(x.shape[:axis] + x.shape[axis + 1:], op.identity, x.dtype)
        if n == 1:
            return _take(x, axis, 0)
        acc = op(_take(x, axis, 0), _take(x, axis, 1))
        return acc if n == 2 else op(acc, _take(x, axis, 2))
    if not _reduces_in_order(x, axis):  # (the last partial sums, copied: a result owns its storage, as ATen's)
        return _take(op.accumulate(x, axis=axis), axis, -1).copy()
    if axis < x.ndim - 1 and math.prod(x.shape[:axis]) > 64 and math.prod(x.shape[axis + 1:]) < 256:
        # (many short rows: NumPy's reduction pays per row, a loop of whole-array steps per term)
        acc = op(_take(x, axis, 0), _take(x, axis, 1))
        for i in range(2, n):
            op(acc, _take(x, axis, i), out=acc)
        return acc
    return op.reduce(x, axis=axis)


def running(step: np.ufunc, x: np.ndarray, d: int, acc: np.dtype) -> np.ndarray:
    """``step.accumulate(x, axis=d, dtype=acc)``: each output the previous one combined with the next input, in
    ``acc``. NumPy's accumulate walks the scanned axis innermost, so along an outer axis it crawls (3 ms for
    the rows of a (256, 1024) float64 array); there one whole-slice step per index does the same additions in
    the same order (0.19 ms)."""
    n = x.shape[d]
    inner = math.prod(x.shape[d + 1:])
    # (real dtypes only: NumPy's complex multiply rounds differently in its accumulate loop)
    if d == x.ndim - 1 or n < 2 or inner < 64 or n > 4 * inner or x.dtype.kind not in "fiu":
        return step.accumulate(x, axis=d, dtype=acc)
    out = np.empty(x.shape, acc)
    lead = (slice(None),) * d
    out[lead + (0,)] = x[lead + (0,)]
    for i in range(1, n):
        step(out[lead + (i - 1,)], x[lead + (i,)], out=out[lead + (i,)], dtype=acc)
    return out


def _reduces_in_order(x: np.ndarray, axis: int) -> bool:
    """Whether ``np.add.reduce`` adds along ``axis`` in order: NumPy's innermost loop runs along the dim of the
    smallest stride, and only there does it sum pairwise; any other dim of a smaller stride keeps it outside."""
    step = abs(x.strides[axis])
    if axis < x.ndim - 1 and x.shape[-1] > 1 and abs(x.strides[-1]) < step:  # (the usual case, checked first)
        return True
    return any(size > 1 and abs(stride) < step for d, (size, stride) in enumerate(zip(x.shape, x.strides))
               if d != axis)


def _ceil_log2(n: int) -> int:
    return 1 if n <= 2 else (n - 1).bit_length()


def _runs(x: np.ndarray, axis: int, run: int) -> tuple[np.ndarray, np.ndarray]:
    """The sums of the whole runs of ``run`` terms along ``axis``, and the leftover terms."""
    whole = x.shape[axis] // run
    head = _take(x, axis, slice(0, whole * run))
    head = head.reshape(x.shape[:axis] + (whole, run) + x.shape[axis + 1:])
    return ordered_sum(head, axis + 1), _take(x, axis, slice(whole * run, None))


def _cascade(x: np.ndarray, axis: int) -> np.ndarray:
    """``multi_row_sum``: runs of ``2**p`` terms summed in order, each level's run sums summed in runs at the
    next level (the last level keeps them all), then the levels added from the lowest."""
    step = 1 << max(4, _ceil_log2(x.shape[axis]) // _LEVELS)
    if x.shape[axis] <= step:  # (one run at most: its sum, from zero, is the total)
        return ordered_sum(x, axis)
    level_sums = []
    for _ in range(_LEVELS - 1):
        if x.shape[axis] < step:  # (the higher levels stay zero)
            break
        x, leftover = _runs(x, axis, step)
        if leftover.shape[axis]:  # (an empty level adds zero: only a zero sum's sign would tell, and ATen's is +0)
            level_sums.append(ordered_sum(leftover, axis))
    level_sums.append(ordered_sum(x, axis))
    total = level_sums[0]
    for level_sum in level_sums[1:]:
        total = total + level_sum
    return total


def _row_sum(x: np.ndarray, axis: int) -> np.ndarray:
    """``row_sum``: four interleaved cascades, the leftover terms added to the first, then the four added."""
    groups = x.shape[axis] // _ILP
    if groups == 0:  # (the four partial sums stay zero)
        return ordered_sum(x, axis)
    head = _take(x, axis, slice(0, groups * _ILP))
    partials = _cascade(head.reshape(x.shape[:axis] + (groups, _ILP) + x.shape[axis + 1:]), axis)
    if x.shape[axis] > groups * _ILP:  # the leftover terms go into the first partial sum
        partials = np.concatenate((_take(partials, axis, slice(0, 1)), _take(x, axis, slice(groups * _ILP, None)),
                                   _take(partials, axis, slice(1, None))), axis=axis)
    return ordered_sum(partials, axis)


# ---- the kernel's paths ------------------------------------------------------------------------------------


def _inner_vectorized(x: np.ndarray, lanes: int) -> np.ndarray:
    """``vectorized_inner_sum`` over the last axis (contiguous): whole vectors through ``row_sum`` lane-wise, then
    the leftover elements and the lanes added in order from zero."""
    whole = x.shape[-1] // lanes
    vectors = x[..., :whole * lanes].reshape(x.shape[:-1] + (whole, lanes))
    terms = _row_sum(vectors, x.ndim - 1)
    if whole * lanes < x.shape[-1]:
        terms = np.concatenate((x[..., whole * lanes:], terms), axis=-1)
    return ordered_sum(terms, x.ndim - 1)


def _columns_then_rows(x: np.ndarray, cascaded: int) -> np.ndarray:
    """Per column of ``x`` (..., rows, columns): the first ``cascaded`` columns through ``multi_row_sum``, the rest
    through ``row_sum`` (the outer sums' blocks of columns)."""
    axis = x.ndim - 2
    parts = []
    if cascaded:
        parts.append(_cascade(x[..., :cascaded], axis))
    if cascaded < x.shape[-1]:
        parts.append(_row_sum(x[..., cascaded:], axis))
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)


def _plane_sums(plane: np.ndarray, strides: tuple[int, int], lanes: int) -> np.ndarray:
    """The kernel's 2-d loop over ``plane`` (..., size1, size0), size0 reduced: one sum per index of size1.
    ``strides`` are the element strides of (size0, size1); ``lanes`` is ``Vectorized<scalar_t>::size()``."""
    size1, size0 = plane.shape[-2:]
    if strides[0] == 1 and size0 >= lanes:
        return _inner_vectorized(plane, lanes)
    columns = np.swapaxes(plane, -1, -2)
    if strides[1] == 1 and size1 >= lanes:
        block = _ILP * lanes
        return _columns_then_rows(columns, size1 // block * block)
    if strides[0] < strides[1]:
        return _row_sum(plane, plane.ndim - 1)
    return _columns_then_rows(columns, size1 // _ILP * _ILP)


# ---- TensorIterator ----------------------------------------------------------------------------------------


def _output_strides(shape: tuple, reduced: frozenset) -> list[int]:
    """The contiguous output's strides, 0 along the reduced dims (as TensorIterator sees a reduction's output)."""
    strides = [0] * len(shape)
    step = 1
    for d in reversed(range(len(shape))):
        if d not in reduced:
            strides[d] = step
            step *= shape[d]
    return strides


def _order(shape: tuple, strides: tuple, out_strides: list, dims: list[int]) -> list[int]:
    """``reorder_dimensions``: an insertion sort, fastest dim first, of the dims reversed; the output decides
    first (reduced dims to the front), then the input; stride-0 dims are left where they are."""

    def should_swap(d0: int, d1: int) -> int:
        o0, o1 = out_strides[d0], out_strides[d1]
        if (o0 == 0) != (o1 == 0):
            return 1 if o1 == 0 else -1
        for s0, s1 in ((o0, o1), (strides[d0], strides[d1])):
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    return insertion_sort_dims(dims[::-1], should_swap)


def iterator_dims(shape: tuple, strides: tuple, reduced: frozenset) -> list[tuple[list[int], int, int, bool]]:
    """TensorIterator's dims for a sum, fastest first, after sorting and merging: (tensor dims, size, input
    element stride, reduced). Dims of size 1 drop out, as merging does with them."""
    out_strides = _output_strides(shape, reduced)
    merged: list[tuple[list[int], int, int, bool]] = []
    for d in _order(shape, strides, out_strides, [d for d in range(len(shape)) if shape[d] != 1]):
        if merged:
            dims, size, stride, red = merged[-1]
            last = dims[-1]
            if size * stride == strides[d] and out_strides[last] * shape[last] == out_strides[d]:
                merged[-1] = (dims + [d], size * shape[d], stride, red)
                continue
        merged.append(([d], shape[d], strides[d], d in reduced))
    return merged


def rows_in_iterator_order(a: np.ndarray, dims: tuple | None) -> tuple[np.ndarray, int]:
    """``a`` as a 2-d array: one row per output (in the output's order), the reduced elements of each in the
    order TensorIterator visits them; and the length of the fastest reduced run where it is contiguous (the
    runs a vectorized reduction takes), else 0."""
    if a.flags.c_contiguous and (dims is None or dims == tuple(range(a.ndim - len(dims), a.ndim))):
        # (the common case, without the sort: trailing dims of a C array are one run)
        count = math.prod(a.shape[a.ndim - len(dims):]) if dims else a.size
        return a.reshape(-1, count), count
    reduced = frozenset(range(a.ndim)) if dims is None else frozenset(dims)
    merged = iterator_dims(a.shape, tuple(st // a.itemsize for st in a.strides), reduced)
    runs = [m for m in merged if m[3]]
    inner_run = merged[0][1] if merged and merged[0][3] and merged[0][2] == 1 else 0
    fastest_first = [d for dims_, _size, _stride, _red in runs for d in dims_]
    kept = [d for d in range(a.ndim) if d not in reduced]
    ones = [d for d in sorted(reduced) if d not in fastest_first]  # (reduced dims of size 1: merging drops them)
    count = math.prod(a.shape[d] for d in reduced)
    return a.transpose(kept + ones + fastest_first[::-1]).reshape(-1, count), inner_run


@functools.lru_cache(maxsize=4096)
def _plan(shape: tuple, byte_strides: tuple, itemsize: int, dims: tuple | None) -> tuple:
    """How the kernel runs over an array: (its output shape, and None when nothing is reduced, else the shape
    without its 1s, the transpose of that into the iterator's dims slowest first (None for none), the merged
    shape, the element strides of the two fastest dims, and the number of kept merged dims)."""
    reduced = frozenset(range(len(shape))) if dims is None else frozenset(dims)
    out_shape = tuple(size for d, size in enumerate(shape) if d not in reduced)
    merged = iterator_dims(shape, tuple(st // itemsize for st in byte_strides), reduced)
    n_reduced = sum(1 for m in merged if m[3])
    if n_reduced == 0:
        return out_shape, None
    if len(merged) == 1:  # (a 1-d loop is a 2-d one with one row)
        merged = merged + [([], 1, 0, True)]
    squeezed = [d for d in range(len(shape)) if shape[d] != 1]
    rank = {d: i for i, d in enumerate(squeezed)}
    axes = tuple(rank[d] for dims_, *_ in reversed(merged) for d in reversed(dims_))
    return out_shape, (tuple(shape[d] for d in squeezed), None if axes == tuple(range(len(axes))) else axes,
                       tuple(m[1] for m in reversed(merged)), (merged[0][2], merged[1][2]), len(merged) - n_reduced)


# ---- the sum -----------------------------------------------------------------------------------------------


def _sum_real(a: np.ndarray, plan: tuple, lanes: int) -> np.ndarray:
    """ATen's sum of a float32/float64 array run as ``plan`` says (:func:`_plan`, for ``a`` or, for its real
    and imaginary parts, for a complex array)."""
    out_shape, loop = plan
    if loop is None:  # nothing to add up: the output is ``0 + self``
        return (a + a.dtype.type(0)).reshape(out_shape)
    squeezed, axes, merged_shape, plane_strides, kept = loop
    plane = a.reshape(squeezed) if axes is None else a.reshape(squeezed).transpose(axes)
    sums = _plane_sums(plane.reshape(merged_shape), plane_strides, lanes)
    if sums.ndim > kept + 1:  # the loop's further reduced dims: each result added into the output in turn
        sums = ordered_sum(sums.reshape(sums.shape[:kept] + (-1,)), kept)
    elif sums.ndim > kept:
        sums = ordered_sum(sums, kept)
    return (sums + a.dtype.type(0)).reshape(out_shape)


def _plan_for(a: np.ndarray, dims) -> tuple:
    return _plan(a.shape, a.strides, a.itemsize, dims)


def cascade_sum(a: np.ndarray, dims: tuple | None, layout: np.ndarray | None = None) -> np.ndarray:
    """ATen's CPU sum of ``a`` (float16/32/64, complex64/128) over ``dims`` (a tuple of non-negative dims, or
    None for all), without the reduced dims; the result has ``a``'s dtype. ``layout``, an array of ``a``'s
    shape and dtype, stands for the tensor whose strides decide the order (``a`` itself by default)."""
    if a.size == 0:
        return np.zeros(_plan_for(a, dims)[0], a.dtype)
    if layout is not None and a.dtype != _F16:
        return _sum_real(a, _plan_for(layout, dims), vector_lanes(a.dtype))
    if a.dtype == _F16:  # summed as float32 (``a.to(float)``, laid out as ATen does), rounded once at the end
        wide = cast_as_aten(a, np.dtype(np.float32))
        return _sum_real(wide, _plan_for(wide, dims), vector_lanes(np.float32)).astype(np.float16)
    if a.dtype.kind == "c":  # complex vectors: the real and imaginary parts are added apart, lane by lane
        plan, lanes = _plan_for(a, dims), vector_lanes(a.dtype)
        out = np.empty(plan[0], a.dtype)
        out.real = _sum_real(a.real, plan, lanes)
        out.imag = _sum_real(a.imag, plan, lanes)
        return out
    return _sum_real(a, _plan_for(a, dims), vector_lanes(a.dtype))


def cast_as_aten(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``a.to(dtype)`` laid out as ATen lays it out (``empty_like``'s strides): the layout decides the sum's order."""
    return a if a.dtype == dtype else copy_preserving_layout(a, dtype)


def cascade_mean(a: np.ndarray, dims, dtype: np.dtype) -> np.ndarray:
    """ATen's CPU mean: the sum (float16 summed as float32), divided by the count in the sum's dtype."""
    wide = np.dtype(np.float32) if dtype == _F16 else dtype
    total = _sum_dispatch(cast_as_aten(a, wide), dims)
    count = math.prod(a.shape if dims is None else (a.shape[d] for d in dims))
    if count == 0:  # (an empty mean is 0 / 0, quietly)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (total / total.dtype.type(0)).astype(dtype, copy=False)
    return (total / total.dtype.type(count)).astype(dtype, copy=False)


def _keepdim(out: np.ndarray, shape: tuple, dims, keepdim: bool) -> np.ndarray:
    """The result as an array (NumPy makes 0-d results scalars), with the reduced dims kept if asked."""
    if not keepdim:
        return np.asarray(out)
    return np.asarray(out).reshape(tuple(1 if dims is None or d in dims else s for d, s in enumerate(shape)))


def column_sums(a: np.ndarray) -> np.ndarray:
    """``a.sum(0)`` of a C-contiguous float32/float64 matrix of at least two rows and two columns (a bias's
    gradient), as ``sum_as_aten(a, (0,), False)`` gives it: the kernel's outer path, without the general set-up,
    which costs more than the additions for small matrices."""
    rows, cols = a.shape
    lanes = vector_lanes(a.dtype)
    cascaded = cols // (_ILP * lanes) * (_ILP * lanes) if cols >= lanes else cols // _ILP * _ILP
    zero = a.dtype.type(0)
    if not cascaded and rows < 16 * _ILP and rows % _ILP == 0:
        # (``_short_row_sum`` of whole groups of four rows, plus +0.0, without its slices and loop: the four
        # interleaved partial sums, each down its rows in order, then added in order. ``accumulate`` as there: a
        # reduction from +0.0 gives the same numbers, but where two partial sums are NaNs of other signs NumPy's
        # loops do not keep the same one.)
        partials = np.add.reduce(a.reshape(rows // _ILP, _ILP, cols), axis=0)
        return np.add.accumulate(partials, axis=0)[-1] + zero
    if cascaded == cols and rows <= 16:
        # One ordered sum down the rows started from +0.0 rather than +0.0 added after it: one NumPy call fewer, the
        # same bits (the two differ only in the sign of a zero sum, which both make +0.0; the same loop adds each
        # column, so NaNs propagate alike).
        return np.add.reduce(a, axis=0, initial=zero)
    if rows <= 16:  # (one cascade run: an ordered sum down the rows; NumPy's reduction over rows keeps the order)
        head = np.add.reduce(a[:, :cascaded], axis=0) if cascaded else None
    else:
        head = _cascade(a[:, :cascaded], 0) if cascaded else None
    if cascaded == cols:
        return head + zero
    tail = _short_row_sum(a[:, cascaded:]) if rows < 16 * _ILP else _row_sum(a[:, cascaded:], 0)
    return (tail if head is None else np.concatenate((head, tail))) + zero


def _short_row_sum(a: np.ndarray) -> np.ndarray:
    """``row_sum`` down the columns of a matrix of fewer than 64 rows (its cascades are plain ordered sums)."""
    groups = a.shape[0] // _ILP
    if groups == 0:
        return ordered_sum(a, 0)
    # (the 4-row axis has the smaller stride, so NumPy's reduction adds the groups in order)
    partials = np.add.reduce(a[:groups * _ILP].reshape(groups, _ILP, a.shape[1]), axis=0)
    first = partials[0]
    for row in a[groups * _ILP:]:  # the leftover rows go into the first partial sum
        first += row
    return np.add.accumulate(partials, axis=0)[-1]  # ((first + second) + third) + fourth


def _short_rows_sums(rows: np.ndarray) -> np.ndarray:
    """The inner path's sums of the rows of a C-contiguous matrix whose rows hold at least one vector and fewer
    than 256 groups of four vectors (so each cascade has one level of runs at most)."""
    lanes = vector_lanes(rows.dtype)
    n = rows.shape[1]
    vectors, groups = n // lanes, n // (_ILP * lanes)
    if groups:
        partials = _grouped_cascade(rows[:, :groups * _ILP * lanes].reshape(-1, groups, _ILP, lanes))
        acc = partials[:, 0]
    else:
        acc = rows[:, :lanes]
    for v in range(groups * _ILP + (0 if groups else 1), vectors):  # the leftover vectors, into the first sum
        acc = acc + rows[:, v * lanes:(v + 1) * lanes]
    if groups:
        acc = ((acc + partials[:, 1]) + partials[:, 2]) + partials[:, 3]
    terms = np.concatenate((rows[:, vectors * lanes:], acc), axis=1) if vectors * lanes < n else acc
    return np.add.accumulate(terms, axis=1)[:, -1] + rows.dtype.type(0)


_RUN = 16  # ``multi_row_sum``'s run length for fewer than 2**20 terms (see _cascade)


def _grouped_cascade(groups: np.ndarray) -> np.ndarray:
    """:func:`_cascade` along axis 1 of ``groups`` (rows, count, ...) for a count below ``_RUN ** 2``: the runs of
    ``_RUN`` summed in order, the leftover terms summed, then that plus the sum of the runs. (Axis 1 is not the
    innermost, so NumPy's reductions along it add in order.)"""
    count = groups.shape[1]
    if count <= _RUN:  # (one run at most: its sum is the total)
        return np.add.reduce(groups, axis=1) if count > 1 else groups[:, 0]
    whole = count // _RUN * _RUN
    runs = np.add.reduce(groups[:, :whole].reshape((groups.shape[0], whole // _RUN, _RUN) + groups.shape[2:]), axis=2)
    total = np.add.reduce(runs, axis=1) if whole > _RUN else runs[:, 0]
    if whole == count:
        return total
    leftover = np.add.reduce(groups[:, whole:], axis=1) if count - whole > 1 else groups[:, whole]
    return leftover + total


# Where the terms of a row shorter than one vector go: ``row_sum``'s four scalar partial sums take one of the first
# four terms each, the first also the terms after them; the four are then added in order.
_SCALAR_ROW_ORDER = tuple(tuple(range(n)) if n <= _ILP else (0, *range(_ILP, n), *range(1, _ILP)) for n in range(16))


def _sub_vector_rows_sums(rows: np.ndarray) -> np.ndarray:
    """The sums of the rows of a C-contiguous matrix whose rows are shorter than one vector (the scalar path)."""
    order = _SCALAR_ROW_ORDER[rows.shape[1]]
    zero = rows.dtype.type(0)
    if rows.shape[0] == 1:  # (one NumPy call for the additions: accumulate adds in order)
        terms = rows[0] if order[-1] == len(order) - 1 else rows[0, order]
        return np.add.accumulate(terms)[-1:] + zero
    # (many rows: accumulate along the rows' axis crawls; one whole-column addition per term)
    acc = rows[:, order[0]]
    for j in order[1:]:
        acc = acc + rows[:, j]
    return acc + zero


def _sum_dispatch(a: np.ndarray, dims: tuple | None) -> np.ndarray:
    """``cascade_sum``, through a shorter road for the common small cases of C-contiguous float16/32/64 arrays: a
    bias's gradient (``sum(0)`` of a matrix), a full sum or a sum over the last dim."""
    if a.flags.c_contiguous and a.ndim and a.size and (a.dtype == _F32 or a.dtype == _F64 or a.dtype == _F16):
        if dims == (0,) and a.ndim == 2 and a.shape[0] > 1 and a.shape[1] > 1 and a.dtype != _F16:
            return column_sums(a)
        if dims is None or dims == (a.ndim - 1,):
            sums = _row_sums(a, dims)
            if sums is not None:
                return sums
    return cascade_sum(a, dims)


def _row_sums(a: np.ndarray, dims: tuple | None) -> np.ndarray | None:
    """The sum of a non-empty C-contiguous float16/32/64 array over all dims (None) or its last, one row each, where
    a short road gives ``cascade_sum``'s bits; else None."""
    n = a.size if dims is None else a.shape[-1]
    rows = a.size // n
    lanes = vector_lanes(_F32 if a.dtype == _F16 else a.dtype)
    if n < lanes:
        row_sums = _sub_vector_rows_sums
    elif n < _RUN ** 2 * _ILP * lanes and (rows == 1 or (n < (_RUN + 1) * _ILP * lanes and a.dtype != _F16)):
        # (several rows of whole vectors may give a NaN of another sign than cascade_sum's: float32/float64 have
        # always taken this road for one run of groups, and keep doing so; the rest keep cascade_sum's NaNs)
        row_sums = _short_rows_sums
    else:
        return None
    if a.dtype == _F16:  # (summed as float32, as cascade_sum does: the float32 copy of a C array is a C array)
        return row_sums(a.astype(_F32).reshape(rows, n)).astype(_F16).reshape(a.shape[:-1] if dims else ())
    return row_sums(a.reshape(rows, n)).reshape(a.shape[:-1] if dims else ())


def sum_as_aten(a: np.ndarray, dims: tuple | None, keepdim: bool, dtype: np.dtype | None = None) -> np.ndarray:
    """``torch.sum(a, dims, keepdim, dtype=dtype)`` on the CPU: ``a`` first cast to ``dtype``, as ATen does."""
    return _keepdim(_sum_dispatch(a if dtype is None else cast_as_aten(a, dtype), dims), a.shape, dims, keepdim)


def mean_as_aten(a: np.ndarray, dims: tuple | None, keepdim: bool, dtype: np.dtype) -> np.ndarray:
    """``torch.mean(a, dims, keepdim, dtype=dtype)`` on the CPU (``dtype`` floating or complex)."""
    return _keepdim(cascade_mean(a, dims, dtype), a.shape, dims, keepdim)


def nansum_as_aten(a: np.ndarray, dims: tuple | None, keepdim: bool, dtype: np.dtype | None = None) -> np.ndarray:
    """``torch.nansum`` of a float32/float64 array: the sum's order, each NaN loaded as zero."""
    source = a if dtype is None else cast_as_aten(a, dtype)
    values = np.where(np.isnan(source), source.dtype.type(0), source)
    return _keepdim(cascade_sum(values, dims, layout=source), a.shape, dims, keepdim)
