"""Loss operators: nll_loss, cross-entropy, and the elementwise regression/classification losses.

``cross_entropy`` is composed as in PyTorch, so its graph shows ``NllLossBackward0 -> LogSoftmaxBackward0``
(class indices), or the label-smoothing and soft-target compositions. For the common case in plain eager
mode (2-D scores, class indices, no weight) both nodes are recorded inline, as the two operators' eager
paths would record them, without going through dispatch twice.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._state import STATE, next_sequence_nr
from ..._strides import _is_contiguous as is_contiguous
from ..._strides import in_torch_layout, like_self, preserve_format_strides
from ..._tensor import Tensor, _new, _wrap
from ...autograd.edges import gradient_edge
from ...autograd.forward_ad import refuse_dual_operands
from ...autograd.saved import save_fresh_output, save_input
from ...backend.dtypes import bfloat16, is_floating_np
from .. import aten_sum
from .._jvp import zero_tensor_sum
from .._util import binary_dtype, broadcast_mismatch
from ..aten_loops import loop_block, vector_and_scalar
from ..aten_vec import FP_SIGNALS, quietly
from ..bfloat16_in_float import FLOAT_COPIES, as_seen, rounded_in_float, seen_dtype, stands_for_bfloat16
from ..binary import xlogy
from ..creation import fill_, ones_like, zeros_like
from ..pointwise import (
    add,
    check_broadcast_into,
    check_cast_into,
    check_fits_into,
    div,
    exp,
    lt,
    mul,
    mul_,
    neg,
    neg_,
    sigmoid,
    sub,
    sub_,
)
from ..reductions import sum as sum_op
from ..reductions_extra import _mean_full as mean_all
from ..reductions_extra import sum as sum_dims
from ..registry import OpDef, defop
from ..scalar_overloads import add_scalar, div_scalar, div_scalar_, mul_scalar, scalar_minus
from ..select import select
from ..shape_extra import gather, masked_fill_
from ..unary import logit
from ..views import reshape, view
from ._basic import abs as abs_op
from ._basic import clamp_min, log_sigmoid_parts
from ._common import as_int, check_float, fast_path_ok, new_output, run_op, type_name
from .activation import _log_softmax_kernel, log_softmax
from .nll_cascade import cascade_sum

# ---- shared checks -----------------------------------------------------------------------------------------


def check_nondifferentiable(fn_name: str, arg_name: str, t) -> None:
    if t is not None and t._rg and STATE.grad_enabled:
        raise RuntimeError(
            f"The function '{fn_name}' is not differentiable with respect to argument '{arg_name}'. "
            "This input cannot have requires_grad True."
        )


def _laid_out_as_torch(loss: np.ndarray, x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """An unreduced pointwise loss of ``x`` and ``t`` in the layout ATen's TensorIterator gives it (a transposed
    input gives a transposed loss), which is also the order its mean and sum add the elements in."""
    return in_torch_layout(loss, (x, t), (0, 1))


def _reduce(loss: np.ndarray, reduction: int) -> np.ndarray:
    """PyTorch's ``apply_loss_reduction``: ``loss.mean()`` or ``loss.sum()``, with its sum's order of additions
    (``aten_sum``; NumPy's pairwise sum printed another last digit of most mean losses)."""
    if reduction == 1:
        if not loss.size:  # (PyTorch's mean divides the empty sum by 0: 0 / 0, the CPU's NaN, sign bit set)
            return np.asarray(-np.nan, dtype=loss.dtype)
        if aten_sum.supports(loss.dtype):
            return aten_sum.mean_as_aten(loss, None, False, loss.dtype)
        return np.asarray(loss.mean(), dtype=loss.dtype)
    if reduction == 2:
        if aten_sum.supports(loss.dtype):
            return aten_sum.sum_as_aten(loss, None, False)
        return np.asarray(loss.sum(), dtype=loss.dtype)
    return loss


def _reduce_in_place(loss: np.ndarray, reduction: int) -> np.ndarray:
    """``_reduce``, the reduced value kept in the unreduced loss's storage, as ATen's ``mean_out``/``sum_out`` into
    the loss buffer leave it (mse, smooth L1, soft margin, binary cross entropy): its storage is the loss's size,
    which forward AD's tangent layout (a copy where the tangent's storage differs) and ``untyped_storage()`` show."""
    reduced = _reduce(loss, reduction)
    if reduction == 0:
        return reduced
    buffer = np.empty(loss.size or 1, reduced.dtype)
    buffer[0] = reduced
    return buffer[:1].reshape(())


# ---- nll_loss ----------------------------------------------------------------------------------------------


_NOTHING_IGNORED = np.zeros(0, dtype=bool)


# Row counts below which a sum of unit weights is exactly the row count in that dtype (so ``row_w=None``, "every
# row weighs 1", gives the very values the explicit weights would).
_UNIT_WEIGHTS_MAX_ROWS = {np.dtype(np.float32): 2**24, np.dtype(np.float64): 2**53}


def check_nll_batch(x: np.ndarray, target: np.ndarray) -> None:
    """The checks of PyTorch's ``nll_loss_nd`` wrapper, made before its operator (and its node) runs."""
    if x.ndim < 1:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if x.ndim != 1 and (x.shape[0] != target.shape[0] if target.ndim else True):
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.ndim else 0}).")


def _every_row_counts(x: np.ndarray, target: np.ndarray, weight, ignore_index: int) -> bool:
    """Whether ``_nll_prepare`` would pass all its checks and weigh every row 1, known from one reduction: 2-D
    float32/float64 scores, as many int64 targets, all of them classes (negatives read huge as unsigned), none
    equal to ``ignore_index`` (not a class), no class weight. The common case, which skips the general checks."""
    if weight is not None or x.ndim != 2 or target.ndim != 1 or target.dtype != np.int64:
        return False
    rows, n_classes = x.shape
    if target.shape[0] != rows or not 0 < rows < _UNIT_WEIGHTS_MAX_ROWS.get(x.dtype, 0):
        return False
    if 0 <= ignore_index < n_classes:
        return False
    return np.maximum.reduce(target.view(np.uint64)) < n_classes


