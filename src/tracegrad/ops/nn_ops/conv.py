"""Convolution (1-d/2-d/3-d, grouped, strided, dilated, transposed) and im2col/col2im (``unfold``/``fold``).

Kernels are an im2col over ``sliding_window_view`` followed by one matrix product. Three primitives are
closed under differentiation, which makes every order of derivative a convolution again:

* ``conv(x, w)``                       the forward convolution (no bias);
* ``conv_input_grad(g, w, x_size)``    its adjoint in ``x`` (col2im of ``g @ w``) = a transposed convolution;
* ``conv_weight_grad(g, x, w_size)``   its adjoint in ``w``.

``convolution`` is the user-facing op (PyTorch's ``ConvolutionBackward0`` node); a transposed convolution is
``conv_input_grad`` of its input. When the gradient's graph is recorded (create_graph=True), its backward is
PyTorch's fused ``convolution_backward`` (one ``ConvolutionBackwardBackward0`` node for the three gradients).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..._runtime import get_num_threads
from ..._state import STATE
from ..._tensor import Tensor
from ...backend.dtypes import tensor_type_string
from .._jvp import zero
from .._util import binary_dtype
from ..aten_vec import cpu_flags
from ..pointwise import _can_cast_like_torch as can_cast_like_torch
from ..pointwise import add, copy_into
from ..reductions import sum as sum_op
from ..registry import defop
from ..result_layouts import in_suggested_format
from ..views import expand, squeeze, unsqueeze, view
from ._common import as_int, check_float, expand_param, type_name

# ---- geometry ----------------------------------------------------------------------------------------------


def conv_out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _spatial(x_shape, k_shape, stride, padding, dilation) -> tuple:
    return tuple(
        conv_out_size(n, k, s, p, d) for n, k, s, p, d in zip(x_shape, k_shape, stride, padding, dilation)
    )


def _pad_spatial(x: np.ndarray, padding, first: int = 2) -> np.ndarray:
    """``x`` zero-padded on its spatial dims, the ``len(padding)`` ones from axis ``first``."""
    if not any(padding):
        return x
    pads = [(0, 0)] * x.ndim
    pads[first:first + len(padding)] = [(p, p) for p in padding]
    return np.pad(x, pads)


def _windows(xp: np.ndarray, k_shape, stride, dilation, out_sizes, first: int = 2) -> np.ndarray:
    """(..., *out, ..., *kernel) strided view of the padded input, whose spatial dims start at axis ``first``:
    (N, C, *out, *kernel) for the usual (N, C, *spatial)."""
    nd = len(k_shape)
    spans = tuple(d * (k - 1) + 1 for k, d in zip(k_shape, dilation))
    v = sliding_window_view(xp, spans, axis=tuple(range(first, first + nd)))
    key = (
        (slice(None),) * first
        + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out_sizes, stride))
        + (slice(None),) * (xp.ndim - first - nd)
        + tuple(slice(None, None, d) for d in dilation)
    )
    return v[key]


# The column orders of im2col's matrix. Channel-major columns (sample, output position) make a whole group's
# product one matrix product; sample-major rows (one matrix per sample) make one product per sample that lands
# straight in the (N, O, *out) result, with no transposing copy; batch-last columns (output position, sample) let
# the copy out of the windows run along whole rows of samples (see _batch_last_pays).
CHANNEL_MAJOR, SAMPLE_MAJOR, BATCH_LAST = "channel_major", "sample_major", "batch_last"


def im2col(x: np.ndarray, k_shape, stride, padding, dilation, groups: int, columns: str = CHANNEL_MAJOR,
           out_sizes=None):
    """One row per (channel, kernel offset), one column per (sample, output position), and the output spatial
    sizes: (G, Cg*prod(k), N*L) rows in the ``columns`` order, or (N, G, Cg*prod(k), L) for SAMPLE_MAJOR. The
    output positions run innermost (but for BATCH_LAST), so the copy out of the windows runs along contiguous
    input rows; BATCH_LAST copies out of a batch-last copy of the input, along rows of ``OW * N`` samples (``N``
    for a stride) instead of ``OW``. ``out_sizes``: the output's spatial sizes, where the caller has them."""
    n, c = x.shape[:2]
    nd = len(k_shape)
    if out_sizes is None:
        out_sizes = _spatial(x.shape[2:], k_shape, stride, padding, dilation)
    rows_per_group, length = (c // groups) * math.prod(k_shape), math.prod(out_sizes)
    k_axes, out_axes = tuple(range(2 + nd, 2 + 2 * nd)), tuple(range(2, 2 + nd))
    if columns == BATCH_LAST:  # (C, *spatial, N) -> windows (C, *out, N, *k) -> (C, *k, *out, N)
        xt = np.ascontiguousarray(np.moveaxis(x, 0, -1))
        v = _windows(_pad_spatial(xt, padding, 1), k_shape, stride, dilation, out_sizes, 1)
        order, shape = (0,) + k_axes + tuple(range(1, 2 + nd)), (groups, rows_per_group, length * n)
    else:
        v = _windows(_pad_spatial(x, padding), k_shape, stride, dilation, out_sizes)  # (N, C, *out, *k)
        if columns == SAMPLE_MAJOR:  # (N, C, *k, *out)
            order, shape = (0, 1) + k_axes + out_axes, (n, groups, rows_per_group, length)
        else:  # (C, *k, N, *out)
            order, shape = (1,) + k_axes + (0,) + out_axes, (groups, rows_per_group, n * length)
    return v.transpose(order).reshape(shape), out_sizes


def col2im(v: np.ndarray, x_shape, stride, padding, dilation) -> np.ndarray:
    """Adjoint of the windows: scatter-add ``v``, (C, *k, N, *out) (a view will do), into an input of
    ``x_shape``. Each kernel offset adds one (C, N, *out) slab to a strided slice of the padded input."""
    n, c = x_shape[:2]
    nd = len(x_shape) - 2
    k_shape, out_sizes = v.shape[1:1 + nd], v.shape[2 + nd:]
    padded = tuple(s + 2 * p for s, p in zip(x_shape[2:], padding))
    if _batch_last_pays(n, out_sizes):
        image = np.zeros((c,) + padded + (n,), dtype=v.dtype)  # (C, *padded, N)
        _scatter_windows(np.moveaxis(v, 1 + nd, -1), image, 1, k_shape, out_sizes, stride, dilation)
        xp = np.ascontiguousarray(np.moveaxis(image, -1, 0))  # (the other route's layout)
    else:
        xp = np.zeros((n, c) + padded, dtype=v.dtype)
        _scatter_windows(v, xp.swapaxes(0, 1), 2, k_shape, out_sizes, stride, dilation)
    return _unpadded(xp, padding, x_shape)


def _unpadded(xp: np.ndarray, padding, x_shape) -> np.ndarray:
    crop = (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(padding, x_shape[2:]))
    return xp[crop] if any(padding) else xp


def _batch_last_pays(n: int, out_sizes) -> bool:
    """Whether col2im's adds run faster over a batch-last image: NumPy's inner loops then run along the batch
    instead of along an output row, which pays for a large batch of narrow outputs (LeNet's 8-wide rows, batch
    64: 2.4 times faster) and costs several times over for wide rows and small batches."""
    return n > 1 and bool(out_sizes) and n >= 4 * out_sizes[-1]


def _flat_pays(stride, n: int, out_sizes) -> bool:
    """Whether a convolution's input gradient takes ``_col2im_flat``: unit strides (its windows are runs of the
    flattened planes), more than one spatial dim (one has nothing to flatten) and not the batch-last route. It adds
    runs of whole planes instead of output rows: about 1.4 times faster for 16- to 32-wide rows, for a few per cent
    more columns in the matrix product. Not for a single column (one sample, one output position): ``col2im``'s
    product is then a matrix-vector one, whose sums BLAS orders otherwise than the flat route's matrix product's."""
    return (len(stride) > 1 and all(s == 1 for s in stride) and n * math.prod(out_sizes) > 1
            and not _batch_last_pays(n, out_sizes))


def _flat_grid(g: np.ndarray, padded) -> np.ndarray:
    """(N, O, *out) -> (O, N, out_1, *padded[1:]): grad_output's channel-major columns, each output row widened
    to the padded input's row (and so on for the inner dims) with zeros, so that the columns of one sample run
    along the flattened padded input as the windows of a unit-stride convolution do."""
    n, o = g.shape[:2]
    grid = np.zeros((o, n, g.shape[2]) + tuple(padded[1:]), g.dtype)
    grid[(Ellipsis,) + tuple(slice(0, m) for m in g.shape[3:])] = g.swapaxes(0, 1)
    return grid


def _col2im_flat(v: np.ndarray, x_shape, padding, dilation, k_shape, out_sizes) -> np.ndarray:
    """col2im for unit strides, from ``v`` (C, K, N, F): the columns on ``_flat_grid``'s flattened grid, F =
    out_1 * prod(padded[1:]). Offset k adds its run of the flattened planes, ``out_1`` padded rows from the
    window's first element, in ATen's order as ``_scatter_windows`` does. The grid's extra columns (its widening)
    hold zeros, and adding a zero leaves every sum as it was (a sum that starts from +0.0 is never -0.0), so
    every element gets ATen's bits."""
    n, c = x_shape[:2]
    padded = tuple(s + 2 * p for s, p in zip(x_shape[2:], padding))
    plane_strides = tuple(math.prod(padded[i + 1:]) for i in range(len(padded)))
    length = sum((m - 1) * st for m, st in zip(out_sizes, plane_strides)) + 1  # (to the last window's last column)
    xp = np.zeros((n, c) + padded, dtype=v.dtype)
    image = xp.reshape(n, c, math.prod(padded)).swapaxes(0, 1)  # (C, N, plane)
    for k, offs in enumerate(itertools.product(*(range(k) for k in k_shape))):
        start = sum(o * d * st for o, d, st in zip(offs, dilation, plane_strides))
        image[:, :, start:start + length] += v[:, k, :, :length]
    return _unpadded(xp, padding, x_shape)


def _scatter_windows(v: np.ndarray, image: np.ndarray, lead: int, k_shape, out_sizes, stride, dilation) -> None:
    """``image[window of offset k] += v[:, k]`` for each kernel offset k in turn: the order ATen's col2im adds
    them in, so that every element sums its terms in the same order whatever the layout. ``image`` has ``lead``
    dims before its spatial ones; ``v[:, k]`` is laid out as the window's view of it."""
    for offs in itertools.product(*(range(k) for k in k_shape)):
        key = (slice(None),) * lead + tuple(
            slice(o * d, o * d + (m - 1) * s + 1, s) for o, d, m, s in zip(offs, dilation, out_sizes, stride)
        )
        image[key] += v[(slice(None),) + offs]


def _weight_matrix(w: np.ndarray, groups: int) -> np.ndarray:
    o = w.shape[0]
    return w.reshape(groups, o // groups, -1)  # (G, Og, Cg*K)


def _channel_major(g: np.ndarray, groups: int, batch_last: bool = False) -> np.ndarray:
    """(N, O, *out) -> (G, Og, N*L): columns in im2col's order (sample then output position, or the reverse for
    ``batch_last``)."""
    n, o = g.shape[:2]
    length = math.prod(g.shape[2:])  # (explicit sizes, not -1: an empty batch has no size to infer)
    flat = g.reshape(n, o, length)
    columns = np.moveaxis(flat, 0, -1) if batch_last else flat.swapaxes(0, 1)
    return np.ascontiguousarray(columns).reshape(groups, o // groups, n * length)


def _batch_major(y: np.ndarray, n: int, out_sizes) -> np.ndarray:
    """(G, Og, N*L) in CHANNEL_MAJOR's column order -> a C-contiguous (N, O, *out)."""
    o = y.shape[0] * y.shape[1]
    return np.ascontiguousarray(y.reshape(o, n, math.prod(out_sizes)).swapaxes(0, 1)).reshape((n, o) + tuple(out_sizes))


def _from_batch_last(y: np.ndarray, n: int, out_sizes) -> np.ndarray:
    """(G, Og, L*N) in BATCH_LAST's column order -> a C-contiguous (N, O, *out)."""
    o = y.shape[0] * y.shape[1]
    return np.ascontiguousarray(np.moveaxis(y.reshape(o, math.prod(out_sizes), n), -1, 0)).reshape(
        (n, o) + tuple(out_sizes))


def _column_grid(rows: np.ndarray, n: int, out_sizes, batch_last: bool) -> np.ndarray:
    """(R, N*L) columns -> a (R, N, *out) view, whichever their order."""
    if batch_last:
        return np.moveaxis(rows.reshape(rows.shape[:-1] + tuple(out_sizes) + (n,)), -1, rows.ndim - 1)
    return rows.reshape(rows.shape[:-1] + (n,) + tuple(out_sizes))


# ---- the three primitives ----------------------------------------------------------------------------------


def _conv_kernel(x, w, stride, padding, dilation, groups):
    n = x.shape[0]
    out_sizes = _spatial(x.shape[2:], w.shape[2:], stride, padding, dilation)
    if n > 1 and (w.shape[0] == groups or math.prod(out_sizes) == 1):
        # One output channel per group, or one output position: each product is a matrix-vector one, whose sums
        # BLAS orders by the column's place in the matrix (per sample, or batch-last, would change the bits of
        # the batch's single product), and the output's transposing copy is small. The channel-major route.
        rows, _ = im2col(x, w.shape[2:], stride, padding, dilation, groups, CHANNEL_MAJOR, out_sizes)
        return _batch_major(np.matmul(_weight_matrix(w, groups), rows), n, out_sizes)
    if _batch_last_pays(n, out_sizes):
        rows, _ = im2col(x, w.shape[2:], stride, padding, dilation, groups, BATCH_LAST, out_sizes)
        return _from_batch_last(np.matmul(_weight_matrix(w, groups), rows), n, out_sizes)
    rows, _ = im2col(x, w.shape[2:], stride, padding, dilation, groups, SAMPLE_MAJOR, out_sizes)  # (N, G, CgK, L)
    return np.matmul(_weight_matrix(w, groups), rows).reshape((n, w.shape[0]) + tuple(out_sizes))


def _conv_input_grad_kernel(g, w, input_size, stride, padding, dilation, groups):
    n, c = input_size[:2]
    k_shape, out_sizes = tuple(w.shape[2:]), tuple(g.shape[2:])
    weights_t = _weight_matrix(w, groups).swapaxes(1, 2)  # (G, CgK, Og)
    # (a weight's inf or NaN times the flat grid's zeros would put NaNs where no window reaches)
    if _flat_pays(stride, n, out_sizes) and np.isfinite(w).all():
        grid = _flat_grid(g, tuple(s + 2 * p for s, p in zip(input_size[2:], padding)))  # (O, N, *F)
        flat = math.prod(grid.shape[2:])  # (sizes given, not -1: an empty batch has none to infer)
        rows = np.matmul(weights_t, grid.reshape(groups, w.shape[0] // groups, n * flat))  # (G, CgK, N*F)
        v = rows.reshape(c, math.prod(k_shape), n, flat)
        return _col2im_flat(v, tuple(input_size), padding, dilation, k_shape, out_sizes)
    batch_last = _batch_last_pays(n, out_sizes)  # (col2im's batch-last route then adds contiguous slabs)
    rows = np.matmul(weights_t, _channel_major(g, groups, batch_last))  # (G, CgK, N*L)
    v = _column_grid(rows.reshape(c * math.prod(k_shape), rows.shape[-1]), n, out_sizes, batch_last)  # (CK, N, *out)
    return col2im(v.reshape((c,) + k_shape + v.shape[1:]), tuple(input_size), stride, padding, dilation)


def _leading(a: np.ndarray, shape) -> np.ndarray:
    """``a`` cut to ``shape``'s spatial sizes. A transposed convolution whose ``output_padding`` reaches past its
    stride (the dilation allows it) has output rows no input position reaches: its adjoints see only the first
    ones."""
    if a.shape[2:] == tuple(shape[2:]):
        return a
    return a[(slice(None), slice(None)) + tuple(slice(0, n) for n in shape[2:])]


def _conv_weight_grad_kernel(g, x, weight_size, stride, padding, dilation, groups):
    if x.dtype == np.float16 and x.shape[0] > 1:
        return _half_weight_grad_by_sample(g, x, weight_size, stride, padding, dilation, groups)
    return _weight_grad_product(g, x, weight_size, stride, padding, dilation, groups)


def _half_weight_grad_by_sample(g, x, weight_size, stride, padding, dilation, groups) -> np.ndarray:
    """A float16 weight gradient as the slow kernels build it: one gemm per sample, summed in float and added
    (``beta=1``) to the half gradient so far, which is rounded after every sample."""
    f32 = np.float32
    total = np.zeros(tuple(weight_size), np.float16)
    for i in range(x.shape[0]):
        one = _weight_grad_product(g[i:i + 1].astype(f32), x[i:i + 1].astype(f32), weight_size, stride, padding,
                                   dilation, groups)
        total = (total.astype(f32) + one).astype(np.float16)
    return total


def _weight_grad_product(g, x, weight_size, stride, padding, dilation, groups):
    n = x.shape[0]
    batch_last = _batch_last_pays(n, g.shape[2:])
    columns = BATCH_LAST if batch_last else CHANNEL_MAJOR
    rows, out_sizes = im2col(x, tuple(weight_size[2:]), stride, padding, dilation, groups, columns)
    if tuple(out_sizes) != g.shape[2:]:  # (see _leading: only the windows the other operand's positions meet)
        first = (slice(None), slice(None)) + tuple(slice(0, m) for m in g.shape[2:])
        windows = _column_grid(rows.reshape(math.prod(rows.shape[:2]), rows.shape[2]), n, out_sizes, batch_last)
        kept = _channel_major(windows[first].swapaxes(0, 1), 1, batch_last)  # (1, G*CgK, N*L')
        rows = kept.reshape(rows.shape[:2] + kept.shape[2:])
    # (rows @ g^T, then transposed: BLAS runs this one faster than g @ rows^T, up to 1.3 times)
    gw = np.matmul(rows, _channel_major(g, groups, batch_last).swapaxes(1, 2))  # (G, CgK, Og)
    return np.ascontiguousarray(gw.swapaxes(1, 2)).reshape(tuple(weight_size))


_PARAMS = "int[] stride, int[] padding, int[] dilation, int groups"


def _conv_vjp(ctx, g):
    x, w = ctx.saved_tensors
    stride, padding, dilation, groups = ctx.attrs
    need = ctx.needs_input_grad
    gx = conv_input_grad(g, w, tuple(x.shape), stride, padding, dilation, groups) if need[0] else None
    gw = conv_weight_grad(g, x, tuple(w.shape), stride, padding, dilation, groups) if need[1] else None
    return _input_gradient_laid_out(gx, x, w), gw


def _input_gradient_laid_out(gx, x: Tensor, w: Tensor):
    """PyTorch's convolution_backward gives grad_input the memory format the input and weight suggest; the
    operators that compute it here see the weight but not the input, so the input's layout is applied after
    (to the fresh array: a slice of a transposed convolution's gradient is left as it is)."""
    if gx is not None and gx._base is None and (gx.ndim != 5 or gx._data.dtype == np.float32):
        gx._data = in_suggested_format(gx._data, x._data, w._data)  # (5-d: only oneDNN's float32 kernel keeps it)
    return gx


def _conv_input_grad_vjp(ctx, gg):
    g, w = ctx.saved_tensors
    stride, padding, dilation, groups = ctx.attrs
    need = ctx.needs_input_grad
    d_g = conv(gg, w, stride, padding, dilation, groups) if need[0] else None
    d_w = conv_weight_grad(g, gg, tuple(w.shape), stride, padding, dilation, groups) if need[1] else None
    return d_g, d_w


def _conv_weight_grad_vjp(ctx, gg):
    g, x = ctx.saved_tensors
    stride, padding, dilation, groups = ctx.attrs
    need = ctx.needs_input_grad
    d_g = conv(x, gg, stride, padding, dilation, groups) if need[0] else None
    d_x = conv_input_grad(g, gg, tuple(x.shape), stride, padding, dilation, groups) if need[1] else None
    return d_g, d_x


_ATTRS = ("stride", "padding", "dilation", "groups")
conv = defop(
    f"_nn_conv(Tensor input, Tensor weight, {_PARAMS}) -> Tensor",
    _conv_kernel,
    vjp=_conv_vjp,
    saves=("input", "weight"),
    attrs=_ATTRS,
    node_name="ConvolutionBackward0",
)
conv_input_grad = defop(
    f"_nn_conv_input_grad(Tensor grad_output, Tensor weight, int[] input_size, {_PARAMS}) -> Tensor",
    _conv_input_grad_kernel,
    vjp=_conv_input_grad_vjp,
    saves=("grad_output", "weight"),
    attrs=_ATTRS,
    node_name="ConvolutionBackwardBackward0",
)
conv_weight_grad = defop(
    f"_nn_conv_weight_grad(Tensor grad_output, Tensor input, int[] weight_size, {_PARAMS}) -> Tensor",
    _conv_weight_grad_kernel,
    vjp=_conv_weight_grad_vjp,
    saves=("grad_output", "input"),
    attrs=_ATTRS,
    node_name="ConvolutionBackwardBackward0",
)


# ---- the user-facing convolution ---------------------------------------------------------------------------


def transposed_out_size(x_shape, k_shape, stride, padding, dilation, output_padding) -> tuple:
    return tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + op + 1
        for n, k, s, p, d, op in zip(x_shape, k_shape, stride, padding, dilation, output_padding)
    )


def _cpu_kernel_name(nd: int, transposed: bool, dilation) -> str:
    """The CPU kernel PyTorch would pick, as its dtype errors name it."""
    if transposed:
        return f"slow_conv_transpose{max(nd, 2)}d_out_cpu"
    if any(d != 1 for d in dilation):
        return "slow_conv_dilated<>"
    return "compute_columns3d" if nd == 3 else "slow_conv2d_cpu"


def _check_size_signs(stride, padding, dilation, output_padding) -> None:
    """check_shape_forward's refusals of the sizes' signs, in its order (a zero dilation is the kernels' to refuse,
    after the shapes)."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")


def _check_conv(x, w, bias, stride, padding, dilation, transposed, output_padding, groups) -> None:
    """ATen's check_shape_forward, in its order (the signs of the sizes, then the input's dims against the
    weight's, then the shapes), then the CPU kernel's dtype refusals."""
    nd = w.ndim - 2
    _check_size_signs(stride, padding, dilation, output_padding)
    _check_input_dims(x, w)
    _check_channels_and_sizes(x, w, bias, stride, padding, dilation, transposed, output_padding, groups)
    # Integer convolutions run, exactly, as PyTorch's CPU kernels do: every integer dtype in the plain kernels,
    # only int64 in the dilated and transposed ones; bool and complex nowhere (F.conv*d split a complex one into
    # real ones before; a complex tangent's convolution in a forward formula is refused)
    kernel = _cpu_kernel_name(nd, transposed, dilation)
    if x.dtype.kind in "bc" or (x.dtype.kind in "iu" and x.dtype != np.int64
                               and kernel not in ("slow_conv2d_cpu", "compute_columns3d")):
        check_float(x, kernel, NotImplementedError)
    _check_kernel_dilation(nd, transposed, dilation)
    _check_parameter_dtypes(x, w, bias, stride, dilation, transposed, groups)


def _check_parameter_dtypes(x, w, bias, stride, dilation, transposed, groups) -> None:
    """A weight or bias of another dtype than the input, refused by the backend ATen selects once the shapes are
    checked: oneDNN's check of its parameters, or the slow kernel's reading of the weight (and, in the 3-d
    transposed one, of the bias) as the input's dtype. The other slow kernels take a bias of any dtype
    (``_with_bias``)."""
    if _uses_mkldnn(x, w, stride, dilation, groups):
        for name, p in (("weight", w), ("bias", bias)):
            if p is not None and p.dtype != x.dtype:
                raise RuntimeError(f"Input type ({tensor_type_string(x.dtype)}) and {name} type "
                                   f"({tensor_type_string(p.dtype)}) should be the same or input should be a MKLDNN "
                                   f"tensor and {name} is a dense tensor")
    elif x.dtype != w.dtype:
        raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found {type_name(w.dtype)}")
    elif bias is not None and bias.dtype != x.dtype and transposed and x.ndim == 5:
        raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found {type_name(bias.dtype)}")


def _uses_mkldnn(x, w, stride, dilation, groups) -> bool:
    """ATen's ConvParams::use_mkldnn on a CPU build with oneDNN: half precision where the processor has its
    instructions, else float32 where it beats the slow kernels (a 1-d convolution counted as a 2-d one of height 1;
    at::get_num_threads() read as tracegrad's setting)."""
    if x.dtype == np.float16:
        return bool({"avx512_fp16", "amx_fp16"} & cpu_flags())
    if x.dtype != np.float32:
        return False
    x_shape, w_shape = (x.shape[:2] + (1,) + x.shape[2:], w.shape[:2] + (1,) + w.shape[2:]) if w.ndim == 3 else (
        x.shape, w.shape)
    one_by_one = w_shape[-1] == 1 and w_shape[-2] == 1
    if not (any(s != 1 for s in stride) or any(d != 1 for d in dilation) or x_shape[0] >= 16 or not one_by_one
            or get_num_threads() > 1):
        return False
    return (groups > 1 or (w_shape[-1] > 3 and w_shape[-2] > 3) or x_shape[0] > 1
            or math.prod(x_shape[:4]) > 20480)


def _groups_error(groups: int, w, fewer: bool) -> RuntimeError:
    """check_shape_forward's refusal of groups that do not divide the channels (``fewer``: outnumber them); its
    divisibility message prints the weight's size inside a second pair of brackets, as ATen's does."""
    if fewer:
        relation, size = "at least", str(list(w.shape))
    else:
        relation, size = "divisible by", f"[{list(w.shape)}]"
    return RuntimeError(f"Given groups={groups}, expected weight to be {relation} {groups} at dimension 0, but got "
                        f"weight of size {size} instead")


def _check_input_dims(x, w) -> None:
    """check_shape_forward's (and convolution_backward's) refusal of an input of other dims than the weight."""
    if x.ndim != w.ndim:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight {list(w.shape)}, "
                           f"but got {x.ndim}-dimensional input of size {list(x.shape)} instead")


def _check_bias_size(bias, w, out_c: int, transposed: bool) -> None:
    """check_shape_forward's refusal of a bias that is not one value per output channel."""
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_c):
        raise RuntimeError(
            f"Given {'transposed=1, ' if transposed else ''}weight of size {list(w.shape)}, expected bias to be "
            f"1-dimensional with {out_c} elements, but got bias of size {list(bias.shape)} instead"
        )


def _check_channels_and_sizes(x, w, bias, stride, padding, dilation, transposed, output_padding, groups) -> int:
    """ATen's check_shape_forward after its sign checks: groups against the weight, channels, kernel against the
    padded input (a transposed one's output size), the bias's size after the channels'; the number of output
    channels."""
    nd = w.ndim - 2
    c = x.shape[1]
    if not transposed:
        if w.shape[0] < groups or w.shape[0] % groups:
            raise _groups_error(groups, w, w.shape[0] < groups)
        if c != w.shape[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {list(w.shape)}, expected input"
                f"{list(x.shape)} to have {w.shape[1] * groups} channels, but got {c} channels "
                "instead"
            )
        _check_bias_size(bias, w, w.shape[0], transposed=False)
        padded = [n + 2 * p for n, p in zip(x.shape[2:], padding)]
        spans = [d * (k - 1) + 1 for k, d in zip(w.shape[2:], dilation)]
        if any(pn < sp for pn, sp in zip(padded, spans)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                f"size: ({' x '.join(map(str, spans))}). Kernel size can't be greater than actual "
                "input size"
            )
        out_c = w.shape[0]
    else:
        if c != w.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {list(w.shape)}, expected input{list(x.shape)} "
                f"to have {w.shape[0]} channels, but got {c} channels instead"
            )
        if c < groups or c % groups:
            raise _groups_error(groups, w, c < groups)
        _check_bias_size(bias, w, w.shape[1] * groups, transposed=True)
        if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
            # (PyTorch names depth, height and width; a 1-D convolution is its 2-D one over a height of 1)
            names = ("depth", "height", "width")[-max(nd, 2):]
            lead = (1,) if nd == 1 else ()
            parts = [f"{what}_{name}: {v}"
                     for what, values in (("output_padding", (0,) * len(lead) + tuple(output_padding)),
                                          ("stride", lead + tuple(stride)), ("dilation", lead + tuple(dilation)))
                     for name, v in zip(names, values)]
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               + " ".join(parts))
        sizes = transposed_out_size(x.shape[2:], w.shape[2:], stride, padding, dilation, output_padding)
        if any(n < 1 for n in sizes):
            lead_in, lead_out = ((1,), (1,)) if len(sizes) == 1 else ((), ())
            raise RuntimeError(
                f"Given input size per channel: ({' x '.join(map(str, lead_in + tuple(x.shape[2:])))}). Calculated "
                f"output size per channel: ({' x '.join(map(str, lead_out + tuple(sizes)))}). Output size is too small"
            )
        out_c = w.shape[1] * groups
    return out_c



# ``dtype().name()`` (caffe2's TypeMeta names), as conv{1,2,3}d's own bias check prints them
_TYPEMETA_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "complex64": "c10::complex<float>",
                   "complex128": "c10::complex<double>", "int64": "long int", "int32": "int", "int16": "short int",
                   "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _convolution_kernel(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    # (ATen's _convolution checks those two first, whatever the input, then expands its sizes)
    if w.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride, padding, dilation, output_padding = _expanded_params(w.ndim - 2, stride, padding, dilation,
                                                                 output_padding)
    _check_conv(x, w, bias, stride, padding, dilation, transposed, output_padding, groups)
    if transposed:
        size = (x.shape[0], w.shape[1] * groups) + transposed_out_size(
            x.shape[2:], w.shape[2:], stride, padding, dilation, output_padding
        )
        out = _conv_input_grad_kernel(x, w, size, stride, padding, dilation, groups)
    elif bias is not None and x.dtype == np.float16:
        return _half_conv_with_bias(x, w, bias, stride, padding, dilation, groups)
    else:
        out = _conv_kernel(x, w, stride, padding, dilation, groups)
    return out if bias is None else _with_bias(out, bias, transposed)


def _half_conv_with_bias(x, w, bias, stride, padding, dilation, groups) -> np.ndarray:
    """A float16 convolution with a bias, as the slow kernels compute it: the bias is copied into the output and
    the gemm adds its float sums to it (``beta=1``), so the bias and the sums are rounded to half once, together
    (adding the bias to a half result would round twice). A bias of another dtype is rounded to half by that copy."""
    f32 = np.float32
    out = _conv_kernel(x.astype(f32), w.astype(f32), stride, padding, dilation, groups)
    out += _bias_copied(bias, out.ndim, np.dtype(np.float16)).astype(f32)
    return out.astype(np.float16)


def _bias_copied(bias: np.ndarray, ndim: int, dtype: np.dtype) -> np.ndarray:
    """The bias as the plain slow kernels copy it into their ``ndim``-d output of ``dtype`` (one value per channel):
    cast to that dtype first, a complex one with its warning."""
    shaped = bias.reshape((1, -1) + (1,) * (ndim - 2))
    if bias.dtype == dtype:
        return shaped
    cast = np.empty(shaped.shape, dtype)
    copy_into(cast, shaped)
    return cast


def _with_bias(out: np.ndarray, bias: np.ndarray, transposed: bool) -> np.ndarray:
    """The bias added to a slow kernel's output: the plain kernels copy it into the output first (cast to its
    dtype, a complex one with its warning), the transposed ones ``add_`` it (computed in the promoted dtype, then
    written back, a complex one refused)."""
    if not transposed:
        return out + _bias_copied(bias, out.ndim, out.dtype)
    shaped = bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    if bias.dtype == out.dtype:
        return out + shaped
    common = binary_dtype(out, shaped)
    if not can_cast_like_torch(common, out.dtype):
        raise RuntimeError(f"result type {type_name(common)} can't be cast to the desired output type "
                           f"{type_name(out.dtype)}")
    return (out.astype(common) + shaped.astype(common)).astype(out.dtype)


def _convolution_vjp(ctx, g):
    x, w = ctx.saved_tensors
    stride, padding, dilation, transposed, output_padding, groups = ctx.attrs
    need = ctx.needs_input_grad
    # (the sizes are saved as given, one value for every dimension allowed: the kernels below want all of them)
    stride, padding, dilation, output_padding = _expanded_params(w.ndim - 2, stride, padding, dilation,
                                                                 output_padding)
    if STATE.grad_enabled:  # create_graph: PyTorch's one node for the three gradients (see convolution_backward)
        grads = convolution_backward(g, x, w, None, stride, padding, dilation, transposed, output_padding, groups,
                                     need)
        return tuple(grad if asked else None for grad, asked in zip(grads, need))
    gx = gw = gb = None
    if not transposed:
        if need[0]:
            gx = conv_input_grad(g, w, tuple(x.shape), stride, padding, dilation, groups)
        if need[1]:
            gw = conv_weight_grad(g, x, tuple(w.shape), stride, padding, dilation, groups)
    else:  # y = conv_input_grad(x, w): its adjoints are conv and conv_weight_grad with the roles swapped
        if need[0]:
            gx = conv(g, w, stride, padding, dilation, groups)
            if gx.shape[2:] != x.shape[2:]:  # (see _leading)
                gx = gx[(slice(None), slice(None)) + tuple(slice(0, n) for n in x.shape[2:])]
        if need[1]:
            gw = conv_weight_grad(x, g, tuple(w.shape), stride, padding, dilation, groups)
    if need[2]:
        gb = sum_op(g, (0,) + tuple(range(2, g.ndim)), False, None)
    return _input_gradient_laid_out(gx, x, w), gw, gb


def _zero_tensor(primal: Tensor) -> Tensor:
    """PyTorch's zero tangent of ``primal`` as a convolution reads it: ``_efficientzerotensor``, contiguous whatever
    ``primal``'s layout (a channels-last input's), which the ZeroTensor fallback materialises as contiguous zeros."""
    return zero(primal, primal._data.dtype, False)


def _convolution_jvp(args, outs, tangents):
    """FunctionsManual's convolution_jvp: ``convolution(input_t, weight_p, None, ...) + convolution(input_p,
    weight_t, bias_t, ...)``, the bias's tangent passed into the second convolution, which runs first (as GCC
    evaluates the operands of ``+``: of two refusals, its is raised). A missing tangent is PyTorch's zero tensor,
    which the convolutions (no zero-tensor kernel) read as zeros."""
    x, w, bias = args[:3]
    params = args[3:]
    input_t, weight_t, bias_t = (_zero_tensor(p) if t is None and p is not None else t
                                 for t, p in zip(tangents, (x, w, bias)))
    second = convolution(x, weight_t, bias_t, *params)
    return add(convolution(input_t, w, None, *params), second)


convolution = defop(
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
    "bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    _convolution_kernel,
    vjp=_convolution_vjp,
    jvp=_convolution_jvp,
    saves=("input", "weight"),
    attrs=("stride", "padding", "dilation", "transposed", "output_padding", "groups"),
    node_name="ConvolutionBackward0",
    meta=("bias_sym_sizes_opt",),
)


# ---- its backward under create_graph: one operator for the three gradients, as PyTorch's ----------------------
# A plain backward composes the gradients from the primitives above (the bias's is a sum of grad_output). When
# the gradient's graph is recorded, PyTorch's single convolution_backward node takes grad_output, input and
# weight, so every gradient it returns (the bias's too) requires grad when input or weight does.


def _expanded_param(value, name: str, nd: int) -> tuple:
    """ATen's expand_param_if_needed: one value for every dimension, or exactly ``nd`` of them."""
    value = tuple(value)
    if len(value) == 1:
        return value * nd
    if len(value) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} values to match the "
                           f"convolution dimensions, but got {name}={list(value)}")
    return value


