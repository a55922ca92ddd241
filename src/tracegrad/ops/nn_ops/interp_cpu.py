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


_DROPPED = 0x1FFFFFFF  # the 29 low significand bits a float64 loses in float32
_HALFWAY = 0x10000000  # ... reading 100...0: the float64 lies halfway between two float32s


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
    sv = flat_s[ties]
    z = sv - pv
    err = (pv - (sv - z)) + (cv - z)
    if err.any():
        flat_s[ties] = np.where(err != 0, np.nextafter(sv, np.where(err > 0, np.inf, -np.inf)), sv)


class Scratch:
    """Flat buffers reused from step to step, by name (the arrays are large, and fresh ones cost page faults)."""

    def __init__(self):
        self._buffers: dict = {}

    def take(self, name: str, shape: tuple, dtype=np.float64) -> np.ndarray:
        size = math.prod(shape)
        buffer = self._buffers.get(name)
        if buffer is None or buffer.size < size or buffer.dtype != dtype:
            buffer = self._buffers[name] = np.empty(size, dtype)
        return buffer[:size].reshape(shape)


def round_sum32(p: np.ndarray, c, out: np.ndarray | None = None, scratch: Scratch | None = None) -> np.ndarray:
    """``float32(p + c)`` rounded once, ``p`` an exact float64 product of float32s and ``c`` float32 values: the
    float64 sum is rounded to float32, except where that double rounding could go wrong. ``out``: where the
    result goes; ``scratch``: buffers for the temporaries."""
    shape = p.shape
    if scratch is None:
        s = np.add(p, c, dtype=np.float64)
        halfway = np.bitwise_and(s.view(np.int64), _DROPPED) == _HALFWAY
    else:
        s = np.add(p, c, out=scratch.take("sums", shape))
        low = np.bitwise_and(s.view(np.int64), _DROPPED, out=scratch.take("bits", shape, np.int64))
        halfway = np.equal(low, _HALFWAY, out=scratch.take("flags", shape, np.bool_))
    ties = np.flatnonzero(halfway)
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


# ---- forward -------------------------------------------------------------------------------------------------


def _nested_sum(terms: list, scratch: Scratch | None = None) -> np.ndarray:
    """``t0*w0 + t1*w1 + ...`` as the generic kernel's Interpolate struct compiles: the first product fused with
    the second as addend, each further product fused onto the sum."""
    (t0, w0), (t1, w1) = terms[0], terms[1]
    if scratch is None or t0.dtype != np.float32:
        out = fma(t0, w0, t1 * w1)
        for t, w in terms[2:]:
            out = fma(t, w, out)
        return out
    out = np.multiply(t1, w1)
    for t, w in terms[:1] + terms[2:]:
        product = np.multiply(t, w, dtype=np.float64, out=scratch.take("products", out.shape))
        round_sum32(product, out, out=out, scratch=scratch)
    return out


def stored_weights(taps: AxisTaps, dtype: np.dtype) -> list[np.ndarray]:
    """The weights as the generic kernel stores them, in the input's dtype (read back in opmath); for half,
    the linear ``lambda0`` is ``1 - lambda1`` taken from the stored ``lambda1``."""
    work = opmath(dtype)
    stored = [w.astype(dtype) for w in taps.weight]
    if len(stored) == 2 and np.dtype(dtype) != np.dtype(work):
        stored[0] = (work(1) - stored[1].astype(work)).astype(dtype)
    return [w.astype(work) for w in stored]


_CHUNK_ELEMENTS = 1 << 17  # (planes are resampled a few at a time, so the float64 temporaries stay in cache)


