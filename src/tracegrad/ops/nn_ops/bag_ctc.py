"""embedding_bag and ctc_loss: PyTorch's native ``_embedding_bag`` (EmbeddingBagBackward0) and ``_ctc_loss``
(CtcLossBackward0), with their backward operators and the public compositions around them.

``_embedding_bag`` returns PyTorch's four tensors (output, offset2bag, bag_size, max_indices); the last three
are non-differentiable and saved on the node for the backward. ``_ctc_loss`` returns the per-sample negative
log likelihood and the forward variables ``log_alpha``; its backward runs the beta recursion and applies
PyTorch's formula, which takes the gradient w.r.t. ``log_probs`` as if they came out of a log_softmax.

PyTorch has no derivative for the backward operators (``_embedding_bag_backward`` records
EmbeddingBagBackwardBackward0, which raises; the other two record its ``NotImplemented`` node) and no forward-mode
formula for the forward ones: all of it is mirrored, errors included. Checks run in PyTorch's order with its
messages (``EmbeddingBag.cpp``, ``LossCTC.cpp``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._arg_parser import refuse_as_torch
from ..._tensor import Tensor, _wrap
from ...autograd.forward_ad import has_tangent, not_implemented_jvp, refuse_unformulated
from ...backend import dtypes as _dt
from ...backend.dtypes import from_numpy_dtype, int64, promote_types, tensor_type_string
from .._util import unsupported
from ..bfloat16_in_float import seen_dtype
from ..creation import to_dtype
from ..pointwise import div, eq, where
from ..reductions import sum as sum_op
from ..reductions_extra import _mean_full
from ..registry import defop, defop_without_derivative, not_implemented
from ..views import squeeze, unsqueeze
from ._common import as_int, as_long, run_op

MODE_SUM, MODE_MEAN, MODE_MAX = 0, 1, 2

# ---- embedding_bag: checks and bag layout --------------------------------------------------------------------



def _check_types(name: str, a: np.ndarray, allowed: tuple[str, ...], pretty: str) -> None:
    if a.dtype.name not in allowed:
        raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar types: "
                           f"{pretty}; but got {tensor_type_string(a)} instead (while checking arguments for "
                           "embedding_bag)")


def _promote_indices(indices: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch casts indices and offsets to their common type before checking them (an int32 / int64 pair
    becomes int64; float offsets make the indices float, which the type check then rejects)."""
    if indices.dtype == offsets.dtype:
        return indices, offsets
    common = promote_types(from_numpy_dtype(indices.dtype), from_numpy_dtype(offsets.dtype)).np
    return indices.astype(common, copy=False), offsets.astype(common, copy=False)  # (a copy of bfloat16 kept)


def _check_bag_arguments(weight, indices, offsets, mode, psw, include_last_offset) -> None:
    if indices.ndim not in (1, 2):
        raise RuntimeError(f"input has to be a 1D or 2D Tensor, but got Tensor of dimension {indices.ndim}")
    if indices.ndim == 1 and offsets.ndim != 1:
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension {offsets.ndim}")
    if weight.ndim != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    _check_types("indices", indices, ("int64", "int32"), "Long, Int")
    _check_types("offsets", offsets, ("int64", "int32"), "Long, Int")
    _check_types("weight", weight, ("float16", "bfloat16", "float32", "float64"), "Half, BFloat16, Float, Double")
    if offsets.size:
        first, last = int(offsets.reshape(-1)[0]), int(offsets.reshape(-1)[-1])
        if first != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {first}\n[ {tensor_type_string(offsets.dtype)}{{}} ]")
        if last > indices.shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {indices.shape[0]} but got "
                               f"offsets[-1] of {last}")
    if mode not in (MODE_SUM, MODE_MEAN, MODE_MAX):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if psw is not None:
        if mode != MODE_SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        weight_dtype, psw_dtype = seen_dtype(weight), seen_dtype(psw)
        if psw_dtype != weight_dtype:
            raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as tensor for "
                               f"argument #1 'per_sample_weights'; but type {tensor_type_string(weight_dtype)} does "
                               f"not equal {tensor_type_string(psw_dtype)} (while checking arguments for "
                               "embedding_bag)")
        for cond, text in ((psw.ndim == 1, "per_sample_weights.value().dim() == 1"),
                           (psw.size == indices.size, "per_sample_weights.value().numel() == indices.numel()")):
            if not cond:
                raise RuntimeError(f"Expected {text} to be true, but got false.  (Could this error message be "
                                   "improved?  If so, please report an enhancement request to PyTorch.)")
    if include_last_offset and offsets.shape[0] < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")


