"""The margin losses PyTorch implements as native operators with nodes of their own: soft_margin_loss
(SoftMarginLossBackward0, with a double backward), multi_margin_loss (MultiMarginLossBackward0) and
multilabel_margin_loss (``multilabel_margin_loss_forward``, MultilabelMarginLossBackward0).

PyTorch has no derivative for the backward operators of the last two (their gradients record its
``NotImplemented`` node) and no forward-mode formula for them: both are mirrored, errors included. Shape and
dtype checks run in PyTorch's order, with its messages (``LossMulti.h``, ``LossMultiMargin.cpp``,
``LossMultiLabelMargin.cpp``). ``reduction`` is PyTorch's enum: 0 none, 1 mean, 2 sum.
"""

from __future__ import annotations

import numpy as np

from ..._strides import in_torch_layout
from ..._tensor import Tensor
from ...autograd.forward_ad import not_implemented_jvp, refuse_dual_argument, refuse_unformulated
from .._util import broadcast_mismatch
from ..aten_sum import ordered_sum
from ..bfloat16_in_float import rounded_in_float, seen_dtype
from ..pointwise import div, exp, mul, neg, sigmoid
from ..reductions import sum as sum_op
from ..reductions_extra import _mean_full
from ..registry import defop, defop_without_derivative
from ..scalar_overloads import add_scalar, div_scalar, sub_scalar
from ..unary import conj
from ._basic import log_sigmoid_parts
from ._common import check_float, run_op, type_name
from .log1p_cpu import log_sigmoid_backward_float
from .loss import _double_backward_grad_output, _per_element, _reduce_in_place, check_nondifferentiable
from .sleef_float import sleef_log1pf

# ---- log_sigmoid (multilabel_soft_margin_loss is composed of it) ------------------------------------------


def _log_sigmoid_kernel(x):
    check_float(x, "log_sigmoid_cpu")
    return log_sigmoid_parts(x)  # (z = exp(-|x|) kept as the ``buffer`` output for backward)


def _log_sigmoid_backward_kernel(g, x, buffer):
    # (in_negative ? 1 : 0) - (in_negative ? 1 : -1) * z / (1 + z), times grad_output
    if g.dtype == x.dtype == buffer.dtype and x.dtype in (np.float32, np.float16):  # (half: in float, as PyTorch's)
        return log_sigmoid_backward_float(g, x, buffer)
    in_negative = np.asarray(x < 0).astype(x.dtype)
    sign = in_negative * 2 - 1  # (1 or -1, exactly: no branch per element)
    out = (in_negative - sign * (buffer / (1 + buffer))) * g
    return np.asarray(out).astype(x.dtype, copy=False)  # (an array for 0-d operands too)


def _log_sigmoid_backward_vjp(ctx, gg):
    go, x, buffer = ctx.saved_tensors
    need_go, need_x = ctx.needs_input_grad
    d_go = log_sigmoid_backward(gg, x, buffer) if need_go else None
    d_x = None
    if need_x:  # PyTorch's log_sigmoid_double_backward(gg * grad_output, self): grad * (z - 1) * z, z = sigmoid
        z = sigmoid(x)
        d_x = mul(mul(mul(gg, go), sub_scalar(z, 1)), z)
    return d_go, d_x


log_sigmoid_backward = defop(
    "log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor",
    _log_sigmoid_backward_kernel,
    vjp=_log_sigmoid_backward_vjp,
    saves=("grad_output", "self", "buffer"),
    differentiable=("grad_output", "self"),
    node_name="LogSigmoidBackwardBackward0",
)


def _log_sigmoid_vjp(ctx, g, _g_buffer=None):
    x, buffer = ctx.saved_tensors
    return run_op(log_sigmoid_backward, g, x, buffer)


def _log_sigmoid_jvp(args, outs, tangents):
    """PyTorch's formula: the backward operator applied to the tangent (the buffer gets none)."""
    (t_x,) = tangents
    return log_sigmoid_backward(t_x, args[0], outs[1]), None