def plane_chunks(planes: int, plane_size: int) -> list[slice]:
    """Slices of the leading (batch x channel) planes, about ``_CHUNK_ELEMENTS`` elements each."""
    step = max(1, _CHUNK_ELEMENTS // max(1, plane_size))
    return [slice(i, i + step) for i in range(0, planes, step)]


def generic_forward(x: np.ndarray, axes: tuple[AxisTaps, ...], dtype: np.dtype) -> np.ndarray:
    """upsample_generic_Nd_kernel_impl: the weights stored in the input's dtype, the value of each output the
    nested sum over the axes, from the last (innermost) axis out, in opmath. Each inner sum depends only on the
    outer input index it is taken at, so the axes can be reduced one after the other."""
    k = len(axes)
    spatial = x.shape[x.ndim - k:]
    planes = x.reshape((-1,) + spatial)
    weights = []
    for i, taps in enumerate(axes):
        shape = [1] * (k + 1)
        shape[i + 1] = -1
        weights.append([w.reshape(shape) for w in stored_weights(taps, dtype)])
    out_sizes = tuple(t.index.shape[1] for t in axes)
    out = np.empty((planes.shape[0],) + out_sizes, x.dtype)
    scratch = Scratch()
    for chunk in plane_chunks(planes.shape[0], max(math.prod(spatial), math.prod(out_sizes))):
        part = planes[chunk]
        for i in reversed(range(k)):
            terms = [(np.take(part, idx, axis=i + 1), w) for idx, w in zip(axes[i].index, weights[i])]
            part = _nested_sum(terms, scratch)
        out[chunk] = part
    return out.reshape(x.shape[: x.ndim - k] + out_sizes)


def _half_tail_sum(terms: list) -> np.ndarray:
    """The channels-last kernel's scalar tail for half inputs: ``((t0 + t1) + t2) + ...`` with the second
    product fused onto the first (float32 fuses the first onto the second; measured)."""
    (t0, w0), (t1, w1) = terms[0], terms[1]
    out = fma(t1, w1, t0 * w0)
    for t, w in terms[2:]:
        out = fma(t, w, out)
    return out


def _corner_sum(terms: list, vectorised: bool, half: bool = False) -> np.ndarray:
    """The channels-last kernel's sum of its corner terms: the scalar tail as ``((t0 + t1) + t2) + ...`` with
    contraction (``half``: :func:`_half_tail_sum`), the vector lanes as ``t0 + (t1 + (... + (t_{n-2} +
    t_{n-1})))``, each with its FMAs."""
    if not vectorised:
        return _half_tail_sum(terms) if half else _nested_sum(terms)
    (ta, wa), (tb, wb) = terms[-2], terms[-1]
    out = fma(tb, wb, ta * wa)
    for t, w in reversed(terms[:-2]):
        out = fma(t, w, out)
    return out


def channels_last_forward(x: np.ndarray, axes: tuple[AxisTaps, ...], dtype: np.dtype | None = None) -> np.ndarray:
    """cpu_upsample_linear_channels_last: each output the sum of its 2**k corners, weights the products of the
    axes' lambdas in opmath (outermost axis first), the channels filling whole vectors summed one way and the
    tail another (:func:`_corner_sum`). ``x`` is in opmath; ``dtype``, the input's (default: ``x``'s), sets the
    vector width in channels (16 for half) and the tail's order."""
    k = len(axes)
    channels = x.shape[1]
    dtype = x.dtype if dtype is None else np.dtype(dtype)
    half = dtype.itemsize < x.dtype.itemsize
    lanes = _SIMD_BYTES // dtype.itemsize
    split = channels - channels % lanes
    terms = []
    for corner in product((0, 1), repeat=k):
        value = x
        weight = None
        for i, c in enumerate(corner):
            axis = x.ndim - k + i
            value = np.take(value, axes[i].index[c], axis=axis)
            shape = [1] * k
            shape[i] = -1
            lam = axes[i].weight[c].reshape(shape)
            weight = lam if weight is None else weight * lam
        terms.append((value, weight))
    parts = []
    if split:
        parts.append(_corner_sum([(t[:, :split], w) for t, w in terms], vectorised=True))
    if split < channels:
        parts.append(_corner_sum([(t[:, split:], w) for t, w in terms], vectorised=False, half=half))
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)


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
class Slot:
    """One step of an axis's contributions: the input indices ``targets`` (a slice where consecutive) each take,
    at this step, output ``source`` (a slice where evenly spaced) with weight ``weight``; ``group`` numbers the
    output (relative to the input index) and ``entry`` the tap within it."""

    targets: object
    source: np.ndarray
    weight: np.ndarray
    group: int
    entry: int