def _expanded_params(nd: int, stride, padding, dilation, output_padding) -> tuple:
    """(stride, padding, dilation, output_padding) each expanded to ``nd`` values, refused in that order."""
    return tuple(_expanded_param(v, name, nd) for v, name in (
        (stride, "stride"), (padding, "padding"), (dilation, "dilation"), (output_padding, "output_padding")))


def _check_grad_output_dims(g, expected: tuple, nd: int) -> None:
    """grad_output's channels, then each output size, refused in the words of the slow (plain and transposed)
    kernels' shape checks, which see a 1-d convolution as a 2-d one over a height of 1."""
    lead = 1 if nd == 1 else 0
    for axis, want in enumerate(expected, start=1):
        if g.shape[axis] != want:
            shown = axis + lead if axis > 1 else axis
            raise RuntimeError(f"Expected a tensor of dimension {g.ndim + lead} and tensor.size[{shown}] == {want} "
                               f"but got: dimension {g.ndim + lead} and tensor.size[{shown}] = {g.shape[axis]}")


def _check_kernel_dilation(nd: int, transposed: bool, dilation) -> None:
    """A zero dilation, which ATen's shape checks let through to the kernel (the dilated one, or the transposed
    one), refused in that kernel's words; a 1-d convolution is a 2-d one over a height of 1."""
    if all(d > 0 for d in dilation):
        return
    values = ((1,) if nd == 1 else ()) + tuple(dilation)
    if not transposed:
        raise RuntimeError(f"dilation should be greater than zero, but got {list(values)}")
    names = ("depth", "height", "width")[-len(values):]
    raise RuntimeError("dilation should be greater than zero, but got "
                       + ", ".join(f"dilation_{name}: {v}" for name, v in zip(names, values)))