log_sigmoid_forward = defop(
    "log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)",
    _log_sigmoid_kernel,
    vjp=_log_sigmoid_vjp,
    jvp=_log_sigmoid_jvp,
    saves=("self", "result1"),
    nondiff_outputs=(1,),
    node_name="LogSigmoidBackward0",
)


def log_sigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed stably; the buffer exp(-|x|) stays saved on the node."""
    return log_sigmoid_forward(input)[0]


# ---- soft_margin_loss ---------------------------------------------------------------------------------------


def _check_soft_margin_operands(x: np.ndarray, t: np.ndarray) -> None:
    """PyTorch writes ``-input`` into the output and multiplies the target into it in place: the target must
    broadcast to the input's shape, and the result must fit the input's dtype (a float loss does not fit an
    integer input)."""
    error = broadcast_mismatch([x.shape, t.shape])
    if error is not None:
        raise error
    full = np.broadcast_shapes(x.shape, t.shape)
    if full != x.shape:
        raise RuntimeError(f"output with shape {list(x.shape)} doesn't match the broadcast shape {list(full)}")
    if x.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"result type Float can't be cast to the desired output type {type_name(x.dtype)}")


def _soft_margin_kernel(x, t, reduction=1):
    _check_soft_margin_operands(x, t)
    # PyTorch: neg_out(output, input).mul_(target).exp_().log1p_(), the output laid out as its ``-input`` (which
    # orders the mean's and sum's additions)
    z = in_torch_layout(np.asarray(np.negative(x)), (x,), (0,))
    storage = seen_dtype(x)  # (each step is written into the output, of the input's dtype: bfloat16 for a copy)
    z[...] = np.multiply(z, t)
    z = _log1p_as_torch(_stored_as(_exp_as_torch(_stored_as(z, storage)), storage))
    loss = _reduce_in_place(_stored_as(z, storage), reduction)
    return loss if storage is z.dtype else np.asarray(loss).astype(storage)  # (whatever the target promotes to)


def _stored_as(z: np.ndarray, storage: np.dtype) -> np.ndarray:
    """``z`` rounded in place to ``storage``, the dtype that a float32 copy ``z`` stands for (bfloat16)."""
    if storage is not z.dtype:
        z[...] = rounded_in_float(z, storage)
    return z


def _exp_as_torch(z: np.ndarray) -> np.ndarray:
    """``exp`` as near PyTorch's as it is known: its float32 exp is MKL's (``vsExp``), within half an ulp or
    so; the correctly rounded value agrees with it on some 99% of elements (NumPy's float32 loop on 60%)."""
    with np.errstate(over="ignore"):
        if z.dtype == np.float32 or z.dtype == np.float16:
            return np.asarray(np.exp(z, dtype=np.float64)).astype(z.dtype)
        return np.asarray(np.exp(z))


def _log1p_as_torch(z: np.ndarray) -> np.ndarray:
    """``log1p_``: Sleef's log1pf on every float32 element (PyTorch's ``vec::map`` kernel), in place."""
    if z.dtype == np.float32 or z.dtype == np.float16:
        z[...] = sleef_log1pf(z.astype(np.float32, copy=False))
    else:
        np.log1p(z, out=z)
    return z


def _soft_margin_backward_kernel(g, x, t, reduction):
    # PyTorch's kernel: -norm * target * z / (1 + z) * grad_output, z = exp(-target * input)
    # (each step is written into a tensor of the input's dtype: a bfloat16 one rounds it)
    dt, storage = x.dtype, seen_dtype(x)
    norm = np.asarray(_per_element(1.0, x, t) if reduction == 1 else 1.0, dtype=dt)  # (empty: 1 / 0 is inf)

    def stored(values) -> np.ndarray:
        return _stored_as(np.asarray(values).astype(dt), storage)

    with np.errstate(over="ignore", invalid="ignore"):
        z = stored(_exp_as_torch(stored(np.multiply(stored(np.negative(t)), x))))
        grad = stored(stored(np.multiply(t, z)) * stored(-norm))  # (mul_'s number: rounded to the dtype first)
        grad = stored(grad / stored(z + np.asarray(1, dt))) * g
    return stored(grad)


def _soft_margin_double_backward(grad: Tensor, x: Tensor, t: Tensor, reduction: int) -> Tensor:
    """PyTorch's soft_margin_loss_double_backward: grad * target^2 * z / (1 + z)^2, z = exp(-target * input),
    divided by the input's numel for a mean."""
    z = exp(mul(x, neg(t)))
    zplus1 = add_scalar(z, 1)
    out = div(mul(mul(grad, mul(t, t)), z), mul(zplus1, zplus1))
    return div_scalar(out, x._data.size) if reduction == 1 else out


def _soft_margin_backward_vjp(ctx, gg):
    go, x, t = ctx.saved_tensors
    (reduction,) = ctx.attrs
    need_go, need_x = ctx.needs_input_grad
    d_go = _double_backward_grad_output(soft_margin_loss_backward, gg, go, reduction, x, t, reduction) \
        if need_go else None
    d_x = _soft_margin_double_backward(mul(gg, go), x, t, reduction) if need_x else None
    return d_go, d_x


soft_margin_loss_backward = defop(
    "soft_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor",
    _soft_margin_backward_kernel,
    vjp=_soft_margin_backward_vjp,
    saves=("grad_output", "self", "target"),
    attrs=("reduction",),
    differentiable=("grad_output", "self"),
    node_name="SoftMarginLossBackwardBackward0",
)


def _soft_margin_vjp(ctx, g):
    x, t = ctx.saved_tensors
    (reduction,) = ctx.attrs
    return run_op(soft_margin_loss_backward, g, x, t, reduction)


def _soft_margin_jvp(args, outs, tangents):
    """PyTorch's formula: the backward operator applied to the conjugated tangent without reduction, conjugated
    back, then reduced (a real tangent of a complex input is thus conjugated once). It passes ``target`` itself,
    not its primal: a target with a tangent reaches soft_margin_loss_backward's missing formula."""
    x, t, reduction = args
    refuse_dual_argument("soft_margin_loss_backward", t)
    (t_x,) = tangents
    tangent = conj(soft_margin_loss_backward(conj(t_x), x, t, 0))
    if reduction == 1:
        return _mean_full(tangent)
    return sum_op(tangent, None, False, None) if reduction == 2 else tangent


soft_margin_loss_op = defop(
    "soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    _soft_margin_kernel,
    vjp=_soft_margin_vjp,
    jvp=_soft_margin_jvp,
    saves=("self", "target"),
    attrs=("reduction",),
    differentiable=("self",),
    complex_grad=False,  # (a real-only derivative in PyTorch)
)


def soft_margin_loss(input: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    """mean/sum/none of log(1 + exp(-target * input))."""
    check_nondifferentiable("soft_margin_loss", "target", target)
    return soft_margin_loss_op(input, target, reduction)


# ---- shared by the multi-class margin losses --------------------------------------------------------------


def _frames(x: np.ndarray) -> tuple[int, int]:
    """(nframe, dim) of a 0-D (one score), 1-D (one sample) or 2-D (a batch) input, after PyTorch's check."""
    ndims = x.ndim
    if not ((ndims == 2 and x.shape[1] != 0) or (ndims == 1 and x.shape[0] != 0) or ndims == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(x.shape)}")
    if ndims <= 1:
        return 1, (1 if ndims == 0 else x.shape[0])
    return x.shape[0], x.shape[1]


def _check_kernel_dtypes(kernel_name: str, x: np.ndarray, target: np.ndarray, weight=None) -> None:
    """The CPU kernels exist for float and double only; the target is read as int64 and the weight as the
    input's dtype, in that order (the dtypes the arrays stand for: a float32 copy of bfloat16 is refused)."""
    if seen_dtype(x) not in (np.float32, np.float64):
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{type_name(x)}'")
    if target.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {type_name(target)}")
    if weight is not None and seen_dtype(weight) != seen_dtype(x):
        raise RuntimeError(f"expected scalar type {type_name(x)} but found {type_name(weight)}")


def _reduce_frames(rows: np.ndarray, reduction: int, dtype) -> np.ndarray:
    """Per-frame losses added one after another in double (PyTorch's accumulate type), divided by the frame count
    for a mean."""
    total = ordered_sum(rows.reshape(-1).astype(np.float64), 0) if rows.size else np.float64(0)
    if reduction == 1:
        total = total / rows.size if rows.size else np.nan
    return np.asarray(total, dtype=dtype)


# ---- multi_margin_loss ------------------------------------------------------------------------------------


def _multi_margin_prepare(x, target, p, margin, weight):
    """The checked (nframe, dim) scores, target rows, and where each term is active with its slope-free value:
    ``z = margin - x[target] + x[d]`` for d != target, kept where positive."""
    if p not in (1, 2):  # (the Python layer raises first; this is the operator's own check)
        raise RuntimeError(f"multi_margin_loss: Invalid p, expected 1 or 2 but got {p}")
    nframe, dim = _frames(x)
    if target.ndim > 1 or target.size != nframe:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {list(target.shape)}. "
                           f"Input has shape {list(x.shape)}.")
    if weight is not None and (weight.ndim > 1 or weight.size != dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {list(weight.shape)}")
    if x.size == 0:
        return None
    _check_kernel_dtypes("multi_margin_loss_cpu_kernel", x, target, weight)
    rows = target.reshape(nframe)
    if ((rows < 0) | (rows >= dim)).any():
        raise RuntimeError("target out of range")
    scores = x.reshape(nframe, dim)
    frame = np.arange(nframe)
    z = (np.asarray(margin, x.dtype) - scores[frame, rows][:, None]) + scores
    active = z > 0
    active[frame, rows] = False
    scale = weight.reshape(dim)[rows][:, None] if weight is not None else None
    return scores, rows, frame, z, active, scale


def _multi_margin_kernel(x, target, p=1, margin=1, weight=None, reduction=1):
    prepared = _multi_margin_prepare(x, target, p, margin, weight)
    nframe = 1 if x.ndim <= 1 else x.shape[0]
    per_frame_out = reduction == 0 and target.ndim > 0  # (a 0-D target gives a 0-D loss even unreduced)
    if prepared is None:  # an empty batch: PyTorch leaves a reduced output unwritten (here: a mean over none)
        if per_frame_out:
            return np.zeros((nframe,), x.dtype)
        return np.asarray(np.nan if reduction == 1 else 0, x.dtype)
    scores, _, _, z, active, scale = prepared
    h = z if p == 1 else z * z
    if scale is not None:
        h = h * scale
    # (each frame's terms added in turn, in its dtype, then divided by the class count)
    rows = ordered_sum(np.where(active, h, 0), 1) / np.asarray(scores.shape[1], x.dtype)
    if per_frame_out:
        return rows.astype(x.dtype, copy=False)
    if reduction == 0:
        return np.asarray(rows[0], x.dtype)
    return _reduce_frames(rows, reduction, x.dtype)


def _multi_margin_backward_kernel(g, x, target, p, margin, weight=None, reduction=1):
    prepared = _multi_margin_prepare(x, target, p, margin, weight)
    if prepared is None:
        return np.zeros_like(x)
    scores, rows, frame, z, active, scale = prepared
    nframe, dim = scores.shape
    step = np.asarray(1.0 / (nframe * dim) if reduction == 1 else 1.0 / dim, x.dtype)
    h = np.broadcast_to(step, z.shape) if p == 1 else 2 * step * z
    if scale is not None:
        h = h * scale
    grad = np.where(active, h, 0).astype(x.dtype, copy=False)
    # the target's score: 0 minus every active term of its row, in turn (+0 where none is)
    grad[frame, rows] = x.dtype.type(0) - ordered_sum(grad, 1)
    g = np.asarray(g, x.dtype)
    grad = grad * (g.reshape(nframe, 1) if reduction == 0 and g.ndim > 0 else g)
    return grad.reshape(x.shape)


multi_margin_loss_backward = defop_without_derivative(
    "multi_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, Scalar p, Scalar margin, "
    "Tensor? weight=None, int reduction=1) -> Tensor",
    _multi_margin_backward_kernel,
    # PyTorch's NotImplemented node has an edge per input that requires grad: only self, unless the
    # incoming gradient itself does (a gradient of a gradient with a differentiable cotangent)
    differentiable=("self",),
)


def _multi_margin_vjp(ctx, g):
    x, target, weight = ctx.saved_tensors
    p, margin, reduction = ctx.attrs
    return run_op(multi_margin_loss_backward, g, x, target, p, margin, weight, reduction)


multi_margin_loss_op = defop(
    "multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, "
    "int reduction=1) -> Tensor",
    _multi_margin_kernel,
    vjp=_multi_margin_vjp,
    jvp=not_implemented_jvp("multi_margin_loss"),
    saves=("self", "target", "weight"),
    attrs=("p", "margin", "reduction"),
    differentiable=("self",),
)


def multi_margin_loss(input: Tensor, target: Tensor, p=1, margin=1.0, weight: Tensor | None = None,
                      reduction: int = 1) -> Tensor:
    """The mean over classes d != y of max(0, margin - x[y] + x[d])^p (times weight[y]), per sample."""
    check_nondifferentiable("multi_margin_loss", "weight", weight)
    # (PyTorch's check of tangents covers the weight, which has no formula either: refused before the kernel)
    refuse_unformulated("multi_margin_loss", (weight,))
    return multi_margin_loss_op(input, target, p, margin, weight, reduction)


# ---- multilabel_margin_loss -------------------------------------------------------------------------------


def _multilabel_prepare(x, target):
    """(nframe, dim), after PyTorch's shape check."""
    nframe, dim = _frames(x)
    if x.ndim <= 1:
        ok = target.ndim <= 1 and target.size == dim
    else:
        ok = target.ndim == 2 and target.shape == (nframe, dim)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(x.shape)}")
    return nframe, dim


def _multilabel_terms(x, target, nframe: int, dim: int):
    """The is_target mask (1 for each class listed before the row's first -1) and, per frame, the hinge
    terms ``1 - x[j] + x[d]`` over listed targets j (rows of ``pairs``) and unlisted classes d."""
    if target.size and (target.min() < -1 or target.max() >= dim):
        raise RuntimeError("argument #2 'target' is out of range")
    _check_kernel_dtypes("multilabel_margin_loss_forward_out_frame", x, target)
    labels = target.reshape(nframe, dim)
    # a row's targets end at its first -1
    listed = np.cumprod(labels >= 0, axis=1).astype(bool)
    is_target = np.zeros((nframe, dim), x.dtype)
    frame_idx, slot = np.nonzero(listed)
    is_target[frame_idx, labels[frame_idx, slot]] = 1
    scores = x.reshape(nframe, dim)
    picked = np.where(listed, scores[np.arange(nframe)[:, None], np.where(listed, labels, 0)], 0)
    z = (np.asarray(1, x.dtype) - picked[:, :, None]) + scores[:, None, :]  # (frame, listed slot, class)
    active = listed[:, :, None] & (is_target[:, None, :] == 0) & (z > 0)
    return is_target.reshape(target.shape), z, active


def _multilabel_kernel(x, target, reduction=1):
    nframe, dim = _multilabel_prepare(x, target)
    scalar_out = reduction != 0 or target.ndim <= 1  # (a single sample gives a 0-D loss even unreduced)
    if x.size == 0:  # an empty batch: PyTorch leaves a reduced output unwritten
        empty = np.zeros(() if scalar_out else (nframe,), x.dtype)
        return (np.asarray(np.nan, x.dtype) if reduction == 1 else empty), np.zeros(target.shape, x.dtype)
    is_target, z, active = _multilabel_terms(x, target, nframe, dim)
    # (each frame's terms, listed slot by listed slot, added in turn in double and rounded to the dtype)
    sums = ordered_sum(np.where(active, z, 0).reshape(nframe, -1).astype(np.float64), 1).astype(x.dtype)
    if not scalar_out:
        return sums / np.asarray(dim, x.dtype), is_target
    total = ordered_sum(sums.astype(np.float64), 0) / dim  # (the frames' sums in double, then the divisions)
    if reduction == 1:
        total = total / nframe
    return np.asarray(total, x.dtype), is_target


def _multilabel_backward_kernel(g, x, target, reduction, is_target):
    nframe, dim = _multilabel_prepare(x, target)
    if x.size == 0:
        return np.zeros_like(x)
    _, z, active = _multilabel_terms(x, target, nframe, dim)
    step = np.asarray(1.0 / (nframe * dim) if reduction == 1 else 1.0 / dim, x.dtype)
    # Per active term the kernel adds the step to the class's gradient and subtracts it from the target's, one
    # rounding each time: an element's gradient is the step added to itself as often as it was touched.
    touched = active.sum(axis=1)  # (frame, class): +step
    labels = target.reshape(nframe, dim)
    frame_idx, slot = np.nonzero(active.any(axis=2))
    taken = np.zeros((nframe, dim), np.int64)  # -step, at each listed target
    np.add.at(taken, (frame_idx, labels[frame_idx, slot]), active[frame_idx, slot].sum(axis=1))
    repeated_steps = np.add.accumulate(np.full(max(int(touched.max()), int(taken.max())) + 1, step, x.dtype))
    repeated_steps = np.concatenate(([x.dtype.type(0)], repeated_steps[:-1]))  # (k steps added from 0)
    grad = repeated_steps[touched] - repeated_steps[taken]  # (a class is touched one way only)
    g = np.asarray(g, x.dtype)
    grad = grad * (g.reshape(nframe, 1) if reduction == 0 and g.ndim > 0 else g)
    return grad.astype(x.dtype, copy=False).reshape(x.shape)


multilabel_margin_loss_backward = defop_without_derivative(
    "multilabel_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, "
    "Tensor is_target) -> Tensor",
    _multilabel_backward_kernel,
    differentiable=("self",),  # (as multi_margin_loss_backward's node)
    )


def _multilabel_vjp(ctx, g, _g_is_target=None):
    x, target, is_target = ctx.saved_tensors
    (reduction,) = ctx.attrs
    return run_op(multilabel_margin_loss_backward, g, x, target, reduction, is_target)


multilabel_margin_loss_forward = defop(
    "multilabel_margin_loss_forward(Tensor self, Tensor target, int reduction) -> (Tensor output, "
    "Tensor is_target)",
    _multilabel_kernel,
    vjp=_multilabel_vjp,
    jvp=not_implemented_jvp("multilabel_margin_loss_forward"),
    saves=("self", "target", "result1"),
    attrs=("reduction",),
    differentiable=("self",),
    nondiff_outputs=(1,),
    node_name="MultilabelMarginLossBackward0",
)


def multilabel_margin_loss(input: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    """Per sample, the sum over listed targets j and unlisted classes d of max(0, 1 - x[j] + x[d]), over the
    class count; ``is_target`` (which classes are listed) stays saved on the node."""
    return multilabel_margin_loss_forward(input, target, reduction)[0]