def _axis_slots(taps: AxisTaps, n_in: int) -> list[Slot]:
    """The contributions an axis makes to each input index, in the kernels' order (by output index, then tap),
    as steps. Any numbering of an input index's contributions that keeps their order will do; step (d, e) is
    tap ``e`` of output ``o = base(i) + d``, ``base(i) = i * n_out // n_in`` the output nearest input ``i``, so
    that for integer scales a step's outputs are evenly spaced (read as views)."""
    n_taps, n_out = taps.index.shape
    target = taps.index.ravel()
    source = np.repeat(np.arange(n_out)[None, :], n_taps, axis=0).ravel()
    tap = np.repeat(np.arange(n_taps)[:, None], n_out, axis=1).ravel()
    weight = taps.weight.ravel()
    order = np.lexsort((tap, source, target))
    target, source, weight = target[order], source[order], weight[order]
    group = source - target * n_out // n_in
    new_pair = np.ones(len(target), bool)
    new_pair[1:] = (target[1:] != target[:-1]) | (source[1:] != source[:-1])
    starts = np.flatnonzero(new_pair)
    entry = np.arange(len(target)) - starts[np.cumsum(new_pair) - 1]  # (the tap's rank among its output's)
    slots = []
    for g, e in sorted(set(zip(group.tolist(), entry.tolist()))):
        sel = (group == g) & (entry == e)
        idx = target[sel]
        contiguous = idx[-1] - idx[0] == len(idx) - 1  # (sorted and distinct: a range, taken as a view)
        targets = slice(int(idx[0]), int(idx[-1]) + 1) if contiguous else idx
        slots.append(Slot(targets, _as_progression(source[sel]), weight[sel], g, e))
    return slots


def _as_progression(index: np.ndarray) -> np.ndarray | slice:
    """``index`` as a slice where it steps evenly forward (as for integer scale factors): read as a view."""
    if len(index) == 1:
        return slice(int(index[0]), int(index[0]) + 1)
    step = int(index[1] - index[0])
    if step > 0 and np.array_equal(np.diff(index), np.full(len(index) - 1, step)):
        return slice(int(index[0]), int(index[-1]) + 1, step)
    return index


def _block(sels: list, sizes: tuple) -> tuple:
    """An index taking the block ``sels`` (slices or index arrays) of the trailing dims of sizes ``sizes``."""
    if all(isinstance(s, slice) for s in sels):
        return (Ellipsis,) + tuple(sels)
    arrays = [np.arange(*s.indices(n)) if isinstance(s, slice) else s for s, n in zip(sels, sizes)]
    return (Ellipsis,) + np.ix_(*arrays)


def _step_order(slot_lists: list, corners_reversed: bool) -> list:
    """The steps of all axes combined, in the order each input element takes them: by the outputs (the axes'
    groups, outermost axis first), then the taps within an output, outermost axis first or, for bicubic's
    backward (``corners_reversed``), innermost first."""
    combos = list(product(*slot_lists))

    def key(combo):
        groups = tuple(s.group for s in combo)
        entries = tuple(s.entry for s in combo)
        return groups + (entries[::-1] if corners_reversed else entries)

    return sorted(combos, key=key)


@dataclass(frozen=True)
class _Step:
    """One step of the backward: the block of input elements it reaches (an index into the trailing dims),
    the output index each of them takes along each axis, and each axis's weights (lambdas or cubic
    coefficients, in opmath, shaped to broadcast over the block)."""

    where: tuple
    full: bool  # (``where`` takes a view: all its indices are slices)
    sources: tuple
    weights: tuple


def _axis_shape(i: int, k: int) -> list:
    return [-1 if j == i else 1 for j in range(k)]


