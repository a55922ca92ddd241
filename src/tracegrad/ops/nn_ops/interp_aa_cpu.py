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


def _resample_axis(x: np.ndarray, axis: int, win: Windows) -> np.ndarray:
    """One pass along ``axis``, each output from its window."""
    shape = _axis_shape(x.ndim, axis)
    last = x.shape[axis] - 1

    def tap_at(j: int) -> np.ndarray:
        return np.take(x, np.minimum(win.start + j, last), axis=axis)

    return _sum_taps(tap_at, lambda j: win.weight[:, j].reshape(shape), win.size.reshape(shape),
                     win.weight.shape[1], x.itemsize)


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
    size changes; a copy where neither does."""
    dt = x.dtype.type
    out = x
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


def backward(g: np.ndarray, plan: AntialiasPlan) -> np.ndarray:
    """cpu_upsample_genNd_backward_aa: every input element adds its outputs' gradients, times ``wx * wy``, in the
    outputs' row-major order, one fused multiply-add each."""
    dt = g.dtype.type
    (h_in, w_in), (h_out, w_out) = plan.in_sizes, plan.out_sizes
    rows, cols = _sources(plan.windows(0, dt), h_in), _sources(plan.windows(1, dt), w_in)
    planes = np.ascontiguousarray(g).reshape(-1, h_out * w_out)
    acc = np.zeros((planes.shape[0], h_in, w_in), dt)
    for a in range(rows.output.shape[0]):
        for b in range(cols.output.shape[0]):
            live = rows.live[a][:, None] & cols.live[b][None, :]
            flat = rows.output[a][:, None] * w_out + cols.output[b][None, :]
            value = np.take(planes, flat, axis=1)
            weight = cols.weight[b][None, :] * rows.weight[a][:, None]
            acc = np.where(live, fma(weight, value, acc), acc)
    return acc.reshape(g.shape[:2] + (h_in, w_in))
