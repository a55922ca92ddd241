"""Pooling: max_pool2d/3d (with indices), avg_pool2d/3d, adaptive_max_pool2d/3d; the 1-d forms are built on the
2-d ones by (un)squeezing.

Each backward is an operator, as in PyTorch, whose own backward is the forward map again (gather for the
scatter of max pooling, average for the spread of average pooling), so pooling is differentiable to any
order. Like PyTorch's, each backward operator takes the forward's input ``self`` and is differentiated
w.r.t. it with a zero gradient (``constant_in_self``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..._tensor import Tensor
from ...memory_format import suggests_channels_last
from .._util import opmath_dtype, unsupported, wrap_dim
from ..creation import zeros_like
from ..registry import defop
from ..shape_extra import gather
from ..views import view
from ._common import as_int, check_float

# ---- backward operators ------------------------------------------------------------------------------------


def constant_in_self(grad_output_vjp: Callable) -> Callable:
    """The vjp of a backward operator ``op(grad_output, self, ...)`` that is linear in ``grad_output`` and does
    not read ``self``'s values (only its shape). PyTorch still differentiates it w.r.t. ``self``, with a zero
    gradient (``zeros_like`` in derivatives.yaml): under create_graph=True the gradient it computes is then
    connected to the input, so e.g. a gradient penalty through it can be backpropagated. The operator
    declares ``differentiable=("grad_output", "self")``; ``grad_output_vjp(ctx, gg)`` is its adjoint."""

    def vjp(ctx, gg):
        need_grad, need_self = ctx.needs_input_grad
        # (the operator's output, hence gg, is shaped like self: zeros_like(gg) is zeros_like(self))
        return grad_output_vjp(ctx, gg) if need_grad else None, zeros_like(gg) if need_self else None

    return vjp


# ---- geometry ----------------------------------------------------------------------------------------------


def pool_kernel_name(x: np.ndarray, name: str) -> str:
    """The name a CPU pooling kernel with a channels-last variant dispatches under (and words its dtype error
    with): ``name_channels_last`` for an input whose strides suggest that format."""
    return f"{name}_channels_last" if suggests_channels_last(x) else name


def pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _check_pool(x, kernel, stride, padding, dilation, out_sizes) -> None:
    for k, s, p, d in zip(kernel, stride, padding, dilation):
        if k <= 0:
            raise RuntimeError(
                f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}"
            )
        if s <= 0:
            raise RuntimeError(f"stride should be greater than zero, but got dH: {stride[0]} dW: {stride[1]}")
        if d <= 0:
            raise RuntimeError(
                f"dilation should be greater than zero, but got dilationH: {dilation[0]} dilationW: "
                f"{dilation[1]}"
            )
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}"
            )
    if x.ndim not in (3, 4) or 0 in x.shape[1:]:  # (a batch of 0 is allowed)
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(x.shape)}")
    (kh, kw), (ph, pw) = kernel, padding
    if kw // 2 < pw or kh // 2 < ph:  # (pool2d_shape_check's, on the kernel without its dilation)
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, "
                           f"padH = {ph}, kW = {kw}, kH = {kh}")
    if any(o < 1 for o in out_sizes):
        c = x.shape[-3]
        raise RuntimeError(
            f"Given input size: ({c}x{x.shape[-2]}x{x.shape[-1]}). Calculated output size: "
            f"({c}x{out_sizes[0]}x{out_sizes[1]}). Output size is too small"
        )


def _pad_for_windows(x, kernel, stride, padding, dilation, out_sizes, fill):
    n = len(kernel)  # pooled (trailing) dims: 2, or 3 for avg_pool3d
    pads = [(0, 0)] * (x.ndim - n)
    for size, k, s, p, d, o in zip(x.shape[-n:], kernel, stride, padding, dilation, out_sizes):
        needed = (o - 1) * s + d * (k - 1) + 1
        pads.append((p, max(0, needed - size - p)))
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    return np.pad(x, pads, constant_values=fill)


def _windows(xp, kernel, stride, dilation, out_sizes):
    n = len(kernel)
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    v = sliding_window_view(xp, spans, axis=tuple(range(-n, 0)))
    lead = (slice(None),) * (xp.ndim - n)
    return v[
        lead
        + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out_sizes, stride))
        + tuple(slice(None, None, d) for d in dilation)
    ]


# ---- max pooling -------------------------------------------------------------------------------------------


def _flat_positions(which: np.ndarray, kernel_size, out_sizes, stride, padding, dilation, in_sizes) -> np.ndarray:
    """Window-local offset numbers (shaped like the output) -> PyTorch's indices, the flat position of the chosen
    input in its plane (d * H * W + h * W + w): each window's start plus a table lookup of the offset's step."""
    starts = np.zeros((), dtype=np.int64)
    steps = np.zeros((), dtype=np.int64)
    plane_stride = math.prod(in_sizes)
    for k, o, s, p, d, size in zip(kernel_size, out_sizes, stride, padding, dilation, in_sizes):
        plane_stride //= size
        starts = np.add.outer(starts, (np.arange(o, dtype=np.int64) * s - p) * plane_stride)
        steps = np.add.outer(steps, np.arange(k, dtype=np.int64) * d * plane_stride)
    return starts + steps.ravel().take(which)


def _max_pool_kernel(x, kernel_size, stride, padding, dilation, ceil_mode):
    n = len(kernel_size)
    stride = stride or kernel_size  # PyTorch's empty default (kept as given: the node shows ``()``)
    if n == 3:
        if x.ndim == 4 and suggests_channels_last(x):  # (PyTorch's 3-d kernel has no 4-d channels-last variant)
            raise RuntimeError("Unsupported memory format. Supports only ChannelsLast3d, Contiguous")
        out_sizes = _check_pool3d(x, kernel_size, stride, padding, dilation, ceil_mode,
                                  "max_pool3d_with_indices_out_cpu_template()")
    else:
        if x.ndim not in (3, 4):  # (max_pool2d's own check, before pool2d_shape_check's)
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        out_sizes = tuple(
            pool_out_size(size, k, s, p, d, ceil_mode)
            for size, k, s, p, d in zip(x.shape[-n:], kernel_size, stride, padding, dilation)
        )
    if n == 2:
        _check_pool(x, kernel_size, stride, padding, dilation, out_sizes)
    if x.dtype.kind in "bc":  # (every real dtype but bool; the dispatch comes after the geometry checks)
        raise unsupported(pool_kernel_name(x, f"max_pool{n}d"), x.dtype)
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = _pad_for_windows(x, kernel_size, stride, padding, dilation, out_sizes, fill)
    v = _windows(xp, kernel_size, stride, dilation, out_sizes)  # (..., *out, *kernel)
    out, which = _running_max(lambda: _window_slabs(v, tuple(kernel_size)), math.prod(kernel_size))
    indices = _flat_positions(which, kernel_size, out_sizes, stride, padding, dilation, x.shape[-n:])
    # (torch's 3-d channels-last kernel starts its index without the depth term: an unbeaten window keeps that)
    depthless = n == 3 and x.ndim == 5 and suggests_channels_last(x)
    if any(padding) or depthless:
        _index_unbeaten_windows(out, indices, fill, out_sizes, stride, padding, dilation, x.shape[-n:], depthless)
    if x.dtype.kind == "f" and not out.all() and _has_negative_zero(x):
        _signed_zeros(out, x, indices, n)
    return out, indices


def _index_unbeaten_windows(out, indices, fill, out_sizes, stride, padding, dilation, in_sizes,
                            depthless: bool = False) -> None:
    """Windows whose every element equals the padding's fill (-inf, or an integer type's minimum): PyTorch's
    scan reads only the in-bounds elements, none of which beats its starting maximum, so it keeps the index it
    starts from, the window's first in-bounds element; the scan over the padded windows picked the padding
    itself (a negative or wrong index, and the gradient sent there). ``depthless``: torch's 3-d channels-last
    kernel starts from the position's height and width only, leaving out the depth (its own slip, kept)."""
    unbeaten = np.flatnonzero(out == fill)
    if not unbeaten.size:
        return
    first = _first_in_bounds(out_sizes, stride, padding, dilation, in_sizes)
    if depthless:  # (the depth term is a multiple of a plane's H * W)
        first = first % (in_sizes[-2] * in_sizes[-1])
    flat = indices.reshape(-1)  # (a fresh array: a view)
    flat[unbeaten] = np.broadcast_to(first, indices.shape).reshape(-1)[unbeaten]