def _steps(axes: tuple[AxisTaps, ...], in_sizes: tuple[int, ...], dtype: np.dtype, cubic: bool) -> list[_Step]:
    k = len(axes)
    work = opmath(dtype)
    slot_lists = [_axis_slots(a, n) for a, n in zip(axes, in_sizes)]
    steps = []
    for combo in _step_order(slot_lists, corners_reversed=cubic):
        sels = [s.targets for s in combo]
        weights = tuple(s.weight.astype(work).reshape(_axis_shape(i, k)) for i, s in enumerate(combo))
        full = all(isinstance(t, slice) for t in sels)
        steps.append(_Step(_block(sels, in_sizes), full, tuple(s.source for s in combo), weights))
    return steps


def _linear_weight(step: _Step) -> np.ndarray:
    """The linear backward's weight: the axes' lambdas multiplied in opmath, outermost axis first (for half
    too: measured)."""
    weight = step.weights[0]
    for w in step.weights[1:]:
        weight = weight * w
    return weight


_WEIGHTS_KEPT = 1 << 22  # (the linear steps' weights are made once per call up to this many elements in all)


def _gathered(planes: np.ndarray, step: _Step, cache: dict) -> np.ndarray:
    """The incoming gradient at the step's outputs, the partial gathers along the outer axes kept for the next
    steps (consecutive steps mostly share them)."""
    value = planes
    key: tuple = ()
    for i, source in enumerate(step.sources):
        key = key + (id(source),)
        if isinstance(source, slice):
            value = value[(slice(None),) * (i + 1) + (source,)]
        else:
            if key not in cache:
                cache[key] = np.take(value, source, axis=i + 1)
            value = cache[key]
    return value


def _accumulate(g: np.ndarray, axes: tuple[AxisTaps, ...], in_sizes: tuple[int, ...], dtype: np.dtype,
                cubic: bool, steps: list | None = None) -> np.ndarray:
    """The backward kernels' scatter-add, one contribution at a time per input element, in their order:
    linear ``gin = fma(lh * lw, g, gin)``, bicubic ``gin = gin + (g * cy) * cx`` (its file is compiled without
    contraction), in opmath."""
    k = len(axes)
    work = opmath(dtype)
    lead = g.shape[: g.ndim - k]
    planes = g.astype(work, copy=False).reshape((-1,) + g.shape[g.ndim - k:])
    steps = steps if steps is not None else _steps(axes, in_sizes, dtype, cubic)
    out = np.empty((planes.shape[0],) + tuple(in_sizes), work)
    size = max(math.prod(in_sizes), math.prod(planes.shape[1:]))
    scratch = Scratch()
    block_sizes = (math.prod(np.broadcast_shapes(*(w.shape for w in s.weights))) for s in steps)
    kept = not cubic and sum(block_sizes) <= _WEIGHTS_KEPT
    weights = [_linear_weight(s) for s in steps] if kept else [None] * len(steps)
    for chunk in plane_chunks(planes.shape[0], size):
        part = planes[chunk]
        acc = np.zeros((part.shape[0],) + tuple(in_sizes), work)
        cache: dict = {}
        for step, weight in zip(steps, weights):
            value = _gathered(part, step, cache)
            if len(cache) > 2 * k:
                cache.clear()
            current = acc[step.where]
            if cubic:
                for w in step.weights:  # ((g * cy) * cx): the inner axis's coefficient last
                    value = value * w
                updated = current + value
            elif work == np.float32:  # (in place, in buffers kept from step to step: these arrays are large)
                weight = _linear_weight(step) if weight is None else weight
                product = np.multiply(value, weight, dtype=np.float64, out=scratch.take("products", current.shape))
                updated = round_sum32(product, current, out=current, scratch=scratch)
                if step.full:  # (a view: written in place)
                    continue
            else:
                updated = fma(_linear_weight(step) if weight is None else weight, value, current)
            acc[step.where] = updated
        out[chunk] = acc
    return out.reshape(lead + tuple(in_sizes))


