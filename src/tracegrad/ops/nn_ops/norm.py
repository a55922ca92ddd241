"""Normalisation: layer_norm, group_norm, batch_norm (train / eval) and instance_norm.

Forward passes are single NumPy kernels. Backward rules recompute the statistics with dispatched operators
and apply the usual formula ``rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))``, so they are
differentiable again (double backward).

When the gradient's graph is recorded (create_graph=True), layer_norm and batch_norm instead call PyTorch's
fused backward operators (``native_layer_norm_backward``, ``native_batch_norm_backward``): one node for the
three gradients that takes grad_output, input and weight, so every gradient (the bias's too) requires grad
when input or weight does, as in PyTorch. Their own backward is the closed-form double backward below.
batch_norm always takes its fused operator, and group_norm takes its own (``native_group_norm_backward``) when
no graph is recorded, as PyTorch does: their kernels lay the input's gradient out in the input's memory format.
"""

from __future__ import annotations

import math

import numpy as np

from ..._state import STATE
from ..._tensor import Tensor, _wrap
from ...memory_format import contiguous_format, is_in_format, suggested_format
from .. import aten_vec
from .._util import opmath_dtype
from ..pointwise import add, add_, mul, neg, pow, sub
from ..reductions import mean as mean_op
from ..reductions import sum as sum_op
from ..registry import defop, defop_without_derivative
from ..scalar_overloads import div_scalar, mul_scalar
from ..shape_extra import repeat
from ..views import expand, reshape, select, unsqueeze_, view
from . import aten_moments, group_norm_cpu, norm_jvp
from ._common import check_float, check_mixed_dtype, run_op

# ---- shared maths ------------------------------------------------------------------------------------------


def _stats(x: np.ndarray, axes: tuple, eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, x - mean, 1 / sqrt(var + eps)) over ``axes``, the reduced dims kept. The centred array is a fresh
    one, which callers normalise in place."""
    mean = x.mean(axis=axes, keepdims=True)
    centred = np.subtract(x, mean)
    rstd = np.square(centred).mean(axis=axes, keepdims=True)
    rstd += eps
    np.sqrt(rstd, out=rstd)
    np.reciprocal(rstd, out=rstd)
    return mean, centred, rstd


def _stats_ops(x, axes: tuple, eps: float):
    """(xhat, rstd) of ``x`` over ``axes`` with dispatched operators."""
    xc = sub(x, mean_op(x, axes, True, None))
    var = mean_op(mul(xc, xc), axes, True, None)
    rstd = pow(add(var, eps), -0.5)
    return mul(xc, rstd), rstd


def _normalized_grad(gxhat, xhat, rstd, axes: tuple):
    """Gradient w.r.t. x of xhat = (x - mean) * rstd, given the gradient w.r.t. xhat."""
    m1 = mean_op(gxhat, axes, True, None)
    m2 = mean_op(mul(gxhat, xhat), axes, True, None)
    return mul(rstd, sub(sub(gxhat, m1), mul(xhat, m2)))


def _channel_shape(ndim: int, c: int) -> tuple:
    return (1, c) + (1,) * (ndim - 2) if ndim >= 2 else (c,)


# ---- fused backward operators (create_graph) ----------------------------------------------------------------
# y = xhat * w + b with xhat = (x - mean) * rstd, the statistics taken over ``axes``; ``axes`` is empty for
# evaluation batch norm, whose mean and rstd are the running statistics (constants). ``wshape`` broadcasts w
# (and b) against x; ``red`` are the axes a gradient of w (or b) sums over.


def _norm_backward_arrays(g, x, w, mean, rstd, axes: tuple, red: tuple, output_mask) -> tuple:
    """NumPy kernel of the fused backward: (gx, gw, gb), an empty array for a gradient output_mask leaves out."""
    xhat = np.subtract(x, mean)
    xhat *= rstd
    gx = gw = gb = np.empty((0,), g.dtype)  # (PyTorch's undefined tensor)
    if output_mask[0] and not axes:  # the running statistics: PyTorch's dy * invstd * w, in that order
        gx = (g * rstd if w is None else g * rstd * w).astype(g.dtype, copy=False)
    elif output_mask[0]:
        gxhat = g if w is None else g * w
        # gxhat - mean(gxhat) - xhat * mean(gxhat * xhat), times rstd: in place on fresh arrays
        projection = np.multiply(gxhat, xhat)
        projection = projection.mean(axis=axes, keepdims=True)
        gx = np.subtract(gxhat, gxhat.mean(axis=axes, keepdims=True))
        projection = np.multiply(xhat, projection)
        gx -= projection
        gx *= rstd
        gx = gx.astype(g.dtype, copy=False)
    if output_mask[1]:
        gw = np.add.reduce(np.multiply(g, xhat), axis=red).astype(g.dtype, copy=False)  # (in g's layout)
    if output_mask[2]:
        gb = np.add.reduce(g, axis=red).astype(g.dtype, copy=False)
    return gx, gw, gb


def _hessian_term(a, v, xhat, rstd, axes: tuple):
    """Gradient w.r.t. x of <a, D xhat(x)[v]> (a, v held fixed): the second-order part of the double backward."""
    def m(t):
        return mean_op(t, axes, True, None)

    xa, xv = m(mul(xhat, a)), m(mul(xhat, v))
    coef = sub(sub(m(mul(a, v)), mul(m(a), m(v))), mul(xa, xv))
    lin = add(mul(_normalized_grad(a, xhat, rstd, axes), xv), mul(_normalized_grad(v, xhat, rstd, axes), xa))
    return neg(add(mul(mul(mul(rstd, rstd), xhat), coef), mul(rstd, lin)))


def _norm_double_backward(g, w, xhat, rstd, axes: tuple, red: tuple, wshape: tuple, grads, needs) -> tuple:
    """The adjoint of the fused backward (gx, gw, gb) in (grad_output, input, weight), in dispatched operators
    (so it is differentiable again), as PyTorch's layer_norm_double_backward / batchnorm_double_backward. With
    the batch's statistics xhat depends on x through them too; with the running ones it is affine in x."""
    ggx, ggw, ggb = grads
    need_g, need_x, need_w = needs
    wb = None if w is None else reshape(w, wshape)

    def lin(c):  # D xhat[c], which is self-adjoint
        return _normalized_grad(c, xhat, rstd, axes) if axes else mul(c, rstd)

    d_g = d_x = d_w = None
    terms = []
    if need_g:
        if ggx is not None:
            terms.append(lin(ggx) if wb is None else mul(lin(ggx), wb))
        if ggw is not None:
            terms.append(mul(xhat, reshape(ggw, wshape)))
        if ggb is not None:
            terms.append(expand(reshape(ggb, wshape), tuple(g.shape)))
        for term in terms:
            d_g = term if d_g is None else add(d_g, term)
    if need_w and ggx is not None and w is not None:
        d_w = reshape(_sum(mul(g, lin(ggx)), red), tuple(w.shape))
    if need_x:
        if ggw is not None:
            d_x = lin(mul(g, reshape(ggw, wshape)))
        if ggx is not None and axes:
            second = _hessian_term(g if wb is None else mul(g, wb), ggx, xhat, rstd, axes)
            d_x = second if d_x is None else add(d_x, second)
    return d_g, d_x, d_w


def _sum(t, red: tuple):
    return sum_op(t, red, False, None) if red else t


def _asked(values, mask) -> tuple:
    """The gradients (or their cotangents) an output_mask asks for, None for the others."""
    return tuple(v if asked else None for v, asked in zip(values, mask))


# ---- layer_norm --------------------------------------------------------------------------------------------