def _first_in_bounds(out_sizes, stride, padding, dilation, in_sizes) -> np.ndarray:
    """Each window's first in-bounds position, flat in its plane (shaped like the windows' grid): per dim, the
    window's start stepped by the dilation past the padding, as PyTorch's ``while (start < 0) start += d``."""
    flat = np.zeros((), np.int64)
    plane_stride = math.prod(in_sizes)
    for o, s, p, d, size in zip(out_sizes, stride, padding, dilation, in_sizes):
        plane_stride //= size
        start = np.arange(o, dtype=np.int64) * s - p
        first = np.where(start < 0, start + (-start + d - 1) // d * d, start)
        flat = np.add.outer(flat, first * plane_stride)
    return flat


def _has_negative_zero(x: np.ndarray) -> bool:
    bits = x.view(f"u{x.itemsize}")
    return bool((bits == np.array(1 << (8 * x.itemsize - 1), bits.dtype)).any())


def _signed_zeros(out: np.ndarray, x: np.ndarray, indices: np.ndarray, n: int) -> None:
    """NumPy's maximum of -0.0 and +0.0 is +0.0 either way round; PyTorch keeps the window's first zero. Read
    the zero maxima back from the input at their indices."""
    zero = np.nonzero(out == 0)
    out[zero] = x[zero[:-n] + np.unravel_index(indices[zero], x.shape[-n:])]


def _window_slabs(v: np.ndarray, kernel_size: tuple) -> Iterator[np.ndarray]:
    """The (..., *out) slabs of the windows view ``v`` (..., *out, *kernel), one per kernel offset, row-major."""
    for offset in itertools.product(*(range(k) for k in kernel_size)):
        yield v[(Ellipsis,) + offset]


def _running_max(slabs: Callable[[], Iterator[np.ndarray]], count: int) -> tuple[np.ndarray, np.ndarray]:
    """The maximum over the ``count`` same-shaped slabs ``slabs()`` yields (a window's elements in PyTorch's scan
    order) and the number of the slab that holds it, with PyTorch's choice: the first maximum, or the last NaN.
    One pass per slab over whole arrays, with no data-dependent branch (a masked copy per element would cost more
    than the comparisons). NaN-free slabs, the usual case, need not test for NaNs: the maxima tell when a second
    pass that does is needed."""
    best, which = _scan_max(slabs(), count, nan_aware=False)
    if best.dtype.kind == "f" and np.isnan(best).any():  # (a NaN made later slabs lose their comparisons)
        best, which = _scan_max(slabs(), count, nan_aware=True)
    return best, which


def _scan_max(slabs: Iterator[np.ndarray], count: int, nan_aware: bool) -> tuple[np.ndarray, np.ndarray]:
    """``_running_max``'s pass; ``nan_aware`` lets every NaN win, as PyTorch's ``val > max || isnan(val)``."""
    best = np.array(next(slabs), order="C")
    which = np.zeros(best.shape, np.int16 if count < 2 ** 15 else np.int64)
    wins, step = np.empty(best.shape, np.bool_), np.empty_like(which)
    for number, candidate in enumerate(slabs, 1):
        np.greater(candidate, best, out=wins)
        if nan_aware:
            wins |= np.isnan(candidate)
        np.maximum(best, candidate, out=best)  # (NaN stays NaN, as in PyTorch's kernel)
        # which = number where the candidate wins: the numbers grow, so a maximum does it (a masked copy is slow)
        np.multiply(wins, number, out=step)
        np.maximum(which, step, out=which)
    return best, which


def _scatter_kernel(g, x, indices, n: int):
    """Add g at the flat plane positions ``indices`` of an input shaped like ``x`` whose last ``n`` dims are the
    pooled ones (max-pool backward)."""
    input_size = x.shape
    plane = math.prod(input_size[-n:])
    planes = math.prod(input_size[:-n])
    offsets = (np.arange(planes) * plane).reshape(-1, 1)
    idx = (indices.reshape(planes, math.prod(indices.shape[-n:])) + offsets).ravel()
    out = np.zeros(planes * plane, dtype=g.dtype)
    np.add.at(out, idx, g.reshape(-1))  # (in the outputs' order and in g's dtype, as PyTorch's loop adds them)
    return out.reshape(tuple(input_size))


def max_pool_double_backward(grad: Tensor, indices: Tensor, n: int) -> Tensor:
    """PyTorch's max_pool_double_backward: ``grad``'s planes (last ``n`` dims flattened) gathered at ``indices``
    (View, Gather, View nodes); also max_unpool's derivative."""
    lead = tuple(indices.shape[:-n])  # (the planes' sizes given, not -1: an empty batch has none to infer)
    return view(gather(view(grad.contiguous(), lead + (math.prod(grad.shape[-n:]),)), -1,
                       view(indices, lead + (math.prod(indices.shape[-n:]),))), tuple(indices.shape))


def _with_indices_ops(n: int, schema: str, kernel: Callable, node_name: str, backward_name: str, **rules) -> tuple:
    """A pooling that returns (values, indices) (node ``node_name``) and its backward operator, the scatter of
    grad_output at the indices, whose own derivative is PyTorch's max_pool_double_backward: gather the
    gradient's planes at the indices (View, Gather, View nodes)."""

    def scatter(g, x, indices):
        return _scatter_kernel(g, x, indices, n)

    def double_backward(ctx, gg):
        (indices,) = ctx.saved_tensors
        return max_pool_double_backward(gg, indices, n)

    backward = defop(
        f"{backward_name}(Tensor grad_output, Tensor self, Tensor indices) -> Tensor",
        scatter,  # (adaptive windows may overlap: gradients at one position add up)
        vjp=constant_in_self(double_backward),
        saves=("indices",),
        differentiable=("grad_output", "self"),  # integer indices get no edge
        node_name=node_name.replace("Backward0", "BackwardBackward0"),
    )

    def vjp(ctx, g, _g_indices=None):
        x, indices = ctx.saved_tensors
        return backward(g, x, indices)

    forward = defop(schema, kernel, vjp=vjp, saves=("self", "result1"), node_name=node_name, **rules)
    return forward, backward


def _max_pool_ops(n: int) -> tuple:
    return _with_indices_ops(
        n,
        f"max_pool{n}d_with_indices(Tensor self, int[{n}] kernel_size, int[{n}] stride=[], int[{n}] padding=0, "
        f"int[{n}] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
        _max_pool_kernel,
        f"MaxPool{n}DWithIndicesBackward0",
        f"_nn_max_pool{n}d_with_indices_backward",
        attrs=("kernel_size", "stride", "padding", "dilation", "ceil_mode"),
    )


max_pool2d_with_indices, max_pool2d_backward = _max_pool_ops(2)
max_pool3d_with_indices, max_pool3d_backward = _max_pool_ops(3)


# ---- average pooling ---------------------------------------------------------------------------------------
# One kernel for avg_pool2d and avg_pool3d (local_response_norm's route for inputs of more than 3 dims): the
# pooled dims are the trailing len(kernel_size) ones.


def _avg_divisors(size, k, s, p, out, count_include_pad: bool) -> np.ndarray:
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    pool = end - start
    start_c = np.maximum(start, 0)
    end_c = np.minimum(end, size)
    return pool if count_include_pad else (end_c - start_c)


def _avg_geometry(shape, kernel_size, stride, padding, ceil_mode):
    return tuple(
        pool_out_size(n, k, s, p, 1, ceil_mode)
        for n, k, s, p in zip(shape[-len(kernel_size):], kernel_size, stride, padding)
    )


def _avg_divisor_map(
    shape, kernel_size, stride, padding, out_sizes, count_include_pad, divisor_override, dtype
):
    if divisor_override:
        return np.asarray(divisor_override, dtype=dtype)
    n = len(kernel_size)
    div = np.ones((), dtype=np.int64)
    for size, k, s, p, o in zip(shape[-n:], kernel_size, stride, padding, out_sizes):
        div = np.multiply.outer(div, _avg_divisors(size, k, s, p, o, count_include_pad))
    return div.astype(dtype)


def _check_pool3d(x, kernel, stride, padding, dilation, ceil_mode: bool, fn_name: str,
                  avg: bool = False) -> tuple:
    """PyTorch's 3-d pooling checks, in its order: the input's dims, pooling_output_shape's per dim, then
    pool3d_shape_check's. Returns the output sizes."""
    if x.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    out_sizes = []
    for size, k, s, p, d in zip(x.shape[-3:], kernel, stride, padding, dilation):
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > int(((k - 1) * d + 1) / 2):  # (C++ division: truncated towards zero)
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
        out_sizes.append(pool_out_size(size, k, s, p, d, ceil_mode))
    (kt, kh, kw), (st, sh, sw), (dt, dh, dw), (pt, ph, pw) = kernel, stride, dilation, padding
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kt} kH: {kh} kW: {kw}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {st} dH: {sh} dW: {sw}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {dt} dilationH: {dh} "
                           f"dilationW: {dw}")
    for i, size in enumerate(x.shape):
        if size <= 0 and not (x.ndim == 5 and i == 0):  # (an empty batch is allowed)
            raise RuntimeError(f"{fn_name}: Expected input's non-batch dimensions to have positive length, but "
                               f"input has a shape of {list(x.shape)} and non-batch dimension {size} has length "
                               "zero!")
    it, ih, iw = x.shape[-3:]
    if avg and (it < kt or ih < kh or iw < kw):
        raise RuntimeError(f"input image (T: {it} H: {ih} W: {iw}) smaller than kernel size (kT: {kt} kH: {kh} "
                           f"kW: {kw})")
    if kt // 2 < pt or kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {kt} kW: {kw} "
                           f"kH: {kh} padT: {pt} padW: {pw} padH: {ph}")
    if min(out_sizes) < 1:
        c = x.shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{it}x{ih}x{iw}). Calculated output size: "
                           f"({c}x{'x'.join(map(str, out_sizes))}). Output size is too small")
    return tuple(out_sizes)