# ---- the plan ------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class ResamplePlan:
    """What an interpolating upsample resamples (``mode`` "linear" or "cubic", the input and output sizes of
    the spatial dims, align_corners and the scales the kernel gets); ``adjoint``: the plan of its backward.
    Stands where the dense matrices stood: :func:`apply` maps an array by it."""

    mode: str
    in_sizes: tuple
    out_sizes: tuple
    align_corners: bool
    scales: tuple
    adjoint: bool = False
    _taps: dict = field(default_factory=dict, repr=False)  # (the taps and steps made so far, by dtype)

    def transposed(self) -> ResamplePlan:
        """The adjoint plan (the backward; its adjoint is the forward again), sharing the taps made so far."""
        return ResamplePlan(self.mode, self.in_sizes, self.out_sizes, self.align_corners, self.scales,
                            not self.adjoint, self._taps)

    def taps(self, dt: type, fused: bool = True) -> tuple[AxisTaps, ...]:
        key = (dt, fused)
        if key not in self._taps:
            make = cubic_taps if self.mode == "cubic" else linear_taps
            extra = {"fused": fused} if self.mode == "cubic" else {}
            made = tuple(make(n, o, self.align_corners, s, dt, **extra)
                         for n, o, s in zip(self.in_sizes, self.out_sizes, self.scales))
            for axis in made:  # (shared by every call of a cached plan: read, never written)
                axis.index.flags.writeable = axis.weight.flags.writeable = False
            self._taps[key] = made
        return self._taps[key]

    def steps(self, dtype: np.dtype) -> list:
        """The backward's steps (:func:`_steps`) for gradients of ``dtype``, made once."""
        key = ("steps", np.dtype(dtype).name)
        if key not in self._taps:
            cubic = self.mode == "cubic"
            axes = self.taps(opmath(dtype), fused=not cubic)
            steps = _steps(axes, tuple(self.in_sizes), np.dtype(dtype), cubic)
            for step in steps:  # (shared by every call of a cached plan, as the taps: read, never written)
                for part in (*step.where, *step.sources, *step.weights):
                    if isinstance(part, np.ndarray):
                        part.flags.writeable = False
            self._taps[key] = steps
        return self._taps[key]

    def apply(self, x: np.ndarray) -> np.ndarray:
        return _backward(self, x) if self.adjoint else _forward(self, x)


def _forward(plan: ResamplePlan, x: np.ndarray) -> np.ndarray:
    dtype = x.dtype
    work = opmath(dtype)
    axes = plan.taps(work)
    cubic = plan.mode == "cubic"
    if uses_channels_last_kernel(x, plan.out_sizes, cubic):
        out = channels_last_forward(x.astype(work, copy=False), axes, dtype)
    else:
        out = generic_forward(x.astype(work, copy=False), axes, dtype)
    return np.ascontiguousarray(out.astype(dtype, copy=False))


def _backward(plan: ResamplePlan, g: np.ndarray) -> np.ndarray:
    dtype = g.dtype
    cubic = plan.mode == "cubic"
    if cubic and tuple(plan.in_sizes) == tuple(plan.out_sizes):  # (the bicubic backward copies then)
        return np.ascontiguousarray(g)
    axes = plan.taps(opmath(dtype), fused=not cubic)
    out = _accumulate(g, axes, tuple(plan.in_sizes), dtype, cubic, plan.steps(dtype))
    return np.ascontiguousarray(out.astype(dtype, copy=False))


@functools.lru_cache(maxsize=64)
def shared_plan(mode: str, in_sizes: tuple, out_sizes: tuple, align_corners: bool, scales: tuple) -> ResamplePlan:
    """The plan of these arguments, one per distinct call: its taps and backward steps, which cost far more than a
    small image's resampling (an 8x8 bilinear backward spent 0.8 ms making them), are made once for all calls."""
    return ResamplePlan(mode, in_sizes, out_sizes, align_corners, scales)