def _check_dilated_kernel_shapes(g, x, w, stride, padding, dilation) -> None:
    """slow_conv_dilated_shape_check (every call: the dilated kernel runs whatever output_mask asks): positive
    dilation, then grad_output's batch, channels and output sizes, a 1-d convolution seen as a 2-d one."""
    lead = (1,) if w.ndim == 3 else ()
    _check_kernel_dilation(w.ndim - 2, False, dilation)
    if g.shape[0] != x.shape[0]:
        raise RuntimeError(f"grad_output.size(0)={g.shape[0]} must be input.size(0)={x.shape[0]}")
    if g.shape[1] != w.shape[0]:
        raise RuntimeError(f"grad_output.size(1)={g.shape[1]} must be weight.size(0)={w.shape[0]}")
    sizes = lead + tuple(conv_out_size(n, k, s, p, d)
                         for n, k, s, p, d in zip(x.shape[2:], w.shape[2:], stride, padding, dilation))
    if lead + tuple(g.shape[2:]) != sizes:
        raise RuntimeError(f"grad_output[2:] shape{list(lead + tuple(g.shape[2:]))} must be equal to output size "
                           + " ".join(map(str, sizes)))


def _check_transposed_kernel_shapes(g, x, w, stride, padding, dilation, output_padding, groups) -> None:
    """slow_conv_transpose{2,3}d's shape check: positive dilation (named per dimension), then grad_output's
    channels and output sizes."""
    nd = w.ndim - 2
    _check_kernel_dilation(nd, True, dilation)
    sizes = transposed_out_size(x.shape[2:], w.shape[2:], stride, padding, dilation, output_padding)
    _check_grad_output_dims(g, (w.shape[1] * groups,) + tuple(sizes), nd)


