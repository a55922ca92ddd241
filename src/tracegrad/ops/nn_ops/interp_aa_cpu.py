"""Anti-aliased resampling (``F.interpolate(..., antialias=True)``) of 4-d inputs: bilinear, bicubic and Lanczos-3,
computed as PyTorch 2.13's CPU kernels (``_upsample_{bilinear,bicubic,lanczos}2d_aa`` and their backward) compute
them, from per-axis windows of weights.

What decides the bits, as measured against torch 2.13:

* the weights are computed in the input's dtype (float32 or float64; torch refuses the others), for each output
  index ``o``: a window of input indices around ``center = scale * (o + 0.5)``, as wide as the filter's support
  (its taps / 2) times the scale when downscaling; each tap the filter at ``(i - center + 0.5) / scale``, all
  divided by their sum, summed tap by tap;
* the bicubic filter (Keys, ``a = -0.5``) is compiled into fused multiply-adds throughout; Lanczos' ``sinc(x)``
  is taken in the dtype (glibc's ``sinf`` for float32) but ``sinc(x / 3)`` always in double (the C++ template
  deduces double from that argument), their product rounded once;
* the forward resamples the width first, then the height, skipping a dim whose size does not change (a copy
  where neither does); each output is ``t0 * w0``, then each further tap's product added in order, rounded
  apart, but for the taps left over after the compiled loop's last whole step of 16 bytes: fused;
* torch's height pass over a single column (output width 1, its rows the innermost dim it loops over) reads
  each run's first window for all the run's rows (:func:`_resample_single_column`): reproduced;
* the backward computes every dim's weights (an unchanged dim's too: its zero taps carry NaNs); each input
  element takes its contributions from the outputs in row-major order, ``gin = fma(wx * wy, g, gin)``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
from dataclasses import dataclass, field

import numpy as np

from ...memory_format import suggests_channels_last
from ..aten_loops import GRAIN_SIZE, thread_chunks
from .interp_cpu import _scale, fma

# Each mode's filter support in taps (at scale 1)
_TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}
_KEYS_A = -0.5  # the cubic coefficient of PIL's (anti-aliased) bicubic filter


# ---- the filters ---------------------------------------------------------------------------------------------


def _triangle(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    x = np.abs(x)
    return np.where(x < 1, dt(1) - x, dt(0))


def _keys_cubic(x: np.ndarray) -> np.ndarray:
    """Keys' cubic, ``((a + 2) x - (a + 3)) x x + 1`` inside 1 and ``((a x - 5a) x + 8a) x - 4a`` inside 2, each
    step a fused multiply-add (as the kernel's file is compiled)."""
    dt = x.dtype.type
    x = np.abs(x)

    def const(v: float) -> np.ndarray:
        return np.full_like(x, dt(v))

    a = _KEYS_A
    near = fma(fma(const(a + 2), x, const(-(a + 3))) * x, x, const(1))
    far = fma(fma(fma(const(a), x, const(-5 * a)), x, const(8 * a)), x, const(-4 * a))
    return np.where(x < 1, near, np.where(x < 2, far, dt(0)))


@functools.cache
def _glibc_sinf():
    """The C library's sinf (what ``std::sin`` of a float calls in PyTorch's kernels), or None where it cannot be
    loaded."""
    try:
        sinf = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").sinf
    except (OSError, AttributeError):
        return None
    sinf.restype, sinf.argtypes = ctypes.c_float, [ctypes.c_float]
    return sinf


def _libm_sin(x: np.ndarray) -> np.ndarray:
    """``std::sin`` as glibc computes it, element by element (there are only a few weights per output index):
    float32 by sinf (which is not the double sine rounded: that differs in about one value in a hundred; the
    rounded double sine where sinf cannot be loaded), float64 by Python's math.sin (libm's sin)."""
    sinf = _glibc_sinf() if x.dtype == np.float32 else None
    if x.dtype == np.float32 and sinf is None:
        return np.sin(x.astype(np.float64)).astype(np.float32)
    sin = sinf if sinf is not None else math.sin
    return np.array([sin(v) for v in x.ravel().tolist()], x.dtype).reshape(x.shape)


def _sinc(x: np.ndarray) -> np.ndarray:
    """``sin(pi x) / (pi x)`` in ``x``'s dtype (pi rounded to it), 1 at 0."""
    dt = x.dtype.type
    px = x * dt(math.pi)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(x == 0, dt(1), _libm_sin(px) / px)


def _lanczos3(x: np.ndarray) -> np.ndarray:
    """``sinc(x) * sinc(x / 3)`` inside 3: the second factor in double whatever the dtype, the product rounded to
    the dtype."""
    dt = x.dtype.type
    x = np.abs(x)
    inside = x < 3
    kept = np.where(inside, x, dt(0))  # (the sines of the taps outside are never taken)
    value = (_sinc(kept).astype(np.float64) * _sinc(kept.astype(np.float64) / 3.0)).astype(dt)
    return np.where(inside, value, dt(0))


_FILTERS = {"bilinear": _triangle, "bicubic": _keys_cubic, "lanczos": _lanczos3}


# ---- per-axis windows ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Windows:
    """The taps of one axis: output ``o`` reads inputs ``start[o] + j`` for ``j < size[o]`` with weights
    ``weight[o, j]`` (in the dtype; zero past ``size[o]``)."""

    start: np.ndarray
    size: np.ndarray
    weight: np.ndarray


def _truncated(x: np.ndarray) -> np.ndarray:
    """``static_cast<int64_t>`` of doubles: toward zero."""
    return np.trunc(x).astype(np.int64)


def _normalized(raw: np.ndarray) -> np.ndarray:
    """Each row divided by its sum, summed tap by tap in the dtype (rows summing to zero are kept as they are)."""
    total = np.zeros(raw.shape[0], raw.dtype)
    for j in range(raw.shape[1]):
        total = total + raw[:, j]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((total != 0)[:, None], raw / total[:, None], raw)


def windows(mode: str, n_in: int, n_out: int, align_corners: bool, scale: float | None, dt: type) -> Windows:
    """_compute_index_ranges_weights (anti-aliased) of one axis, in ``dt``: the centers and the support in
    ``dt`` (rounded from double products), the window bounds truncated from doubles, each tap's filter argument
    ``(i - center) + 0.5`` taken in double, times the inverse scale, and rounded to ``dt``."""
    s = _scale(n_in, n_out, align_corners, scale, dt)
    downscaling = s >= 1
    half = _TAPS[mode] * 0.5
    support = dt(half * float(s)) if downscaling else dt(half)
    inverse = dt(1.0 / float(s)) if downscaling else dt(1.0)
    width = int(math.ceil(support)) * 2 + 1
    center = (float(s) * (np.arange(n_out) + 0.5)).astype(dt)
    start = np.maximum(_truncated((center - support).astype(np.float64) + 0.5), 0)
    stop = np.minimum(_truncated((center + support).astype(np.float64) + 0.5), n_in)
    size = np.clip(stop - start, 0, width)
    taps = np.arange(width)
    offset = (start[:, None] + taps).astype(dt) - center[:, None]
    argument = ((offset.astype(np.float64) + 0.5) * float(inverse)).astype(dt)
    raw = np.where(taps < size[:, None], _FILTERS[mode](argument), dt(0))
    return Windows(start, size, _normalized(raw).astype(dt, copy=False))


@dataclass(eq=False)
class AntialiasPlan:
    """What an anti-aliased upsample resamples: ``mode``, the input and output sizes of the two spatial dims,
    align_corners and the scales the kernel gets. Its windows are made once per dtype and axis."""

    mode: str
    in_sizes: tuple
    out_sizes: tuple
    align_corners: bool
    scales: tuple
    _windows: dict = field(default_factory=dict, repr=False)

    def windows(self, axis: int, dt: type) -> Windows:
        key = (axis, dt)
        if key not in self._windows:
            self._windows[key] = windows(self.mode, self.in_sizes[axis], self.out_sizes[axis], self.align_corners,
                                         self.scales[axis], dt)
        return self._windows[key]


# ---- forward -------------------------------------------------------------------------------------------------


def _axis_shape(ndim: int, axis: int) -> list:
    return [-1 if d == axis else 1 for d in range(ndim)]


# The compiled tap loop's step, in taps (16 bytes of them), as measured: whole steps add their products rounded
# apart, the taps left over after the last whole step are fused
_UNFUSED_STEP_BYTES = 16


def _sum_taps(tap_at, weight_at, size: np.ndarray, width: int, itemsize: int) -> np.ndarray:
    """``t0 * w0``, then ``out + t_j * w_j`` for the further taps in order, rounded twice, but for the taps after
    the compiled loop's last whole step (4 float or 2 double taps): one FMA each. ``tap_at(j)``, ``weight_at(j)``:
    the j-th taps and weights, ``size``: the tap counts, all broadcasting to the output."""
    step = _UNFUSED_STEP_BYTES // itemsize
    fused_from = (size - 1) // step * step  # (the taps after it are the loop's remainder)
    out = tap_at(0) * weight_at(0)
    for j in range(1, width):
        live = j < size
        if not live.any():
            break
        tap, weight = tap_at(j), weight_at(j)
        summed = out + tap * weight
        fused = live & (j > fused_from)
        if fused.any():
            summed = np.where(fused, fma(tap, weight, out), summed)
        out = np.where(live, summed, out)
    return out


def _by_size(win: Windows) -> np.ndarray:
    """The outputs in decreasing window size (stable): each tap's live outputs are then a prefix, and, as the
    fused taps start where the size's last whole step ends, so are the outputs that add that tap apart."""
    return np.argsort(-win.size, kind="stable")


def _resample_axis(x: np.ndarray, axis: int, win: Windows) -> np.ndarray:
    """One pass along ``axis``, each output from its window: ``_sum_taps``' steps with the outputs sorted by
    window size, so that each tap adds into a prefix of them, in place, rather than computing every output and
    selecting. The pass works on ``x``'s memory layout (np.take copies a non-contiguous array at each call);
    along the innermost dim, on a transposed copy with that dim first, where each tap's inputs are whole rows
    (gathering single elements from a large array would stream it through the cache at every tap)."""
    layout = _memory_order(x)
    if layout[-1] == axis and x.shape[axis] > 1:
        layout = [axis] + layout[:-1]
        work = _innermost_first(x, layout)
    else:
        work = np.ascontiguousarray(x.transpose(layout))
    at = layout.index(axis)
    order = _by_size(win)
    out = _sum_taps_sorted(work, at, win.start[order], win.size[order], win.weight[order])
    return np.take(out, np.argsort(order), axis=at).transpose(np.argsort(layout))


def _memory_order(x: np.ndarray) -> list:
    """``x``'s dims from the outermost in memory to the innermost."""
    return sorted(range(x.ndim), key=lambda d: -abs(x.strides[d]))


# Rows per block of ``_innermost_first``'s transposition, times their length: about 64 KiB of floats
_TRANSPOSE_BLOCK = 1 << 14


def _innermost_first(x: np.ndarray, layout: list) -> np.ndarray:
    """A C-contiguous ``x.transpose(layout)``, ``layout`` being ``x``'s memory order with its innermost dim moved
    first: a transposition of (rows, innermost) done a block of rows at a time (a strided copy of the whole
    array, as NumPy makes it, misses the cache at every element)."""
    inner = layout[0]
    rows = np.ascontiguousarray(x.transpose(layout[1:] + [inner])).reshape(-1, x.shape[inner])
    out = np.empty(rows.shape[::-1], x.dtype)
    step = max(8, _TRANSPOSE_BLOCK // rows.shape[1])
    for first in range(0, rows.shape[0], step):
        out[:, first:first + step] = rows[first:first + step].T
    return out.reshape([x.shape[d] for d in layout])


def _sum_taps_sorted(x: np.ndarray, axis: int, start: np.ndarray, size: np.ndarray,
                     weight: np.ndarray) -> np.ndarray:
    """``_sum_taps`` along ``axis`` for outputs sorted by decreasing ``size``: output ``o`` from the inputs
    ``start[o] + j``. Tap j adds to the first ``live`` outputs: rounded twice for the first ``apart`` (whose
    loop's whole steps reach it), fused for the rest."""
    step = _UNFUSED_STEP_BYTES // x.itemsize
    fused_from = (size - 1) // step * step
    shape = _axis_shape(x.ndim, axis)

    def along(lo: int, hi: int) -> tuple:
        return (slice(None),) * axis + (slice(lo, hi),)

    def weight_at(j: int, lo: int, hi: int) -> np.ndarray:
        return weight[lo:hi, j].reshape(shape)

    out = np.take(x, np.minimum(start, x.shape[axis] - 1), axis=axis) * weight_at(0, 0, len(start))
    for j in range(1, weight.shape[1]):
        live = int(np.count_nonzero(size > j))
        if live == 0:
            break
        apart = int(np.count_nonzero(fused_from >= j))  # (fused_from < size: these are live)
        tap = np.take(x, start[:live] + j, axis=axis)
        if apart:
            out[along(0, apart)] += tap[along(0, apart)] * weight_at(j, 0, apart)
        if apart < live:
            _fused_into(tap[along(apart, None)], weight_at(j, apart, live), out[along(apart, live)])
    return out


def _fused_into(tap: np.ndarray, weight: np.ndarray, out: np.ndarray) -> None:
    """``out = fma(tap, weight, out)`` in place (``out`` a view)."""
    if out.dtype == np.float32:
        _fma32_into(tap, weight, out)
    else:
        out[...] = fma(tap, weight, out)


def _first_row_of_runs(planes: int, rows: int) -> np.ndarray:
    """The output row whose window each (plane, row) takes in torch's height pass over a single column: the
    first of its run, which is its plane's first row, or, where the threads share the work, the first row its
    thread's share reaches in that plane."""
    total = planes * rows
    starts = thread_chunks(total, GRAIN_SIZE)
    if len(starts) == 1:
        return np.zeros((planes, rows), np.int64)
    linear = np.arange(total).reshape(planes, rows)
    plane_start = linear - linear % rows
    share = int(starts[1])
    return np.maximum(plane_start, linear // share * share) - plane_start


def _resample_single_column(x: np.ndarray, win: Windows) -> np.ndarray:
    """torch's height pass where the width is 1 and the rows are the innermost dim it loops over: its vertical
    loop reads the window (start, size, weights) once per run, at the run's first row, for all the run's rows.
    Reproduced: each (plane, row) takes the window of its run's first row."""
    n, c, h_in, _ = x.shape
    rows = _first_row_of_runs(n * c, len(win.start)).reshape(n, c, len(win.start), 1)
    start, size = win.start[rows], win.size[rows]

    def tap_at(j: int) -> np.ndarray:
        return np.take_along_axis(x, np.minimum(start + j, h_in - 1), axis=2)

    return _sum_taps(tap_at, lambda j: win.weight[rows, j], size, win.weight.shape[1], x.itemsize)


def _rows_run_innermost(x: np.ndarray) -> bool:
    """Whether torch's height pass over a single column loops over the rows innermost: its output (in the input's
    suggested layout) is not channels-last with more than one channel."""
    return not (x.shape[1] > 1 and suggests_channels_last(x))


def forward(x: np.ndarray, plan: AntialiasPlan) -> np.ndarray:
    """separable_upsample_generic_Nd_kernel_impl: the width pass, then the height pass, each only where the
    size changes; a copy where neither does. Infinities and NaNs spread silently, as in torch."""
    dt = x.dtype.type
    out = x
    with np.errstate(invalid="ignore", over="ignore"):
        if out.shape[3] != plan.out_sizes[1]:
            out = _resample_axis(out, 3, plan.windows(1, dt))
        if out.shape[2] != plan.out_sizes[0]:
            rows = plan.windows(0, dt)
            single = out.shape[3] == 1 and _rows_run_innermost(x)
            out = _resample_single_column(out, rows) if single else _resample_axis(out, 2, rows)
    return np.array(out, dt, order="C", copy=True) if out is x else np.ascontiguousarray(out)


# ---- backward ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Sources:
    """An axis's contributions by input index: input ``i`` takes, at its ``k``-th step, output ``output[k, i]``
    with weight ``weight[k, i]``, where ``live[k, i]``; steps in increasing output order."""

    output: np.ndarray
    weight: np.ndarray
    live: np.ndarray


def _sources(win: Windows, n_in: int) -> _Sources:
    n_out, width = win.weight.shape
    taps = np.arange(width)
    used = taps < win.size[:, None]
    outputs = np.broadcast_to(np.arange(n_out)[:, None], used.shape)[used]
    inputs = (win.start[:, None] + taps)[used]
    weights = win.weight[used]
    order = np.lexsort((outputs, inputs))
    inputs, outputs, weights = inputs[order], outputs[order], weights[order]
    first = np.searchsorted(inputs, np.arange(n_in))
    step = np.arange(len(inputs)) - first[inputs]  # (each contribution's rank among its input's)
    steps = int(step.max()) + 1 if len(step) else 0
    source = _Sources(np.zeros((steps, n_in), np.int64), np.zeros((steps, n_in), win.weight.dtype),
                      np.zeros((steps, n_in), bool))
    source.output[step, inputs] = outputs
    source.weight[step, inputs] = weights
    source.live[step, inputs] = True
    return source


@dataclass(frozen=True)
class _Steps:
    """An axis's contributions as steps over its inputs sorted by decreasing contribution count (``order``): at
    step ``k`` the first ``live[k]`` sorted inputs take output ``output[k, i]`` with weight ``weight[k, i]``."""

    order: np.ndarray
    live: list
    output: np.ndarray
    weight: np.ndarray


def _steps(win: Windows, n_in: int) -> _Steps:
    """``_sources`` with the inputs sorted by decreasing count, so that each step's live inputs are a prefix."""
    source = _sources(win, n_in)
    counts = source.live.sum(axis=0)
    order = np.argsort(-counts, kind="stable")
    live = [int(np.count_nonzero(counts > k)) for k in range(source.live.shape[0])]
    return _Steps(order, live, source.output[:, order], source.weight[:, order])


class _Scratch:
    """Buffers for a block's steps, reused from step to step (fresh ones would be faulted in anew)."""

    def __init__(self, size: int) -> None:
        self.value = np.empty(size)
        self.total = np.empty(size)
        self.bits = np.empty(size, np.int64)

    def take(self, shape: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = math.prod(shape)
        return tuple(buffer[:n].reshape(shape) for buffer in (self.value, self.total, self.bits))


def _fma32_into(a: np.ndarray, b: np.ndarray, acc: np.ndarray, buffers: tuple | None = None,
                zero: bool = False) -> None:
    """``acc = fma(a, b, acc)`` in place for float32 ``acc`` (a view; ``a``, ``b`` float values, broadcasting
    to it): the exact product and its float64 sum, cast back. A sum on a midpoint between two floats (common
    here: the weights have few bits) is first moved a float64 step toward the exact sum, so that the cast
    rounds it as the FMA does; none can be where ``acc`` is known to be ``zero`` (the sum is the exact product,
    rounded once). ``buffers``: float64 scratch for the product and the sum, int64 for their bits, of acc's
    shape; the product's may be ``a`` itself."""
    if buffers is None:
        buffers = np.empty(acc.shape), np.empty(acc.shape), np.empty(acc.shape, np.int64)
    product, total, bits = buffers
    np.multiply(a, b, out=product, dtype=np.float64)  # (exact: a product of two floats)
    np.add(product, acc, out=total)  # (+0 turns a product's -0 into +0, as the FMA's sum does)
    ties = None if zero else _midpoints(total, bits)
    if ties is not None:
        _settle_ties(total, product, acc, ties)
    np.copyto(acc, total, casting="same_kind")


_MIDPOINT_SHIFT, _INT64_MIN = np.int64(35), np.iinfo(np.int64).min


def _midpoints(total: np.ndarray, bits: np.ndarray) -> np.ndarray | None:
    """The flat indices of the float64s in ``total`` that lie halfway between two floats (None where none does),
    where a cast would round twice: their low 29 bits are 1 then 28 zeros, shifted to the top of an int64 the
    smallest int64 (a shift and a minimum, cheaper than a mask and a comparison). ``bits``: int64 scratch."""
    if total.size == 0:
        return None
    shifted = np.left_shift(total.view(np.int64), _MIDPOINT_SHIFT, out=bits)
    if shifted.min() != _INT64_MIN:
        return None
    return np.flatnonzero(shifted == _INT64_MIN)


def _settle_ties(total: np.ndarray, product: np.ndarray, acc: np.ndarray, ties: np.ndarray) -> None:
    """Moves the float64 sums ``total = product + acc`` at ``ties`` (flat indices; ``total``, ``product``
    contiguous) one float64 step toward the exact sum where it was inexact (its rounding error by Knuth's
    two-sum); an exact midpoint is left to the cast, which rounds it to even as the FMA does."""
    flat = total.reshape(-1)
    s = flat[ties]
    p = product.reshape(-1)[ties]
    if acc.flags.c_contiguous:  # (read by flat index: unravelling the indices costs more than the rest)
        addend = acc.reshape(-1)[ties].astype(np.float64)
    elif ties.size * 16 >= acc.size:  # (many ties, as few-bit weights make: a contiguous copy is cheaper)
        addend = np.ascontiguousarray(acc).reshape(-1)[ties].astype(np.float64)
    else:
        addend = acc[np.unravel_index(ties, acc.shape)].astype(np.float64)
    back = s - p
    error = (p - (s - back)) + (addend - back)
    flat[ties] = np.where(error == 0, s, np.nextafter(s, np.copysign(np.inf, error)))


# Elements of the input gradient updated per block: a block's float64 temporaries stay in the L2 cache
_BLOCK_ELEMENTS = 1 << 16
# Elements of the gradients gathered by output column at once (float64): the planes go in groups that fit
_GATHER_ELEMENTS = 1 << 22
# Input gradients of at most this many float32 elements take their long chains of steps all at once
_CHAIN_ELEMENTS = 1 << 12
# Products computed ahead of the chains' steps at once (float64)
_CHAIN_PRODUCTS = 1 << 20


def backward(g: np.ndarray, plan: AntialiasPlan) -> np.ndarray:
    """cpu_upsample_genNd_backward_aa: every input element adds its outputs' gradients, times ``wx * wy``, in the
    outputs' row-major order, one fused multiply-add each.

    Step (a, b) (an input's a-th output row, its b-th output column) reaches the input rows that have more than
    a output rows and the columns that have more than b: with both sorted by count, a block at the top left
    corner, updated in place. Infinities and NaNs spread silently, as in torch."""
    dt = g.dtype.type
    (h_in, w_in), (h_out, w_out) = plan.in_sizes, plan.out_sizes
    rows, cols = _steps(plan.windows(0, dt), h_in), _steps(plan.windows(1, dt), w_in)
    planes = np.ascontiguousarray(g).reshape(-1, h_out, w_out)
    acc = np.zeros((planes.shape[0], h_in, w_in), dt)
    group = max(1, _GATHER_ELEMENTS // max(h_out * sum(cols.live), 1))
    with np.errstate(invalid="ignore", over="ignore"):
        for first in range(0, planes.shape[0], group):
            _backward_planes(planes[first:first + group], rows, cols, acc[first:first + group])
    acc = np.take(np.take(acc, np.argsort(rows.order), axis=1), np.argsort(cols.order), axis=2)
    return acc.reshape(g.shape[:2] + (h_in, w_in))


def _backward_planes(planes: np.ndarray, rows: _Steps, cols: _Steps, acc: np.ndarray) -> None:
    """A group of planes: their gradients gathered once per column step b (float values in float64, exact), so
    that each step gathers whole rows of them; then the input rows a block at a time through all their steps
    (the block's sums stay in cache), or, for a few float32 elements, all at once (``_backward_chains``)."""
    wide = planes.astype(np.float64)
    if acc.dtype == np.float32 and acc.size <= _CHAIN_ELEMENTS:
        _backward_chains(wide, rows, cols, acc)
        return
    by_col = [np.take(wide, cols.output[b, :n_cols], axis=2) for b, n_cols in enumerate(cols.live)]
    per_row = max(acc.shape[0] * acc.shape[2], 1)
    block = max(1, _BLOCK_ELEMENTS // per_row)
    scratch = _Scratch(block * per_row)
    for top in range(0, acc.shape[1], block):
        _backward_rows(by_col, rows, cols, acc[:, top:top + block], top, scratch)


def _backward_rows(by_col: list, rows: _Steps, cols: _Steps, acc: np.ndarray, top: int,
                   scratch: _Scratch) -> None:
    """All the steps of the sorted input rows from ``top`` on (``acc``: their block)."""
    for a, live in enumerate(rows.live):
        n_rows = min(live - top, acc.shape[1])
        if n_rows <= 0:
            break
        sources = rows.output[a, top:top + n_rows]
        row_weight = rows.weight[a, top:top + n_rows, None]
        for b, n_cols in enumerate(cols.live):
            block = acc[:, :n_rows, :n_cols]
            buffers = scratch.take(block.shape)
            value = np.take(by_col[b], sources, axis=1, out=buffers[0], mode="clip")
            weight = cols.weight[b, :n_cols] * row_weight  # (rounded in the dtype, as torch's wx * wy)
            if block.dtype == np.float32:
                _fma32_into(value, weight.astype(np.float64), block, buffers, zero=a == b == 0)
            else:
                block[...] = fma(weight, value, block)


def _backward_chains(wide: np.ndarray, rows: _Steps, cols: _Steps, acc: np.ndarray) -> None:
    """The steps of a small float32 gradient ``acc`` (an upscale's few inputs take long chains of them), the
    per-step calls cut to the sum and its rounding: the exact products of a row step's column steps computed
    ahead, at once, with ``-0`` for the columns a step does not reach (adding it changes no sum, -0 included: a
    sum is -0 where a tiny negative product underflowed, and ``-0 + +0`` would make it +0)."""
    if acc.size == 0:
        return
    n_cols = np.array(cols.live)
    dead = np.arange(acc.shape[2]) >= n_cols[:, None]  # (column steps, input columns)
    sums = np.ascontiguousarray(acc)
    chunk = max(1, _CHAIN_PRODUCTS // max(acc.size, 1))
    for a, n_rows in enumerate(rows.live):
        for first in range(0, len(n_cols), chunk):
            steps = slice(first, first + chunk)
            products = _step_products(wide, rows, cols, a, n_rows, steps, dead[steps])
            _run_chain(products, sums[:, :n_rows])
    acc[...] = sums


def _step_products(wide: np.ndarray, rows: _Steps, cols: _Steps, a: int, n_rows: int, steps: slice,
                   dead: np.ndarray) -> np.ndarray:
    """(column steps, planes, rows, columns): the exact products ``(wx * wy) * g`` of row step ``a`` and the
    column ``steps``, -0 where a step does not reach a column."""
    sources = rows.output[a, :n_rows]
    weight = (cols.weight[steps, None, :] * rows.weight[a, :n_rows, None]).astype(np.float64)
    columns = cols.output[steps]
    by_row = np.take(wide, sources, axis=1)  # (planes, rows, output columns)
    values = np.take(by_row, columns, axis=2)  # (planes, rows, column steps, columns)
    products = np.multiply(np.moveaxis(values, 2, 0), weight[:, None], order="C")
    np.copyto(products, -0.0, where=dead[:, None, None, :])  # (the additive identity: x + -0 is x, -0 too)
    return products


def _run_chain(products: np.ndarray, acc: np.ndarray) -> None:
    """``acc = fma-sum(products[k], acc)`` for each k in turn: each sum rounded once to float32 (``_fma32_into``'s
    steps, inlined: on a few elements, the calls are the cost)."""
    total = np.empty(acc.shape)
    bits = np.empty(acc.shape, np.int64)
    total_bits = total.view(np.int64)
    add, left_shift, lowest, copyto = np.add, np.left_shift, np.minimum.reduce, np.copyto
    for product in products:
        add(product, acc, out=total)
        left_shift(total_bits, _MIDPOINT_SHIFT, out=bits)
        if lowest(bits, axis=None) == _INT64_MIN:
            _settle_ties(total, product, acc, np.flatnonzero(bits == _INT64_MIN))
        copyto(acc, total, casting="same_kind")