def _fast_path(weight: np.ndarray, padding_idx: int) -> bool:
    """PyTorch's index_select fast path (reduced float types, unit-stride rows, no padding index): it reports
    bad indices in its own words and, in sum mode, never builds offset2bag."""
    return (weight.dtype.name in ("float32", "float16", "bfloat16") and padding_idx < 0
            and (weight.shape[1] <= 1 or weight.strides[1] == weight.itemsize))


def _check_index_range(flat: np.ndarray, num_weights: int, fast: bool) -> None:
    bad = np.flatnonzero((flat < 0) | (flat >= num_weights))
    if not bad.size:
        return
    pos = int(bad[0])
    if fast:
        raise RuntimeError(f"Index {pos} of input takes value {int(flat[pos])} which is not in the valid range "
                           f"[0, {num_weights})")
    raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {int(flat[pos])}")


def _offset2bag(starts: np.ndarray, n: int) -> np.ndarray:
    """The bag of each index position: a 1 at every bag start (n + 1 slots, so an offset equal to the input's
    length lands past the end), prefix-summed (PyTorch's make_offset2bag)."""
    marks = np.zeros(n + 1, dtype=starts.dtype)
    np.add.at(marks, starts.astype(np.intp), 1)
    marks[0] -= 1
    return np.cumsum(marks[:n], dtype=starts.dtype)


def _bag_sizes(starts: np.ndarray, n: int, bag_of: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
    """Entries per bag: the offset differences (the last bag runs to the input's end), or, with a padding
    index, the count of non-padding entries."""
    num_bags = starts.shape[0]
    if keep is not None:
        return np.bincount(bag_of[keep].astype(np.intp), minlength=num_bags)[:num_bags].astype(starts.dtype)
    sizes = np.empty(num_bags, dtype=starts.dtype)
    if num_bags:
        sizes[:-1] = starts[1:] - starts[:-1]
        sizes[-1] = n - starts[-1]
    return sizes


def _bag_max(rows: np.ndarray, idx: np.ndarray, bag_of: np.ndarray, num_bags: int, dtype) -> tuple:
    """Per bag and column, the largest row value and the index it came from. As PyTorch's loop: the first
    maximum wins a tie, and a NaN counts only as a bag's first entry (nothing compares greater than it)."""
    dim = rows.shape[1]
    out = np.zeros((num_bags, dim), dtype=rows.dtype)
    arg = np.zeros((num_bags, dim), dtype=dtype)
    if not rows.shape[0]:
        return out, arg
    order = np.argsort(bag_of, kind="stable")
    rows, idx, bag_of = rows[order], idx[order], bag_of[order]
    starts = np.flatnonzero(np.r_[True, bag_of[1:] != bag_of[:-1]])
    with np.errstate(invalid="ignore"):
        best = np.fmax.reduceat(rows, starts, axis=0)
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, rows.shape[0]]))
    position = np.where(rows == best[group], np.arange(rows.shape[0])[:, None], rows.shape[0])
    first = np.minimum.reduceat(position, starts, axis=0)
    first_nan = np.isnan(rows[starts])
    first = np.where(first_nan | (first == rows.shape[0]), starts[:, None], first)
    best = np.where(first_nan, rows[starts], best)
    bags = bag_of[starts].astype(np.intp)
    out[bags] = best
    arg[bags] = idx[first]
    return out, arg


# ---- embedding_bag: kernels ---------------------------------------------------------------------------------