def _check_kernel_dtypes(dispatch, others, name: str, floating_only: bool) -> None:
    """One backward kernel's dtype errors: the dtype it dispatches on (``dispatch``'s) refused where it has no
    instance (``floating_only``: integers, bool and complex; else bool only), then the first of ``others`` of
    another dtype, read as the dispatched one (``data_ptr<scalar_t>``'s error)."""
    if dispatch.dtype.kind == "b" or (floating_only and dispatch.dtype.kind not in "f"):
        check_float(dispatch, name)
    for other in others:
        if other.dtype != dispatch.dtype:
            raise RuntimeError(f"expected scalar type {type_name(dispatch.dtype)} but found "
                               f"{type_name(other.dtype)}")


def _check_backward_kernels(g, x, w, stride, padding, dilation, transposed, output_padding, groups,
                            output_mask) -> None:
    """The checks of the CPU kernels convolution_backward runs (ATen's select_conv_backend: the dilated kernel
    where a dilation is not 1, else the plain or transposed one), in their order: shapes, then per gradient the
    dtype dispatched on and the operands read as it. The plain and 2-d transposed kernels run only for an input
    or weight gradient (the bias's is a sum); the 3-d transposed one computes the bias's too."""
    nd = w.ndim - 2
    need_x, need_w, need_b = output_mask
    dims = max(nd, 2)
    if transposed:
        if not (need_x or need_w or (nd == 3 and need_b)):
            return
        _check_transposed_kernel_shapes(g, x, w, stride, padding, dilation, output_padding, groups)
        if need_x:
            _check_kernel_dtypes(g, (x, w), f"slow_conv_transpose{dims}d_backward_out_cpu", True)
        if need_w or need_b:  # (need_b here: the 3-d kernel)
            _check_kernel_dtypes(x, (g,), f"slow_conv_transpose{dims}d_acc_grad_parameters_cpu", True)
        return
    if any(d != 1 for d in dilation):
        _check_dilated_kernel_shapes(g, x, w, stride, padding, dilation)
        # (the dilated kernel dispatches whatever the mask asks, over floating types and int64 only)
        _check_kernel_dtypes(x, (), "slow_conv_dilated<>", x.dtype != np.int64)
        if need_x:
            _check_kernel_dtypes(x, (g, w), "slow_conv_dilated<>", False)
        if need_w:
            _check_kernel_dtypes(x, (g,), "slow_conv_dilated<>", False)
        return
    if not (need_x or need_w):
        return
    sizes = tuple(conv_out_size(n, k, s, p, d)
                  for n, k, s, p, d in zip(x.shape[2:], w.shape[2:], stride, padding, dilation))
    _check_grad_output_dims(g, (w.shape[0],) + sizes, nd)
    plain = f"slow_conv{dims}d_cpu"
    if need_x:
        _check_kernel_dtypes(x, (g, w), plain + "_grad_input", True)
    if need_w:  # (its complex and bool gradients fail in the forward kernel it reuses)
        name = _cpu_kernel_name(nd, False, dilation) if x.dtype.kind in "cb" else plain + "_grad_weight"
        _check_kernel_dtypes(x, (g,), name, True)


