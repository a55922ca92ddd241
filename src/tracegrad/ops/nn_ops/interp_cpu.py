"""Linear, bilinear, trilinear and bicubic resampling computed as PyTorch's CPU kernels compute them, rounding
for rounding, with index arrays and per-axis weights (no dense matrices).

What decides the bits, as measured against torch 2.13 (AVX512 build):

* indices and weights are computed in the kernel's "opmath" type (float32 for half and float32, float64 for
  float64), and the kernel files are compiled with floating-point contraction, so ``a * b + c`` is one fused
  multiply-add (FMA) with a single rounding. NumPy has no FMA: :func:`fma` emulates it;
* the forward has two kernels: a generic one, nested two-tap (four for cubic) sums over the spatial dims, from
  the innermost out, and, for bilinear and trilinear, a "channels-last" one that sums the 4 or 8 corner terms
  at once, with weights ``h * w`` (``d * h * w``), in an order that differs between the vectorised channels and
  the scalar tail (the last ``C % lanes`` channels). Torch picks the kernel from the layout, the channel count,
  the output size and its thread count (:func:`uses_channels_last_kernel`);
* the backward adds each output's contributions into the input gradient one at a time, outputs in row-major
  order, corners within an output in the kernel's order; the order fixes the rounding of every partial sum, so
  :func:`_accumulate` replays it: step by step, every input element taking its next contribution at once.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from itertools import product

import numpy as np

from ..._runtime import get_num_threads
from .. import aten_vec

_CUBIC_A = -0.75  # Keys' cubic convolution coefficient in PyTorch's (non antialiased) bicubic


# The channels-last kernel's vector width: 32 bytes (8 float32, 4 float64 lanes), as measured with torch 2.13's
# AVX512 build (its channels beyond the last whole vector are summed in the scalar order)
_SIMD_BYTES = 32


# ---- arithmetic ----------------------------------------------------------------------------------------------


def opmath(dtype: np.dtype) -> type:
    """The type torch's kernels compute in: float64 for float64, float32 otherwise."""
    return np.float64 if dtype == np.float64 else np.float32


# (a float64 whose 29 low significand bits, those float32 drops, read 100...0 lies halfway between two float32s)
_DROPPED, _HALFWAY = aten_vec.FLOAT_MIDPOINT_BITS, aten_vec.FLOAT_MIDPOINT