def _nll_prepare(x: np.ndarray, target: np.ndarray, weight, ignore_index: int, unreduced: bool = False):
    """Class dim moved last and flattened: (M, C) scores, (M,) targets, (M,) row weights (0 if ignored), or
    None for the weights when every row weighs 1 (no class weight, nothing ignored). ``unreduced``: the forward of
    ``reduction='none'``, whose 2-d kernel words an out-of-bounds target its own way (``_out_of_bounds``)."""
    if _every_row_counts(x, target, weight, ignore_index):
        return x, target, None, x.shape[1]
    check_nll_batch(x, target)
    _check_nll_target(x, target)
    if x.ndim == 1:
        n_classes = x.shape[0]
        scores = x.reshape(1, n_classes)
        flat_t = target.reshape(-1)
    else:
        if x.ndim == 4 and target.shape != (x.shape[0],) + x.shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {list(x.shape)} , target: {list(target.shape)}")
        if x.ndim > 2 and target.shape[1:] != x.shape[2:]:
            raise RuntimeError(
                f"Expected target size {list((x.shape[0],) + x.shape[2:])}, got {list(target.shape)}"
            )
        n_classes = x.shape[1]
        flat_t = target.reshape(-1)
        # (one row per target: with no classes, -1 could not tell the row count)
        scores = x if x.ndim == 2 else np.moveaxis(x, 1, -1).reshape(flat_t.shape[0], n_classes)
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no classes but "
            f"got weight tensor of shape: {list(weight.shape)}"
        )
    # then its dtype dispatch (floating types only; inputs of more than 2 dims go to the 2-d kernel), then the
    # weight's dtype
    check_float(x, "nll_loss_out_frame" if x.ndim <= 2 else "nll_loss2d_forward_out_frame")
    if weight is not None and weight.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found {type_name(weight.dtype)}")
    if x.ndim > 2 and target.dtype == np.uint8:  # (nll_loss2d reads its target as int64 only)
        raise RuntimeError("expected scalar type Long but found Byte")
    lo, hi = (np.minimum.reduce(flat_t), np.maximum.reduce(flat_t)) if flat_t.size else (0, -1)
    if lo <= ignore_index <= hi:
        ignored = flat_t == ignore_index
        any_ignored = ignored.any()
    else:  # the usual ignore_index=-100 lies outside the targets' range: no element-wise comparison needed
        ignored = _NOTHING_IGNORED
        any_ignored = False
    if flat_t.size and (lo < 0 or hi >= n_classes):
        if ignored is _NOTHING_IGNORED:
            ignored = flat_t == ignore_index
        bad = (~ignored) & ((flat_t < 0) | (flat_t >= n_classes))
        if bad.any():
            raise _out_of_bounds(flat_t[bad][0], unreduced and x.ndim == 2)
    safe_t = np.where(ignored, 0, flat_t) if any_ignored else flat_t
    if weight is None and not any_ignored and _UNIT_WEIGHTS_MAX_ROWS.get(x.dtype, 0) > flat_t.size > 0:
        return scores, safe_t, None, n_classes
    if weight is not None and n_classes:
        row_w = weight[safe_t].astype(x.dtype, copy=True)
    elif weight is not None:  # no classes: every target is ignored (else out of bounds above), so weighs 0
        row_w = np.zeros(flat_t.shape, dtype=x.dtype)
    else:
        row_w = np.empty(flat_t.shape, dtype=x.dtype)
        row_w.fill(1)  # = np.ones, without its Python-level wrapper
    if any_ignored:
        row_w[ignored] = 0
    return scores, safe_t, row_w, n_classes


def _check_nll_target(x: np.ndarray, target: np.ndarray) -> None:
    """The first checks of PyTorch's nll_loss / nll_loss2d operators: the target's number of dims, then its
    dtype, then (1-D scores) its size; the sizes of the two and the class weight come after."""
    if x.ndim <= 2 and target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if x.ndim == 4 and target.ndim != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets of "
                           f"dimension: {target.ndim}")
    if target.dtype != np.int64 and target.dtype != np.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {type_name(target)}")
    if x.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")


def _out_of_bounds(value, as_element: bool) -> Exception:
    """PyTorch's "Target ... is out of bounds." ``as_element``: its unreduced 2-d loop streams the target element
    itself into the message, so a uint8 one is a raw byte, which Python then decodes as UTF-8 (a byte of 128 or
    more fails to decode: that UnicodeDecodeError is what PyTorch raises), and a 0 byte ends the C string there."""
    if as_element and value.dtype == np.uint8:
        message = (b"Target " + bytes([int(value)]) + b" is out of bounds.").split(b"\0")[0]
        return IndexError(message.decode("utf-8"))
    return IndexError(f"Target {int(value)} is out of bounds.")


_ROW_NUMBERS: dict[int, np.ndarray] = {}
_ROW_NUMBERS_KEPT = 1024  # (batches up to this size keep their index array...)
_ROW_NUMBERS_SIZES = 64  # (...for this many sizes at a time: at most half a megabyte)


def row_numbers(n: int) -> np.ndarray:
    """``np.arange(n)``, the row index of the score picked from each row, kept read-only for small batches
    (``np.arange`` costs a third of the indexing it serves there)."""
    rows = _ROW_NUMBERS.get(n)
    if rows is None:
        rows = np.arange(n)
        if n <= _ROW_NUMBERS_KEPT:
            if len(_ROW_NUMBERS) >= _ROW_NUMBERS_SIZES:
                _ROW_NUMBERS.clear()
            rows.flags.writeable = False
            _ROW_NUMBERS[n] = rows
    return rows


def _nll_kernel(x, target, weight=None, reduction=1, ignore_index=-100):
    """(output, total_weight) of PyTorch's nll_loss_forward. ``total_weight``, which its node saves, is the summed
    class weight of the targets not ignored (the mean's divisor), 0 for reduction='none'."""
    scores, safe_t, row_w, n_classes = _nll_prepare(x, target, weight, ignore_index, unreduced=reduction == 0)
    # (no classes: every target is ignored, its score a placeholder that counts for nothing)
    picked = scores[row_numbers(safe_t.shape[0]), safe_t] if n_classes else np.zeros(safe_t.shape, x.dtype)
    dtype = x.dtype
    if reduction == 0:
        losses = np.negative(picked) if row_w is None else -row_w * picked
        if row_w is not None:  # (PyTorch writes a plain 0 for ignored targets, whatever their score)
            losses[target.reshape(-1) == ignore_index] = 0
        return losses.reshape(_unreduced_shape(x)), np.zeros((), dtype)
    picked, row_w = _in_sum_type(x, picked, row_w)
    total, weight_sum = _nll_sums(picked, target.reshape(-1), row_w, weight is not None, ignore_index)
    if reduction == 1:
        # (no target at all: PyTorch fills in a quiet NaN, positive, where 0 / 0 would give the negative one)
        total = _mean_divide(total, weight_sum) if safe_t.size else dtype.type(np.nan)
    return np.asarray(total, dtype=dtype), np.asarray(weight_sum, dtype=dtype)


def _in_sum_type(x: np.ndarray, *arrays):
    """``arrays`` in the type the reduced kernels' sums run in: ``scalar_t`` itself, so for a float32 copy of a
    bfloat16 input each product, partial sum, the count and the mean's quotient round to bfloat16, as they do to
    float16 for a float16 one (None stays None)."""
    seen = as_seen(x.dtype)
    if seen is x.dtype:
        return arrays
    return tuple(None if a is None else np.asarray(a).astype(seen) for a in arrays)


def _nll_sums(picked: np.ndarray, flat_t: np.ndarray, row_w, weighted: bool, ignore_index: int) -> tuple:
    """(loss sum, total weight) as PyTorch's forward kernel adds them: ``-score * weight`` of the counted
    targets through its cascade sum (nll_cascade); the total weight likewise, or the count without weights."""
    count = flat_t.shape[0]
    if row_w is None:  # every target counts, unit weights
        return cascade_sum(np.negative(picked), None, count), picked.dtype.type(count)
    kept, index = _counted(flat_t, ignore_index)
    values = np.negative(picked[kept]) if not weighted else -(picked[kept] * row_w[kept])
    return cascade_sum(values, index, count), _total_weight(row_w, kept, index, weighted, count)


def _counted(flat_t: np.ndarray, ignore_index: int) -> tuple:
    """The positions of the targets not ignored, and the same for ``cascade_sum`` (None when all count)."""
    kept = np.flatnonzero(flat_t != ignore_index)
    return kept, (None if kept.shape[0] == flat_t.shape[0] else kept)


def _total_weight(row_w: np.ndarray, kept: np.ndarray, index, weighted: bool, count: int):
    """The mean's divisor: the cascade sum of the counted targets' class weights, or their number."""
    if not weighted:
        return row_w.dtype.type(kept.shape[0])
    return cascade_sum(row_w[kept], index, count)


def _unreduced_shape(x: np.ndarray) -> tuple:
    """The shape of ``reduction='none'``'s loss: the input's without its class dimension."""
    return () if x.ndim == 1 else (x.shape[0],) + x.shape[2:]


def _mean_divide(value, weight_sum):
    """``value / weight_sum``, silent when every row is ignored (0 / 0 is PyTorch's NaN)."""
    if weight_sum > 0:  # (no division warning can arise: skip the costly errstate)
        return value / weight_sum
    with np.errstate(invalid="ignore", divide="ignore"):
        return value / weight_sum