def _check_convolution_backward(g, x, w, stride, padding, dilation, transposed, output_padding, groups) -> tuple:
    """ATen's convolution_backward checks, in its order; the expanded (stride, padding, dilation, output_padding)."""
    if w.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    stride, padding, dilation, output_padding = _expanded_params(w.ndim - 2, stride, padding, dilation,
                                                                 output_padding)
    _check_size_signs(stride, padding, dilation, output_padding)
    if groups <= 0:
        raise RuntimeError(f"expected groups to be greater than 0, but got groups={groups}")
    _check_input_dims(x, w)
    _check_channels_and_sizes(x, w, None, stride, padding, dilation, transposed, output_padding, groups)
    if x.ndim != g.ndim:
        raise RuntimeError("Expected input and grad_output to have the same number of dimensions, but got: "
                           f"{x.ndim} and {g.ndim}")
    if not transposed and any(output_padding):
        raise RuntimeError("output_padding is not supported for non-transposed convolutions; got: "
                           + " ".join(map(str, output_padding)))
    return stride, padding, dilation, output_padding


def _convolution_backward_kernel(g, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding, groups,
                                 output_mask):
    # (bias_sizes, torch's schema's, only sizes its meta function's bias gradient: the sum of g has them)
    stride, padding, dilation, output_padding = _check_convolution_backward(g, x, w, stride, padding, dilation,
                                                                            transposed, output_padding, groups)
    _check_backward_kernels(g, x, w, stride, padding, dilation, transposed, output_padding, groups, output_mask)
    need_x, need_w, need_b = output_mask
    gx = gw = gb = np.empty((0,), g.dtype)  # a gradient output_mask leaves out (PyTorch's undefined tensor)
    if need_b:
        gb = np.add.reduce(g, axis=(0,) + tuple(range(2, g.ndim)))
    # (given more images of grad_output than of input, torch's kernels read the first ones only; its bias
    # gradient sums them all)
    g = g[:x.shape[0]]
    if not transposed:
        if need_x:
            gx = _conv_input_grad_kernel(g, w, x.shape, stride, padding, dilation, groups)
        if need_w:
            gw = _conv_weight_grad_kernel(g, x, w.shape, stride, padding, dilation, groups)
    else:
        if need_x:
            gx = _leading(_conv_kernel(g, w, stride, padding, dilation, groups), x.shape)
        if need_w:
            gw = _conv_weight_grad_kernel(x, g, w.shape, stride, padding, dilation, groups)
    return gx, gw, gb