def _check_layer_norm(x, normalized_shape, weight, bias) -> tuple:
    shape = tuple(normalized_shape)
    k = len(shape)
    if k == 0:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
            "element, but got normalized_shape = []"
        )
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {list(shape)}"
        )
    if bias is not None and tuple(bias.shape) != shape:
        raise RuntimeError(
            f"Expected bias to be of same shape as normalized_shape, but got bias of shape "
            f"{list(bias.shape)} and normalized_shape = {list(shape)}"
        )
    if x.ndim < k or tuple(x.shape[x.ndim - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, "
            f"{', '.join(str(s) for s in shape)}], but got input of size{list(x.shape)}"
        )
    return tuple(range(x.ndim - k, x.ndim))


def _mixed_half(x: np.ndarray, *params) -> bool:
    """Whether a float16 input comes with float32 parameters (after check_mixed_dtype's checks): ATen's CPU kernels
    then compute in float and keep float32 statistics, rounding only the normalized output to float16."""
    return check_mixed_dtype(x, *params) and x.dtype == np.float16


def _output_rounded(result: tuple, dtype: np.dtype) -> tuple:
    """A normalization's (output, statistics...) computed in float for a mixed call: the output in the input's
    dtype, the statistics float32."""
    return (result[0].astype(dtype), *result[1:])


def _layer_norm_kernel(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(y, mean, rstd): PyTorch's native_layer_norm, whose statistics (kept dims of size 1) its node saves."""
    if _mixed_half(x, weight, bias):
        return _output_rounded(_layer_norm_kernel(x.astype(np.float32), normalized_shape, weight, bias, eps), x.dtype)
    check_float(x, "LayerNormKernelImpl", NotImplementedError)
    axes = _check_layer_norm(x, normalized_shape, weight, bias)
    if x.dtype in aten_vec.FUSED_DTYPES and x.size:
        return _layer_norm_as_aten(x, len(axes), weight, bias, eps)
    mean, y, rstd = _stats(x, axes, eps)
    y *= rstd  # (each step in place on the one fresh array)
    if weight is not None:
        y *= weight
    if bias is not None:
        y += bias
    return y.astype(x.dtype, copy=False), mean.astype(x.dtype, copy=False), rstd.astype(x.dtype, copy=False)


def _layer_norm_as_aten(x: np.ndarray, k: int, weight, bias, eps: float) -> tuple:
    """PyTorch's CPU layer norm, bit for bit: ``RowwiseMoments`` per row, ``rstd = 1 / sqrt(var + eps)``, then
    ``fma((x - mean) * rstd, weight, bias)`` (``fma(x - mean, rstd, bias)`` without a weight)."""
    dtype = x.dtype.type
    batch = x.shape[:x.ndim - k]
    rows = np.ascontiguousarray(x).reshape(math.prod(batch), -1)
    mean, var = aten_moments.rowwise_moments(rows)
    rstd = dtype(1) / np.sqrt(var + dtype(eps))
    y = _layer_norm_rows(rows, mean[:, None], rstd[:, None], weight, bias)
    kept = batch + (1,) * k
    return y.reshape(x.shape), mean.reshape(kept), rstd.reshape(kept)


def _layer_norm_rows(rows: np.ndarray, mean: np.ndarray, rstd: np.ndarray, weight, bias) -> np.ndarray:
    """The normalised rows, a block of rows at a time into one output (the float64 scratch of the fused
    multiply-add stays in cache)."""
    w = None if weight is None else weight.reshape(-1)
    b = None if bias is None else bias.reshape(-1)
    out = np.empty(rows.shape, rows.dtype)
    wide = np.empty((aten_vec.block_rows(*rows.shape), rows.shape[1]))  # (scratch of the fused steps)
    for block in aten_vec.row_blocks(*rows.shape):
        y = out[block]
        np.subtract(rows[block], mean[block], out=y)
        if b is None:
            y *= rstd[block]
            if w is not None:
                y *= w
        elif w is None:  # (a bias alone: (x - mean) * rstd + bias, one rounding)
            aten_vec.fma_into(y, rstd[block], b, y, wide[:y.shape[0]])
        else:
            y *= rstd[block]
            aten_vec.fma_into(y, w, b, y, wide[:y.shape[0]])
    return out


def _layer_norm_vjp(ctx, g, _g_mean=None, _g_rstd=None):
    x, weight, bias, mean, rstd = ctx.saved_tensors
    normalized_shape, eps = ctx.attrs
    need = ctx.needs_input_grad
    # PyTorch's fused native_layer_norm_backward from the saved statistics (recorded under create_graph,
    # connected to input and weight; without a graph its kernel runs directly)
    return _asked(run_op(native_layer_norm_backward, g, x, normalized_shape, mean, rstd, weight, bias, need, eps),
                  need)


def _layer_norm_jvp(args, outs, tangents):
    """derivatives.yaml: layer_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, result1, result2,
    normalized_shape)."""
    x, normalized_shape, weight, bias = args[:4]
    input_t, weight_t, bias_t = _affine_tangents(x, weight, bias, tangents)
    ndim = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    return norm_jvp.layer_norm_jvp(x, input_t, weight, weight_t, bias_t, outs[1], outs[2], ndim), None, None


native_layer_norm = defop(
    "_nn_layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1e-05) -> (Tensor, Tensor, Tensor)",
    _layer_norm_kernel,
    vjp=_layer_norm_vjp,
    jvp=_layer_norm_jvp,
    saves=("input", "weight", "bias", "result1", "result2"),
    attrs=("normalized_shape", "eps"),
    hidden=("eps",),
    nondiff_outputs=(1, 2),
    node_name="NativeLayerNormBackward0",
)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """The normalized output of native_layer_norm (its mean and rstd stay saved on the node)."""
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


def _ln_axes(x, normalized_shape) -> tuple:
    """(normalized axes, batch axes) of a layer_norm input."""
    nd, k = x.ndim, len(tuple(normalized_shape))
    return tuple(range(nd - k, nd)), tuple(range(nd - k))


def _ln_backward_kernel(g, x, normalized_shape, mean, rstd, weight, bias, output_mask, eps):
    axes, red = _ln_axes(x, normalized_shape)
    if x.dtype in aten_vec.FUSED_DTYPES and x.size and g.dtype == x.dtype and mean.dtype == x.dtype:
        return _layer_norm_backward_as_aten(g, x, mean, rstd, weight, len(axes), output_mask)
    return _norm_backward_arrays(g, x, weight, mean, rstd, axes, red, output_mask)


def _layer_norm_backward_as_aten(g, x, mean, rstd, weight, k: int, output_mask) -> tuple:
    """PyTorch's CPU ``native_layer_norm_backward``, bit for bit (one thread), rows of ``N`` elements:

    * ``dx = fma(b, x, rstd * dy * gamma) + c`` with ``b = fma(db, mean, -ds) * rstd^3 / N`` and
      ``c = fma(-b, mean, -(db * rstd / N))``, where ``ds`` and ``db`` are ATen's vector sums of ``dy * x * gamma``
      and ``dy * gamma``;
    * ``dgamma`` accumulates ``fma(dy, fma(rstd, x, -rstd * mean), dgamma)`` row after row; ``dbeta`` adds rows."""
    dtype = x.dtype.type
    length = math.prod(x.shape[x.ndim - k:])
    dy = np.ascontiguousarray(g).reshape(-1, length)
    xs = np.ascontiguousarray(x).reshape(-1, length)
    a = rstd.reshape(-1, 1).astype(dtype, copy=False)
    m = mean.reshape(-1, 1).astype(dtype, copy=False)
    gamma = None if weight is None else weight.reshape(length)
    empty = np.empty((0,), g.dtype)
    gx = gw = gb = empty
    if output_mask[0]:
        scale = dtype(1) / dtype(length)
        rows_gamma = None if gamma is None else np.broadcast_to(gamma, dy.shape)
        ds = aten_vec.map_reduce_sum([dy, xs] if gamma is None else [dy, xs, rows_gamma]).reshape(-1, 1)
        db = aten_vec.map_reduce_sum([dy] if gamma is None else [dy, rows_gamma]).reshape(-1, 1)
        b = aten_vec.fma(db, m, -ds) * a * a * a * scale
        c = aten_vec.fma(-b, m, -(db * a * scale))
        gx = _layer_norm_input_grad(dy, xs, a, gamma, b, c).reshape(x.shape)
    normalized = x.shape[x.ndim - k:]
    if output_mask[1]:
        gw = _layer_norm_weight_grad(dy, xs, a, -a * m).reshape(normalized)
    if output_mask[2]:
        gb = np.add.reduce(dy, axis=0).reshape(normalized)  # (rows one after another)
    return gx, gw, gb


def _layer_norm_input_grad(dy, xs, a, gamma, b, c) -> np.ndarray:
    """``fma(b, x, a * dy * gamma) + c`` (per-row ``a``, ``b``, ``c``), a block of rows at a time."""
    out = np.empty(xs.shape, xs.dtype)
    wide = np.empty((aten_vec.block_rows(*xs.shape), xs.shape[1]))  # (scratch of the fused step)
    for block in aten_vec.row_blocks(*xs.shape):
        head = np.multiply(a[block], dy[block])
        if gamma is not None:
            head *= gamma
        aten_vec.fma_into(b[block], xs[block], head, out[block], wide[:head.shape[0]])
        out[block] += c[block]
    return out


def _layer_norm_weight_grad(dy, xs, a, shift) -> np.ndarray:
    """``acc = fma(dy, fma(a, x, shift), acc)`` row after row (per-row ``a`` and ``shift = -a * mean``)."""
    if xs.dtype != np.float32:
        centred = aten_vec.fma(np.broadcast_to(a, xs.shape), xs, np.broadcast_to(shift, xs.shape))
        return aten_vec.fused_row_accumulation(dy, centred)
    accumulator = aten_vec.RoundedRowSum(xs.shape)
    centred = np.empty(accumulator.wide.shape, np.float32)  # (scratch)
    for block in aten_vec.row_blocks(*xs.shape):
        rows = dy[block].shape[0]
        aten_vec.fma_into(a[block], xs[block], shift[block], centred[:rows], accumulator.wide[:rows])
        accumulator.add(dy[block], centred[:rows])
    return accumulator.acc


def _ln_double_backward(ctx, ggx, ggw, ggb):
    g, x, weight = ctx.saved_tensors
    normalized_shape, output_mask, eps = ctx.attrs
    need = ctx.needs_input_grad  # grad_out, input, mean, rstd, weight, bias
    axes, red = _ln_axes(x, normalized_shape)
    xhat, rstd = _stats_ops(x, axes, eps)
    d_g, d_x, d_w = _norm_double_backward(g, weight, xhat, rstd, axes, red, tuple(normalized_shape),
                                          _asked((ggx, ggw, ggb), output_mask), (need[0], need[1], need[4]))
    return d_g, d_x, None, None, d_w, None  # mean and rstd: PyTorch's are not differentiable; bias: Tensor()


native_layer_norm_backward = defop(
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, "
    "Tensor? weight, Tensor? bias, bool[3] output_mask, float eps) -> (Tensor, Tensor, Tensor)",
    _ln_backward_kernel,
    vjp=_ln_double_backward,
    saves=("grad_out", "input", "weight"),
    attrs=("normalized_shape", "output_mask", "eps"),
    node_name="NativeLayerNormBackwardBackward0",
)


# ---- group_norm --------------------------------------------------------------------------------------------


def _check_group_norm(x, num_groups, weight, bias) -> None:
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {x.ndim}")
    c = x.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of "
            f"shape {list(x.shape)} and num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            # (PyTorch's refusal of a bias prints the weight's shape, an absent weight's as [0])
            shown = [0] if weight is None else list(weight.shape)
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in input, "
                f"but got {name} of shape {shown} and input of shape {list(x.shape)}"
            )


def _group_norm_kernel(x, weight, bias, N, C, HxW, group, eps):  # noqa: N803 - PyTorch's parameter names
    """(y, mean, rstd) of PyTorch's native_group_norm: the statistics per (sample, group), which its node saves."""
    if _mixed_half(x, weight, bias):
        return _output_rounded(_group_norm_kernel(x.astype(np.float32), weight, bias, N, C, HxW, group, eps), x.dtype)
    check_float(x, "GroupNormKernelImpl", NotImplementedError)
    num_groups = group
    _check_group_norm(x, num_groups, weight, bias)
    n, c = x.shape[:2]
    if x.dtype in aten_vec.FUSED_DTYPES and x.size and suggested_format(x) is contiguous_format:
        return _group_norm_as_aten(x, weight, bias, num_groups, eps)
    if x.dtype in group_norm_cpu.CHANNELS_LAST_FORWARD_DTYPES and x.size and suggested_format(x) is not \
            contiguous_format and all(t is None or t.dtype == x.dtype for t in (weight, bias)):
        return group_norm_cpu.group_norm_forward_channels_last(x, weight, bias, num_groups, eps)
    grouped = x.reshape(n, num_groups, c // num_groups * math.prod(x.shape[2:]))  # (not -1: n may be 0)
    mean, xc, rstd = _stats(grouped, (2,), eps)
    y = (xc * rstd).reshape(x.shape)
    cshape = _channel_shape(x.ndim, c)
    if weight is not None:
        y = y * weight.reshape(cshape)
    if bias is not None:
        y = y + bias.reshape(cshape)
    return (y.astype(x.dtype, copy=False), mean.reshape(n, num_groups).astype(x.dtype, copy=False),
            rstd.reshape(n, num_groups).astype(x.dtype, copy=False))


def _group_norm_as_aten(x: np.ndarray, weight, bias, groups: int, eps: float) -> tuple:
    """PyTorch's CPU group norm on a contiguous input, bit for bit: ``RowwiseMoments`` per (sample, group), rstd
    from the variance in double (its eps is a double), then ``fma(scale, x, fma(-scale, mean, beta))`` per
    channel with ``scale = rstd * gamma`` (``(x - mean) * rstd`` without weight and bias)."""
    dtype = x.dtype.type
    n, c = x.shape[:2]
    mean, var = aten_moments.rowwise_moments(np.ascontiguousarray(x).reshape(n * groups, -1))
    rstd = (1.0 / np.sqrt(np.maximum(var, 0).astype(np.float64) + eps)).astype(dtype)
    mean, rstd = mean.reshape(n, groups), rstd.reshape(n, groups)
    per_channel = (n, c) + (1,) * (x.ndim - 2)
    channel_mean = np.repeat(mean, c // groups, axis=1).reshape(per_channel)
    channel_rstd = np.repeat(rstd, c // groups, axis=1).reshape(per_channel)
    if weight is None and bias is None:
        y = np.subtract(x, channel_mean)
        y *= channel_rstd
        return y, mean, rstd
    cshape = (1, c) + (1,) * (x.ndim - 2)
    scale = channel_rstd if weight is None else channel_rstd * weight.reshape(cshape)
    beta = np.zeros(cshape, x.dtype) if bias is None else bias.reshape(cshape)
    shift = aten_vec.fma(-scale, channel_mean, np.broadcast_to(beta, scale.shape))
    if x.dtype == np.float32 and x.flags.c_contiguous:
        return _plane_fma(x, scale.reshape(-1), shift.reshape(-1)), mean, rstd
    return aten_vec.fma(np.broadcast_to(scale, x.shape), x, np.broadcast_to(shift, x.shape)), mean, rstd


def _plane_fma(x: np.ndarray, scale: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """``fma(scale, x, shift)`` per (sample, channel) plane of a C-contiguous float32 ``x`` (``scale`` and
    ``shift`` flat per plane), a block of planes at a time."""
    rows = x.reshape(scale.shape[0], -1)
    out = np.empty(x.shape, x.dtype)
    out_rows = out.reshape(rows.shape)
    wide = np.empty((aten_vec.block_rows(*rows.shape), rows.shape[1]))  # (scratch of the fused step)
    for block in aten_vec.row_blocks(*rows.shape):
        aten_vec.fma_into(scale[block, None], rows[block], shift[block, None], out_rows[block],
                              wide[:rows[block].shape[0]])
    return out


def _group_norm_vjp(ctx, g, g_mean=None, g_rstd=None):
    x, weight, mean, rstd = ctx.saved_tensors
    n_, c_, hxw, num_groups, _eps = ctx.attrs
    need = ctx.needs_input_grad
    if STATE.grad_enabled or g_mean is not None or g_rstd is not None:
        # PyTorch's infinitely_differentiable_native_group_norm_backward: through the saved mean and rstd, which
        # are this node's outputs, so a gradient's graph leads back to this node
        return _group_norm_backward_composite(g, g_mean, g_rstd, x, mean, rstd, weight, (n_, c_, hxw, num_groups),
                                              need)
    # otherwise its fused kernel, whose gradient of input takes the input's memory format
    return _asked(native_group_norm_backward(g, x, mean, rstd, weight, n_, c_, hxw, num_groups, need), need)


def _group_norm_backward_kernel(g, x, mean, rstd, weight, N, C, HxW, group, output_mask):  # noqa: N803 - PyTorch's names
    """The fused backward over (N, group, C // group, HxW) blocks, from the saved statistics per (sample, group):
    PyTorch's own kernel, bit for bit, for float and double operands of one dtype; the same maths in NumPy's
    order otherwise."""
    operands = (g, x, mean, rstd) + (() if weight is None else (weight,))
    if x.dtype in aten_vec.FUSED_DTYPES and x.size and x.ndim >= 2 and all(a.dtype == x.dtype for a in operands):
        channels_last = suggested_format(x) is not contiguous_format
        return group_norm_cpu.group_norm_backward(g, x, mean, rstd, weight, group, output_mask, channels_last)
    blocks = (N, group, C // group, HxW)
    w = None if weight is None else weight.reshape(1, group, C // group, 1)
    stats = (mean.reshape(N, group, 1, 1), rstd.reshape(N, group, 1, 1))
    g4, x4 = g.reshape(blocks), x.reshape(blocks)
    # (with a single channel NumPy merges the samples and positions into one run, summed pairwise)
    if g4.flags.c_contiguous and x4.flags.c_contiguous and x4.size and C > 1 and \
            len({a.dtype for a in (g4, x4, *stats) + (() if w is None else (w,))}) == 1:
        gx, gw, gb = _group_norm_backward_by_samples(g4, x4, w, *stats, output_mask)
    else:
        gx, gw, gb = _norm_backward_arrays(g4, x4, w, *stats, (2, 3), (0, 3), output_mask)
    return (gx.reshape(x.shape) if output_mask[0] else gx, gw.reshape(-1) if output_mask[1] else gw,
            gb.reshape(-1) if output_mask[2] else gb)


def _group_norm_backward_by_samples(g, x, w, mean, rstd, output_mask) -> tuple:
    """``_norm_backward_arrays`` over (N, group, C // group, HxW) C-contiguous blocks of one dtype, a block of
    samples at a time (its temporaries stay in cache), with the same operations: the means over a (sample, group)
    reduce the same contiguous run as over the whole array, and the sums over samples and positions, which
    NumPy takes as each run of positions summed (pairwise) and added to the total sample after sample, are that:
    the runs' sums per block, then added down the samples."""
    n = x.shape[0]
    step = max(1, aten_vec.BLOCK_ELEMENTS // (x.size // n))
    gx = np.empty(x.shape, x.dtype) if output_mask[0] else np.empty((0,), g.dtype)
    gw_runs = np.empty(x.shape[:3], x.dtype) if output_mask[1] else None
    for start in range(0, n, step):
        b = slice(start, start + step)
        xhat = np.subtract(x[b], mean[b])
        xhat *= rstd[b]
        if output_mask[0]:
            gxhat = g[b] if w is None else g[b] * w
            projection = np.multiply(gxhat, xhat).mean(axis=(2, 3), keepdims=True)
            out = np.subtract(gxhat, gxhat.mean(axis=(2, 3), keepdims=True), out=gx[b])
            out -= np.multiply(xhat, projection, out=xhat if gw_runs is None else None)
            out *= rstd[b]
        if gw_runs is not None:
            np.add.reduce(np.multiply(g[b], xhat), axis=3, out=gw_runs[b])
    gw = np.add.reduce(gw_runs, axis=0) if output_mask[1] else np.empty((0,), g.dtype)
    gb = np.add.reduce(np.add.reduce(g, axis=3), axis=0) if output_mask[2] else np.empty((0,), g.dtype)
    return gx, gw, gb


# (only run when no graph is recorded: under create_graph the composite above gives the gradients)
native_group_norm_backward = defop_without_derivative(
    "native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, "
    "SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    _group_norm_backward_kernel,
)


def _group_norm_backward_composite(g, g_mean, g_rstd, x, mean, rstd, weight, sizes: tuple, need) -> tuple:
    """The gradients of native_group_norm composed as PyTorch's infinitely_differentiable_native_group_norm_backward
    composes them, operator for operator (so a gradient's graph is PyTorch's), from the saved statistics.
    Like PyTorch, the statistics' gradients count only when both are given."""
    n, c, hxw, groups = sizes
    d = c // groups
    s = 1.0 / (d * hxw)
    x4 = reshape(x, (n, groups, d, hxw))
    mean4 = reshape(mean, (n, groups, 1, 1))
    rstd4 = reshape(rstd, (n, groups, 1, 1))
    stats_grads = g_mean is not None and g_rstd is not None
    gx = gw = gb = None
    if g is not None:
        g4 = reshape(g, (n, groups, d, hxw))
        ds = unsqueeze_(sum_op(mul(g4, x4), (3,), False, None), -1)
        db = unsqueeze_(sum_op(g4, (3,), False, None), -1)
    if need[0]:
        w4 = None if weight is None else reshape(weight, (1, groups, d, 1))
        rstd_cube = mul(mul(rstd4, rstd4), rstd4)
        if stats_grads:
            dvar = mul(mul_scalar(rstd_cube, -0.5), view(g_rstd, (n, groups, 1, 1)))
            from_stats = _var_mean_backward(dvar, view(g_mean, (n, groups, 1, 1)), x4, (2, 3))
        if g is not None:
            a = rstd4 if w4 is None else mul(rstd4, w4)
            b = unsqueeze_(sum_op(ds if w4 is None else mul(ds, w4), (2,), False, None), -2)
            cc = unsqueeze_(sum_op(db if w4 is None else mul(db, w4), (2,), False, None), -2)
            b = mul_scalar(mul(sub(mul(cc, mean4), b), rstd_cube), s)
            cc = sub(mul(neg(b), mean4), mul_scalar(mul(cc, rstd4), s))
            gx = add(add(mul(a, g4), mul(b, x4)), cc)
            if stats_grads:
                gx = add_(gx, from_stats)
            gx = reshape(gx, tuple(x.shape))
        elif stats_grads:
            gx = reshape(from_stats, tuple(x.shape))
    if need[1] and g is not None:
        gw = reshape(sum_op(mul(sub(ds, mul(db, mean4)), rstd4), (0,), False, None), tuple(weight.shape))
    if need[2] and g is not None:
        gb = reshape(sum_op(db, (0,), False, None), (c,))
    return gx, gw, gb


def _var_mean_backward(g_var, g_mean, x, dims: tuple):
    """PyTorch's var_mean_backward for the biased variance and mean over ``dims`` (kept)."""
    count = math.prod(x.shape[k] for k in dims)
    from_var = mul(mul_scalar(g_var, 2.0 / count), sub(x, mean_op(x, dims, True, None)))
    return add(from_var, div_scalar(expand(g_mean, tuple(x.shape)), count))


def _group_norm_jvp(args, outs, tangents):
    """derivatives.yaml: group_norm_jvp for the output, group_norm_mean_jvp and group_norm_invstd_jvp for the
    statistics (differentiable outputs of group norm)."""
    x, weight, bias = args[:3]
    groups = args[6]
    input_t, weight_t, bias_t = _affine_tangents(x, weight, bias, tangents)
    _, mean, rstd = outs
    result = norm_jvp.group_norm_jvp(x, input_t, weight, weight_t, bias_t, mean, rstd, groups)
    if tangents[0] is None:  # (the statistics' formulas read the input's tangent alone)
        return result, None, None
    return (result, norm_jvp.group_norm_mean_jvp(input_t.tensor, mean, groups),
            norm_jvp.group_norm_invstd_jvp(x, input_t.tensor, mean, rstd, groups))


_group_norm_op = defop(
    "_nn_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, "
    "float eps) -> (Tensor, Tensor, Tensor)",
    _group_norm_kernel,
    vjp=_group_norm_vjp,
    jvp=_group_norm_jvp,
    saves=("input", "weight", "result1", "result2"),
    attrs=("N", "C", "HxW", "group", "eps"),
    node_name="NativeGroupNormBackward0",  # (its statistics are differentiable outputs, unlike layer/batch norm's)
)
# PyTorch's formula tells a missing gradient of the statistics from a zero one (see the composite above)
_group_norm_op.materialize_grads = False
native_group_norm = _group_norm_op  # (torch.native_group_norm: the operator itself)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """PyTorch's CPU group_norm: the kernel gets dense operands, so a strided input (or weight, bias) is copied
    first, and the graph shows that copy (CloneBackward0) before NativeGroupNormBackward0."""
    dense = [None if t is None else _dense_for_cpu_kernel(t) for t in (input, weight, bias)]
    shape = tuple(input.shape)
    n, c = (shape[0], shape[1]) if len(shape) >= 2 else (shape[0] if shape else 1, 1)
    hxw = math.prod(shape[2:])
    return _group_norm_op(dense[0], dense[1], dense[2], n, c, hxw, num_groups, eps)[0]


def _dense_for_cpu_kernel(t: Tensor) -> Tensor:
    """``t.contiguous(t.suggest_memory_format())``: ``t`` itself when it is dense in that format (C order, or
    channels-last order in 4-D and 5-D), otherwise a copy in it."""
    fmt = suggested_format(t._data)
    return t if is_in_format(t._data, fmt) else t.contiguous(memory_format=fmt)


# ---- batch_norm --------------------------------------------------------------------------------------------


def _bn_axes(x) -> tuple:
    if x.ndim < 2:
        raise ValueError(f"expected 2D or higher input (got {x.ndim}D input)")
    return (0,) + tuple(range(2, x.ndim))


def _check_channels(x, weight, bias, running_mean, running_var) -> None:
    """PyTorch's check_dims_match_num_input_features, in its order."""
    c = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.size}")


def _dense_for_torch_kernel(x: np.ndarray) -> bool:
    """PyTorch's batch_norm ``is_contiguous``: dense in C order or in channels-last order (4-D and 5-D). Its
    vectorised kernels take only such input; a strided one goes element by element."""
    if x.flags.c_contiguous:
        return True
    return x.ndim in (4, 5) and np.transpose(x, (0, *range(2, x.ndim), 1)).flags.c_contiguous


def _normalize_strided(x, mean, rstd, weight, bias):
    """PyTorch's element-wise path for strided input: ``((x - mean) * invstd) * weight + bias``, each step
    rounded in the input's dtype (with weight 1 and bias 0 when absent: -0.0 comes out +0.0)."""
    cshape = _channel_shape(x.ndim, x.shape[1])
    y = (x - np.asarray(mean, x.dtype).reshape(cshape)) * np.asarray(rstd, x.dtype).reshape(cshape)
    if weight is not None:
        y *= weight.astype(x.dtype, copy=False).reshape(cshape)
    y += 0 if bias is None else bias.astype(x.dtype, copy=False).reshape(cshape)
    return y


def _normalize_per_channel(x, mean, rstd, weight, bias):
    """x * alpha + beta per channel, alpha = rstd * weight and beta = bias - mean * rstd * weight.

    PyTorch's CPU kernel folds the statistics and the affine parameters this way, with alpha and beta in the
    parameters' precision (float for half input) and fused multiply-adds (beta = fma(-mean, alpha, bias), then
    fma(x, alpha, beta) per element). For inputs far from their mean (1e4 +- 1e-2 in float32) that rounds very
    differently from (x - mean) * rstd, so we fold the same way. Strided input takes PyTorch's unfolded
    element-wise formula instead."""
    if not _dense_for_torch_kernel(x):
        return _normalize_strided(x, mean, rstd, weight, bias)
    cshape = _channel_shape(x.ndim, x.shape[1])
    param = opmath_dtype(x.dtype)
    alpha = np.asarray(rstd, dtype=param).reshape(-1)
    if weight is not None:
        alpha = alpha * weight.reshape(-1).astype(param, copy=False)
    shift = np.zeros_like(alpha) if bias is None else bias.reshape(-1).astype(param, copy=False)
    beta = aten_vec.fma(-np.asarray(mean, dtype=param).reshape(-1), alpha, shift)  # (bias - mean * alpha, fused)
    if x.dtype == np.float32:
        return _per_channel_fma(x, alpha, beta)
    y = aten_vec.fma(x.astype(param, copy=False), alpha.reshape(cshape), beta.reshape(cshape))
    return y.astype(x.dtype, copy=False)


def _per_channel_fma(x: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``fma(x, alpha, beta)`` per channel of a dense float32 ``x``, into an array of ``x``'s layout, a block of
    rows at a time: rows of a plane (channels-first) or of the channels (channels-last, and (N, C))."""
    out = np.empty_like(x)
    if not x.size:  # (an empty batch: no rows, and none to infer their length from)
        return out
    n, channels = x.shape[:2]
    if x.flags.c_contiguous and x.ndim > 2:
        rows, out_rows = x.reshape(n * channels, -1), out.reshape(n * channels, -1)
        alpha, beta = np.tile(alpha, n)[:, None], np.tile(beta, n)[:, None]
    else:  # (the channel is the fastest dim)
        rows, out_rows = np.moveaxis(x, 1, -1).reshape(-1, channels), np.moveaxis(out, 1, -1).reshape(-1, channels)
        if not np.may_share_memory(out_rows, out):  # (not a view after all: one call on the whole)
            cshape = _channel_shape(x.ndim, channels)
            return aten_vec.fma(x, alpha.reshape(cshape), beta.reshape(cshape))
        alpha, beta = alpha[None, :], beta[None, :]
    wide = np.empty((aten_vec.block_rows(*rows.shape), rows.shape[1]))  # (scratch of the fused step)
    for block in aten_vec.row_blocks(*rows.shape):
        per_row = block if alpha.shape[0] > 1 else slice(None)
        aten_vec.fma_into(rows[block], alpha[per_row], beta[per_row], out_rows[block], wide[:rows[block].shape[0]])
    return out


def _bn_train_kernel(x, weight=None, bias=None, running_mean=None, running_var=None, momentum=0.1, eps=1e-5,
                     training=True):
    check_float(x, "batch_norm", NotImplementedError)
    if _mixed_half(x, weight, bias, running_mean, running_var):
        return _output_rounded(_bn_train_kernel(x.astype(np.float32), weight, bias, running_mean, running_var,
                                                momentum, eps, training), x.dtype)
    axes = _bn_axes(x)
    _check_channels(x, weight, bias, running_mean, running_var)
    count = x.size // x.shape[1]
    if x.dtype in aten_vec.FUSED_DTYPES and x.size and _dense_for_torch_kernel(x):
        mu, var_sum = _batch_statistics_as_aten(x)
        # (the variance sum divided in the input's dtype, its inverse root taken in double)
        rstd = (1.0 / np.sqrt((var_sum / x.dtype.type(count)).astype(np.float64) + eps)).astype(x.dtype)
        _update_running_stats_as_aten(running_mean, running_var, mu, var_sum, count, momentum)
        return _normalize_per_channel(x, mu, rstd, weight, bias), mu, rstd
    # other inputs: the mean in double rounded to the input's dtype, then the variance around it in double
    wide = x.astype(np.float64) if x.itemsize < 8 else x
    mu = wide.mean(axis=axes).astype(x.dtype)
    centred = wide - mu.reshape(_channel_shape(x.ndim, x.shape[1]))
    var = (centred * centred).mean(axis=axes)
    rstd = (1.0 / np.sqrt(var + eps)).astype(x.dtype)
    if running_mean is not None:
        running_mean *= 1 - momentum
        running_mean += momentum * mu.astype(running_mean.dtype)
    if running_var is not None:
        unbiased = var.reshape(-1) * (count / max(count - 1, 1))
        running_var *= 1 - momentum
        running_var += momentum * unbiased.astype(running_var.dtype)
    # (y, save_mean, save_invstd): the batch statistics per channel, which PyTorch's node saves
    return _normalize_per_channel(x, mu, rstd, weight, bias), mu, rstd


def _batch_statistics_as_aten(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, sum of squared deviations) per channel, as PyTorch's two CPU kernels compute them (one thread).

    Channels-first input (NC... with a spatial size above 1): per channel, a double sum in (sample, position)
    order divided by the count, then the squares of the deviations from that rounded mean summed in double.
    Channels-last input (and (N, C), whose channel stride is 1): rows added one after another in the input's
    dtype, the mean taken in double, then the squares accumulated row by row with fused multiply-adds."""
    dtype = x.dtype
    channels = x.shape[1]
    count = x.size // channels
    if _bn_kernel_kind(x) == "first":
        planes = x.reshape(x.shape[0], channels, -1)
        mean = (_ordered_channel_sums(planes) / count).astype(dtype)
        return mean, _ordered_channel_sums(planes, around=mean).astype(dtype)
    rows = np.moveaxis(x, 1, -1).reshape(count, channels)
    mean = (np.add.reduce(rows, axis=0).astype(np.float64) / count).astype(dtype)
    deviation = rows - mean
    return mean, aten_vec.fused_row_accumulation(deviation, deviation)


def _ordered_channel_sums(planes: np.ndarray, around: np.ndarray | None = None) -> np.ndarray:
    """Per channel of an (N, C, HW) array, its elements (or the squares of their differences from ``around``,
    rounded in the input's dtype) added one after another in double: sample after sample, position after
    position, from the first element on (``np.cumsum``'s order).

    A block of positions at a time is moved to (positions, channels) in double, so that NumPy's reduction down
    its rows adds all the channels side by side, row after row; row 0 carries the running sums between blocks,
    from -0.0 (which adds nothing to any value: +0.0 would turn a leading -0.0 into +0.0)."""
    n, channels, hw = planes.shape
    per_block = max(1, aten_vec.BLOCK_ELEMENTS // channels)
    buf = np.empty((per_block + 1, channels))
    total = np.full(channels, -0.0)
    for samples, positions in _position_blocks(n, hw, per_block):
        values = planes[samples, :, positions]
        if around is not None:
            values = np.subtract(values, around[:, None])
            values *= values
        steps = values.shape[0] * values.shape[2]
        np.copyto(buf[1:1 + steps].reshape(values.shape[0], values.shape[2], channels), values.transpose(0, 2, 1))
        buf[0] = total
        if channels == 1:  # (a single column would be reduced pairwise: its running sum keeps the order)
            total = np.cumsum(buf[:1 + steps, 0])[-1:]
        else:
            np.add.reduce(buf[:1 + steps], axis=0, initial=-0.0, out=total)
    return total


def _position_blocks(n: int, hw: int, per_block: int) -> list[tuple[slice, slice]]:
    """(samples, positions) blocks in (sample, position) order, of at most ``per_block`` positions: whole
    samples together when they fit, else one sample in pieces."""
    if hw <= per_block:
        step = per_block // hw
        return [(slice(i, i + step), slice(None)) for i in range(0, n, step)]
    return [(slice(i, i + 1), slice(j, j + per_block)) for i in range(n) for j in range(0, hw, per_block)]


def _update_running_stats_as_aten(running_mean, running_var, mean, var_sum, count: int, momentum: float) -> None:
    """PyTorch's update, in the statistics' dtype: ``m * batch + (1 - m) * running`` with ``m`` rounded to it,
    the unbiased variance divided in that dtype too."""
    if running_mean is not None:
        m = running_mean.dtype.type(momentum)
        running_mean[...] = m * mean.astype(running_mean.dtype) + (1 - m) * running_mean
    if running_var is not None:
        m = running_var.dtype.type(momentum)
        with np.errstate(divide="ignore", invalid="ignore"):  # (one value per channel: NaN, as PyTorch's)
            unbiased = (var_sum / var_sum.dtype.type(count - 1)).astype(np.float64)
        kept = ((1 - m) * running_var).astype(np.float64)
        running_var[...] = (np.float64(m) * unbiased + kept).astype(running_var.dtype)


def _bn_train_vjp(ctx, g, _g_mean=None, _g_invstd=None):
    """PyTorch's fused node from the saved statistics (save_invstd is taken in double: recomputing it from
    float32 input would overflow at 1e20), recorded under create_graph, connected to input and weight."""
    x, weight, _running_mean, _running_var, save_mean, save_invstd = ctx.saved_tensors
    eps, _training = ctx.attrs
    need = ctx.needs_input_grad
    return _asked(native_batch_norm_backward(g, x, weight, None, None, save_mean, save_invstd, True, eps, need),
                  need)


def _affine_tangents(x: Tensor, weight, bias, tangents) -> tuple:
    """The tangents of (input, weight, bias) as the norms' formulas read them (a present input without a tangent:
    PyTorch's zero tensor)."""
    dtype = x._data.dtype
    return tuple(norm_jvp.Tangent.of(t, p, dtype) for t, p in zip(tangents, (x, weight, bias)))


def _bn_jvp(args, outs, tangents):
    """derivatives.yaml: batch_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, running_mean,
    running_var, result1, result2, training, eps)."""
    x, weight, bias, running_mean, running_var = args[:5]
    train = len(args) == 8  # the training op carries momentum as well as eps
    input_t, weight_t, bias_t = _affine_tangents(x, weight, bias, tangents)
    result = norm_jvp.batch_norm_jvp(x, input_t, weight, weight_t, bias_t, running_mean, running_var, outs[1],
                                     outs[2], train, args[-2])
    return result, None, None


batch_norm_train = defop(
    "_nn_batch_norm_train(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? running_mean, "
    "Tensor(b!)? running_var, float momentum, float eps, bool training=True) -> (Tensor, Tensor, Tensor)",
    _bn_train_kernel,
    vjp=_bn_train_vjp,
    saves=("input", "weight", "running_mean", "running_var", "result1", "result2"),
    attrs=("eps", "training"),
    differentiable=("input", "weight", "bias"),
    nondiff_outputs=(1, 2),
    node_name="NativeBatchNormBackward0",
    jvp=_bn_jvp,
)


def _bn_eval_kernel(x, weight, bias, running_mean, running_var, eps=1e-5, training=False):
    check_float(x, "batch_norm", NotImplementedError)
    if _mixed_half(x, weight, bias, running_mean, running_var):
        return _output_rounded(_bn_eval_kernel(x.astype(np.float32), weight, bias, running_mean, running_var, eps,
                                               training), x.dtype)
    _bn_axes(x)
    _check_channels(x, weight, bias, running_mean, running_var)
    rstd = 1.0 / np.sqrt(running_var + eps)
    no_statistics = np.empty(0, dtype=x.dtype)  # (evaluation uses the running ones: PyTorch returns empties)
    return _normalize_per_channel(x, running_mean, rstd, weight, bias), no_statistics, no_statistics.copy()


def _bn_eval_vjp(ctx, g, _g_mean=None, _g_invstd=None):
    """PyTorch's formula: its fused backward with the running statistics (train=False), recorded under
    create_graph, connected to input and weight; its gradient of input takes the input's memory format."""
    x, weight, running_mean, running_var, _mean, _invstd = ctx.saved_tensors
    eps, _training = ctx.attrs
    need = ctx.needs_input_grad
    return _asked(native_batch_norm_backward(g, x, weight, running_mean, running_var, None, None, False, eps, need),
                  need)


batch_norm_eval = defop(
    "_nn_batch_norm_eval(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, "
    "Tensor running_var, float eps, bool training=False) -> (Tensor, Tensor, Tensor)",
    _bn_eval_kernel,
    vjp=_bn_eval_vjp,
    saves=("input", "weight", "running_mean", "running_var", "result1", "result2"),
    attrs=("eps", "training"),
    differentiable=("input", "weight", "bias"),
    nondiff_outputs=(1, 2),
    node_name="NativeBatchNormBackward0",
    jvp=_bn_jvp,
)


def _bn_stats(x, train: bool, running_mean, running_var, save_mean, save_invstd, eps: float) -> tuple:
    """(mean, rstd) of a batch norm backward, shaped to broadcast against x: the batch's statistics in
    training, the running ones in evaluation."""
    cshape = _channel_shape(x.ndim, x.shape[1])
    if train:
        return save_mean.reshape(cshape), save_invstd.reshape(cshape)
    # (in double, as PyTorch adds its double eps, then rounded to the statistics' precision)
    invstd = (1.0 / np.sqrt(running_var.astype(np.float64) + eps)).astype(running_var.dtype)
    return running_mean.reshape(cshape), invstd.reshape(cshape)


def _bn_backward_kernel(g, x, weight, running_mean, running_var, save_mean, save_invstd, train, eps, output_mask):
    kind = _bn_kernel_kind(x)
    mixed = _any_float32(weight, running_mean, running_var, save_mean)
    if x.dtype == np.float16 and x.size and kind is not None and _bn_kernel_kind(g) == kind:
        mean, invstd = _bn_float_stats(train, running_mean, running_var, save_mean, save_invstd, eps)
        return _batch_norm_backward_half(g, x, weight, mean, invstd, train, output_mask, kind == "first",
                                         np.dtype(np.float32) if mixed else x.dtype)
    if x.dtype == np.float16 and mixed:
        return _bn_backward_in_float(g, x, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
                                     output_mask)
    cshape = _channel_shape(x.ndim, x.shape[1])
    mean, rstd = _bn_stats(x, train, running_mean, running_var, save_mean, save_invstd, eps)
    if x.dtype in aten_vec.FUSED_DTYPES and x.size and g.dtype == x.dtype and kind is not None \
            and _bn_kernel_kind(g) == kind and mean.dtype == x.dtype and (weight is None or weight.dtype == x.dtype):
        return _batch_norm_backward_as_aten(g, x, weight, mean.reshape(-1), rstd.reshape(-1), train, output_mask,
                                            kind == "first")
    w = None if weight is None else weight.reshape(cshape)
    axes = (0,) + tuple(range(2, x.ndim))
    return _norm_backward_arrays(g, x, w, mean, rstd, axes if train else (), axes, output_mask)


def _any_float32(*params) -> bool:
    return any(p is not None and p.dtype == np.float32 for p in params)


def _bn_backward_in_float(g, x, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
                          output_mask) -> tuple:
    """The backward of a mixed call (float16 input, float32 parameters): ATen's kernel computes in float, rounds
    the input's gradient to float16 and keeps the parameters' gradients float32 (rounding them to float16 lost
    their low bits)."""
    gx, gw, gb = _bn_backward_kernel(g.astype(np.float32), x.astype(np.float32), weight, running_mean, running_var,
                                     save_mean, save_invstd, train, eps, output_mask)
    return gx.astype(x.dtype), gw, gb


def _bn_float_stats(train: bool, running_mean, running_var, save_mean, save_invstd, eps: float) -> tuple:
    """(mean, invstd) per channel in float, as ATen's float16 backward kernels read them: the saved
    statistics, or the running mean and ``1 / sqrt(running_var + eps)`` in double rounded once to float (kept in
    float even where the parameters are float16)."""
    if train:
        return save_mean.reshape(-1).astype(np.float32), save_invstd.reshape(-1).astype(np.float32)
    invstd = 1.0 / np.sqrt(running_var.reshape(-1).astype(np.float64) + eps)
    return running_mean.reshape(-1).astype(np.float32), invstd.astype(np.float32)


def _batch_norm_backward_half(g, x, weight, mean, invstd, train: bool, output_mask, channels_first: bool,
                              param_dtype: np.dtype) -> tuple:
    """PyTorch's CPU batch norm backward of a float16 input (``batch_norm_cpu_backward_*_internal``, opmath float;
    one thread), bit for bit, with float32 parameters (a mixed call) or float16 ones (``param_dtype``, the dtype of
    the weight's and bias's gradients). (bfloat16 runs the same kernels, but its wrapper hands this kernel float32
    copies: not emulated here.)

    Per channel it sums ``dy`` and ``dotp = (x - mean) * dy`` in float. Channels-first: a vector of 8 float lanes
    takes each whole run of 16 elements of every (sample, channel) plane in turn (its two halves one after the
    other, products fused into the sums), the runs' leftovers go into one float, sample after sample, which then
    adds the lanes one by one. Channels-last (and a spatial size of 1): one float per channel, row after row. The
    leftovers' products are fused too (the compiler's contraction; bfloat16 with float parameters was seen
    without it in the channels-first kernel). Then ``dx = fma(-(x - mean), k, dy - sum / N) * invstd * w`` with
    ``k = dotp * invstd^2 / N`` in training, ``dx = dy * invstd * w`` in evaluation; ``dw = dotp * invstd``,
    ``db = sum``."""
    channels = x.shape[1]
    count = x.size // channels
    xf = x.astype(np.float32)
    dy = np.ascontiguousarray(np.broadcast_to(g, x.shape), dtype=np.float32)
    if channels_first:
        total, dotp = _plane_sums_half(xf.reshape(x.shape[0], channels, -1), dy.reshape(x.shape[0], channels, -1),
                                       mean)
    else:
        rows_x = np.moveaxis(xf, 1, -1).reshape(count, channels)
        rows_dy = np.moveaxis(dy, 1, -1).reshape(count, channels)
        total = np.add.reduce(rows_dy, axis=0, initial=np.float32(0))
        dotp = aten_vec.fused_row_accumulation(rows_x - mean, rows_dy)
    channel_shape = _channel_shape(x.ndim, channels)
    invstd_c = invstd.reshape(channel_shape)
    w = np.float32(1) if weight is None else weight.reshape(channel_shape).astype(np.float32)
    gx = gw = gb = np.empty((0,), x.dtype)
    if output_mask[0] and train:
        k = (dotp * invstd * invstd / np.float32(count)).reshape(channel_shape)
        shifted = dy - (total / np.float32(count)).reshape(channel_shape)
        gx = aten_vec.fma(mean.reshape(channel_shape) - xf, np.broadcast_to(k, x.shape), shifted)
        gx = (gx.astype(np.float32, copy=False) * invstd_c * w).astype(x.dtype)
    elif output_mask[0]:
        gx = (dy * invstd_c * w).astype(x.dtype)
    if output_mask[1]:
        gw = (dotp * invstd).astype(param_dtype)
    if output_mask[2]:
        gb = total.astype(param_dtype)
    return gx, gw, gb


_HALF_LANES, _FLOAT_LANES = 16, 8  # (Vectorized<Half/BFloat16> and Vectorized<float> in ATen's AVX2 build)


def _plane_sums_half(x: np.ndarray, dy: np.ndarray, mean: np.ndarray) -> tuple:
    """Per channel of (N, C, HW) float arrays, (sum of dy, sum of (x - mean) * dy) as the float16 channels-first
    kernel adds them (see ``_batch_norm_backward_half``)."""
    n, channels, size = x.shape
    whole = size - size % _HALF_LANES
    centred = x - mean[None, :, None]

    def vectors(a):  # (the float vectors in the order they are added: sample, run, half; lanes of all channels)
        runs = a[:, :, :whole].reshape(n, channels, whole // _FLOAT_LANES, _FLOAT_LANES)
        return np.ascontiguousarray(runs.transpose(0, 2, 1, 3)).reshape(-1, channels * _FLOAT_LANES)

    def leftovers(a):  # (sample after sample, channels across)
        return np.ascontiguousarray(a[:, :, whole:].transpose(0, 2, 1)).reshape(-1, channels)

    total = np.add.reduce(leftovers(dy), axis=0, initial=np.float32(0))
    if whole == size:  # (no leftovers: fused_row_accumulation takes no empty array)
        dotp = np.zeros(channels, np.float32)
    else:
        dotp = aten_vec.fused_row_accumulation(leftovers(centred), leftovers(dy))
    if whole:
        lane_sums = np.add.reduce(vectors(dy), axis=0, initial=np.float32(0)).reshape(channels, _FLOAT_LANES)
        lane_dotp = aten_vec.fused_row_accumulation(vectors(centred), vectors(dy)).reshape(channels, _FLOAT_LANES)
        total = total + aten_vec.fold_in_order(lane_sums)
        dotp = dotp + aten_vec.fold_in_order(lane_dotp)
    return total, dotp


def _bn_kernel_kind(a: np.ndarray) -> str | None:
    """Which of PyTorch's batch norm CPU kernels takes an array laid out like ``a`` (its batch_norm_choose_impl):
    "first" for contiguous channels-first, "last" for channels-last or a channel stride of 1, None otherwise
    (the backward falls back to a generic reduction when input and gradient disagree)."""
    if a.flags.c_contiguous:
        return "last" if a.ndim < 2 or a.strides[1] == a.itemsize else "first"
    return "last" if _dense_for_torch_kernel(a) else None


def _batch_norm_backward_as_aten(g, x, weight, mean, invstd, train: bool, output_mask,
                                 channels_first: bool) -> tuple:
    """PyTorch's CPU batch norm backward, bit for bit (one thread). Per channel it needs ``sum(dy)`` and
    ``dotp = sum((x - mean) * dy)``: the channels-first kernel takes ATen's vector sums over each (sample,
    channel) plane and adds the planes in double; the channels-last one adds rows in the input's dtype (dotp with
    fused multiply-adds). Then ``dx = (dy - sum / N - (x - mean) * k) * invstd * w`` with
    ``k = dotp * invstd^2 / N`` in training, ``dx = dy * invstd * w`` in evaluation, ``dw = dotp * invstd``, and
    ``db = sum``."""
    dtype = x.dtype.type
    channels = x.shape[1]
    count = x.size // channels
    w = np.ones(channels, x.dtype) if weight is None else weight.reshape(-1)
    channel_shape = _channel_shape(x.ndim, channels)
    dy = g if g.shape == x.shape else np.broadcast_to(g, x.shape)
    if channels_first:
        planes = x.shape[0] * channels
        plane_x = x.reshape(planes, -1)
        plane_dy = np.ascontiguousarray(dy).reshape(planes, -1)
        centred = plane_x - np.tile(mean, x.shape[0])[:, None]
        by_sample = (x.shape[0], channels)
        total = np.cumsum(aten_vec.map_reduce_sum([plane_dy]).reshape(by_sample), axis=0, dtype=np.float64)[-1]
        dotp = np.cumsum(aten_vec.map_reduce_sum([centred, plane_dy]).reshape(by_sample), axis=0,
                         dtype=np.float64)[-1]
        k = dotp.astype(x.dtype) * invstd * invstd / dtype(count)
        grad_mean = (total / count).astype(x.dtype)
    else:
        rows_x = np.moveaxis(x, 1, -1).reshape(count, channels)
        rows_dy = np.moveaxis(dy, 1, -1).reshape(count, channels)
        total = np.add.reduce(rows_dy, axis=0)
        dotp = aten_vec.fused_row_accumulation(rows_x - mean, rows_dy)
        k = dotp * invstd * invstd / dtype(count)
        grad_mean = total / dtype(count)
    gx = gw = gb = np.empty((0,), g.dtype)
    if output_mask[0] and train and channels_first and x.dtype == k.dtype == invstd.dtype == np.float32:
        per_plane = [np.tile(v, x.shape[0])[:, None] for v in (grad_mean, -k, invstd, w)]
        gx = _bn_input_grad_planes(plane_dy, centred, *per_plane).reshape(x.shape)
    elif output_mask[0] and train:
        centred_x = x - mean.reshape(channel_shape)
        shifted = dy - grad_mean.reshape(channel_shape)
        gx = aten_vec.fma(-centred_x, np.broadcast_to(k.reshape(channel_shape), x.shape), shifted)
        if not channels_first:  # (its loop over the channels left past the last whole vector is not fused)
            tail = (slice(None), slice(channels - channels % aten_vec.vector_lanes(x.dtype), None))
            gx[tail] = shifted[tail] - centred_x[tail] * k.reshape(channel_shape)[tail]
        gx = gx * invstd.reshape(channel_shape) * w.reshape(channel_shape)
    elif output_mask[0]:
        gx = dy * invstd.reshape(channel_shape) * w.reshape(channel_shape)
    if output_mask[1]:
        gw = (dotp * invstd).astype(x.dtype)
    if output_mask[2]:
        gb = total.astype(x.dtype)
    return gx, gw, gb


def _bn_input_grad_planes(dy: np.ndarray, centred: np.ndarray, grad_mean: np.ndarray, minus_k: np.ndarray,
                          invstd: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``fma(-centred, k, dy - grad_mean) * invstd * w`` on float32 (sample, channel) planes, per-plane values
    given as columns, a block of planes at a time (``-centred * k`` is ``centred * -k``, exactly)."""
    out = np.empty(dy.shape, np.float32)
    wide = np.empty((aten_vec.block_rows(*dy.shape), dy.shape[1]))  # (scratch of the fused step)
    for block in aten_vec.row_blocks(*dy.shape):
        gx = np.subtract(dy[block], grad_mean[block], out=out[block])
        aten_vec.fma_into(centred[block], minus_k[block], gx, gx, wide[:gx.shape[0]])
        gx *= invstd[block]
        gx *= w[block]
    return out


def _bn_double_backward(ctx, ggx, ggw, ggb):
    g, x, weight, running_mean, running_var = ctx.saved_tensors
    train, eps, output_mask = ctx.attrs
    need = ctx.needs_input_grad  # grad_out, input, weight, save_mean, save_invstd
    shape = tuple(x.shape)
    axes = (0,) + tuple(range(2, len(shape)))
    cshape = _channel_shape(len(shape), shape[1])
    if train:
        xhat, rstd = _stats_ops(x, axes, eps)
    else:
        rstd = pow(add(reshape(running_var, cshape), eps), -0.5)
        xhat = mul(sub(x, reshape(running_mean, cshape)), rstd)
    d_g, d_x, d_w = _norm_double_backward(g, weight, xhat, rstd, axes if train else (), axes, cshape,
                                          _asked((ggx, ggw, ggb), output_mask), need[:3])
    return d_g, d_x, d_w, None, None  # save_mean, save_invstd: not implemented in PyTorch either


native_batch_norm_backward = defop(
    "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, "
    "Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) "
    "-> (Tensor, Tensor, Tensor)",
    _bn_backward_kernel,
    vjp=_bn_double_backward,
    saves=("grad_out", "input", "weight", "running_mean", "running_var"),
    attrs=("train", "eps", "output_mask"),
    differentiable=("grad_out", "input", "weight", "save_mean", "save_invstd"),
    node_name="NativeBatchNormBackwardBackward0",
)


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float | None = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    x = input._data
    if x.ndim >= 2 and x.size:  # (PyTorch's batch_norm checks before its operator, and its node, run)
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is None and not training:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
            if t is not None and t._data.size != x.shape[1]:
                raise RuntimeError(f"{name} should contain {x.shape[1]} elements not {t._data.size}")
        _check_channels(x, *(None if t is None else t._data for t in (weight, bias, None, None)))
    if not x.size:
        return _empty_batch_norm(input, weight, bias)
    if training:
        # (the running statistics are updated inside the kernel: as in PyTorch, their version does not change)
        return batch_norm_train(input, weight, bias, running_mean, running_var,
                                0.0 if momentum is None else momentum, eps)[0]
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    return batch_norm_eval(input, weight, bias, running_mean, running_var, eps)[0]


def _empty_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """PyTorch's batch_norm of an empty input: a clone (in its layout), times weight[0], plus bias[0] (an
    IndexError where they are empty); no statistics, the running ones untouched."""
    out = input.clone()
    out = out if weight is None else out * select(weight, 0, 0)
    return out if bias is None else out + select(bias, 0, 0)


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Batch norm of the (1, N*C, *) reshaped input, as PyTorch computes it."""
    x = input._data
    n, c = x.shape[:2]
    w = repeat(weight, (n,)) if weight is not None else None  # RepeatBackward0, as in PyTorch
    b = repeat(bias, (n,)) if bias is not None else None
    folded = view(input.contiguous(), (1, n * c) + x.shape[2:])
    rm = _tile_data(running_mean, n)
    rv = _tile_data(running_var, n)
    if not n * c:  # (the batch_norm of an empty input: see _empty_batch_norm)
        out = _empty_batch_norm(folded, w, b)
        if use_input_stats:  # (the mean over no sample: NaN running statistics, as PyTorch's)
            for src in (running_mean, running_var):
                if src is not None:
                    src._before_write()
                    src._data[...] = np.nan
                    src._bump_version()
        return view(out, x.shape)
    if use_input_stats:
        out = batch_norm_train(folded, w, b, rm, rv, momentum, eps)[0]
        for src, tiled in ((running_mean, rm), (running_var, rv)):
            if src is not None:
                src._before_write()
                src._data[...] = tiled._data.reshape(n, c).mean(axis=0)
                src._bump_version()
    else:
        out = batch_norm_eval(folded, w, b, rm, rv, eps)[0]
    return view(out, x.shape)


def _tile_data(t: Tensor | None, n: int):
    if t is None:
        return None
    return _wrap(np.tile(t._data, n))