def _nll_backward_kernel(g, x, target, weight=None, reduction=1, ignore_index=-100):
    scores, safe_t, row_w, n_classes = _nll_prepare(x, target, weight, ignore_index)
    if x.ndim == 4 and not is_contiguous(x.shape, preserve_format_strides(x)):
        # (PyTorch's nll_loss2d backward writes into zeros_like(self), laid out as self: channels last fails)
        raise RuntimeError("grad_input must be contiguous")
    g = np.asarray(g)
    if reduction == 1:
        g, row_w = _in_sum_type(x, g, row_w)
    if reduction == 0:  # -weight * grad (unit weights: -grad)
        coef = np.negative(g.reshape(-1)) if row_w is None else -row_w * g.reshape(-1)
    else:
        # PyTorch: -(grad / total_weight) for the mean (-grad for the sum), times the class weight
        if reduction != 1:
            coef = np.negative(g)
        elif row_w is None:
            coef = np.negative(_mean_divide(g, as_seen(x.dtype).type(safe_t.shape[0])))
        else:
            kept, index = _counted(target.reshape(-1), ignore_index)
            total = _total_weight(row_w, kept, index, weight is not None, safe_t.shape[0])
            coef = np.negative(_mean_divide(g, total))
        if row_w is not None:
            coef = row_w * coef
    ignored = None if row_w is None else target.reshape(-1) == ignore_index  # (no row weights: none ignored)
    if ignored is not None and ignored.any():
        # PyTorch skips ignored rows: zero there, even where the mean over no weight is NaN
        coef = np.where(ignored, 0, np.broadcast_to(coef, ignored.shape))
    dense = np.zeros(scores.shape, dtype=x.dtype)
    if n_classes:  # (no classes: no score, and every target ignored)
        dense[row_numbers(safe_t.shape[0]), safe_t] = coef
    if x.ndim <= 2:
        return dense.reshape(x.shape)
    moved = dense.reshape((x.shape[0],) + x.shape[2:] + (n_classes,))
    return np.ascontiguousarray(np.moveaxis(moved, -1, 1))


def _nll_backward_vjp(ctx, gg):
    target, weight = ctx.saved_tensors
    reduction, ignore_index = ctx.attrs
    need_grad, need_self = ctx.needs_input_grad
    # The backward is linear in grad_output (its adjoint is nll_loss) and constant in self: PyTorch still
    # differentiates it w.r.t. self (a zero gradient), so a gradient of nll_loss is connected to its input.
    return (nll_loss(gg, target, weight, reduction, ignore_index) if need_grad else None,
            zeros_like(gg) if need_self else None)


def _nll_backward_op(name: str, node_name: str) -> OpDef:
    """``nll_loss_backward`` or ``nll_loss2d_backward``: one kernel, but each records its own double-backward node
    (NllLossBackwardBackward0 / NllLoss2DBackwardBackward0), as PyTorch's two operators do."""
    return defop(
        f"{name}(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, "
        "SymInt ignore_index) -> Tensor",
        _nll_backward_kernel,
        vjp=_nll_backward_vjp,
        saves=("target", "weight"),
        attrs=("reduction", "ignore_index"),
        differentiable=("grad_output", "self"),
        node_name=node_name,
    )


nll_loss_backward = _nll_backward_op("_nn_nll_loss_backward", "NllLossBackwardBackward0")
nll_loss2d_backward = _nll_backward_op("_nn_nll_loss2d_backward", "NllLoss2DBackwardBackward0")


def _nll_vjp_with(backward: OpDef):
    """The vjp of a forward nll operator: its own backward operator on the saved values."""
    def vjp(ctx, g, _g_total_weight=None):
        x, target, weight, _total_weight = ctx.saved_tensors
        reduction, ignore_index = ctx.attrs
        return run_op(backward, g, x, target, weight, reduction, ignore_index)
    return vjp


# ``total_weight`` is PyTorch's non-differentiable second output: the node saves it (after its inputs, as
# PyTorch packs it), and receives one gradient only.
_NLL_SIG = (
    "(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) "
    "-> (Tensor output, Tensor total_weight)"
)
_nll_loss_1d2d = defop(
    "_nn_nll_loss" + _NLL_SIG,
    _nll_kernel,
    vjp=_nll_vjp_with(nll_loss_backward),
    saves=("self", "target", "weight", "result1"),
    attrs=("reduction", "ignore_index"),
    differentiable=("self",),
    nondiff_outputs=(1,),
    node_name="NllLossBackward0",
)
_nll_loss_nd = defop(
    "_nn_nll_loss2d" + _NLL_SIG,
    _nll_kernel,
    vjp=_nll_vjp_with(nll_loss2d_backward),
    saves=("self", "target", "weight", "result1"),
    attrs=("reduction", "ignore_index"),
    differentiable=("self",),
    nondiff_outputs=(1,),
    node_name="NllLoss2DBackward0",
)


def nll_loss(
    input: Tensor, target: Tensor, weight: Tensor | None = None, reduction: int = 1, ignore_index: int = -100
) -> Tensor:
    """PyTorch's ``nll_loss_nd``: ``nll_loss`` for 1-D/2-D scores, ``nll_loss2d`` for 4-D ones, and for any other
    number of dimensions ``nll_loss2d`` on the scores viewed as (N, C, 1, -1), made contiguous first (so the
    graph shows the same CloneBackward0 / ViewBackward0 nodes around NllLoss2DBackward0)."""
    if ignore_index.__class__ is not int:  # (an int: torch's parser refuses 1.5, which the comparison would take)
        ignore_index = as_int(ignore_index)
    check_nondifferentiable("nll_loss_forward", "weight", weight)
    x, t = input._data, target._data
    check_nll_batch(x, t)
    if x.ndim == 2 and weight is None and _records_inline(input, target):
        return _nll_loss_eager(input, target, reduction, ignore_index)
    if x.ndim <= 2:
        return _nll_loss_1d2d(input, target, weight, reduction, ignore_index)[0]
    if x.ndim == 4:
        return _nll_loss_nd(input, target, weight, reduction, ignore_index)[0]
    n, c = x.shape[:2]
    if t.shape[1:] != x.shape[2:]:
        raise RuntimeError(f"Expected target size {list((n,) + x.shape[2:])}, got {list(t.shape)}")
    scores = view(input.contiguous(), (n, c, 1, -1) if x.size else (n, c, 0, 0))
    targets = reshape(target, (n, 1, -1) if t.size else (n, 0, 0))
    out = _nll_loss_nd(scores, targets, weight, reduction, ignore_index)[0]
    return view(out, (n,) + x.shape[2:]) if reduction == 0 else out


# ---- cross_entropy -----------------------------------------------------------------------------------------


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = 1,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Tensor:
    if ignore_index.__class__ is not int:  # (an int: torch's parser refuses 1.5, which the comparison would take)
        ignore_index = as_int(ignore_index)
    if STATE.profiler is not None:
        return STATE.profiler.composite("aten::cross_entropy_loss",
                                        (input, target, weight, reduction, ignore_index, label_smoothing),
                                        _cross_entropy)
    return _cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing)


def _cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None, reduction: int, ignore_index: int,
                   label_smoothing: float) -> Tensor:
    x, t = input._data, target._data
    class_dim = 0 if x.ndim == 1 else 1
    if x.shape == t.shape:  # (a composite of differentiable products: the weight may require grad)
        return _cross_entropy_probs(
            input, target, weight, reduction, ignore_index, label_smoothing, class_dim
        )
    check_nondifferentiable("nll_loss_forward", "weight", weight)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
        return _cross_entropy_smoothing(
            input, target, weight, reduction, ignore_index, label_smoothing, class_dim
        )
    if weight is None and x.ndim == 2 and _records_inline(input, target):
        return _cross_entropy_eager(input, target, reduction, ignore_index)
    # Composed exactly as PyTorch does, so the graph shows LogSoftmaxBackward0 -> NllLossBackward0.
    return nll_loss(log_softmax(input, class_dim, False), target, weight, reduction, ignore_index)