def _convolution_double_backward(ctx, ggx, ggw, ggb):
    """PyTorch's _convolution_double_backward: the adjoint of (gx, gw, gb) in grad_output, input and weight.
    gx and gw are bilinear (in grad_output and weight, grad_output and input); gb is linear in grad_output."""
    g, x, w = ctx.saved_tensors
    stride, padding, dilation, transposed, _, groups, output_mask = ctx.attrs
    need_g, need_x, need_w = ctx.needs_input_grad
    ggx, ggw, ggb = (gg if asked else None for gg, asked in zip((ggx, ggw, ggb), output_mask))
    params = (stride, padding, dilation, groups)
    terms, d_x, d_w = [], None, None
    if not transposed:  # gx = conv_input_grad(g, w), gw = conv_weight_grad(g, x)
        if need_g and ggx is not None:
            terms.append(conv(ggx, w, *params))
        if need_g and ggw is not None:
            terms.append(conv(x, ggw, *params))
        if need_x and ggw is not None:
            d_x = conv_input_grad(g, ggw, tuple(x.shape), *params)
        if need_w and ggx is not None:
            d_w = conv_weight_grad(g, ggx, tuple(w.shape), *params)
    else:  # gx = conv(g, w), gw = conv_weight_grad(x, g)
        if need_g and ggx is not None:
            terms.append(conv_input_grad(ggx, w, tuple(g.shape), *params))
        if need_g and ggw is not None:
            terms.append(conv_input_grad(x, ggw, tuple(g.shape), *params))
        if need_x and ggw is not None:
            d_x = conv(g, ggw, *params)
        if need_w and ggx is not None:
            d_w = conv_weight_grad(ggx, g, tuple(w.shape), *params)
    if need_g and ggb is not None:
        terms.append(expand(view(ggb, (1, -1) + (1,) * (g.ndim - 2)), tuple(g.shape)))
    d_g = None
    for term in terms:
        d_g = term if d_g is None else add(d_g, term)
    return d_g, d_x, d_w