def _embedding_bag_kernel(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                          per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    indices, offsets = _promote_indices(indices, offsets)
    _check_bag_arguments(weight, indices, offsets, mode, per_sample_weights, include_last_offset)
    flat = indices.reshape(-1)
    fast = _fast_path(weight, padding_idx)
    _check_index_range(flat, weight.shape[0], fast and mode != MODE_MAX)
    n = flat.shape[0]
    starts = offsets.reshape(-1)
    if include_last_offset:
        starts = starts[:-1]
    num_bags = starts.shape[0]
    bag_of = _offset2bag(starts, n)
    keep = flat != padding_idx if padding_idx >= 0 else None
    rows = weight[flat]
    if keep is not None:
        rows, kept_bags, kept_idx = rows[keep], bag_of[keep], flat[keep]
    else:
        kept_bags, kept_idx = bag_of, flat
    if mode == MODE_MAX:
        out, max_indices = _bag_max(rows, kept_idx, kept_bags, num_bags, flat.dtype)
        return out, bag_of, _bag_sizes(starts, n, bag_of, keep), max_indices
    if per_sample_weights is not None:
        psw = per_sample_weights.reshape(-1)
        rows = rows * (psw[keep] if keep is not None else psw)[:, None]
    if fast and include_last_offset and offsets.size and int(offsets.reshape(-1)[-1]) < n:
        # (PyTorch's fast sum and mean stop the last bag at the last offset, though the mean still divides by
        # the count to the input's end; max, and the path with a padding index, run to the end)
        summed = np.arange(n) < int(offsets.reshape(-1)[-1])
        rows, kept_bags = rows[summed], kept_bags[summed]
    out = np.zeros((num_bags, weight.shape[1]), dtype=weight.dtype)
    np.add.at(out, kept_bags.astype(np.intp), rows)
    if mode == MODE_MEAN:
        sizes = _bag_sizes(starts, n, bag_of, keep)
        out /= np.maximum(sizes, 1).astype(weight.dtype)[:, None]  # (an empty bag stays zero)
        return out, bag_of, sizes, sizes.copy()
    # sum: PyTorch leaves bag_size unset (zeros here) and copies it into max_indices; its fast path skips offset2bag
    sizes = np.zeros(num_bags, dtype=starts.dtype)
    return out, (bag_of[:0] if fast else bag_of), sizes, sizes.copy()


def _backward_offset2bag(indices, offsets, offset2bag) -> np.ndarray:
    """offset2bag, rebuilt from the offsets where the forward skipped it (PyTorch's sum fast path)."""
    n = indices.size
    if n and offset2bag.size == 0:
        return _offset2bag(offsets.reshape(-1).astype(np.int64), n)
    return offset2bag.reshape(-1)


def _embedding_bag_backward_kernel(grad, indices, offsets, offset2bag, bag_size, maximum_indices, num_weights,
                                   scale_grad_by_freq, mode, sparse, per_sample_weights=None, padding_idx=-1):
    # (a ``sparse=True`` gradient is returned dense: tracegrad has no sparse tensors)
    out = np.zeros((num_weights, grad.shape[1]), dtype=grad.dtype)
    if mode == MODE_MAX:
        nonempty = np.flatnonzero(bag_size.reshape(-1))
        cols = np.broadcast_to(np.arange(grad.shape[1]), (nonempty.size, grad.shape[1]))
        np.add.at(out, (maximum_indices[nonempty].astype(np.intp), cols), grad[nonempty])
        return out
    flat = indices.reshape(-1)
    bag_of = _backward_offset2bag(indices, offsets, offset2bag)
    keep = bag_of < grad.shape[0]  # (bags past the end: malformed offsets PyTorch does not check)
    if padding_idx >= 0:
        keep &= flat != padding_idx
    scale = np.ones(flat.shape[0], dtype=np.float64)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights.reshape(-1)
    if scale_grad_by_freq:
        scale = scale / _freq_divisors(flat, num_weights)
    if mode == MODE_MEAN:
        sizes = bag_size.reshape(-1)[np.where(keep, bag_of, 0)]
        scale = scale / np.where(sizes != 0, sizes, 1)
    rows = grad[bag_of[keep].astype(np.intp)] * scale[keep].astype(grad.dtype)[:, None]
    np.add.at(out, flat[keep].astype(np.intp), rows)
    return out


def _freq_divisors(flat: np.ndarray, num_weights: int) -> np.ndarray:
    """scale_grad_by_freq's divisor per entry, as PyTorch's CPU kernel computes it: the k-th distinct index (in
    sorted order) is divided by the count of ``sorted_indices[k]``, not by its own count (torch indexes the
    sorted indices by segment number); mirrored so gradients agree."""
    ordered = np.sort(flat).astype(np.intp)
    distinct = np.unique(ordered)
    divisor = np.ones(num_weights, dtype=np.float64)
    divisor[distinct] = np.bincount(ordered, minlength=num_weights)[ordered[:distinct.size]]
    return divisor[flat]


def _psw_backward_kernel(grad, weight, indices, offsets, offset2bag, mode, padding_idx=-1):
    if mode != MODE_SUM:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")
    flat = indices.reshape(-1)
    bag_of = _backward_offset2bag(indices, offsets, offset2bag).astype(np.intp)
    out = np.einsum("nd,nd->n", grad[bag_of], weight[flat]).astype(grad.dtype, copy=False)
    if padding_idx >= 0:
        out[flat == padding_idx] = 0
    return out


embedding_bag_backward = defop(
    "_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor offset2bag, Tensor bag_size, "
    "Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, int mode, bool sparse, "
    "Tensor? per_sample_weights, int padding_idx=-1) -> Tensor",
    _embedding_bag_backward_kernel,
    vjp=not_implemented("_embedding_bag_backward"),
    jvp=not_implemented_jvp("_embedding_bag_backward"),
    differentiable=("grad", "per_sample_weights"),
)

embedding_bag_per_sample_weights_backward = defop_without_derivative(
    "_embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices, Tensor offsets, "
    "Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor",
    _psw_backward_kernel,
    # PyTorch's NotImplemented node has edges only for inputs that require grad: the weight, in the usual case
    # of a cotangent that does not
    differentiable=("weight",),
)


def _embedding_bag_vjp(ctx, g, *_nondiff):
    indices, offsets, psw, weight, offset2bag, bag_size, max_indices = ctx.saved_tensors
    scale_grad_by_freq, mode, sparse, padding_idx = ctx.attrs
    need_weight, need_psw = ctx.needs_input_grad
    grad_weight = grad_psw = None
    if need_weight:
        grad_weight = run_op(embedding_bag_backward, g, indices, offsets, offset2bag, bag_size, max_indices,
                             ctx.input_shapes[0][0], scale_grad_by_freq, mode, sparse, psw, padding_idx)
    if need_psw:
        grad_psw = run_op(embedding_bag_per_sample_weights_backward, g, weight, indices, offsets, offset2bag, mode,
                          padding_idx)
    return grad_weight, grad_psw


embedding_bag_op = defop(
    "_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, "
    "bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) "
    "-> (Tensor, Tensor, Tensor, Tensor)",
    _embedding_bag_kernel,
    vjp=_embedding_bag_vjp,
    jvp=not_implemented_jvp("_embedding_bag"),
    saves=("indices", "offsets", "per_sample_weights", "weight", "result1", "result2", "result3"),
    save_if={"weight": "per_sample_weights"},  # read only by the per_sample_weights gradient
    attrs=("scale_grad_by_freq", "mode", "sparse", "padding_idx"),
    differentiable=("weight", "per_sample_weights"),
    nondiff_outputs=(1, 2, 3),
    meta=("weight_sym_argsize_0",),
    node_name="EmbeddingBagBackward0",
)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False,
                  mode: int = 0, sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> tuple:
    """``torch.embedding_bag``: checks and wraps ``padding_idx`` (None: no padding, -1 for the kernel), then the
    native op's four results: output, offset2bag, bag_size, max_indices. Arguments torch's parser refuses (nn's
    embedding_bag calls this with the user's flags) are refused in its words."""
    args = (weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
            padding_idx)
    try:
        for flag in (scale_grad_by_freq, sparse, include_last_offset):
            if flag.__class__ is not bool:  # (any object would do here; torch's parser takes a bool only)
                raise TypeError("embedding_bag(): a flag must be a bool")
        pad = -1
        if padding_idx is not None:
            num = weight.shape[0]
            if not -num <= as_long(padding_idx) < num:
                raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, "
                                   f"but got {padding_idx}")
            pad = padding_idx + num if padding_idx < 0 else padding_idx
        if not (weight._rg or has_tangent(weight)):
            # (PyTorch's composite calls _embedding_bag_forward_only then, which refuses a tangent in its name)
            refuse_unformulated("_embedding_bag_forward_only", (per_sample_weights,))
        return tuple(embedding_bag_op(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                                      per_sample_weights, include_last_offset, pad))
    except Exception:
        refuse_as_torch("embedding_bag", args, {})
        raise


