"""Spatial transformer ops: ``affine_grid_generator`` and ``grid_sampler_2d`` / ``grid_sampler_3d``.

A sampled value is a weighted sum of input pixels ("taps" around the source coordinate), with one weight
per spatial axis: ``out[n, c, p] = sum_k prod_a w_a(t_a) * x[n, c, idx_k]``. The kernels build that plan
once per call with NumPy (tap indices, validity, fractions ``t_a``, the coordinate's derivative ``m_a``
w.r.t. the grid) and then loop over the <= 16 taps, never over pixels.

Like PyTorch, the backward is an operator of its own (``grid_sampler_2d_backward``, node
``GridSampler2DBackwardBackward0``), and its derivative is written in dispatched ops: the tap weights are
polynomials of ``t_a = m_a * grid_a + const``, so every further derivative follows by autograd.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from ..._factories import float_linspace
from ..._strides import _is_contiguous
from ..._tensor import Tensor, _wrap
from ...autograd.forward_ad import not_implemented_jvp
from ...backend.dtypes import scalar_type_name
from .._util import opmath_dtype
from ..aten_vec import FUSED_DTYPES, fma_if_available, vector_lanes
from ..bfloat16_in_float import seen_dtype
from ..linalg import bmm
from ..pointwise import add, mul
from ..reductions import sum as sum_op
from ..registry import defop
from ..shape import stack
from ..shape_extra import gather, scatter_add
from ..views import expand, reshape, select, transpose, unsqueeze
from ._common import check_float

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2
_A = -0.75  # PyTorch's cubic convolution coefficient (same as upsample_bicubic2d)


# ---- checks ------------------------------------------------------------------------------------------------


def _check(x: np.ndarray, grid: np.ndarray, mode: int, dims: int, kernel_name: str) -> None:
    """PyTorch's check_grid_sampler_common + check_grid_sampler_{2d,3d}, in its order and words."""
    if x.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(x.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != x.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {x.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for i in range(2, x.ndim):
        if x.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(x.shape)} with dimension {i} being empty")
    if x.ndim != dims + 2 or grid.ndim != x.ndim:
        raise RuntimeError(f"grid_sampler(): expected {dims + 2}D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(x.shape)} and grid with sizes {list(grid.shape)}")
    if dims == 3 and mode == BICUBIC:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    check_float(x, kernel_name, NotImplementedError)
    if grid.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(x.dtype)} but found "
                           f"{scalar_type_name(grid.dtype)}")


# ---- the sampling plan -------------------------------------------------------------------------------------