def _planes_dim(x) -> None:
    """avg_pool2d reads the input's planes, ``size(-3)``, before it checks anything."""
    if x.ndim == 0:
        raise IndexError("Dimension specified as -3 but tensor has no dimensions")
    wrap_dim(-3, x.ndim)


def _avg_pool_kernel(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    if divisor_override is not None:
        as_int(divisor_override)  # (an int: torch's parser refuses 1.5, which the division would take)
    n = len(kernel_size)
    stride = stride or kernel_size
    if n == 2:
        _planes_dim(x)
        out_sizes = _avg_geometry(x.shape, kernel_size, stride, padding, ceil_mode)
        _check_pool(x, kernel_size, stride, padding, (1, 1), out_sizes)
        _check_avg_dtype(x, pool_kernel_name(x, "avg_pool2d"))
    elif x.ndim in (4, 5) and divisor_override == 0:  # (PyTorch's avg_pool3d checks it before the geometry)
        raise RuntimeError("divisor must be not zero")
    else:
        out_sizes = _check_pool3d(x, kernel_size, stride, padding, (1, 1, 1), ceil_mode, "avg_pool3d()", avg=True)
        _check_avg_dtype(x, "avg_pool3d_out_frame")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    ones = (1,) * n
    xp = _pad_for_windows(x, kernel_size, stride, padding, ones, out_sizes, 0)
    opmath = opmath_dtype(x.dtype)  # (PyTorch sums half windows in float)
    sums = _window_sums(_windows(xp, kernel_size, stride, ones, out_sizes), tuple(kernel_size), opmath)
    div = _avg_divisor_map(
        x.shape, kernel_size, stride, padding, out_sizes, count_include_pad, divisor_override, opmath
    )
    if x.dtype.kind == "i":  # int64: C's integer division, truncating towards zero
        quotient = np.abs(sums) // div
        return np.where(sums < 0, -quotient, quotient).astype(x.dtype, copy=False)
    return (sums / div).astype(x.dtype, copy=False)


def _window_sums(v: np.ndarray, kernel_size: tuple, dtype) -> np.ndarray:
    """Each window's sum in ``dtype``, added slab by slab over the kernel offsets: PyTorch's order (row by row
    through the window), and fast (NumPy's reduction over a few strided trailing axes runs one short inner loop
    per output element)."""
    slabs = _window_slabs(v, kernel_size)
    sums = np.array(next(slabs), dtype=dtype, order="C")
    for slab in slabs:
        sums += slab
    return sums


def _check_avg_dtype(x: np.ndarray, kernel_name: str) -> None:
    """Average pooling runs on floats and int64 (PyTorch's CPU kernels take Long, not the other integers)."""
    if x.dtype != np.int64:
        check_float(x, kernel_name)


def _avg_pool_backward_kernel(
    g, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    n = len(kernel_size)
    stride = stride or kernel_size
    input_size = x.shape
    out_sizes = g.shape[-n:]
    div = _avg_divisor_map(
        input_size, kernel_size, stride, padding, out_sizes, count_include_pad, divisor_override, g.dtype
    )
    share = g / div
    padded = [
        size + p + max(0, (o - 1) * s + k - size - p)
        for size, k, s, p, o in zip(input_size[-n:], kernel_size, stride, padding, out_sizes)
    ]
    gp = np.zeros(tuple(input_size[:-n]) + tuple(padded), dtype=g.dtype)
    lead = (slice(None),) * (len(input_size) - n)
    # Each window position adds its share, last offset first: an input then gets its windows' shares in the
    # windows' order, as PyTorch's loop over the outputs adds them.
    for offsets in itertools.product(*(range(k - 1, -1, -1) for k in kernel_size)):
        gp[lead + tuple(slice(i, i + (o - 1) * s + 1, s) for i, o, s in zip(offsets, out_sizes, stride))] += share
    return np.ascontiguousarray(
        gp[lead + tuple(slice(p, p + size) for p, size in zip(padding, input_size[-n:]))]
    )


_AVG_ATTRS = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")


def _avg_pool_ops(n: int) -> tuple:
    """avg_pool{n}d (AvgPool{n}DBackward0) and its backward operator, each the other's gradient."""

    def vjp(ctx, g):
        (x,) = ctx.saved_tensors
        return backward(g, x, *ctx.attrs)

    def backward_vjp(ctx, gg):
        return forward(gg, *ctx.attrs)

    forward = defop(
        f"avg_pool{n}d(Tensor self, int[{n}] kernel_size, int[{n}] stride=[], int[{n}] padding=0, "
        "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
        _avg_pool_kernel,
        vjp=vjp,
        saves=("self",),
        attrs=_AVG_ATTRS,
        node_name=f"AvgPool{n}DBackward0",
    )
    backward = defop(
        f"avg_pool{n}d_backward(Tensor grad_output, Tensor self, int[{n}] kernel_size, int[{n}] stride, "
        f"int[{n}] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",
        _avg_pool_backward_kernel,
        vjp=constant_in_self(backward_vjp),
        attrs=_AVG_ATTRS,
        differentiable=("grad_output", "self"),
        node_name=f"AvgPool{n}DBackwardBackward0",
    )
    return forward, backward


avg_pool2d, avg_pool2d_backward = _avg_pool_ops(2)
avg_pool3d, avg_pool3d_backward = _avg_pool_ops(3)


# ---- adaptive max pooling ----------------------------------------------------------------------------------


def _adaptive_window_rows(size: int, out: int) -> np.ndarray:
    """PyTorch's adaptive windows along one dim, [floor(i * size / out), ceil((i + 1) * size / out)) for each
    output i, as rows of input positions padded to the longest window by repeating each window's last position
    (a repeat never wins a maximum: it is not greater, and a NaN repeated is the same position)."""
    starts = np.arange(out, dtype=np.int64) * size // out
    ends = -((-(np.arange(out, dtype=np.int64) + 1) * size) // out)
    longest = int((ends - starts).max()) if out else 0
    return np.minimum(starts[:, None] + np.arange(longest), ends[:, None] - 1)


def _adaptive_slabs(x: np.ndarray, rows: list) -> Iterator[np.ndarray]:
    """The (..., *out) slabs of the adaptive windows of ``x``, one per offset into the (padded) windows,
    row-major: each a take of one input position per output along every pooled dim."""
    n = len(rows)
    for offset in itertools.product(*(range(r.shape[1]) for r in rows)):
        slab = x
        for d, (r, k) in enumerate(zip(rows, offset)):
            slab = np.take(slab, r[:, k], axis=x.ndim - n + d)
        yield slab


def _window_argmax(window: np.ndarray) -> np.ndarray:
    """PyTorch's choice in a flattened window (last axis): the first maximum, or the last NaN if any."""
    arg = np.argmax(window, axis=-1)
    if window.dtype.kind == "f":
        nan = np.isnan(window)
        if nan.any():
            last_nan = window.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
            arg = np.where(nan.any(axis=-1), last_nan, arg)
    return arg


def _adaptive_max_pool_by_window(x: np.ndarray, rows: list, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Adaptive max pooling one output position at a time: each window flattened and reduced at once."""
    sizes = x.shape[-n:]
    lead = x.shape[:-n]
    out = np.empty(lead + tuple(r.shape[0] for r in rows), dtype=x.dtype)
    indices = np.empty(out.shape, dtype=np.int64)
    for pos in itertools.product(*(range(r.shape[0]) for r in rows)):
        bounds = [(int(r[i, 0]), int(r[i, -1]) + 1) for r, i in zip(rows, pos)]
        window = x[(Ellipsis,) + tuple(slice(a, b) for a, b in bounds)]
        window = window.reshape(lead + (math.prod(window.shape[-n:]),))
        arg = _window_argmax(window)
        out[(Ellipsis,) + pos] = np.take_along_axis(window, arg[..., None], axis=-1)[..., 0]
        flat = np.zeros_like(arg)
        local = np.unravel_index(arg, tuple(b - a for a, b in bounds))
        for (start, _), size, offset in zip(bounds, sizes, local):
            flat = flat * size + (start + offset)
        indices[(Ellipsis,) + pos] = flat
    return out, indices


def _adaptive_max_pool_kernel(x, output_size, n: int):
    name = f"adaptive_max_pool{n}d"
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(x.shape)}")
    for d in range(x.ndim - n, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                               f"input has sizes {list(x.shape)} with dimension {d} being empty")
    if len(output_size) != n:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {n}")
    for size in output_size:  # (torch allocates the output first)
        if size < 0:
            shape = list(x.shape[:-n]) + [int(o) for o in output_size]
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {shape}")
    # (PyTorch's CPU kernels are for floating types only)
    check_float(x, "adaptive_max_pool3d_cpu" if n == 3 else pool_kernel_name(x, name))
    sizes = x.shape[-n:]
    if not all(output_size):
        shape = x.shape[:-n] + tuple(int(o) for o in output_size)
        return np.empty(shape, x.dtype), np.empty(shape, np.int64)
    rows = [_adaptive_window_rows(size, int(o)) for size, o in zip(sizes, output_size)]
    lengths = tuple(r.shape[1] for r in rows)
    if math.prod(output_size) <= math.prod(lengths):  # (few large windows: one reduction per window)
        return _adaptive_max_pool_by_window(x, rows, n)
    out, which = _running_max(lambda: _adaptive_slabs(x, rows), math.prod(lengths))
    indices = np.zeros(out.shape, dtype=np.int64)
    for d, (r, size) in enumerate(zip(rows, sizes)):  # the chosen offset along each dim (row-major numbering)
        step = math.prod(q.shape[1] for q in rows[d + 1:])
        output_position = np.arange(r.shape[0]).reshape((-1,) + (1,) * (n - 1 - d))
        indices = indices * size + r[output_position, which // step % r.shape[1]]
    if not out.all() and _has_negative_zero(x):
        _signed_zeros(out, x, indices, n)
    return out, indices


def _adaptive_max_pool_ops(n: int) -> tuple:
    return _with_indices_ops(
        n,
        f"adaptive_max_pool{n}d(Tensor self, int[{n}] output_size) -> (Tensor, Tensor)",
        lambda x, output_size: _adaptive_max_pool_kernel(x, output_size, n),
        f"AdaptiveMaxPool{n}DBackward0",
        f"adaptive_max_pool{n}d_backward",
    )


adaptive_max_pool2d, adaptive_max_pool2d_backward = _adaptive_max_pool_ops(2)
adaptive_max_pool3d, adaptive_max_pool3d_backward = _adaptive_max_pool_ops(3)