# ---- ctc_loss ------------------------------------------------------------------------------------------------

_CTC = "ctc_loss_allocate_outputs"


def _check_ctc(log_probs, targets, input_lengths, target_lengths, blank) -> None:
    dtype = seen_dtype(log_probs)  # (AT_DISPATCH_FLOATING_TYPES: float and double, no Half or BFloat16)
    if dtype.char not in "fd" or dtype is _dt.bfloat16.np:
        raise unsupported("ctc_loss_cpu", dtype)
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional tensor for argument "
                           f"#1 'log_probs' (while checking arguments for {_CTC})")
    if not 1 <= targets.ndim < 3:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor for argument #2 "
                           f"'targets' (while checking arguments for {_CTC})")
    _, batch, labels = log_probs.shape
    if not 0 <= blank < labels:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {length} (while "
                               f"checking arguments for {_CTC})")
    longest = max(target_lengths, default=0)
    want = sum(target_lengths) if targets.ndim == 1 else batch
    if targets.shape[0] != want:
        raise RuntimeError(f"Expected tensor to have size {want} at dimension 0, but got size {targets.shape[0]} for "
                           f"argument #2 'targets' (while checking arguments for {_CTC})")
    if targets.ndim == 2 and targets.shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                           f"{targets.shape[1]} for argument #2 'targets' (while checking arguments for {_CTC})")
    for length in input_lengths:
        if length < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {length} (while "
                               f"checking arguments for {_CTC})")
        if length > log_probs.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {log_probs.shape[0]}, but got value "
                               f"{length} (while checking arguments for {_CTC})")