def _convolution_backward_jvp(args, outs, tangents):
    """derivatives.yaml's: each gradient's tangent is the sum of two convolution_backward calls asking for that
    gradient alone (one per tangent of its bilinear operands: grad_output's with weight's for input's gradient,
    with input's for weight's), the bias's ``convolution_backward_jvp_grad_bias``, a sum of grad_output's tangent.
    A missing tangent is PyTorch's zero tensor, read as zeros."""
    g, x, w, bias_sizes = args[:4]
    params, output_mask = args[4:10], args[10]
    g_t, x_t, w_t = (_zero_tensor(p) if t is None else t for t, p in zip(tangents, (g, x, w)))
    has_g, has_x, has_w = (t is not None for t in tangents)

    def one(which: int, first: tuple, second: tuple) -> Tensor:
        mask = tuple(i == which for i in range(3))
        return add(convolution_backward(*first, bias_sizes, *params, mask)[which],
                   convolution_backward(*second, bias_sizes, *params, mask)[which])

    grad_input_t = one(0, (g, x, w_t), (g_t, x, w)) if output_mask[0] and (has_g or has_w) else None
    grad_weight_t = one(1, (g, x_t, w), (g_t, x, w)) if output_mask[1] and (has_g or has_x) else None
    grad_bias_t = sum_op(g_t, (0,) + tuple(range(2, g.ndim)), False, None) if output_mask[2] and has_g else None
    return grad_input_t, grad_weight_t, grad_bias_t


convolution_backward = defop(
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, "
    "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, "
    "bool[3] output_mask) -> "
    "(Tensor, Tensor, Tensor)",
    _convolution_backward_kernel,
    vjp=_convolution_double_backward,
    jvp=_convolution_backward_jvp,
    saves=("grad_output", "input", "weight"),
    attrs=("stride", "padding", "dilation", "transposed", "output_padding", "groups", "output_mask"),
    hidden=("output_mask",),  # (read by the double backward; PyTorch's node has no _saved_output_mask)
    node_name="ConvolutionBackwardBackward0",
)


def _input_dim_error(nd: int, name: str, shape) -> RuntimeError:
    return RuntimeError(
        f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of size: "
        f"{list(shape)}"
    )


def _batched(input: Tensor, nd: int, name: str) -> tuple:
    """``input`` with a leading batch dimension, and whether one was added (an unbatched ``nd``-d input)."""
    if input.ndim not in (nd + 1, nd + 2):
        raise _input_dim_error(nd, name, input.shape)
    unbatched = input.ndim == nd + 1
    return (unsqueeze(input, 0) if unbatched else input), unbatched


def _complex_to_real(t: Tensor) -> tuple:
    """ATen's complex_to_real: the real and imaginary parts as selects of one ``view_as_real``."""
    from ..complex_ops import view_as_real
    from ..views import select

    parts = view_as_real(t)
    return select(parts, parts.ndim - 1, 0), select(parts, parts.ndim - 1, 1)


def _complex_convolution(conv_fn, x: Tensor, weight: Tensor, bias) -> Tensor:
    """ATen's complex_convolution: three real convolutions (Gauss's trick), ``conv_fn(x, w, bias)`` each,

        a = conv(xr, wr, br), b = conv(xi, wi, 0), c = conv(xr + xi, wr + wi, br + bi),
        conv(x, w, bias) = a - b + i (c - a - b),

    so the graph (view_as_real, selects, three ConvolutionBackward0 nodes) and the gradients are PyTorch's."""
    from ..scalar_overloads import mul_scalar

    for name, p in (("weight", weight), ("bias", bias)):  # check_input_same_type_as_parameters
        if p is not None and p.dtype != x.dtype:
            raise RuntimeError(f"Input type ({tensor_type_string(x._data.dtype)}) and {name} type "
                               f"({tensor_type_string(p._data.dtype)}) should be the same")
    x_r, x_i = _complex_to_real(x)
    w_r, w_i = _complex_to_real(weight)
    if bias is None:
        a = conv_fn(x_r, w_r, None)
        b = conv_fn(x_i, w_i, None)
        c = conv_fn(x_r + x_i, w_r + w_i, None)
    else:
        b_r, b_i = _complex_to_real(bias)
        a = conv_fn(x_r, w_r, b_r)
        b = conv_fn(x_i, w_i, None)
        c = conv_fn(x_r + x_i, w_r + w_i, b_r + b_i)
    return a - b + mul_scalar(c - a - b, 1j)


def _check_bias_dtype(input: Tensor, bias) -> None:
    """conv{1,2,3}d's own check, before anything else (in caffe2's type names)."""
    if bias is not None and bias.dtype != input.dtype:
        names = _TYPEMETA_NAMES
        raise RuntimeError(f"Input type ({names.get(input._data.dtype.name, input._data.dtype.name)}) and bias type "
                           f"({names.get(bias._data.dtype.name, bias._data.dtype.name)}) should be the same")


def _check_weight_dims(weight: Tensor) -> None:
    """A weight of (out, in / groups, *kernel): a bare kernel (a 2-D filter) is refused once the input's dims are
    found right, as in torch."""
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")


def conv_nd(input: Tensor, weight: Tensor, bias, stride, padding, dilation, groups: int, nd: int) -> Tensor:
    """``conv{nd}d`` argument handling: int-or-tuple sizes, 'same'/'valid' padding, unbatched input; complex
    input as ATen's complex_convolution(_mode) (three real convolutions)."""
    _check_bias_dtype(input, bias)
    x, unbatched = _batched(input, nd, f"conv{nd}d")
    _check_weight_dims(weight)
    stride, dilation = expand_param(stride, nd), expand_param(dilation, nd)

    def real_conv(x, weight, bias):
        return _conv_nd_batched(x, weight, bias, stride, padding, dilation, groups, nd)

    out = _complex_convolution(real_conv, x, weight, bias) if x.is_complex() else real_conv(x, weight, bias)
    return squeeze(out, 0) if unbatched else out