def _flat_values(x, shape: tuple, flat: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.shape == shape:  # (a copy of a strided view is far cheaper than gathering from it by unravelled index)
        return np.take(np.ascontiguousarray(x).reshape(-1), flat)
    return np.broadcast_to(x, shape)[np.unravel_index(flat, shape)]


def _resolve_ties(s: np.ndarray, p: np.ndarray, c, ties: np.ndarray) -> None:
    """Where the float64 sum ``s = p + c`` fell exactly halfway between two float32s, move it one float64 ulp
    toward the exact sum (its rounding error, by Knuth's two-sum), so the float32 rounding goes the right way.
    (Mostly the sum was exact and nothing moves.)"""
    pv = _flat_values(p, s.shape, ties)
    cv = _flat_values(c, s.shape, ties).astype(np.float64)
    flat_s = s.reshape(-1)
    sv, err = aten_vec.two_sum(pv, cv)  # (sv: the float64 sum at the ties, as it stands in ``s``)
    if err.any():
        flat_s[ties] = np.where(err != 0, np.nextafter(sv, np.where(err > 0, np.inf, -np.inf)), sv)


def round_sum32(p: np.ndarray, c, out: np.ndarray | None = None) -> np.ndarray:
    """``float32(p + c)`` rounded once, ``p`` an exact float64 product of float32s and ``c`` float32 values: the
    float64 sum is rounded to float32, except where that double rounding could go wrong. ``out``: where the
    result goes."""
    s = np.add(p, c, dtype=np.float64)
    ties = np.flatnonzero(np.bitwise_and(s.view(np.int64), _DROPPED) == _HALFWAY)
    if ties.size:
        _resolve_ties(s, p, c, ties)
    if out is None:
        return s.astype(np.float32)
    np.copyto(out, s, casting="same_kind")
    return out


def fma(a, b, c) -> np.ndarray:
    """``a * b + c`` rounded once, in ``c``'s opmath type (float32 or float64).

    float32: the product is exact in float64, the sum rounded by :func:`round_sum32`. float64: error-free
    transformations of the product (Dekker) and the sum (Knuth), the errors added back at the end."""
    c = np.asarray(c)
    if c.dtype == np.float64:
        return aten_vec.fma(np.asarray(a, np.float64), np.asarray(b, np.float64), c)
    return round_sum32(np.multiply(a, b, dtype=np.float64), c)


def fused_chain(first: np.ndarray, second: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The running sum of a kernel's multiply-adds: ``acc = fma(first[k], second[k], acc)`` for each step k from
    ``acc = start``, each rounded once in ``start``'s opmath type (as :func:`fma` step by step). ``first`` and
    ``second`` broadcast to (steps,) + ``start.shape``."""
    if start.dtype == np.float64:
        return _chain64(first, second, start)
    return _chain32(np.multiply(first, second, dtype=np.float64, order="C"), start)


def _chain32(products: np.ndarray, start: np.ndarray) -> np.ndarray:
    """float32 steps with exact float64 ``products`` (C-contiguous, steps first): each float64 sum rounded to
    float32, two NumPy calls a step; where a double rounding may have gone wrong (a rare inexact sum on a float
    midpoint, found over all steps at once), again step by step with :func:`round_sum32`."""
    products = products.reshape(len(products), start.size)  # (one flat row a step: the fastest calls on small arrays)
    sums = np.empty(products.shape)
    addends = np.empty(products.shape, np.float32)  # (addends[k]: the running sum before step k)
    addends[0] = start.reshape(-1)
    out = np.empty(products.shape[1], np.float32)
    steps = list(zip(products, addends, sums, [*addends[1:], out]))  # (step k's result: step k + 1's addend)
    add = np.add
    for term, addend, total, result in steps:
        add(term, addend, out=total)
        result[...] = total
    if _inexact_midpoints(products, sums, addends):
        for term, addend, _, result in steps:
            round_sum32(term, addend, out=result)
    return out.reshape(start.shape)


def _inexact_midpoints(products: np.ndarray, sums: np.ndarray, addends: np.ndarray) -> bool:
    """Whether a float64 sum of :func:`_chain32` lies exactly halfway between two float32s while the exact sum does
    not (its rounding error, by Knuth's two-sum, is not zero): only there the float32 rounding of the float64 sum
    may differ from the fused one. (Most midpoints are exact sums, whose rounding is right.)"""
    ties = (np.bitwise_and(sums.view(np.int64), _DROPPED) == _HALFWAY).ravel().nonzero()[0]
    if not ties.size:
        return False
    p, c = products.ravel().take(ties), addends.ravel().take(ties).astype(np.float64)
    return bool(aten_vec.two_sum(p, c)[1].any())


def _chain64(first: np.ndarray, second: np.ndarray, start: np.ndarray) -> np.ndarray:
    """float64 steps: :func:`aten_vec.fma64_finite`'s arithmetic, the products' exact errors (Dekker) taken for all
    steps at once; where a result is not finite, again step by step with :func:`fma`, which handles those."""
    first, second = np.asarray(first, np.float64), np.asarray(second, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        products = np.multiply(first, second)
        errors = aten_vec.product_error(first, second, products)
        acc = start
        for k in range(len(products)):
            total, rounding = aten_vec.two_sum(products[k], acc)
            acc = total - (0.0 - (rounding + errors[k]))
    if np.all(np.isfinite(acc)):  # (a step's non-finite result stays non-finite to the end)
        return acc
    acc = start
    for k in range(len(products)):
        acc = fma(first[k], second[k], acc)
    return acc


# ---- per-axis indices and weights ----------------------------------------------------------------------------


def _scale(n_in: int, n_out: int, align_corners: bool, scale: float | None, dt: type):
    """area_pixel_compute_scale in ``dt``."""
    if align_corners:
        return dt(n_in - 1) / dt(n_out - 1) if n_out > 1 else dt(0)
    if scale is not None and scale > 0:
        return dt(1.0 / scale)  # (the reciprocal in double, then rounded)
    return dt(n_in) / dt(n_out)


def _source_index(n_in: int, n_out: int, align_corners: bool, scale: float | None, dt: type,
                  cubic: bool, fused: bool = True) -> np.ndarray:
    """area_pixel_compute_source_index for every output index: ``scale * (o + 0.5) - 0.5`` (one FMA where the
    kernel's file is compiled with contraction), clamped at 0 for the linear modes."""
    ratio = _scale(n_in, n_out, align_corners, scale, dt)
    dst = np.arange(n_out).astype(dt)
    if align_corners:
        return ratio * dst
    shifted = dst + dt(0.5)
    if fused:
        real = fma(np.full(n_out, ratio, dt), shifted, np.full(n_out, -0.5, dt))
    else:
        real = ratio * shifted - dt(0.5)
    return real if cubic else np.where(real < 0, dt(0), real)


def _guard(real: np.ndarray, n_in: int) -> tuple[np.ndarray, np.ndarray]:
    """guard_index_and_lambda: the floor, kept below the input size, and the fraction clamped to [0, 1]."""
    # (floorf: a float64 index is rounded to float32 before its floor)
    index = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), n_in - 1)
    lam = np.clip(real - index.astype(real.dtype), 0, 1).astype(real.dtype)
    return index, lam


@dataclass(frozen=True)
class AxisTaps:
    """The taps of one axis: ``index[t, o]`` the input index tap ``t`` of output ``o`` reads, ``weight[t, o]``
    its weight (opmath)."""

    index: np.ndarray
    weight: np.ndarray


def linear_taps(n_in: int, n_out: int, align_corners: bool, scale: float | None, dt: type) -> AxisTaps:
    """compute_source_index_and_lambda: two taps, the same index twice with weights (1, 0) when the size does
    not change."""
    if n_in == n_out:
        o = np.arange(n_out)
        return AxisTaps(np.stack([o, o]), np.stack([np.ones(n_out, dt), np.zeros(n_out, dt)]))
    real = _source_index(n_in, n_out, align_corners, scale, dt, cubic=False)
    i0, lam1 = _guard(real, n_in)
    i1 = i0 + (i0 < n_in - 1)
    return AxisTaps(np.stack([i0, i1]), np.stack([(dt(1) - lam1).astype(dt), lam1]))


def _cubic_near(x: np.ndarray, fused: bool) -> np.ndarray:
    """cubic_convolution1, ``((A + 2) x - (A + 3)) x x + 1``, for |x| <= 1; ``fused``: as the forward's kernel
    compiles it (measured): the first step an FMA, the last not."""
    dt = x.dtype.type
    a2, a3, one = dt(_CUBIC_A + 2), dt(_CUBIC_A + 3), dt(1)
    inner = fma(np.full_like(x, a2), x, np.full_like(x, -a3)) if fused else a2 * x - a3
    return (inner * x) * x + one


def _cubic_far(x: np.ndarray, fused: bool) -> np.ndarray:
    """cubic_convolution2, ``((A x - 5A) x + 8A) x - 4A``, for 1 < |x| < 2; ``fused``: as the forward's kernel
    compiles it (measured): the first two steps FMAs, the last not."""
    dt = x.dtype.type
    a, a5, a8, a4 = dt(_CUBIC_A), dt(5 * _CUBIC_A), dt(8 * _CUBIC_A), dt(4 * _CUBIC_A)
    if not fused:
        return ((a * x - a5) * x + a8) * x - a4
    full = np.full_like
    return fma(fma(full(x, a), x, full(x, -a5)), x, full(x, a8)) * x - a4


def cubic_taps(n_in: int, n_out: int, align_corners: bool, scale: float | None, dt: type,
               fused: bool = True) -> AxisTaps:
    """Four taps around the unclamped source index's floor (indices clamped to the input), with
    get_cubic_upsample_coefficients' weights; ``fused``: computed with FMAs (the forward's kernel file)."""
    real = _source_index(n_in, n_out, align_corners, scale, dt, cubic=True, fused=fused)
    base, t = _guard(real, n_in)
    one = dt(1)
    weights = (_cubic_far(t + one, fused), _cubic_near(t, fused), _cubic_near(one - t, fused),
               _cubic_far((one - t) + one, fused))
    index = np.stack([np.clip(base - 1 + k, 0, n_in - 1) for k in range(4)])
    return AxisTaps(index, np.stack(weights).astype(dt))


# ---- terms: the multiply-adds of a kernel, as tables -----------------------------------------------------------


@dataclass(frozen=True)
class Terms:
    """The multiply-adds giving each element of a kernel's result, in the kernel's order, as tables: term ``t`` of
    element ``j`` multiplies source element ``index[t, j]`` (flat) by ``weight[t, 0, j]`` (opmath). The first
    term's product is rounded alone, each further one fused onto the running sum (:func:`apply_terms`)."""

    index: np.ndarray
    weight: np.ndarray


def _read_only(*arrays: np.ndarray) -> None:
    for array in arrays:  # (shared by every call of a cached plan: read, never written)
        array.flags.writeable = False


def _terms(index: list, weight: list, order: list) -> Terms:
    """Terms from per-term flat ``index``/``weight`` arrays, taken in ``order``."""
    terms = Terms(np.stack([index[t] for t in order]), np.stack([weight[t] for t in order])[:, None])
    _read_only(terms.index, terms.weight)
    return terms


_BLOCK_ELEMENTS = 1 << 18  # (terms times results per block: the float64 temporaries stay in cache)


def _column_blocks(rows: int, steps: int, columns: int) -> list[slice]:
    """Slices of the results' columns, about ``_BLOCK_ELEMENTS`` terms (over all rows) each."""
    step = max(1, _BLOCK_ELEMENTS // max(1, rows * steps))
    return [slice(i, i + step) for i in range(0, columns, step)] if step < columns else [slice(None)]


def _terms_sum(values: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The sum of ``values * weight`` over the first axis, in order: the first product rounded alone, each further
    one fused onto the running sum."""
    start = values[0] * weight[0]
    return fused_chain(values[1:], weight[1:], start) if len(values) > 1 else start


def apply_terms(source: np.ndarray, terms: Terms) -> np.ndarray:
    """Each row of ``source`` (rows, n, in opmath) through ``terms``: ``x[i1] * w1`` rounded, then
    ``fma(x[i0], w0, .)``, ``fma(x[i2], w2, .)``, ... as the terms are ordered. Returns (rows, results)."""
    out = np.empty((source.shape[0], terms.index.shape[1]), source.dtype)
    for block in _column_blocks(*source.shape[:1], *terms.index.shape):
        values = source.take(terms.index[:, block], axis=1).transpose(1, 0, 2)  # (terms, rows, results)
        out[:, block] = _terms_sum(values, terms.weight[:, :, block])
    return out


# ---- forward -------------------------------------------------------------------------------------------------


def stored_weights(taps: AxisTaps, dtype: np.dtype) -> list[np.ndarray]:
    """The weights as the generic kernel stores them, in the input's dtype (read back in opmath); for half,
    the linear ``lambda0`` is ``1 - lambda1`` taken from the stored ``lambda1``."""
    work = opmath(dtype)
    stored = [w.astype(dtype) for w in taps.weight]
    if len(stored) == 2 and np.dtype(dtype) != np.dtype(work):
        stored[0] = (work(1) - stored[1].astype(work)).astype(dtype)
    return [w.astype(work) for w in stored]


def _nested_order(n: int) -> list:
    """The generic kernel's order (its Interpolate struct, as compiled): the second product rounded, the first
    fused onto it, then each further one."""
    return [1, 0] + list(range(2, n))


def _axis_terms(taps: AxisTaps, dtype: np.dtype, trailing: int) -> Terms:
    """The generic kernel's terms along one axis, the results laid out (axis outputs, ``trailing`` elements)
    (its index reads the axis, its weights repeat over the trailing elements)."""
    weights = [np.repeat(w, trailing) for w in stored_weights(taps, dtype)]
    return _terms(list(taps.index), weights, _nested_order(len(weights)))


_CHUNK_ELEMENTS = 1 << 17  # (planes are resampled a few at a time, so the float64 temporaries stay in cache)


def plane_chunks(planes: int, plane_size: int) -> list[slice]:
    """Slices of the leading (batch x channel) planes, about ``_CHUNK_ELEMENTS`` elements each."""
    step = max(1, _CHUNK_ELEMENTS // max(1, plane_size))
    return [slice(i, i + step) for i in range(0, planes, step)]


def generic_forward(x: np.ndarray, plan: ResamplePlan, dtype: np.dtype) -> np.ndarray:
    """upsample_generic_Nd_kernel_impl: the weights stored in the input's dtype, the value of each output the
    nested sum over the axes, from the last (innermost) axis out, in opmath (``x``'s dtype). Each inner sum
    depends only on the outer input index it is taken at, so the axes can be reduced one after the other."""
    k = len(plan.in_sizes)
    planes = x.reshape((-1,) + x.shape[x.ndim - k:])
    out_sizes = tuple(plan.out_sizes)
    out = np.empty((planes.shape[0],) + out_sizes, x.dtype)
    for chunk in plane_chunks(planes.shape[0], max(math.prod(planes.shape[1:]), math.prod(out_sizes))):
        part = planes[chunk]
        for i in reversed(range(k)):
            part = _resampled_axis(part, i + 1, plan.axis_terms(dtype, i))
        out[chunk] = part
    return out.reshape(x.shape[: x.ndim - k] + out_sizes)


def _resampled_axis(part: np.ndarray, axis: int, terms: Terms) -> np.ndarray:
    """``part`` resampled along ``axis`` by the generic kernel's ``terms`` (:func:`_axis_terms`: their weights
    repeat over the elements after the axis)."""
    values = np.take(part, terms.index, axis=axis)  # (lead..., terms, axis outputs, trailing...)
    steps, outputs = terms.index.shape
    flat = values.reshape(math.prod(part.shape[:axis]), steps, outputs * math.prod(part.shape[axis + 1:]))
    summed = _terms_sum(flat.transpose(1, 0, 2), terms.weight)
    return summed.reshape(part.shape[:axis] + (outputs,) + part.shape[axis + 1:])


def _corner_orders(n: int) -> dict:
    """The channels-last kernel's orders of its ``n`` corner terms: the vector lanes' ``t0 + (t1 + (... + (t_{n-2}
    + t_{n-1})))``, the scalar tail's nested order, and half's scalar tail (the first product rounded, the second
    fused onto it; measured)."""
    return {"vector": [n - 2, n - 1] + list(range(n - 3, -1, -1)), "scalar": _nested_order(n),
            "half": list(range(n))}


def _corner_terms(axes: tuple[AxisTaps, ...], in_sizes: tuple, order: str) -> Terms:
    """cpu_upsample_linear_channels_last's terms: each output's 2**k corners (outermost axis slowest), weights
    the products of the axes' lambdas in opmath, outermost axis first."""
    k = len(axes)
    out_sizes = tuple(a.index.shape[1] for a in axes)
    strides = [math.prod(in_sizes[i + 1:]) for i in range(k)]
    index, weight = [], []
    for corner in product((0, 1), repeat=k):
        flat, w = 0, None
        for i, c in enumerate(corner):
            shape = _axis_shape(i, k)
            flat = flat + axes[i].index[c].reshape(shape) * strides[i]
            lam = axes[i].weight[c].reshape(shape)
            w = lam if w is None else w * lam
        index.append(np.broadcast_to(flat, out_sizes).ravel())
        weight.append(np.broadcast_to(w, out_sizes).ravel())
    return _terms(index, weight, _corner_orders(len(index))[order])


def _axis_shape(i: int, k: int) -> list:
    return [-1 if j == i else 1 for j in range(k)]


def channels_last_forward(x: np.ndarray, plan: ResamplePlan, dtype: np.dtype) -> np.ndarray:
    """cpu_upsample_linear_channels_last: each output the sum of its 2**k corners, the channels filling whole
    vectors summed one way and the tail another (:func:`_corner_orders`). ``x`` is in opmath; ``dtype``, the
    input's, sets the vector width in channels (16 for half) and the tail's order."""
    k = len(plan.in_sizes)
    batch, channels = x.shape[:2]
    half = dtype.itemsize < x.dtype.itemsize
    lanes = _SIMD_BYTES // dtype.itemsize
    split = channels - channels % lanes
    planes = x.reshape(batch, channels, math.prod(plan.in_sizes))
    parts = []
    if split:
        parts.append((planes[:, :split], "vector"))
    if split < channels:
        parts.append((planes[:, split:], "half" if half else "scalar"))
    outs = [apply_terms(p.reshape(math.prod(p.shape[:2]), p.shape[2]), plan.corner_terms(dtype, order)).reshape(
                p.shape[:2] + (math.prod(plan.out_sizes),))
            for p, order in parts]
    out = outs[0] if len(outs) == 1 else np.concatenate(outs, axis=1)
    return out.reshape((batch, channels) + tuple(plan.out_sizes[:k]))


def is_channels_last(x: np.ndarray) -> bool:
    """``x.is_contiguous(memory_format=channels_last{,_3d})`` as torch checks it: strides decreasing from N
    through the spatial dims to C, size-1 dims ignored."""
    if x.ndim not in (4, 5):
        return False
    order = (1,) + tuple(range(x.ndim - 1, 1, -1)) + (0,)  # (fastest first: C, W, H, [D], N)
    expected = x.itemsize
    for d in order:
        if x.shape[d] != 1 and x.strides[d] != expected:
            return False
        expected *= x.shape[d]
    return True


def uses_channels_last_kernel(x: np.ndarray, out_sizes: tuple[int, ...], cubic: bool) -> bool:
    """Torch's choice of its vectorised channels-last kernel for (bi|tri)linear: a channels-last input of more
    than 3 channels, or (2-d) an output of height + width <= 128, or (2-d, one thread) 3 channels."""
    if cubic or x.ndim == 3:
        return False
    wide = is_channels_last(x) and x.shape[1] > 3
    if x.ndim == 5:
        return wide
    return wide or sum(out_sizes) <= 128 or (get_num_threads() == 1 and x.shape[1] == 3)


# ---- backward ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Contributions:
    """The backward's contributions to each input element, in the kernel's order, as tables: step ``t`` of input
    element ``j`` takes output ``index[t, j]`` (flat; ``index`` = the number of outputs: none, a -0.0 that
    changes nothing) times the axes' ``weights`` (each (steps, 1, inputs), opmath) at ``[t, 0, j]``. The input
    elements are ordered by their number of contributions (``counts``, ascending), so a block of them takes only
    as many steps as its last one has; ``restore`` puts them back in order."""

    index: np.ndarray
    weights: tuple
    counts: np.ndarray
    restore: np.ndarray


def _contributions(axes: tuple[AxisTaps, ...], in_sizes: tuple, cubic: bool) -> Contributions:
    """The backward kernels add each output's contributions into the input gradient one at a time, outputs in
    row-major order, the taps of an output outermost axis first (bicubic: innermost first); an input element
    takes its own in that order. Linear weights are the lambdas' product in opmath, outermost axis first;
    bicubic keeps its two coefficients apart (``(g * cy) * cx``)."""
    target, source, weights = _contribution_grid(axes, in_sizes, cubic)
    order = np.argsort(target, kind="stable")
    target = target[order]
    counts = np.bincount(target, minlength=math.prod(in_sizes))
    rank = np.arange(target.size) - (np.cumsum(counts) - counts)[target]
    by_count = np.argsort(counts, kind="stable")
    column = np.argsort(by_count)[target]  # (each contribution's input element, in the order by count)
    steps = int(counts.max()) if counts.size else 0
    index = np.full((steps, counts.size), math.prod(a.index.shape[1] for a in axes), np.intp)
    index[rank, column] = source[order]
    tables = []
    for w in weights:
        table = np.ones((steps, 1, counts.size), w.dtype)
        table[rank, 0, column] = w[order]
        tables.append(table)
    made = Contributions(index, tuple(tables), counts[by_count], np.argsort(by_count))
    _read_only(made.index, made.counts, made.restore, *tables)
    return made


def _contribution_grid(axes: tuple[AxisTaps, ...], in_sizes: tuple, cubic: bool) -> tuple:
    """Every (output, taps) pair in the kernels' order, flat: its input element, its output and its weights
    (linear: the lambdas' product; bicubic: the two coefficients)."""
    k = len(axes)
    out_sizes = tuple(a.index.shape[1] for a in axes)
    tap_dims = [k + (k - 1 - i if cubic else i) for i in range(k)]  # (where each axis's tap varies)
    target, source, weights = 0, 0, []
    for i, taps in enumerate(axes):
        shape = [1] * (2 * k)
        shape[i], shape[tap_dims[i]] = out_sizes[i], taps.index.shape[0]
        order = (0, 1) if i < tap_dims[i] else (1, 0)  # ((output, tap) as the grid has them)
        target = target + taps.index.T.transpose(order).reshape(shape) * math.prod(in_sizes[i + 1:])
        source = source + np.arange(out_sizes[i]).reshape(_axis_shape(i, 2 * k)) * math.prod(out_sizes[i + 1:])
        weights.append(taps.weight.T.transpose(order).reshape(shape))
    if not cubic:
        product_weight = weights[0]
        for w in weights[1:]:
            product_weight = product_weight * w
        weights = [product_weight]
    full = np.broadcast_shapes(*(w.shape for w in weights), np.shape(target), np.shape(source))
    return tuple(np.broadcast_to(a, full).ravel() for a in (target, source)) + ([
        np.broadcast_to(w, full).ravel() for w in weights],)


def accumulate(g: np.ndarray, plan: ResamplePlan, dtype: np.dtype, cubic: bool) -> np.ndarray:
    """The backward kernels' scatter-add, one contribution at a time per input element, in their order:
    linear ``gin = fma(lh * lw, g, gin)``, bicubic ``gin = gin + (g * cy) * cx`` (its file is compiled without
    contraction), in opmath."""
    k = len(plan.in_sizes)
    work = opmath(dtype)
    lead = g.shape[: g.ndim - k]
    table = plan.contributions(dtype)
    rows = g.astype(work, copy=False).reshape(-1, math.prod(g.shape[g.ndim - k:]))
    rows = np.concatenate([rows, np.full((rows.shape[0], 1), -0.0, work)], axis=1)  # (the -0.0 of no output)
    out = np.zeros((rows.shape[0], table.index.shape[1]), work)
    for block in _column_blocks(rows.shape[0], *table.index.shape):
        steps = int(table.counts[block][-1])
        if not steps:  # (no output reaches these: zeros)
            continue
        values = rows.take(table.index[:steps, block], axis=1).transpose(1, 0, 2)  # (steps, rows, inputs)
        weights = [w[:steps, :, block] for w in table.weights]
        zeros = np.zeros(values.shape[1:], work)
        out[:, block] = _cubic_sum(values, weights, zeros) if cubic else fused_chain(weights[0], values, zeros)
    return np.take(out, table.restore, axis=1).reshape(lead + tuple(plan.in_sizes))


def _cubic_sum(values: np.ndarray, weights: list, acc: np.ndarray) -> np.ndarray:
    """``acc + (g * cy) * cx`` step by step (``values`` the gathered g), every operation rounded in opmath."""
    contributions = np.multiply(values, weights[0], order="C")
    contributions *= weights[1]
    for step in contributions:
        np.add(acc, step, out=acc)
    return acc


# ---- the plan ------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class ResamplePlan:
    """What an interpolating upsample resamples (``mode`` "linear" or "cubic", the input and output sizes of
    the spatial dims, align_corners and the scales the kernel gets); ``adjoint``: the plan of its backward.
    Stands where the dense matrices stood: :func:`apply` maps an array by it. Its taps and the kernels' tables
    are made once, at first use, and shared with its adjoint."""

    mode: str
    in_sizes: tuple
    out_sizes: tuple
    align_corners: bool
    scales: tuple
    adjoint: bool = False
    _taps: dict = field(default_factory=dict, repr=False)  # (the taps made so far, by opmath type and fusing)
    _tables: dict = field(default_factory=dict, repr=False)  # (the kernels' terms made so far)
    _other: ResamplePlan | None = field(default=None, repr=False)  # (the adjoint, once made)

    def transposed(self) -> ResamplePlan:
        """The adjoint plan (the backward; its adjoint is the forward again), sharing the taps and tables."""
        if self._other is None:
            self._other = ResamplePlan(self.mode, self.in_sizes, self.out_sizes, self.align_corners, self.scales,
                                       not self.adjoint, self._taps, self._tables, self)
        return self._other

    def taps(self, dt: type, fused: bool = True) -> tuple[AxisTaps, ...]:
        key = (dt, fused)
        if key not in self._taps:
            make = cubic_taps if self.mode == "cubic" else linear_taps
            extra = {"fused": fused} if self.mode == "cubic" else {}
            made = tuple(make(n, o, self.align_corners, s, dt, **extra)
                         for n, o, s in zip(self.in_sizes, self.out_sizes, self.scales))
            for axis in made:
                _read_only(axis.index, axis.weight)
            self._taps[key] = made
        return self._taps[key]

    def _table(self, key: tuple, make) -> object:
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = make()
        return table

    def axis_terms(self, dtype: np.dtype, axis: int) -> Terms:
        """The generic forward kernel's terms along ``axis`` (inputs of ``dtype``)."""
        trailing = math.prod(self.out_sizes[axis + 1:])
        return self._table(("axis", dtype, axis), lambda: _axis_terms(
            self.taps(opmath(dtype))[axis], dtype, trailing))

    def corner_terms(self, dtype: np.dtype, order: str) -> Terms:
        """The channels-last forward kernel's corner terms in ``order`` (see :func:`_corner_orders`)."""
        return self._table(("corners", opmath(dtype), order), lambda: _corner_terms(
            self.taps(opmath(dtype)), tuple(self.in_sizes), order))

    def contributions(self, dtype: np.dtype) -> Contributions:
        """The backward's contributions for gradients of ``dtype``."""
        cubic = self.mode == "cubic"
        return self._table(("contributions", opmath(dtype)), lambda: _contributions(
            self.taps(opmath(dtype), fused=not cubic), tuple(self.in_sizes), cubic))

    def apply(self, x: np.ndarray) -> np.ndarray:
        return _backward(self, x) if self.adjoint else _forward(self, x)


def _forward(plan: ResamplePlan, x: np.ndarray) -> np.ndarray:
    dtype = x.dtype
    work = x.astype(opmath(dtype), copy=False)
    if uses_channels_last_kernel(x, plan.out_sizes, plan.mode == "cubic"):
        out = channels_last_forward(work, plan, dtype)
    else:
        out = generic_forward(work, plan, dtype)
    return np.ascontiguousarray(out.astype(dtype, copy=False))


def _backward(plan: ResamplePlan, g: np.ndarray) -> np.ndarray:
    cubic = plan.mode == "cubic"
    if cubic and tuple(plan.in_sizes) == tuple(plan.out_sizes):  # (the bicubic backward copies then)
        return np.ascontiguousarray(g)
    out = accumulate(g, plan, g.dtype, cubic)
    return np.ascontiguousarray(out.astype(g.dtype, copy=False))


@functools.lru_cache(maxsize=64)
def shared_plan(mode: str, in_sizes: tuple, out_sizes: tuple, align_corners: bool, scales: tuple) -> ResamplePlan:
    """The plan of these arguments, one per distinct call: its taps and the kernels' tables, which cost far more
    than a small image's resampling, are made once for all calls."""
    return ResamplePlan(mode, in_sizes, out_sizes, align_corners, scales)