def _extended_targets(log_probs, targets, target_lengths, blank) -> np.ndarray:
    """Per sample, the target with a blank before, between and after its labels (l' of Graves et al.), padded
    with blanks to the longest: shape (batch, 2 * max_target_length + 1)."""
    batch, labels = log_probs.shape[1], log_probs.shape[2]
    lengths = np.asarray(target_lengths, dtype=np.int64)
    longest = int(lengths.max()) if batch else 0
    ext = np.full((batch, 2 * longest + 1), blank, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if batch else lengths
    for b in range(batch):
        row = targets[starts[b]:starts[b] + lengths[b]] if targets.ndim == 1 else targets[b, :lengths[b]]
        ext[b, 1:2 * lengths[b]:2] = row
    used = ext[:, 1::2]
    if used.size and (used.min() < 0 or used.max() >= labels):
        # (PyTorch reads out of bounds here; an error beats a silently wrong number)
        raise RuntimeError(f"ctc_loss: target labels must be in the range [0, {labels})")
    return ext


def _ctc_layout(log_probs, targets, input_lengths, target_lengths, blank) -> tuple:
    """The extended targets, the lengths as arrays, and which states s < 2 * target_length + 1 each sample has."""
    ext = _extended_targets(log_probs, targets, tuple(target_lengths), blank)
    in_len = np.asarray(tuple(input_lengths), dtype=np.int64).reshape(-1)
    tg_len = np.asarray(tuple(target_lengths), dtype=np.int64).reshape(-1)
    valid = np.arange(ext.shape[1])[None, :] < (2 * tg_len + 1)[:, None]  # (batch, s)
    return ext, in_len, tg_len, valid


def _log_add3(a, b, c):
    """log(e^a + e^b + e^c) as PyTorch writes it: shifted by the largest term, or by 0 when all are -inf."""
    top = np.maximum(np.maximum(a, b), c)
    top = np.where(top == -np.inf, 0, top)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.log(np.exp(a - top) + np.exp(b - top) + np.exp(c - top)) + top


def _shifted(x: np.ndarray, k: int, towards_end: bool) -> np.ndarray:
    """x moved k steps along its last axis, filled with -inf: x[s - k] (towards_end) or x[s + k]."""
    out = np.full_like(x, -np.inf)
    if k < x.shape[-1]:
        if towards_end:
            out[..., k:] = x[..., :-k]
        else:
            out[..., :-k] = x[..., k:]
    return out


def _ctc_kernel(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    _check_ctc(log_probs, targets, tuple(input_lengths), tuple(target_lengths), blank)
    steps, batch, _ = log_probs.shape
    dt = log_probs.dtype
    ext, in_len, tg_len, valid = _ctc_layout(log_probs, targets, input_lengths, target_lengths, blank)
    width = ext.shape[1]
    # s may come from s - 2 when it holds a label different from the one two states back
    skip = np.zeros_like(valid)
    skip[:, 2:] = ext[:, 2:] != ext[:, :-2]
    emit = np.take_along_axis(log_probs.transpose(1, 0, 2), np.broadcast_to(ext[:, None, :], (batch, steps, width)),
                              2)  # (batch, t, s): log_probs[t, b, l'[s]]
    alpha = np.full((batch, steps, width), -np.inf, dtype=dt)
    if steps:
        first = np.full((batch, width), -np.inf, dtype=dt)
        first[:, :2] = emit[:, 0, :2]
        first[~valid] = -np.inf
        alpha[:, 0] = np.where((in_len > 0)[:, None], first, -np.inf)
    for t in range(1, steps):
        prev = alpha[:, t - 1]
        two_back = np.where(skip, _shifted(prev, 2, True), -np.inf)
        row = _log_add3(prev, _shifted(prev, 1, True), two_back) + emit[:, t]
        alpha[:, t] = np.where(valid & (t < in_len)[:, None], row, -np.inf)
    nll = np.empty(batch, dtype=dt)
    for b in range(batch):
        if in_len[b] == 0:
            nll[b] = -0.0 if tg_len[b] == 0 else np.inf
            continue
        last = alpha[b, in_len[b] - 1]
        if tg_len[b] == 0:
            nll[b] = -last[0]
        else:
            l1, l2 = last[2 * tg_len[b]], last[2 * tg_len[b] - 1]
            top = max(l1, l2)
            top = 0 if top == -np.inf else top
            with np.errstate(divide="ignore"):  # (an unreachable target: log 0 = -inf, a loss of inf)
                nll[b] = -(np.log(np.exp(l1 - top) + np.exp(l2 - top)) + top)
    return nll, alpha


def _ctc_backward_kernel(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood, log_alpha,
                         blank, zero_infinity=False):
    steps, batch, labels = log_probs.shape
    dt = log_probs.dtype
    ext, in_len, tg_len, valid = _ctc_layout(log_probs, targets, input_lengths, target_lengths, blank)
    width = ext.shape[1]
    states = np.arange(width)
    skip = np.zeros_like(valid)  # s may come from s + 2 when their labels differ
    skip[:, :-2] = ext[:, :-2] != ext[:, 2:]
    lp_bt = log_probs.transpose(1, 0, 2)  # (batch, t, class)
    emit = np.take_along_axis(lp_bt, np.broadcast_to(ext[:, None, :], (batch, steps, width)), 2)
    # beta, from each sample's last input step backwards (eq. 10, 11 of Graves et al.)
    beta = np.full((batch, steps, width), -np.inf, dtype=dt)
    ends = (states[None, :] == 2 * tg_len[:, None]) | ((states[None, :] == 2 * tg_len[:, None] - 1) &
                                                        (tg_len > 0)[:, None])
    for t in range(steps - 1, -1, -1):
        start = np.where(ends, emit[:, t], -np.inf)
        if t + 1 < steps:
            nxt = beta[:, t + 1]
            two_ahead = np.where(skip, _shifted(nxt, 2, False), -np.inf)
            row = _log_add3(nxt, _shifted(nxt, 1, False), two_ahead) + emit[:, t]
            row = np.where(valid, row, -np.inf)
        else:
            row = start
        beta[:, t] = np.where((t == in_len - 1)[:, None], start, np.where((t < in_len - 1)[:, None], row, -np.inf))
    # per (t, class), log of the sum of alpha * beta over the states emitting that class (eq. 16)
    both = log_alpha + beta
    rows = np.arange(batch)
    top = np.full((batch, steps, labels), -np.inf, dtype=dt)
    for s in range(width):
        top[rows, :, ext[:, s]] = np.maximum(top[rows, :, ext[:, s]], both[:, :, s])
    shift = np.where(top == -np.inf, 0, top)
    total = np.zeros((batch, steps, labels), dtype=dt)
    for s in range(width):
        total[rows, :, ext[:, s]] += np.exp(both[:, :, s] - shift[rows, :, ext[:, s]])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        collected = np.log(total) + shift
        nll = neg_log_likelihood.reshape(batch, 1, 1)
        out = (np.exp(lp_bt) - np.exp(collected + nll - lp_bt)) * grad.reshape(batch, 1, 1).astype(dt)
    out[np.arange(steps)[None, :] >= in_len[:, None]] = 0
    if zero_infinity:
        out[neg_log_likelihood == np.inf] = 0
    return np.ascontiguousarray(out.transpose(1, 0, 2)).astype(dt, copy=False)


ctc_loss_backward = defop_without_derivative(
    "_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, "
    "Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False) -> Tensor",
    _ctc_backward_kernel,
    # edges only for inputs that require grad (see embedding_bag_per_sample_weights_backward): log_probs and the
    # forward's loss, whose gradient node is CtcLossBackward0
    differentiable=("log_probs", "neg_log_likelihood"),
)


def _ctc_vjp(ctx, g, _g_log_alpha=None):
    log_probs, targets, nll, log_alpha = ctx.saved_tensors
    input_lengths, target_lengths, blank, zero_infinity = ctx.attrs
    return run_op(ctc_loss_backward, g, log_probs, targets, input_lengths, target_lengths, nll, log_alpha, blank,
                  zero_infinity)


ctc_loss_op = defop(
    "_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, "
    "bool zero_infinity=False) -> (Tensor, Tensor)",
    _ctc_kernel,
    vjp=_ctc_vjp,
    jvp=not_implemented_jvp("_ctc_loss"),
    saves=("log_probs", "targets", "result0", "result1"),
    attrs=("input_lengths", "target_lengths", "blank", "zero_infinity"),
    differentiable=("log_probs",),
    nondiff_outputs=(1,),
    node_name="CtcLossBackward0",
)


def _lengths(value, name: str) -> tuple[int, ...]:
    if isinstance(value, Tensor):
        if value._data.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
        return tuple(int(v) for v in value._data.reshape(-1))
    return tuple(int(v) for v in value)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Sequence[int],
             target_lengths: Tensor | Sequence[int], blank: int = 0, reduction: int = 0,
             zero_infinity: bool = False) -> Tensor:
    """``torch.ctc_loss``: the native loss, then zero_infinity's ``where``, then the reduction (a mean divides
    each loss by its target length first), composed as PyTorch does so its graph shows the same nodes.

    (``reduction`` defaults to 0 as ``torch.ctc_loss`` behaves, whatever its signature claims.)"""
    blank = as_int(blank)  # (an int, and a bool flag: torch's parser refuses others, which would do here)
    if zero_infinity.__class__ is not bool:
        raise TypeError("ctc_loss(): zero_infinity must be a bool")
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss() received an invalid combination of arguments: input_lengths and "
                        "target_lengths must both be Tensors or both be tuples of ints")
    in_lens = _lengths(input_lengths, "input_lengths")
    tg_lens = _lengths(target_lengths, "target_lengths")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else unsqueeze(log_probs, 1)
    res = ctc_loss_op(lp, to_dtype(targets, int64), in_lens, tg_lens, blank, zero_infinity)[0]
    dt = res._data.dtype
    if zero_infinity:
        res = where(eq(res, _wrap(np.asarray(np.inf, dt))), _wrap(np.zeros((), dt)), res)
    if reduction == 1:
        lengths = np.maximum(np.asarray(tg_lens, dtype=np.int64), 1).astype(dt)
        return _mean_full(div(res, _wrap(lengths)))
    if reduction == 2:
        return sum_op(res)
    return res if batched else squeeze(res, 0)