def _clip(x: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(clipped, d clipped / d x); PyTorch counts the borders themselves as outside for the gradient."""
    inside = (x > 0) & (x < size - 1)
    return np.clip(x, 0, size - 1), inside.astype(x.dtype)


def _reflect(x: np.ndarray, twice_low: int, twice_high: int) -> tuple[np.ndarray, np.ndarray]:
    """(reflected, d reflected / d x) of PyTorch's reflect_coordinates_set_grad."""
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(x)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = x - low
    sign = np.where(shifted < 0, -1, 1).astype(x.dtype)
    shifted = np.abs(shifted)
    extra = np.fmod(shifted, span)
    even = np.floor(shifted / span) % 2 == 0
    return (np.where(even, extra + low, span - extra + low).astype(x.dtype),
            np.where(even, sign, -sign).astype(x.dtype))


def _map_coordinate(x: np.ndarray, size: int, padding: int, align: bool) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's compute_coordinates: the source coordinate after border/reflection padding, with its derivative."""
    if padding == BORDER:
        return _clip(x, size)
    if padding == REFLECTION:
        r, dr = _reflect(x, 0, 2 * (size - 1)) if align else _reflect(x, -1, 2 * size - 1)
        c, dc = _clip(r, size)
        return c, dr * dc
    return x, np.ones_like(x)


class _Axis:
    """One spatial axis of the plan: per tap, the clamped index, its validity and the weight's data."""

    __slots__ = ("idx", "valid", "t", "m", "kind")

    def __init__(self, coord: np.ndarray, size: int, mode: int, padding: int, align: bool, fused: bool = False):
        dt = coord.dtype.type
        # unnormalize the way PyTorch's vectorised CPU kernel does (same rounding in float32); its 2-d kernel's
        # compiler contracts (coord + 1) * scale - 0.5 into one multiply-add
        scale = dt((size - 1) / 2) if align else dt(size / 2)
        if align:
            x = (coord + dt(1)) * scale
        elif fused:
            x = fma_if_available(coord + dt(1), scale, dt(-0.5))
        else:
            x = (coord + dt(1)) * scale - dt(0.5)
        m = np.full_like(x, scale)
        if mode != BICUBIC:  # bicubic pads each tap instead of the source coordinate
            x, dm = _map_coordinate(x, size, padding, align)
            # the vectorised kernel zeroes a clipped coordinate's multiplier with a bit mask (+0, where a reflected
            # one's product is -0); the scalar kernels multiply
            m = np.where(dm != 0, m * dm, 0) if fused else m * dm
        if mode == NEAREST:
            base, offsets = np.rint(x), (0,)
        else:
            base = np.floor(x)
            offsets = (0, 1) if mode == BILINEAR else (-1, 0, 1, 2)
        self.t, self.m, self.kind = x - base, m, mode
        self.idx, self.valid = [], []
        for off in offsets:
            c = base + off
            if mode == BICUBIC:
                c, _ = _map_coordinate(c, size, padding, align)
            c = np.trunc(c)  # PyTorch casts the (padded) tap coordinate to an integer
            ok = (c > -1) & (c < size)
            self.idx.append(np.where(ok, c, 0).astype(np.int64))
            self.valid.append(ok)


def _plan(in_sizes: tuple, grid: np.ndarray, mode: int, padding: int, align: bool) -> list[_Axis]:
    """One _Axis per spatial input axis (D, H, W order); grid[..., 0] is x, i.e. the last axis."""
    flat = grid.reshape(grid.shape[0], math.prod(grid.shape[1:-1]), grid.shape[-1])
    k = len(in_sizes)
    fused = k == 2 and grid.dtype in FUSED_DTYPES  # (the 2-d kernel is vectorised; the 3-d one is scalar code)
    return [_Axis(flat[:, :, k - 1 - a], in_sizes[a], mode, padding, align, fused) for a in range(k)]


def _weights(ax: _Axis) -> list[tuple]:
    """(w, dw/dt) per tap, as arrays (the kernels' weights; the dispatched ones are ``_tap_weights``)."""
    t = ax.t
    if ax.kind == NEAREST:
        return [(np.ones_like(t), np.zeros_like(t))]
    if ax.kind == BILINEAR:
        return [(1 - t, -np.ones_like(t)), (t, np.ones_like(t))]
    return [(_cubic2(t + 1), _dcubic2(t + 1)), (_cubic1(t), _dcubic1(t)),
            (_cubic1(1 - t), -_dcubic1(1 - t)), (_cubic2(2 - t), -_dcubic2(2 - t))]


# PyTorch's cubic convolution kernels (|x| <= 1 and 1 < |x| < 2) and their derivatives; they work on
# arrays and on dispatched tensors alike (Python operators only).
def _cubic1(x):
    return ((_A + 2) * x - (_A + 3)) * x * x + 1


def _cubic2(x):
    return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A


def _dcubic1(x):
    return (3 * (_A + 2) * x - 2 * (_A + 3)) * x


def _dcubic2(x):
    return (3 * _A * x - 10 * _A) * x + 8 * _A


def _ddcubic1(x):
    return 6 * (_A + 2) * x - 2 * (_A + 3)


def _ddcubic2(x):
    return 6 * _A * x - 10 * _A


def _corners(axes: list[_Axis], in_sizes: tuple):
    """Per tap combination: (flat input index (N, P), validity (N, P), tap number per axis)."""
    strides = [math.prod(in_sizes[a + 1:]) for a in range(len(in_sizes))]
    for taps in itertools.product(*(range(len(ax.idx)) for ax in axes)):
        flat = sum(ax.idx[j] * s for ax, j, s in zip(axes, taps, strides))
        valid = np.logical_and.reduce([ax.valid[j] for ax, j in zip(axes, taps)])
        yield flat, valid, taps


# ---- the vectorised 2-d bilinear kernel ----------------------------------------------------------------------
# PyTorch's 2-d kernel runs on AVX2 vectors of floats or doubles, and its compiler contracts the kernel's sums of
# products into fused multiply-adds; its input gradient is a scalar loop that adds each vector's corners in turn.


def _vectorised_bilinear(dtype, dims: int, mode: int) -> bool:
    """Whether PyTorch samples with its vectorised bilinear kernel: 2-d, float or double."""
    return dims == 2 and mode == BILINEAR and np.dtype(dtype) in FUSED_DTYPES


def _bilinear_corners(xf: np.ndarray, axes: list[_Axis], in_sizes: tuple) -> list[tuple]:
    """Per corner (nw, ne, sw, se): (input values (N, C, P), 0 outside as mask_gather reads them; weight (N, P);
    flat input index (N, P); validity (N, P))."""
    (wy, wx) = (_weights(ax) for ax in axes)
    n, c, size = xf.shape
    padded = np.zeros((n, c, size + 1), xf.dtype)  # (the 0 past the end is what an outside corner reads)
    padded[:, :, :size] = xf
    corners = []
    for flat, valid, (j, i) in _corners(axes, in_sizes):
        index = np.where(valid, flat, size)
        values = np.empty((n, c, flat.shape[1]), xf.dtype)
        for b in range(n):  # (np.take per batch: a third of take_along_axis's time)
            np.take(padded[b], index[b], axis=1, out=values[b])
        corners.append((values, wy[j][0] * wx[i][0], flat, valid))
    return corners


def _fused_bilinear_sum(corners: list[tuple]) -> np.ndarray:
    """nw_val * nw + ne_val * ne + sw_val * sw + se_val * se, each later product fused into the running sum."""
    values, weight = corners[0][:2]
    out = values * weight[:, None, :]
    for values, weight, _, _ in corners[1:]:
        out = fma_if_available(values, np.broadcast_to(weight[:, None, :], values.shape), out)
    return out


def _bilinear_grid_grad(corners: list[tuple], gof: np.ndarray, axes: list[_Axis]) -> np.ndarray:
    """(N, P, 2) grid gradient, accumulated channel by channel as PyTorch's kernel does:
    gx += ((ne - nw) * s + (se - sw) * n) * gOut, gy += ((sw - nw) * e + (se - ne) * w) * gOut (the second
    product of each bracket and the update fused), then times the coordinate's derivative."""
    nw, ne, sw, se = (c[0] for c in corners)
    n_, w_ = axes[0].t, axes[1].t
    s_, e_ = 1 - n_, 1 - w_
    gx = np.zeros(gof[:, 0].shape, gof.dtype)
    gy = np.zeros_like(gx)
    for ch in range(gof.shape[1]):
        tx = fma_if_available(se[:, ch] - sw[:, ch], n_, (ne[:, ch] - nw[:, ch]) * s_)
        ty = fma_if_available(se[:, ch] - ne[:, ch], w_, (sw[:, ch] - nw[:, ch]) * e_)
        gx = fma_if_available(tx, gof[:, ch], gx)
        gy = fma_if_available(ty, gof[:, ch], gy)
    return np.stack([gx * axes[1].m, gy * axes[0].m], axis=-1)


def _vector_rows(grid: np.ndarray) -> tuple[int, int]:
    """(rows, points per row) of PyTorch's slice iterator over a batch slice of the grid: its vectors run over the
    whole H x W slice where its points lie contiguously, else row by row; a row's last vector may be partly filled."""
    out_h, out_w = grid.shape[1:3]
    strides = tuple(st // grid.itemsize for st in grid.strides[1:])
    whole = _is_contiguous((out_h, out_w, 2), strides) or (
        (strides[1] == 1 or out_w == 1) and _is_contiguous((out_h, out_w), strides[:2]))
    return (1, out_h * out_w) if whole else (out_h, out_w)


def _bilinear_input_grad(corners: list[tuple], gof: np.ndarray, size: int, grid: np.ndarray) -> np.ndarray:
    """(N, C, size) input gradient, summed in the input's dtype in PyTorch's order: vector by vector of grid
    points, within one the corners nw, ne, sw, se, within a corner its lanes."""
    n, c, _ = gof.shape
    dtype = grid.dtype
    lanes = vector_lanes(dtype)
    rows, length = _vector_rows(grid)
    full, rest = divmod(length, lanes)
    # laid out (N, C, row, vector, corner, lane), the order of PyTorch's adds; a partly filled vector's spare lanes
    # add +0 to element 0 (no change: a sum from +0 is never -0)
    values = np.zeros((n, c, rows, -(-length // lanes), 4, lanes), dtype)
    index = np.zeros((n, rows) + values.shape[3:], np.int64)
    go = gof.reshape(n, c, rows, length)
    pieces = [(slice(0, full * lanes), slice(0, full), slice(None), (full, lanes))]
    if rest:
        pieces.append((slice(full * lanes, None), full, slice(0, rest), (rest,)))
    for k, (_, weight, flat, valid) in enumerate(corners):
        w, f, ok = (a.reshape(n, 1, rows, length) for a in (weight, flat, valid))
        for points, vector, lane, shape in pieces:
            target = values[:, :, :, vector, k, lane]
            np.multiply(w[..., points].reshape(n, 1, rows, *shape), go[..., points].reshape(n, c, rows, *shape),
                        out=target)
            np.copyto(target, 0, where=~ok[..., points].reshape(n, 1, rows, *shape))  # (PyTorch skips these)
            index[:, :, vector, k, lane] = f[:, 0, :, points].reshape(n, rows, *shape)
    base = ((np.arange(n)[:, None] * c + np.arange(c)[None, :]) * size).reshape(n, c, 1, 1, 1, 1)
    total = np.zeros(n * c * size, dtype)
    np.add.at(total, (base + index[:, None]).ravel(), values.ravel())  # (one add after another, in that order)
    return total


# ---- kernels -----------------------------------------------------------------------------------------------


def _sampler_kernel(dims: int):
    name = "grid_sampler_2d_cpu_kernel_impl" if dims == 2 else "grid_sampler3d_cpu"

    def kernel(input, grid, interpolation_mode, padding_mode, align_corners):
        _check(input, grid, interpolation_mode, dims, name)
        ct = opmath_dtype(input.dtype)
        x, g = input.astype(ct, copy=False), grid.astype(ct, copy=False)
        n, c = x.shape[:2]
        out_sizes = grid.shape[1:-1]
        axes = _plan(x.shape[2:], g, interpolation_mode, padding_mode, align_corners)
        weights = [_weights(ax) for ax in axes]
        xf = x.reshape(n, c, math.prod(x.shape[2:]))
        out = np.zeros((n, c, math.prod(out_sizes)), ct)
        if xf.size and out.size and _vectorised_bilinear(input.dtype, dims, interpolation_mode):
            out = _fused_bilinear_sum(_bilinear_corners(xf, axes, x.shape[2:]))
        elif xf.size and out.size:
            for flat, valid, taps in _corners(axes, x.shape[2:]):
                w = valid * np.prod([wt[j][0] for wt, j in zip(weights, taps)], axis=0)
                out += w[:, None, :] * np.take_along_axis(xf, flat[:, None, :], axis=2)
        return out.reshape((n, c) + out_sizes).astype(input.dtype, copy=False)

    return kernel


def _sampler_backward_kernel(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                             output_mask):
    """(grad_input, grad_grid) of PyTorch's grid_sampler_{2d,3d}_backward; an empty array where the mask says no."""
    ct = opmath_dtype(input.dtype)
    x, g, go = (a.astype(ct, copy=False) for a in (input, grid, grad_output))
    n, c = x.shape[:2]
    in_sizes, k = x.shape[2:], grid.shape[-1]
    axes = _plan(in_sizes, g, interpolation_mode, padding_mode, align_corners)
    weights = [_weights(ax) for ax in axes]
    xf, gof = x.reshape(n, c, math.prod(in_sizes)), go.reshape(n, c, math.prod(grid.shape[1:-1]))
    s, p = xf.shape[2], gof.shape[2]
    want_x, want_g = output_mask[0], output_mask[1] and interpolation_mode != NEAREST
    lin = ((np.arange(n)[:, None] * c + np.arange(c)[None, :]) * s)[:, :, None]  # (n, c, 1) offsets
    if _vectorised_bilinear(input.dtype, k, interpolation_mode) and xf.size and gof.size:
        corners = _bilinear_corners(xf, axes, in_sizes)
        gx = _bilinear_input_grad(corners, gof, s, grid).reshape(input.shape) if want_x else None
        gg = _bilinear_grid_grad(corners, gof, axes) if output_mask[1] else None
        return (gx if want_x else np.empty((0,), input.dtype),
                gg.reshape(grid.shape) if output_mask[1] else np.empty((0,), grid.dtype))
    scat_idx, scat_val = [], []
    grad_g = np.zeros((n, p, k), ct)
    for flat, valid, taps in _corners(axes, in_sizes):
        ws = [wt[j] for wt, j in zip(weights, taps)]
        if want_x:
            w = valid * np.prod([wj[0] for wj in ws], axis=0)
            scat_idx.append((lin + flat[:, None, :]).ravel())
            scat_val.append((gof * w[:, None, :]).ravel())
        if want_g:
            dot = valid * np.einsum("ncp,ncp->np", gof, np.take_along_axis(xf, flat[:, None, :], axis=2))
            for a in range(len(axes)):
                dw = np.prod([wj[1] if b == a else wj[0] for b, wj in enumerate(ws)], axis=0)
                grad_g[:, :, k - 1 - a] += dot * dw * axes[a].m
    gx = np.empty((0,), input.dtype)
    if output_mask[0]:
        if scat_idx:
            total = np.bincount(np.concatenate(scat_idx), np.concatenate(scat_val), minlength=n * c * s)
        else:
            total = np.zeros(n * c * s)
        gx = total.astype(input.dtype).reshape(input.shape)
    gg = grad_g.reshape(grid.shape).astype(grid.dtype, copy=False) if output_mask[1] else np.empty((0,), grid.dtype)
    return gx, gg


# ---- the double backward, in dispatched ops ----------------------------------------------------------------


def _tap_weights(kind: int, t: Tensor) -> list[tuple]:
    """(w, dw/dt, d2w/dt2) per tap as functions of the differentiable ``t`` (numbers where constant)."""
    if kind == BILINEAR:
        return [(1 - t, -1.0, 0.0), (t, 1.0, 0.0)]
    u, v, r = t + 1, 1 - t, 2 - t
    return [(_cubic2(u), _dcubic2(u), _ddcubic2(u)), (_cubic1(t), _dcubic1(t), _ddcubic1(t)),
            (_cubic1(v), -_dcubic1(v), _ddcubic1(v)), (_cubic2(r), -_dcubic2(r), _ddcubic2(r))]


def _product(factors: list):
    """The product of tensors and numbers; None where a number factor is 0 (bilinear's w'' terms)."""
    out = 1.0
    for f in factors:
        if isinstance(f, float) and f == 0.0:
            return None
        out = f * out if isinstance(out, float) else out * f
    return out


def _double_backward(ctx, gg_input, gg_grid):
    """Adjoint of (grad_input, grad_grid) = B(grad_output, input, grid). With D_k the derivative of tap k's
    weight along gg_grid, B is linear in grad_output and its adjoint is sampling; the input gradient is the
    transpose of the tap sum weighted by D_k; the grid gradient needs the weights' second derivatives."""
    go, x, grid = ctx.saved_tensors
    mode, padding, align, output_mask = ctx.attrs
    need_go, need_x, need_grid = ctx.needs_input_grad
    sampler = grid_sampler_2d if x.dim() == 4 else grid_sampler_3d
    backward = grid_sampler_2d_backward if x.dim() == 4 else grid_sampler_3d_backward
    if not output_mask[0]:
        gg_input = None
    if not output_mask[1] or mode == NEAREST:
        gg_grid = None  # nearest: grad_grid is identically zero
    d_go = d_x = d_grid = None
    if gg_input is not None:
        if need_go:
            d_go = sampler(gg_input, grid, mode, padding, align)
        if need_grid and mode != NEAREST:
            d_grid = backward(go, gg_input, grid, mode, padding, align, (False, True))[1]
    if gg_grid is None:
        return d_go, d_x, d_grid

    n, c = x.shape[0], x.shape[1]
    in_sizes, k = tuple(x.shape[2:]), grid.shape[-1]
    axes = _plan(in_sizes, grid._data.astype(opmath_dtype(x._data.dtype), copy=False), mode, padding, align)
    p = axes[0].t.shape[1]
    grid_f = reshape(grid, (n, p, k))
    gg_f = reshape(gg_grid, (n, p, k))
    go_f = reshape(go, (n, c, p))
    x_f = reshape(x, (n, c, math.prod(in_sizes)))
    dtype = x._data.dtype
    ts, ms, dirs = [], [], []
    for a, ax in enumerate(axes):
        g_a = select(grid_f, 2, k - 1 - a)
        m = ax.m.astype(dtype, copy=False)
        # t has t's value and derivative m w.r.t. the grid; the padding maps are piecewise linear
        ts.append(add(mul(g_a, _wrap(m)), _wrap((ax.t - m * g_a._data).astype(dtype, copy=False))))
        ms.append(_wrap(m))
        dirs.append(mul(select(gg_f, 2, k - 1 - a), ms[a]))  # gg_grid's component in t_a units
    taps = [_tap_weights(mode, t) for t in ts]
    d_go_j = d_x_j = None
    d_grid_parts = [None] * len(axes)
    for flat, valid, tap in _corners(axes, in_sizes):
        ws = [taps[a][j] for a, j in enumerate(tap)]
        mask = _wrap(valid.astype(dtype))
        # s = D_k . gg_grid = sum_a w_a' dir_a prod_{b != a} w_b
        s = None
        for a in range(len(axes)):
            term = _product([ws[b][1] if b == a else ws[b][0] for b in range(len(axes))] + [dirs[a], mask])
            s = term if s is None else add(s, term)
        index = expand(unsqueeze(_wrap(flat), 1), (n, c, p))
        vals = gather(x_f, 2, index)
        s_c = unsqueeze(s, 1)
        if need_go:
            term = mul(s_c, vals)
            d_go_j = term if d_go_j is None else add(d_go_j, term)
        if need_x:
            src = mul(go_f, s_c)
            d_x_j = scatter_add(_wrap(np.zeros((n, c, x_f.shape[2]), dtype)), 2, index, src) if d_x_j is None \
                else scatter_add(d_x_j, 2, index, src)
        if need_grid:
            dot = mul(sum_op(mul(go_f, vals), (1,), False, None), mask)
            for e in range(len(axes)):
                # d s / d t_e = sum_a d/dt_e (w_a' prod_{b != a} w_b) dir_a
                ds = None
                for a in range(len(axes)):
                    facs = []
                    for b in range(len(axes)):
                        order = (b == a) + (b == e)
                        facs.append(ws[b][order])
                    term = _product(facs + [dirs[a]])
                    if term is None:
                        continue
                    ds = term if ds is None else add(ds, term)
                if ds is not None:
                    part = mul(mul(dot, ds), ms[e])
                    d_grid_parts[e] = part if d_grid_parts[e] is None else add(d_grid_parts[e], part)
    if d_go_j is not None:
        d_go_j = reshape(d_go_j, tuple(go.shape))
        d_go = d_go_j if d_go is None else add(d_go, d_go_j)
    if d_x_j is not None:
        d_x = reshape(d_x_j, tuple(x.shape))
    if need_grid:
        zero = None
        comps = []
        for e in reversed(range(len(axes))):  # grid component k-1-e
            part = d_grid_parts[e]
            if part is None:
                zero = zero if zero is not None else _wrap(np.zeros((n, p), dtype))
                part = zero
            comps.append(part)
        extra = reshape(stack(comps, 2), tuple(grid.shape))
        d_grid = extra if d_grid is None else add(d_grid, extra)
    return d_go, d_x, d_grid


# ---- the operators -----------------------------------------------------------------------------------------


def _sampler_vjp(ctx, g):
    x, grid = ctx.saved_tensors
    mode, padding, align = ctx.attrs
    need = ctx.needs_input_grad
    backward = grid_sampler_2d_backward if x.dim() == 4 else grid_sampler_3d_backward
    gx, gg = backward(g, x, grid, mode, padding, align, (bool(need[0]), bool(need[1])))
    return (gx if need[0] else None, gg if need[1] else None)


_ARGS = "int interpolation_mode, int padding_mode, bool align_corners"
_RULES = dict(attrs=("interpolation_mode", "padding_mode", "align_corners"))

grid_sampler_2d = defop(f"grid_sampler_2d(Tensor input, Tensor grid, {_ARGS}) -> Tensor", _sampler_kernel(2),
                        vjp=_sampler_vjp, saves=("input", "grid"), node_name="GridSampler2DBackward0",
                        jvp=not_implemented_jvp("grid_sampler_2d"), **_RULES)
grid_sampler_3d = defop(f"grid_sampler_3d(Tensor input, Tensor grid, {_ARGS}) -> Tensor", _sampler_kernel(3),
                        vjp=_sampler_vjp, saves=("input", "grid"), node_name="GridSampler3DBackward0",
                        jvp=not_implemented_jvp("grid_sampler_3d"), **_RULES)


def _backward_op(dims: int):
    name = f"grid_sampler_{dims}d_backward"
    return defop(f"{name}(Tensor grad_output, Tensor input, Tensor grid, {_ARGS}, bool[2] output_mask) "
                 "-> (Tensor, Tensor)", _sampler_backward_kernel, vjp=_double_backward,
                 saves=("grad_output", "input", "grid"),
                 attrs=("interpolation_mode", "padding_mode", "align_corners", "output_mask"),
                 hidden=("output_mask",), node_name=f"GridSampler{dims}DBackwardBackward0",
                 jvp=not_implemented_jvp(name))


grid_sampler_2d_backward = _backward_op(2)
grid_sampler_3d_backward = _backward_op(3)


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``torch.grid_sampler``: the 2-D kernel for 4-D input, the 3-D one otherwise (whose checks then speak)."""
    op = grid_sampler_2d if input.dim() == 4 else grid_sampler_3d
    return op(input, grid, interpolation_mode, padding_mode, align_corners)


# ---- affine_grid_generator ---------------------------------------------------------------------------------


def _linspace(steps: int, align: bool, dtype: np.dtype) -> np.ndarray:
    """PyTorch's linspace_from_neg_one in ``dtype`` (theta's): pixel centres in [-1, 1] (shrunk by (n-1)/n
    without align_corners, each operation rounded to ``dtype`` as torch's kernels round a half-precision one)."""
    if steps <= 1:
        if dtype.itemsize == 2:  # (its ``at::tensor(0, options)`` has no half-precision instantiation)
            raise NotImplementedError(f'"tensor_cpu" not implemented for \'{scalar_type_name(dtype)}\'')
        return np.zeros(1, dtype)
    # (torch's at::linspace counts its upper half down from 1: NumPy's counts up, an ulp off there)
    r = float_linspace(-1, 1, steps, dtype)
    if align:
        return r
    ct = opmath_dtype(dtype) if dtype.kind == "f" else np.dtype(np.float32)  # (bfloat16's opmath is float too)
    shrunk = (r.astype(ct) * ct.type(steps - 1)).astype(dtype)
    return (shrunk.astype(ct) / ct.type(steps)).astype(dtype)


def _base_grid(size, align: bool, dtype: np.dtype) -> np.ndarray:
    """(prod(spatial), dims+1), in ``dtype``: the homogeneous coordinates (x, y[, z], 1) of every output pixel,
    one grid for the whole batch (read-only: shared by the calls of one size, as a training loop makes them)."""
    return _spatial_base_grid(tuple(size[2:]), align, dtype)


@functools.lru_cache(maxsize=16)
def _spatial_base_grid(spatial: tuple, align: bool, dtype: np.dtype) -> np.ndarray:
    k = len(spatial)
    lin = [_linspace(s, align, dtype) for s in spatial]  # D, H, W order; x runs along the last axis
    mesh = np.meshgrid(*lin, indexing="ij")
    cols = [mesh[k - 1 - i].ravel() for i in range(k)] + [np.ones(math.prod(spatial), dtype)]
    base = np.stack(cols, axis=1)
    base.flags.writeable = False
    return base


def _homogeneous_product(base: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """(N, P, dims): ``base @ theta^T`` for each theta, summed as torch's bmm sums these three or four terms: from
    zero, in order, each product rounded before it is added (a BLAS matmul fuses and reorders them, an ulp off; at
    a pixel centre that ulp decides which neighbours grid_sample's gradient reads). Summed as (N, dims, P), the
    long pixel axis innermost, which NumPy's broadcasting runs several times faster than an inner axis of 2-3."""
    total = np.zeros(theta.shape[:2] + base.shape[:1], base.dtype)
    for k in range(base.shape[1]):
        total += theta[:, :, k:k + 1] * base[:, k]
    return total.transpose(0, 2, 1)


def _affine_kernel(theta, size, align_corners):
    size = tuple(size)
    dims = len(size) - 2
    n = size[0]
    if theta.shape[0] != n:  # PyTorch's message comes from its bmm with theta^T
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {dims + 1}] but "
                           f"got: [{theta.shape[0]}, {theta.shape[2]}].")
    ct = opmath_dtype(theta.dtype)
    # (the base grid in theta's own dtype, bfloat16 for a float32 copy standing for one; the product in float)
    base = _base_grid(size, align_corners, seen_dtype(theta)).astype(ct, copy=False)
    out = _homogeneous_product(base, theta.astype(ct, copy=False))
    return np.ascontiguousarray(out.reshape(size[:1] + size[2:] + (dims,)), dtype=theta.dtype)


def _affine_vjp(ctx, g):
    size, align = ctx.attrs
    n, dims = size[0], len(size) - 2
    base = _base_grid(size, align, g._data.dtype)
    base = _wrap(np.ascontiguousarray(np.broadcast_to(base, (n,) + base.shape)))
    g_flat = reshape(g, (n, math.prod(size[2:]), dims))
    return transpose(bmm(transpose(base, 1, 2), g_flat), 1, 2)


def _affine_jvp(args, outs, tangents):
    return affine_grid_generator(tangents[0], args[1], args[2])


affine_grid_generator = defop(
    "affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor",
    _affine_kernel, vjp=_affine_vjp, jvp=_affine_jvp, attrs=("size", "align_corners"),
    node_name="AffineGridGeneratorBackward0",
)

__all__ = ["affine_grid_generator", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
           "grid_sampler_2d_backward", "grid_sampler_3d_backward"]