def _conv_nd_batched(x: Tensor, weight: Tensor, bias, stride, padding, dilation, groups: int, nd: int) -> Tensor:
    """A batched convolution with 'same'/'valid' or explicit padding (ATen's _convolution_mode / convolution)."""
    if isinstance(padding, str):
        if padding == "valid":
            pad = (0,) * nd
        elif padding == "same":
            _check_same_mode_params(stride, dilation, nd)
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
            pad = tuple(t // 2 for t in totals)
            extra = [t % 2 for t in totals]
            if any(extra):  # asymmetric: pad the extra element on the right first, as PyTorch does
                from ..._warnings import warn_once_at_caller

                warn_once_at_caller("conv_same_padding_copy",  # (TORCH_WARN_ONCE: once per process)
                                    "Using padding='same' with even kernel lengths and odd dilation may require a "
                                    "zero-padded copy of the input be created")
                from .misc import constant_pad_nd

                flat: list[int] = []
                for e in reversed(extra):
                    flat += [0, e]
                x = constant_pad_nd(x, tuple(flat), 0)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        pad = expand_param(padding, nd)
    return convolution(x, weight, bias, stride, pad, dilation, False, (0,) * nd, groups)


def _check_same_mode_params(stride: tuple, dilation: tuple, nd: int) -> None:
    """ATen's _convolution_same: a stride and a dilation of one value or ``nd``."""
    for name, values in (("stride", stride), ("dilation", dilation)):
        if len(values) not in (1, nd):
            raise RuntimeError(f"{name} cannot broadcast to {nd} dimensions")


def conv_transpose_nd(
    input: Tensor, weight: Tensor, bias, stride, padding, output_padding, groups: int, dilation, nd: int
) -> Tensor:
    if isinstance(padding, str):
        raise TypeError(f"conv_transpose{nd}d(): argument 'padding' must be tuple of ints, not str")
    x, unbatched = _batched(input, nd, f"conv_transpose{nd}d")
    _check_weight_dims(weight)
    stride, padding = expand_param(stride, nd), expand_param(padding, nd)
    dilation, output_padding = expand_param(dilation, nd), expand_param(output_padding, nd)

    def real_conv(x, weight, bias):
        return convolution(x, weight, bias, stride, padding, dilation, True, output_padding, groups)

    out = _complex_convolution(real_conv, x, weight, bias) if x.is_complex() else real_conv(x, weight, bias)
    return squeeze(out, 0) if unbatched else out


# ---- unfold / fold (im2col / col2im) -----------------------------------------------------------------------


def _check_im2col_dtype(a: np.ndarray, name: str) -> None:
    """im2col/col2im are instantiated for the floating, complex and bool types (after their shape checks)."""
    if a.dtype != np.bool_:
        check_float(a, name, complex_ok=True)


def _im2col_check_dims(x: np.ndarray) -> None:
    """ATen's im2col_shape_check on the input's dims, as it reads them: ``size(1)`` and ``size(2)`` first (an
    IndexError for fewer dims), then 3-d with channels or 4-d, with no empty non-batch dim."""
    for d in (1, 2):
        if d >= x.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(x.ndim, 1)}, "
                             f"{max(x.ndim, 1) - 1}], but got {d})")
    valid = x.shape[1] != 0 and x.shape[2] != 0
    if not ((x.ndim == 3 and x.shape[0] != 0 and valid) or (x.ndim == 4 and valid and x.shape[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(x.shape)}")


def _check_im2col_sizes(order: tuple, **sizes) -> None:
    """ATen's im2col/col2im checks of their size arguments: two ints each, then their values in ``order``."""
    for name, value in sizes.items():
        if len(value) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
        for v in value:
            as_int(v)  # (a TypeError for what is not an int, which the operator's guard words as torch's parser)
    for name in order:
        height, width = sizes[name]
        if name == "padding":
            if height < 0 or width < 0:
                raise RuntimeError(f"padding should be non-negative, but got pad_height: {height} pad_width: {width}")
        elif height <= 0 or width <= 0:
            what, short = ("kernel size", "kernel") if name == "kernel_size" else (name, name)
            raise RuntimeError(f"{what} should be greater than zero, but got {short}_height: {height} "
                               f"{short}_width: {width}")


def _unfold_kernel(x, kernel_size, dilation, padding, stride):
    _check_im2col_sizes(("kernel_size", "dilation", "padding", "stride"), kernel_size=kernel_size,
                        dilation=dilation, padding=padding, stride=stride)
    _im2col_check_dims(x)
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    n, c = x.shape[:2]
    out_sizes = _spatial(x.shape[2:], kernel_size, stride, padding, dilation)
    if any(o <= 0 for o in out_sizes):
        raise RuntimeError(
            f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), kernel_size="
            f"({kernel_size[0]}, {kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), "
            f"padding=({padding[0]}, {padding[1]}), calculated shape of the array of sliding blocks "
            f"as ({out_sizes[0]}, {out_sizes[1]}), but its components must be at least one."
        )
    _check_im2col_dtype(x, "im2col_out_cpu")
    v = _windows(_pad_spatial(x, padding), kernel_size, stride, dilation, out_sizes)  # (N, C, OH, OW, KH, KW)
    out = np.ascontiguousarray(v.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * math.prod(kernel_size),
                                                                       math.prod(out_sizes))
    return out[0] if unbatched else out


def _fold_kernel(cols, output_size, kernel_size, dilation, padding, stride):
    _check_im2col_sizes(("kernel_size", "stride", "dilation", "padding"), output_size=output_size,
                        kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    if cols.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
            f"dimensions for input, but got: {list(cols.shape)}"
        )
    unbatched = cols.ndim == 2
    if unbatched:
        cols = cols[None]
    n, ck, l_in = cols.shape
    k = math.prod(kernel_size)
    if ck % k:
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
            f"got input.size(1)={ck} and kernel_size=({kernel_size[0]}, {kernel_size[1]})."
        )
    c = ck // k
    out_sizes = _spatial(output_size, kernel_size, stride, padding, dilation)
    if math.prod(out_sizes) != l_in:
        raise RuntimeError(
            f"Given output_size=({output_size[0]}, {output_size[1]}), kernel_size=({kernel_size[0]}, "
            f"{kernel_size[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, "
            f"{padding[1]}), stride=({stride[0]}, {stride[1]}), expected size of input's dimension 2 "
            f"to match the calculated number of sliding blocks {out_sizes[0]} * {out_sizes[1]} = "
            f"{math.prod(out_sizes)}, but got input.size(2)={l_in}."
        )
    _check_im2col_dtype(cols, "col2im_out_cpu")
    v = cols.reshape((n, c) + tuple(kernel_size) + tuple(out_sizes)).transpose(1, 2, 3, 0, 4, 5)  # (C, *k, N, *out)
    out = col2im(v, (n, c) + tuple(output_size), stride, padding, dilation)
    return out[0] if unbatched else out


_FOLD_ATTRS = ("kernel_size", "dilation", "padding", "stride")


def _unfold_vjp(ctx, g):
    kernel_size, dilation, padding, stride = ctx.attrs
    shape = ctx.input_shapes[0]
    return fold(g, tuple(shape[-2:]), kernel_size, dilation, padding, stride)


def _fold_vjp(ctx, g):
    _, kernel_size, dilation, padding, stride = ctx.attrs
    return unfold(g, kernel_size, dilation, padding, stride)


unfold = defop(
    "im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor",
    _unfold_kernel,
    vjp=_unfold_vjp,
    attrs=_FOLD_ATTRS,
    node_name="Im2ColBackward0",
    meta=("self_sym_argsize_minus_1", "self_sym_argsize_minus_2"),
)
fold = defop(
    "col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "
    "int[2] stride) -> Tensor",
    _fold_kernel,
    vjp=_fold_vjp,
    attrs=("output_size",) + _FOLD_ATTRS,
    node_name="Col2ImBackward0",
    hidden=("output_size",),
)