def _pure(kernel, *arrays):
    """A pure kernel's result, run again quietly where a strict filter or a raising ``np.errstate`` made NumPy's
    floating-point warning an exception (inf logits: PyTorch computes NaN silently; see ``aten_vec.quietly``)."""
    try:
        return kernel(*arrays)
    except FP_SIGNALS:
        return quietly(kernel, *arrays)


def _records_inline(input: Tensor, target: Tensor) -> bool:
    """Whether an eager path may record its nodes by hand: plain tensors, scores that are not an inference tensor
    (torch's autograd kernels may not run for one), and nothing that needs the general path (``fast_path_ok``) or
    watches operator calls."""
    return (fast_path_ok() and not STATE.observed and input.__class__ is Tensor and target.__class__ is Tensor
            and not input._inference and input._data.dtype is not bfloat16.np)  # (bfloat16: computed in float)


def _requires_grad(t: Tensor) -> bool:
    """Whether an operator's node would be recorded for input ``t`` (grad mode on)."""
    return STATE.grad_enabled and (t._rg or (t._base is not None and t._base._rg))


def _nll_loss_eager(input: Tensor, target: Tensor, reduction: int, ignore_index: int) -> Tensor:
    """``_nll_loss_1d2d(input, target, None, ...)[0]`` with its node recorded inline, for 2-D scores: the same
    kernel, node, saved values and sequence numbers as its registered eager path (which numbers the node
    before running the kernel, even one that raises)."""
    records = _requires_grad(input)
    try:
        loss_data, total_weight = _pure(_nll_kernel, input._data, target._data, None, reduction, ignore_index)
    except Exception:
        if records:
            next_sequence_nr()
        raise
    loss = new_output(loss_data)
    if records:
        _record_nll_node(loss, total_weight, input, gradient_edge(input), target, reduction, ignore_index)
    return loss


def _record_nll_node(loss: Tensor, total_weight: np.ndarray, scores: Tensor, edge: tuple, target: Tensor,
                     reduction: int, ignore_index: int) -> None:
    """``loss``'s NllLossBackward0 (no class weight), as ``_nll_loss_1d2d``'s eager path makes it: ``edge`` to
    ``scores``, which it saves with the target and the total weight (its second output)."""
    x = scores._data
    node = _new(_nll_loss_1d2d.node_class)
    node._seq = next_sequence_nr()
    node._edges = (edge,)
    node._in_meta = ((x.shape, x.dtype),)
    node._attrs = (reduction, ignore_index)
    node._saved = (save_input(scores), save_input(target), None, save_input(new_output(total_weight)))
    node._out_meta = ((loss._data.shape, x.dtype), ((), x.dtype))
    loss._gfn = node
    loss._rg = True


def _cross_entropy_eager(input: Tensor, target: Tensor, reduction: int, ignore_index: int) -> Tensor:
    """``nll_loss(log_softmax(input, 1), target)`` with both nodes recorded inline: the same kernels, nodes and
    saved values as the two registered operators' eager paths, for 2-D scores without a class weight."""
    log_probs = new_output(_pure(_log_softmax_kernel, input._data, 1, False))
    lp = log_probs._data
    records = _requires_grad(input)
    try:
        check_nll_batch(lp, target._data)
    except ValueError:
        if records:  # (log_softmax's node was made)
            next_sequence_nr()
        raise
    try:
        loss_data, total_weight = _pure(_nll_kernel, lp, target._data, None, reduction, ignore_index)
    except Exception:
        if records:  # (PyTorch made both nodes before nll_loss's kernel raised)
            next_sequence_nr()
            next_sequence_nr()
        raise
    loss = new_output(loss_data)
    if not records:
        return loss
    softmax_node = _new(log_softmax.node_class)
    softmax_node._seq = next_sequence_nr()
    softmax_node._edges = (gradient_edge(input),)
    softmax_node._in_meta = ((input._data.shape, input._data.dtype),)
    softmax_node._attrs = (1, False)
    log_probs._gfn = softmax_node
    log_probs._rg = True
    softmax_node._saved = (save_fresh_output(log_probs),)
    softmax_node._out_meta = ((lp.shape, lp.dtype),)
    _record_nll_node(loss, total_weight, log_probs, (softmax_node, 0), target, reduction, ignore_index)
    return loss


def _class_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    shape = [1] * ndim
    shape[class_dim] = weight._data.shape[0]
    return reshape(weight, tuple(shape))


def _cross_entropy_probs(input, target, weight, reduction, ignore_index, label_smoothing, class_dim):
    x, t = input._data, target._data
    if not is_floating_np(t.dtype):
        raise RuntimeError(
            f"Expected floating point type for target with class probabilities, got {type_name(t.dtype)}"
        )
    if x.ndim == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    n_classes = x.shape[class_dim]
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if weight is not None and (weight._data.ndim != 1 or weight._data.shape[0] != n_classes):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or no "
            f"classes but got weight tensor of shape: {list(weight._data.shape)}"
        )
    logp = log_softmax(input, class_dim, False)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
        target = add_scalar(mul_scalar(target, 1 - label_smoothing), _ieee_divide(label_smoothing, n_classes))
    prod = mul(logp, target)
    if weight is not None:
        prod = mul(prod, _class_view(weight, x.ndim, class_dim))
    if reduction == 0:
        return neg(sum_dims(prod, class_dim))
    if reduction == 1 and not x.size:  # PyTorch fills the empty sum with NaN, then negates it: a -nan mean
        return neg(fill_(sum_dims(prod), math.nan))
    total = neg(sum_dims(prod))
    if reduction == 2:
        return total
    return div_scalar(total, x.size // n_classes)


def _ieee_divide(numerator: float, denominator: int) -> float:
    """``numerator / denominator`` as C++ divides doubles: no classes give inf (or NaN for 0 / 0), not an error."""
    if denominator:
        return numerator / denominator
    return math.copysign(math.inf, numerator) if numerator else math.nan


def _cross_entropy_smoothing(input, target, weight, reduction, ignore_index, label_smoothing, class_dim):
    x, t = input._data, target._data
    n_classes = x.shape[class_dim]
    logp = log_softmax(input, class_dim, False)
    nll = nll_loss(logp, target, weight, reduction, ignore_index)
    ignore_mask = t == ignore_index
    if weight is not None:
        smooth = neg(sum_dims(mul(logp, _class_view(weight, x.ndim, class_dim)), class_dim))
    else:
        smooth = neg(sum_dims(logp, class_dim))
    masked_fill_(smooth, _wrap(ignore_mask), 0.0)  # in place, as PyTorch does: MaskedFillBackward0
    if reduction == 1:
        if weight is not None:
            # (PyTorch's ``weight.gather(0, target.masked_select(~ignore_mask).flatten()).sum()``, through which a
            # dual weight's tangent reaches the loss, where nll_loss's formula leaves it out)
            kept = _wrap(np.ascontiguousarray(t[~ignore_mask].reshape(-1)))
            denom = sum_dims(gather(weight, 0, kept, sparse_grad=False))
        else:
            denom = _wrap(np.asarray((~ignore_mask).sum()))  # (an int64 count, as in PyTorch)
        ret = div(sum_dims(smooth), denom)
    elif reduction == 2:
        ret = sum_dims(smooth)
    else:
        ret = smooth
    # C++ numbers times tensors: the Scalar overloads (MulBackward1), as in PyTorch's composite, whose right
    # operand C++ evaluates first (node numbering, hence backward order)
    smooth_part = mul_scalar(ret, _ieee_divide(label_smoothing, n_classes))
    out = add(mul_scalar(nll, 1 - label_smoothing), smooth_part)
    _second_nan(out, smooth_part)
    return out


_SECOND_NAN_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _second_nan(out: Tensor, second: Tensor) -> None:
    """Where ``out``, a sum, and its second operand are both NaN, the second's NaN, as PyTorch's addition keeps it
    (NumPy's keeps the first's): the mean over no rows is the smoothing's ``0 / 0``, -nan. (float32 and float64:
    half's addition goes through float and is left as it was.)"""
    o = getattr(out, "_data", None)
    if isinstance(o, np.ndarray) and o.dtype in _SECOND_NAN_DTYPES and o.flags.writeable and np.isnan(o).any():
        s = np.broadcast_to(second._data, o.shape)
        both = np.isnan(o) & np.isnan(s)
        o[both] = s[both]


# ---- elementwise losses ------------------------------------------------------------------------------------


def _check_reduction_shapes(x: np.ndarray, t: np.ndarray) -> None:
    if x.shape != t.shape:
        warnings.warn(
            f"Using a target size (torch.Size({list(t.shape)})) that is different to the input size "
            f"(torch.Size({list(x.shape)})). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=4,
        )


def _promoted(kernel: str, x: np.ndarray, t: np.ndarray) -> tuple:
    """Input and target in torch's promoted dtype (a float32 input with int64 targets stays float32, where NumPy
    would widen to float64); the pointwise losses have no integer kernels."""
    dt = binary_dtype(x, t)
    if dt.kind != "f":  # (nor complex ones)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(dt)}'")
    return x.astype(dt, copy=False), t.astype(dt, copy=False)


def _mse_kernel(x, t, reduction=1):
    x, t = _promoted("mse_cpu", x, t)
    d = np.subtract(x, t)
    if stands_for_bfloat16(d.dtype):  # (mse_kernel's ``a - b`` is a bfloat16 before it is squared)
        d = rounded_in_float(d)
    return _reduce_in_place(_laid_out_as_torch(d * d, x, t), reduction)


def _mse_vjp(ctx, g):
    x, t = ctx.saved_tensors
    (reduction,) = ctx.attrs
    need = ctx.needs_input_grad
    # PyTorch: self: mse_loss_backward(grad, self, target), target: mse_loss_backward(grad, target, self)
    return (mse_loss_backward(g, x, t, reduction) if need[0] else None,
            mse_loss_backward(g, t, x, reduction) if need[1] else None)


def apply_loss_reduction(unreduced: Tensor, reduction: int) -> Tensor:
    """PyTorch's apply_loss_reduction: ``mean()`` (MeanBackward0), ``sum()`` (SumBackward0) or the tensor itself."""
    if reduction == 1:
        return mean_all(unreduced)
    return sum_op(unreduced, None, False, None) if reduction == 2 else unreduced


def _symmetric_loss_jvp(backward_op_of):
    """PyTorch's formula of a loss symmetric in self and target (mse, smooth L1, Huber): its backward operator,
    unreduced, applied to each tangent (a missing one as zeros, which the operator multiplies: NaN, not ±inf,
    where x - t is infinite), the two added, then reduced."""

    def jvp(args, outs, tangents):
        x, t, reduction, *param = args
        op = backward_op_of()
        t_x, t_t = (tangent if tangent is not None else zeros_like(arg) for tangent, arg in zip(tangents, (x, t)))
        return apply_loss_reduction(add(op(t_x, x, t, 0, *param), op(t_t, t, x, 0, *param)), reduction)

    return jvp


mse_loss = defop(
    "mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    _mse_kernel,
    jvp=_symmetric_loss_jvp(lambda: mse_loss_backward),
    vjp=_mse_vjp,
    saves=("self", "target"),
    attrs=("reduction",),
)


def _numel(x, t) -> int:
    """Elements of the loss before reduction (PyTorch broadcasts input and target before the operator)."""
    return int(np.prod(np.broadcast_shapes(tuple(x.shape), tuple(t.shape))))


def _per_element(scale: float, x, t) -> float:
    """``scale / numel`` as PyTorch's C++ divides the doubles: inf for an empty loss (whose gradient is empty)."""
    n = _numel(x, t)
    return scale / n if n else np.inf


def _mse_backward_kernel(g, x, t, reduction):
    out = np.subtract(x, t)
    norm = np.asarray(_per_element(2.0, x, t) if reduction == 1 else 2.0, dtype=out.dtype)  # PyTorch's norm
    if stands_for_bfloat16(out.dtype):  # (``norm * (a - b) * c`` in bfloat16: the norm and each step rounded)
        return rounded_in_float(rounded_in_float(out) * rounded_in_float(norm)) * g
    out *= norm
    return np.multiply(out, g)


def _mse_double_backward(grad, n: int, reduction: int):
    """PyTorch's mse_loss_double_backward: 2 * grad, divided by the input's numel for a mean."""
    out = mul(grad, 2)
    return div(out, n) if reduction == 1 else out


def _double_backward_grad_output(backward_op, gg, go, reduction: int, *args):
    """The gradient of a loss's backward operator w.r.t. its ``grad_output``, in which it is linear: the
    operator itself applied to ``gg`` without reduction, else the sum of ``gg`` times its value at a unit
    ``grad_output`` (PyTorch's ``*_double_backward_grad_output``)."""
    if reduction == 0:
        return backward_op(gg, *args)
    return sum_dims(mul(backward_op(ones_like(go), *args), gg))


def _mse_backward_vjp(ctx, gg):
    go, x, t = ctx.saved_tensors
    (reduction,) = ctx.attrs
    need_go, need_x, need_t = ctx.needs_input_grad
    d_go = _double_backward_grad_output(mse_loss_backward, gg, go, reduction, x, t, reduction) if need_go else None
    scaled = mul(gg, go) if need_x or need_t else None
    n = _numel(x, t)
    return (d_go, _mse_double_backward(scaled, n, reduction) if need_x else None,
            neg(_mse_double_backward(scaled, n, reduction)) if need_t else None)


mse_loss_backward = defop(
    "mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor",
    _mse_backward_kernel,
    vjp=_mse_backward_vjp,
    saves=("grad_output", "self", "target"),
    attrs=("reduction",),
    node_name="MseLossBackwardBackward0",
)


def l1_loss(input: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    diff = abs_op(sub(input, target))
    if reduction == 1:
        return mean_all(diff)  # PyTorch's mean(): MeanBackward0 with self_sym_numel/sizes
    if reduction == 2:
        return sum_op(diff, None, False, None)
    return diff


def _smooth_l1_kernel(x, t, reduction=1, beta=1.0):
    x, t = _promoted("smooth_l1_cpu", x, t)
    d = np.abs(np.subtract(x, t))
    loss = select(d < beta, 0.5 * d * d / beta, d - 0.5 * beta) if beta > 0 else d
    return _reduce_in_place(_laid_out_as_torch(loss.astype(np.result_type(x, t), copy=False), x, t), reduction)


def _loss_norm(x, t, reduction: int, dtype) -> np.ndarray:
    """PyTorch's per-element factor of a loss's gradient: 1/numel for a mean, else 1."""
    return np.asarray(_per_element(1.0, x, t) if reduction == 1 else 1.0, dtype=dtype)


def _smooth_l1_backward_kernel(g, x, t, reduction, beta):
    # PyTorch's kernel: -norm g at or below -beta, norm g at or above beta, norm (x - t) g / beta between
    dt = np.result_type(g, x, t)
    if dt in _BAND_DTYPES:
        return _band_backward(g, x, t, reduction, beta, True)
    norm = _loss_norm(x, t, reduction, dt)
    d = np.subtract(x, t)
    inside = norm * d * g / np.asarray(beta, dtype=dt)
    return select(d <= -beta, -norm * g, select(d >= beta, norm * g, inside)).astype(dt, copy=False)


def _huber_backward_kernel(g, x, t, reduction, delta):
    # PyTorch's kernel: -norm g delta at or below -delta, norm g delta at or above delta, norm (x - t) g between
    dt = np.result_type(g, x, t)
    if dt in _BAND_DTYPES:
        return _band_backward(g, x, t, reduction, delta, False)
    norm = _loss_norm(x, t, reduction, dt)
    d = np.subtract(x, t)
    delta_ = np.asarray(delta, dtype=dt)
    return select(d <= -delta, -norm * g * delta_, select(d >= delta, norm * g * delta_, norm * d * g)).astype(
        dt, copy=False)


_BAND_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _band_backward(g, x, t, reduction: int, param: float, smooth_l1: bool) -> np.ndarray:
    """smooth_l1_loss_backward / huber_loss_backward as PyTorch's ``cpu_kernel_vec`` computes them into a
    contiguous gradient: its vector and scalar code round differently (the scalar one compares with, multiplies
    and divides by the double ``beta`` / ``delta``, the vector one uses it rounded to the dtype, and multiplies in
    another order), so which elements take which code (``aten_loops``) shows in the bits. Half: smooth L1
    computes in float and rounds once, Huber in half, rounding each step."""
    dt = np.result_type(g, x, t)
    calc = np.dtype(np.float32) if smooth_l1 and dt == np.float16 else dt
    norm = _loss_norm(x, t, reduction, calc)
    param_ = calc.type(param)

    def formula(x, t, g, vector: bool) -> np.ndarray:
        d = np.subtract(x, t)
        if vector:  # norm * output * g, output ±1 (smooth L1) or ±delta (Huber) outside, d / beta or d inside
            sign = select(d > 0, calc.type(1), calc.type(-1))
            outside, inside = (sign, d / param_) if smooth_l1 else (sign * param_, d)
            return (norm * select(np.abs(d) >= param_, outside, inside) * g).astype(dt, copy=False)
        edge = norm * g  # (Huber's times the double delta, rounded once)
        if not smooth_l1:
            edge = (edge.astype(np.float64) * param).astype(calc)
        inside = ((norm * d * g).astype(np.float64) / param).astype(calc) if smooth_l1 else norm * d * g
        wide = d.astype(np.float64)
        return select(wide <= -param, -edge, select(wide >= param, edge, inside)).astype(dt, copy=False)

    operands = (x.astype(calc, copy=False), t.astype(calc, copy=False), np.asarray(g, dtype=calc))
    with np.errstate(all="ignore"):
        return vector_and_scalar(formula, operands, loop_block(dt, also_avx512=False),
                                 out_like=np.empty(np.broadcast_shapes(*(o.shape for o in operands)), dt))


def _within_band_vjp(backward_op_of, scale_by_param: bool):
    """The vjp of smooth_l1_loss_backward / huber_loss_backward: linear in grad_output; in ``self`` and
    ``target`` its slope is ``gg * grad_output`` where ``|x - t|`` is inside the band (divided by beta for
    smooth L1), and zero outside (PyTorch's ``*_double_backward``)."""

    def vjp(ctx, gg):
        go, x, t = ctx.saved_tensors
        reduction, param = ctx.attrs
        need_go, need_x, need_t = ctx.needs_input_grad
        d_go = _double_backward_grad_output(backward_op_of(), gg, go, reduction, x, t, reduction, param) \
            if need_go else None
        d_x = None
        if need_x or need_t:
            d_x = mul(mul(gg, go), lt(abs_op(sub(x, t)), param))
            if scale_by_param:
                d_x = div(d_x, param)
            if reduction == 1:
                d_x = div(d_x, _numel(x, t))
        return d_go, (d_x if need_x else None), (neg(d_x) if need_t else None)

    return vjp


def _band_loss_vjp(backward_op_of):
    """smooth_l1_loss / huber_loss: ``self`` through the backward operator, ``target`` through the same
    operator with the two swapped, as PyTorch's derivatives."""

    def vjp(ctx, g):
        x, t = ctx.saved_tensors
        reduction, param = ctx.attrs
        need = ctx.needs_input_grad
        op = backward_op_of()
        return (run_op(op, g, x, t, reduction, param) if need[0] else None,
                run_op(op, g, t, x, reduction, param) if need[1] else None)

    return vjp


smooth_l1_loss_backward = defop(
    "smooth_l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, float beta) -> Tensor",
    _smooth_l1_backward_kernel,
    vjp=_within_band_vjp(lambda: smooth_l1_loss_backward, True),
    saves=("grad_output", "self", "target"),
    attrs=("reduction", "beta"),
    node_name="SmoothL1LossBackwardBackward0",
)

smooth_l1_loss_op = defop(
    "smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.0) -> Tensor",
    _smooth_l1_kernel,
    vjp=_band_loss_vjp(lambda: smooth_l1_loss_backward),
    jvp=_symmetric_loss_jvp(lambda: smooth_l1_loss_backward),
    saves=("self", "target"),
    attrs=("reduction", "beta"),
)


def smooth_l1_loss(input: Tensor, target: Tensor, reduction: int = 1, beta: float = 1.0) -> Tensor:
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return l1_loss(input, target, reduction)
    return smooth_l1_loss_op(input, target, reduction, beta)


def _huber_kernel(x, t, reduction=1, delta=1.0):
    # PyTorch writes the loss into ``empty_like(input)``: it keeps the input's dtype, into which the promoted one
    # must cast (a float target with an integer input is refused before the kernel's dtype dispatch)
    out_dtype = x.dtype
    check_cast_into(binary_dtype(x, t), out_dtype)
    storage = seen_dtype(x)  # (bfloat16 for a copy: the loss is written in it, whatever the target promotes to)
    x, t = _promoted("huber_cpu", x, t)
    d = np.abs(np.subtract(x, t))
    loss = select(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    if storage is not out_dtype:
        loss = rounded_in_float(loss, storage)
    loss = _reduce(_laid_out_as_torch(loss.astype(out_dtype, copy=False), x, t), reduction)
    return loss if storage is out_dtype else np.asarray(loss).astype(storage)


huber_loss_backward = defop(
    "huber_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, float delta) -> Tensor",
    _huber_backward_kernel,
    vjp=_within_band_vjp(lambda: huber_loss_backward, False),
    saves=("grad_output", "self", "target"),
    attrs=("reduction", "delta"),
    node_name="HuberLossBackwardBackward0",
)

huber_loss_op = defop(
    "huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.0) -> Tensor",
    _huber_kernel,
    vjp=_band_loss_vjp(lambda: huber_loss_backward),
    jvp=_symmetric_loss_jvp(lambda: huber_loss_backward),
    saves=("self", "target"),
    attrs=("reduction", "delta"),
)


def huber_loss(input: Tensor, target: Tensor, reduction: int = 1, delta: float = 1.0) -> Tensor:
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return huber_loss_op(input, target, reduction, delta)


# ---- binary cross-entropy ----------------------------------------------------------------------------------

_EPS = 1e-12


def _check_same_dtype(expected: np.ndarray, *operands: np.ndarray) -> None:
    """TensorIterator's ``check_all_same_dtype``, which sees a bfloat16 operand's float32 copy as bfloat16: the
    first operand of another dtype than ``expected``'s is refused."""
    want = seen_dtype(expected)
    for operand in operands:
        if seen_dtype(operand) != want:
            raise RuntimeError(f"Found dtype {type_name(seen_dtype(operand))} but expected {type_name(want)}")


def _bce_kernel(x, t, weight=None, reduction=1):
    _check_same_dtype(x, t)  # (its TensorIterator takes the target in the input's dtype only, before dispatch)
    check_float(x, "binary_cross_entropy")
    if not ((x >= 0) & (x <= 1)).all():  # (NaN fails the check too, as in PyTorch's kernel)
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not ((t >= 0) & (t <= 1)).all():
        raise RuntimeError("all elements of target should be between 0 and 1")
    dt = x.dtype.type
    floor = dt(-100)
    # PyTorch's scalar kernel, into ``empty_like(input)`` (whose layout orders the mean's and sum's additions):
    # (t - 1) * max(log1p(-x), -100) - t * max(log(x), -100)
    loss = (t - dt(1)) * np.maximum(_libm("log1p", np.negative(x)), floor)
    loss -= t * np.maximum(_libm("log", x), floor)
    loss = like_self(np.asarray(loss, dtype=x.dtype), x)
    if weight is not None:
        check_broadcast_into(loss, (weight,))  # (loss.mul_(weight): in place, the layout kept)
        np.multiply(loss, weight, out=loss)
    return _reduce_in_place(loss, reduction)


# Up to this many elements a float64 log goes through the C library one element at a time (Python's math calls
# it), as PyTorch's scalar kernels do; beyond it NumPy's, within an ulp of it.
_LIBM_DOUBLE_LIMIT = 1 << 16  # (at ~60 ns an element: 4 ms a log at most)


def _libm(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's ``log`` or ``log1p`` (``std::log`` / ``std::log1p`` of PyTorch's scalar kernels) in x's
    dtype: glibc's float routines (emulated: NumPy's SIMD loops round differently) for float32 and half (computed
    in float, rounded once), the double ones for float64."""
    from .glibc_float_math import log1p_float, log_float

    with np.errstate(divide="ignore", invalid="ignore"):
        if x.dtype in (np.float32, np.float16):
            out = (log1p_float if name == "log1p" else log_float)(x.astype(np.float32, copy=False))
            return np.asarray(out).astype(x.dtype, copy=False)
        if x.dtype == np.float64 and x.size <= _LIBM_DOUBLE_LIMIT:
            fn = getattr(math, name)
            return np.fromiter(map(_total(fn), x.ravel().tolist()), np.float64, x.size).reshape(x.shape)
        return getattr(np, name)(x)


def _total(fn):
    """``fn`` (a math function) with the C library's values where Python raises: -inf at a pole, NaN below."""

    def call(v: float) -> float:
        try:
            return fn(v)
        except ValueError:
            return -math.inf if v == (-1.0 if fn is math.log1p else 0.0) else math.nan

    return call


def _bce_vjp(ctx, g):
    x, t, weight = ctx.saved_tensors
    (reduction,) = ctx.attrs
    need = ctx.needs_input_grad
    gx = run_op(binary_cross_entropy_backward, g, x, t, weight, reduction) if need[0] else None
    return gx, _bce_target_grad(g, x, t, weight, reduction) if need[1] else None


def _bce_target_grad(g, x, t, weight, reduction: int):
    """PyTorch's binary_cross_entropy_target_backward, in place as there: -logit(x) * g [* weight] [/ numel]."""
    out = mul_(neg_(logit(x)), g)
    if weight is not None:
        out = mul_(out, weight)
    return div_scalar_(out, t.numel()) if reduction == 1 else out


def _bce_jvp(args, outs, tangents):
    """PyTorch's formula: binary_cross_entropy_backward(self_t) + binary_cross_entropy_target_backward(target_t),
    unreduced, then reduced; a missing tangent as zeros (neither has a zero tensor kernel)."""
    x, t, weight, reduction = args
    refuse_dual_operands((weight,))
    t_x, t_t = (tangent if tangent is not None else zeros_like(arg) for tangent, arg in zip(tangents, (x, t)))
    unreduced = add(binary_cross_entropy_backward(t_x, x, t, weight, 0), _bce_target_grad(t_t, x, t, weight, 0))
    return apply_loss_reduction(unreduced, reduction)


def _bce_backward_kernel(g, x, t, weight=None, reduction=1):
    # PyTorch's kernel: g (x - t) / max((1 - x) x, 1e-12), times the weight, divided by numel for a mean (its
    # 1e-12 a float constant: float64's is float32's 1e-12 widened)
    dt = x.dtype
    one, eps = np.asarray(1.0, dtype=dt), np.asarray(np.float32(_EPS), dtype=dt)
    out = g * (x - t) / np.maximum((one - x) * x, eps)
    if weight is not None:
        out = out * weight
    if reduction == 1:
        out = out / np.asarray(_numel(x, t), dtype=dt)
    return np.asarray(out).astype(dt, copy=False)


def _bce_backward_vjp(ctx, gg):
    go, x, t, weight = ctx.saved_tensors
    (reduction,) = ctx.attrs
    need_go, need_x, need_t = ctx.needs_input_grad
    d_go = _double_backward_grad_output(binary_cross_entropy_backward, gg, go, reduction, x, t, weight, reduction) \
        if need_go else None
    scaled = None
    if need_x or need_t:
        scaled = mul(gg, go)
        if weight is not None:
            scaled = mul(scaled, weight)
    d_x = d_t = None
    if need_x:  # PyTorch's binary_cross_entropy_double_backward: (x^2 - 2xt + t) / ((x+eps)^2 (1-x+eps)^2)
        numer = add(sub(mul(x, x), mul(mul(x, 2.0), t)), t)
        a, b = add(x, _EPS), add(scalar_minus(1.0, x), _EPS)
        denom = mul(mul(a, a), mul(b, b))
        d_x = mul(div(numer, denom), scaled)
    if need_t:  # the kernel's slope in the target: -1 / max((1 - x) x, eps)
        d_t = div(neg(scaled), clamp_min(mul(scalar_minus(1.0, x), x), _EPS))
    if reduction == 1:
        n = _numel(x, t)
        d_x = None if d_x is None else div(d_x, n)
        d_t = None if d_t is None else div(d_t, n)
    return d_go, d_x, d_t


binary_cross_entropy_backward = defop(
    "binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, "
    "int reduction=1) -> Tensor",
    _bce_backward_kernel,
    vjp=_bce_backward_vjp,
    saves=("grad_output", "self", "target", "weight"),
    attrs=("reduction",),
    differentiable=("grad_output", "self", "target"),
    node_name="BinaryCrossEntropyBackwardBackward0",
)


binary_cross_entropy_op = defop(
    "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor",
    _bce_kernel,
    vjp=_bce_vjp,
    jvp=_bce_jvp,
    saves=("self", "target", "weight"),
    attrs=("reduction",),
    differentiable=("self", "target"),
)


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, reduction: int = 1
) -> Tensor:
    check_nondifferentiable("binary_cross_entropy", "weight", weight)
    return binary_cross_entropy_op(input, target, weight, reduction)


def _bce_logits_kernel(x, t, weight=None, pos_weight=None, reduction=1):
    check_float(x, "log_sigmoid_cpu")  # (torch's first step is log_sigmoid(input))
    # torch computes (1 - target).mul_(input)...: the loss takes the target's dtype, and integer or bool targets
    # fail in that first in-place product (or subtraction)
    if t.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if t.dtype.kind in "iu":
        raise RuntimeError(f"result type {type_name(x.dtype)} can't be cast to the desired output type "
                           f"{type_name(t.dtype)}")
    log_sig = log_sigmoid_parts(x)[0]  # (torch: (1 - target) * input - [log_weight *] log_sigmoid(input))
    if pos_weight is not None:
        mismatch = broadcast_mismatch([pos_weight.shape, t.shape])  # (torch's first product: pos_weight * target)
        if mismatch is not None:
            raise mismatch
        log_weight = 1 + (pos_weight - 1) * t
        check_fits_into(log_sig, log_weight)  # (torch: log_sigmoid(input).mul_(log_weight), in place)
    # (torch: (1 - target).mul_(input): the loss takes the target's shape, into which the input must broadcast; the
    # aten op broadcasts, F.binary_cross_entropy_with_logits refuses different sizes before calling it)
    check_fits_into(t, x)
    if FLOAT_COPIES and any(seen_dtype(a) is not a.dtype for a in (x, t, weight, pos_weight) if a is not None):
        loss = _bce_logits_in_steps(x, t, log_sig, weight, pos_weight)
    else:
        loss = (1 - t) * x - (log_sig if pos_weight is None else log_weight * log_sig)
        if weight is not None:
            check_fits_into(np.asarray(loss), weight)  # (torch: loss.mul_(weight), in place)
            loss = loss * weight
    loss = _reduce(np.asarray(loss).astype(t.dtype if t.dtype.kind in "fc" else x.dtype, copy=False), reduction)
    storage = seen_dtype(t)  # (a bfloat16 target's copy: the loss is written in its dtype, whatever the others are)
    return loss if storage is t.dtype else np.asarray(loss).astype(storage)


def _bce_logits_in_steps(x, t, log_sig, weight, pos_weight):
    """The unreduced loss with bfloat16 among the operands (float32 copies): torch composes it of tensor operations,
    each rounding its result to its own dtype (an in-place one to its destination's), in this order."""
    def rounded(values, *operands):
        """``values`` rounded to the dtype the operation on ``operands`` gives (bfloat16 where all of them are)."""
        return rounded_in_float(values) if all(seen_dtype(a) is not a.dtype for a in operands) else values

    log_sig = rounded(log_sig, x)
    if pos_weight is not None:  # (pos_weight - 1).mul(target).add_(1), then log_sigmoid(input).mul_(that)
        log_weight = rounded(pos_weight - 1, pos_weight)
        log_weight = rounded(rounded(log_weight * t, pos_weight, t) + 1, pos_weight, t)
        log_sig = rounded(log_sig * log_weight, x)
    loss = rounded(rounded(1 - t, t) * x, t)  # ((1 - target).mul_(input): in place, in the target's dtype)
    loss = rounded(loss - log_sig, t)
    if weight is not None:
        check_fits_into(np.asarray(loss), weight)
        loss = rounded(loss * weight, t)
    return loss


def _bce_logits_vjp(ctx, g):
    x, t, weight, pos_weight = ctx.saved_tensors
    (reduction,) = ctx.attrs
    need = ctx.needs_input_grad
    may_write = not (STATE.grad_enabled or STATE.special)
    gx = _bce_logits_input_grad(g, x, t, weight, pos_weight, reduction, may_write) if need[0] else None
    return gx, _bce_logits_target_grad(g, x, t, weight, pos_weight, reduction) if need[1] else None


def _bce_logits_input_grad(g, x, t, weight, pos_weight, reduction: int, may_write: bool = False):
    """PyTorch's binary_cross_entropy_with_logits_backward. With grad mode off (a backward without create_graph,
    ``may_write``) it writes each step into the first step's result, which keeps that result's dtype: a bfloat16
    input's sigmoid less a float32 target stays bfloat16, rounded at each step."""
    s = sigmoid(x)
    if pos_weight is not None:
        pt = mul(pos_weight, t)
        first = add(pt, 1)  # PyTorch's (pt + 1 - t) * sigmoid(x) - pt
        in_place = may_write  # (in place, an input larger than pos_weight * target does not fit: refused)
        minus, times = (sub_, mul_) if in_place else (sub, mul)
        local = minus(times(minus(first, t), s), pt)
    else:
        # (torch subtracts in place where no graph is made: a target larger than the input does not fit)
        in_place = may_write
        local = (sub_ if in_place else sub)(s, t)
    return _bce_logits_scaled(local, g, weight, reduction, x._data.shape, in_place)  # (mean: over the input's numel)


def _bce_logits_jvp(args, outs, tangents):
    """PyTorch's formula: the input's and the target's backward applied to their tangents, unreduced, added, then
    reduced. Both backwards return the zero tensor for a zero tangent: a missing one's term is left out (under a
    recorded graph the sum still shows, with no edge for it)."""
    x, t, weight, pos_weight, reduction = args
    refuse_dual_operands((weight, pos_weight))
    t_x, t_t = tangents
    terms = (None if t_x is None else _bce_logits_input_grad(t_x, x, t, weight, pos_weight, 0),
             None if t_t is None else _bce_logits_target_grad(t_t, x, t, weight, pos_weight, 0))
    return apply_loss_reduction(zero_tensor_sum(terms, (x, t), args, tangents), reduction)


def _bce_logits_target_grad(g, x, t, weight, pos_weight, reduction: int):
    """PyTorch's binary_cross_entropy_with_logits_target_backward, in place where it is: the gradient lives in
    ``log_sigmoid(-x)``'s fresh (contiguous) result with ``pos_weight``, else in ``-x * g``'s."""
    from .margin_loss import log_sigmoid  # (margin_loss imports this module)

    if pos_weight is not None:
        out = mul_(sub_(log_sigmoid(neg(x)), mul_(log_sigmoid(x), pos_weight)), g)
    else:
        out = mul(neg(x), g)
    if weight is not None:
        out = mul_(out, weight)
    if reduction == 1:
        out = div_scalar_(out, t.numel())
    return out


def _bce_logits_scaled(local, g, weight, reduction: int, shape: tuple, in_place: bool = False):
    """PyTorch's order for both gradients: times the incoming gradient, times the weight, then (mean) divided
    by the element count, a Scalar division; ``in_place``: each step written into ``local`` (its dtype kept)."""
    times, divided = (mul_, div_scalar_) if in_place else (mul, div_scalar)
    out = times(local, g)
    if weight is not None:
        out = times(out, weight)
    if reduction == 1:
        out = divided(out, int(np.prod(shape)) if shape else 1)
    return out


binary_cross_entropy_with_logits_op = defop(
    "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
    "Tensor? pos_weight=None, "
    "int reduction=1) -> Tensor",
    _bce_logits_kernel,
    vjp=_bce_logits_vjp,
    jvp=_bce_logits_jvp,
    saves=("self", "target", "weight", "pos_weight"),
    attrs=("reduction",),
    differentiable=("self", "target"),
)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 1,
) -> Tensor:
    for position, (name, value) in enumerate((("weight", weight), ("pos_weight", pos_weight)), 3):
        if value is not None and not isinstance(value, Tensor):  # (torch's parser: a float pos_weight is refused)
            raise TypeError(f"binary_cross_entropy_with_logits(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")
    check_nondifferentiable("binary_cross_entropy_with_logits", "weight", weight)
    check_nondifferentiable("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    return binary_cross_entropy_with_logits_op(input, target, weight, pos_weight, reduction)


# ---- kl_div ------------------------------------------------------------------------------------------------


def kl_div(input: Tensor, target: Tensor, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Pointwise KL divergence as PyTorch composes it (xlogy for ``target * log(target)``)."""
    kinds = input._data.dtype.kind + target._data.dtype.kind  # (refused first, as ATen's kl_div does)
    if "c" in kinds:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if any(kind in "biu" for kind in kinds):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    # PyTorch's C++ evaluates the right operand of these products first, which numbers its nodes (and so the
    # order backward runs them in): build them in that order.
    if log_target:
        difference = sub(target, input)
        loss = mul(exp(target), difference)
    else:
        cross = mul(target, input)
        loss = sub(xlogy(target, target), cross)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return mean_all(loss)
    total = sum_op(loss, None, False, None)
    if reduction == "batchmean" and input._data.ndim != 0:
        return div(total, input._data.shape[0])
    return total
