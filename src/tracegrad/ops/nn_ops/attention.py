"""scaled_dot_product_attention as PyTorch runs it on the CPU.

PyTorch picks one of two back ends per call, and the choice shows in the autograd graph:

- the fused kernel ``_scaled_dot_product_flash_attention_for_cpu`` (one
  ``ScaledDotProductFlashAttentionForCpuBackward0`` node that saves query, key, value, output and the row-wise
  logsumexp), for 4-D inputs with equal head sizes,
  no dropout and a mask that is 2-D or 4-D, broadcastable and does not require grad. It has no forward-mode
  formula and no double backward (the gradients' own node is a NotImplemented);
- otherwise the composite "math" path: scale query and the transposed key by sqrt(scale) each, ``matmul``,
  add the mask in place, ``_safe_softmax`` (rows with no admissible key give zeros, not NaN), dropout,
  ``matmul`` with value. Every step is an ordinary operator, so it differentiates to any order.

:func:`scaled_dot_product_attention` validates the inputs with PyTorch's messages, turns a boolean mask into an
additive one (-inf where False), then makes the same choice among the back ends ``torch.nn.attention.sdpa_kernel``
allows (``ENABLED_BACKENDS``), with PyTorch's warnings and error when the only one allowed cannot run.
"""

from __future__ import annotations

import math

import numpy as np

from ..._factories import ones, zeros
from ..._state import STATE
from ..._tensor import Tensor
from ..._warnings import warn_at_caller
from ...autograd.forward_ad import not_implemented_jvp
from ...backend.dtypes import bfloat16, bool_, cpp_type_name
from ..bfloat16_in_float import computes_bfloat16
from ..creation import zeros_like
from ..linalg_core import matmul
from ..pointwise import mul, sub
from ..registry import defop, defop_without_derivative
from ..scalar_fill import scalar_for
from ..scalar_overloads import mul_scalar
from ..shape_extra import masked_fill_scalar, repeat_interleave
from ..views import transpose
from .activation import _softmax_kernel, softmax_backward_data

# ---- _safe_softmax ------------------------------------------------------------------------------------------


def _safe_softmax_kernel(a, dim, dtype=None):
    with np.errstate(invalid="ignore"):  # -inf - -inf in the all -inf rows, zeroed below
        y = _softmax_kernel(a if dtype is None else a.astype(dtype), dim)
    if a.ndim and a.size:
        # A row whose every entry is -inf (a query no key may attend to) gives zeros instead of 0/0.
        y[np.all(a == -np.inf, axis=dim, keepdims=True).repeat(a.shape[dim], axis=dim)] = 0
    return y


def _safe_softmax_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    (dim,) = ctx.attrs
    return softmax_backward_data(g, y, dim, y.dtype)


def _safe_softmax_jvp(args, outs, tangents):
    # derivatives.yaml: result * (self_t - safe_logsumexp_jvp(self_p, self_t, {dim}, true))
    return mul(outs[0], sub(tangents[0], _safe_logsumexp_jvp(args[0], tangents[0], args[1])))


def _safe_logsumexp_jvp(self_p: Tensor, self_t: Tensor, dim: int) -> Tensor:
    """FunctionsManual's ``safe_logsumexp_jvp``: logsumexp's tangent, zeros in the rows that are all ``-inf``."""
    from ..pointwise import eq, where
    from ..reductions_extra import _all_dims, logsumexp_jvp

    lse_jvp = logsumexp_jvp(self_p, self_t, (dim,), True)
    masked_rows = _all_dims(eq(self_p, -math.inf), (dim,), True)
    return where(masked_rows, zeros_like(lse_jvp), lse_jvp)


safe_softmax = defop(
    "_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    _safe_softmax_kernel,
    vjp=_safe_softmax_vjp,
    jvp=_safe_softmax_jvp,
    saves=("result",),
    attrs=("dim",),
    node_name="SafeSoftmaxBackward0",
)


# ---- the fused CPU kernel ------------------------------------------------------------------------------------


def _default_scale(head_size: int, scale: float | None) -> float:
    if scale is not None:
        return scale
    return 1.0 / math.sqrt(head_size) if head_size else math.inf  # (C++'s 1.0 / 0.0 for a head size of 0)


def _grouped(k: np.ndarray, heads: int) -> np.ndarray:
    """Key or value heads repeated to serve ``heads`` query heads (grouped-query attention)."""
    return k if k.shape[1] == heads else np.repeat(k, heads // k.shape[1], axis=1)


# PyTorch's kernel takes the keys 512 at a time (an online softmax rescales what it has summed between blocks) and,
# in the backward, the queries in blocks that grow with the query length.
_KEY_BLOCK = 512


def _query_block(length: int) -> int:
    return 256 if length >= 768 else 64 if length >= 192 else 32


def _is_reduced(np_dtype: np.dtype) -> bool:
    return np_dtype == np.float16 or np_dtype is bfloat16.np


def _wide(a: np.ndarray) -> np.ndarray:
    """Half and bfloat16 computed in float, PyTorch's accumulation type for them."""
    return a.astype(np.float32) if _is_reduced(a.dtype) else a


def _as_stored(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``values`` as a buffer of ``dtype`` holds them: PyTorch's kernel keeps the softmax weights (and their
    gradients) it multiplies, and the gradients it accumulates, in the inputs' dtype, rounding half and bfloat16."""
    return values.astype(dtype).astype(values.dtype) if _is_reduced(dtype) else values


def _scores(q, k, is_causal, mask, scale, rows: slice, keys: slice):
    """``scale * q @ k^T + mask`` for the queries ``rows`` and keys ``keys``, -inf above the causal diagonal.
    PyTorch's kernel writes the causal -inf before it scales: a scale <= 0 makes those entries +inf or NaN."""
    scores = np.matmul(q[..., rows, :], np.swapaxes(k[..., keys, :], -1, -2))
    if is_causal:
        query_at = np.arange(q.shape[-2])[rows, None]
        scores = np.where(np.arange(k.shape[-2])[keys] <= query_at, scores, -np.inf)
    scores = scores * scale
    if mask is not None:
        scores = scores + np.broadcast_to(mask, (*q.shape[:-1], k.shape[-2]))[..., rows, keys]
    return scores


def _key_blocks(length: int):
    return (slice(n, min(n + _KEY_BLOCK, length)) for n in range(0, length, _KEY_BLOCK))


def _flash_kernel(query, key, value, dropout_p=0.0, is_causal=False, attn_mask=None, scale=None):
    q, k, v = _wide(query), _grouped(_wide(key), query.shape[1]), _grouped(_wide(value), query.shape[1])
    mask = None if attn_mask is None else attn_mask.astype(q.dtype)
    scale = _default_scale(q.shape[-1], scale)
    row_max = np.full((*q.shape[:-1], 1), -np.inf, dtype=q.dtype)
    row_sum = np.zeros_like(row_max)
    summed = np.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype)
    every_row = slice(None)
    for keys in _key_blocks(k.shape[-2]):
        scores = _scores(q, k, is_causal, mask, scale, every_row, keys)
        new_max = np.maximum(row_max, scores.max(axis=-1, keepdims=True))
        seen = new_max != -np.inf  # (a row with no admissible key yet keeps its zeros)
        shift = np.where(seen, new_max, 0)
        weights = np.exp(scores - shift)
        rescale = np.where(seen, np.exp(row_max - shift), 1)
        row_sum = np.where(seen, weights.sum(axis=-1, keepdims=True) + rescale * row_sum, row_sum)
        row_max = np.where(seen, new_max, row_max)
        # the weights are not yet divided by their sum, and are rounded to half/bfloat16 for the product
        summed = np.matmul(_as_stored(weights, query.dtype), v[..., keys, :]) + summed * rescale
    row_max[row_max == -np.inf] = 0  # a fully masked row: zeros out, logsumexp 0 (PyTorch's)
    row_sum[row_sum == 0] = 1
    # PyTorch allocates the output like the query (same strides: a query transposed from (L, N, H, E) memory
    # gives an output that reshapes to (L * N, H * E) without a copy) and the logsumexp in (N, L, H) memory
    out = np.empty_like(query, order="K")
    out[...] = summed * (1 / row_sum)
    lse = row_max + np.log(row_sum)
    b, h, length = lse.shape[:3]
    row_lse = np.empty((b, length, h), dtype=lse.dtype).transpose(0, 2, 1)
    row_lse[...] = lse[..., 0]
    return out, row_lse  # logsumexp stays float for half and bfloat16 input, as PyTorch's


def _flash_backward_kernel(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask=None,
                           scale=None):
    dtype = query.dtype
    q, g, k, v = _wide(query), _wide(grad_out), _wide(key), _wide(value)
    scale = _default_scale(q.shape[-1], scale)
    mask = None if attn_mask is None else np.broadcast_to(attn_mask.astype(q.dtype), (*q.shape[:-1], k.shape[-2]))
    lse = logsumexp.astype(q.dtype)[..., None]
    # softmax backward: probs * (grad_probs - sum(grad_probs * probs)), with that row sum read off the output
    row_dot = (g * _wide(out)).sum(axis=-1, keepdims=True)
    grad_q, grad_k, grad_v = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    # query head j attends with key head j // group; a shared key head sums its group's gradients head after head
    group = q.shape[1] // k.shape[1]
    # (the blocks only change half and bfloat16 sums, rounded after each: float ones take all queries at once)
    block = _query_block(q.shape[-2]) if _is_reduced(dtype) else max(q.shape[-2], 1)
    for member in range(group):
        heads = slice(member, None, group)
        for m in range(0, q.shape[-2], block):
            rows = slice(m, m + block)
            for keys in _key_blocks(k.shape[-2]):
                _backward_block(q[:, heads], g[:, heads], k, v, None if mask is None else mask[:, heads],
                                lse[:, heads], row_dot[:, heads], (grad_q[:, heads], grad_k, grad_v),
                                (is_causal, scale, rows, keys, dtype))
    return tuple(_length_major(grad, t.dtype) for grad, t in zip((grad_q, grad_k, grad_v), (query, key, value)))


def _backward_block(q, g, k, v, mask, lse, row_dot, grads, where) -> None:
    """The gradients' parts from the queries ``rows`` and keys ``keys``, added into ``grads`` (query, key, value)
    in place, each sum rounded to the inputs' ``dtype`` as PyTorch's buffers of that dtype round it."""
    is_causal, scale, rows, keys, dtype = where
    grad_q, grad_k, grad_v = grads
    probs = np.exp(_scores(q, k, is_causal, mask, scale, rows, keys) - lse[..., rows, :])
    grad_v[..., keys, :] = _as_stored(
        grad_v[..., keys, :] + np.matmul(np.swapaxes(_as_stored(probs, dtype), -1, -2), g[..., rows, :]), dtype)
    grad_probs = np.matmul(g[..., rows, :], np.swapaxes(v[..., keys, :], -1, -2))
    grad_scores = _as_stored(probs * (grad_probs - row_dot[..., rows, :]), dtype)
    grad_q[..., rows, :] = _as_stored(np.matmul(grad_scores, k[..., keys, :]) * scale + grad_q[..., rows, :], dtype)
    grad_k[..., keys, :] = _as_stored(
        np.matmul(np.swapaxes(grad_scores, -1, -2), q[..., rows, :]) * scale + grad_k[..., keys, :], dtype)


def _length_major(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``values`` (batch, heads, length, embed) in a fresh buffer of (batch, length, heads, embed) memory: PyTorch's
    fused backward allocates each gradient as zeros of the inputs' transpose(1, 2) sizes, transposed back, whatever
    the inputs' layouts."""
    b, h, length, e = values.shape
    out = np.empty((b, length, h, e), dtype=dtype).transpose(0, 2, 1, 3)
    out[...] = values
    return out


_BACKWARD_NAME = "_scaled_dot_product_flash_attention_for_cpu_backward"
# PyTorch has no derivative for its backward: gradients taken with create_graph=True hang off a NotImplemented
# node that raises when reached.
flash_attention_backward = defop_without_derivative(
    f"{_BACKWARD_NAME}(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out, Tensor logsumexp, "
    "float dropout_p, bool is_causal, *, Tensor? attn_mask=None, float? scale=None) -> (Tensor, Tensor, Tensor)",
    computes_bfloat16(_flash_backward_kernel),  # (bfloat16 rounded where PyTorch's kernel rounds it)
    differentiable=("grad_out", "query", "key", "value"),
)


def _flash_vjp(ctx, g_out, _g_logsumexp=None):
    query, key, value, out, logsumexp, attn_mask = ctx.saved_tensors
    dropout_p, is_causal, scale = ctx.attrs
    if g_out is None:
        g_out = zeros_like(out)
    return flash_attention_backward(g_out, query, key, value, out, logsumexp, dropout_p, is_causal,
                                    attn_mask=attn_mask, scale=scale)


_FLASH_NAME = "_scaled_dot_product_flash_attention_for_cpu"
flash_attention = defop(
    f"{_FLASH_NAME}(Tensor query, Tensor key, Tensor value, float dropout_p=0.0, bool is_causal=False, *, "
    "Tensor? attn_mask=None, float? scale=None) -> (Tensor output, Tensor logsumexp)",
    computes_bfloat16(_flash_kernel),
    vjp=_flash_vjp,
    jvp=not_implemented_jvp(_FLASH_NAME),
    saves=("query", "key", "value", "result0", "result1", "attn_mask"),
    attrs=("dropout_p", "is_causal", "scale"),
    differentiable=("query", "key", "value"),
    nondiff_outputs=(1,),
    node_name="ScaledDotProductFlashAttentionForCpuBackward0",
)


# ---- choosing the back end ------------------------------------------------------------------------------------

_FLASH_DTYPES = ("float32", "float64", "float16", "bfloat16")

# Which back ends may run (torch.nn.attention.sdpa_kernel switches them). On the CPU only these two exist; the
# others can be switched on and off, but never run here.
ENABLED_BACKENDS = {"math": True, "flash_attention": True, "efficient_attention": True, "cudnn_attention": True,
                    "overrideable": True}


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(n) for n in t.shape) + "]"


def _mask_refusal(mask: Tensor, query: Tensor, key: Tensor) -> str | None:
    if mask.requires_grad:
        return ""  # refused without a reason of its own
    shape_hint = ("Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1}); 4d - "
                  "({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1})")
    if mask.shape[-2] not in (query.shape[2], 1) or mask.shape[-1] not in (key.shape[2], 1):
        return shape_hint
    if mask.ndim == 2:
        return None
    if mask.ndim == 4 and mask.shape[0] in (1, query.shape[0]) and mask.shape[1] in (1, query.shape[1]):
        return None
    return shape_hint


def _heads_refusal(query: Tensor, key: Tensor, value: Tensor, enable_gqa: bool) -> str | None:
    broadcast_hint = "To broadcast dense inputs, try using unsqueeze and expand_to before passing them into the kernel."
    if not query.shape[0] == key.shape[0] == value.shape[0]:
        return (f"For dense inputs, both fused kernels require query, key and value to have the same batch_size. "
                f"Query.sizes(): {_sizes(query)}, Key.sizes(): {_sizes(key)}, Value.sizes(): {_sizes(value)} "
                f"instead. {broadcast_hint}")
    q_heads, k_heads, v_heads = query.shape[1], key.shape[1], value.shape[1]
    if q_heads == k_heads == v_heads:
        return None
    if not enable_gqa:
        return (f"For dense input, both fused kernels require query, key and value to have the same num_heads. "
                f"Query.sizes(): {_sizes(query)}, Key sizes(): {_sizes(key)}, Value sizes(): {_sizes(value)} "
                f"instead. {broadcast_hint}")
    if k_heads != v_heads or q_heads % k_heads:
        return (f"The number of heads in key/value must divide number of heads in query.Got input Key sizes(): "
                f"{k_heads}, Value sizes(): {v_heads}, Query sizes(): {q_heads} instead.")
    return None


def fused_kernel_refusal(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, dropout_p: float,
                         enable_gqa: bool) -> str | None:
    """None when PyTorch's CPU selection can run the fused kernel on these inputs; otherwise the reason it
    gives (its first failing check, in its order and words; "" where it gives none)."""
    tensors = (query, key, value)
    if dropout_p > 0.0:
        return "Both fused kernels do not support non-zero dropout."
    if not all(t.ndim == 4 for t in tensors):
        return (f"All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: "
                f"{query.ndim}, Key dim: {key.ndim}, Value dim: {value.ndim} instead.")
    reason = _heads_refusal(query, key, value, enable_gqa)
    if reason is None and mask is not None:
        reason = _mask_refusal(mask, query, key)
    if reason is not None:
        return reason
    if not query.shape[-1] == key.shape[-1] == value.shape[-1]:
        return (f"Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): "
                f"{query.shape[-1]}, Key.size(-1): {key.shape[-1]}, Value.size(-1): {value.shape[-1]} instead.")
    if query.shape[2] == 0 or key.shape[2] == 0:
        return ""
    strides = [t.stride()[-1] for t in tensors]
    if any(t.shape[-1] != 1 and st != 1 for t, st in zip(tensors, strides, strict=True)):
        return (f"All fused kernels require the last dimension of the input to have stride 1. Got Query.stride(-1): "
                f"{strides[0]}, Key.stride(-1): {strides[1]}, Value.stride(-1): {strides[2]}")
    if any(t._data.dtype.name not in _FLASH_DTYPES for t in tensors):
        q, k, v = (cpp_type_name(t._data.dtype) for t in tensors)
        return (f"Expected query, key and value to all be of dtype: {{Float, Double, BFloat16, Half}}. Got Query "
                f"dtype: {q}, Key dtype: {k}, and Value dtype: {v} instead.")
    return None


# ---- the math path ---------------------------------------------------------------------------------------------


def _additive_mask(mask: Tensor, dtype) -> Tensor:
    """A boolean mask as PyTorch converts it: zeros of the query's dtype, -inf where the mask is False. -inf is
    converted to that dtype first (refused for an integer one), before masked_fill's own dtype dispatch."""
    bias = zeros_like(mask, dtype=dtype)
    scalar_for(-math.inf, bias._data.dtype)
    return masked_fill_scalar(bias, mask.logical_not(), -math.inf)


def _repeat_groups(query: Tensor, key: Tensor, value: Tensor, enable_gqa: bool) -> tuple[Tensor, Tensor]:
    if not enable_gqa:
        return key, value
    q_heads, k_heads, v_heads = query.shape[-3], key.shape[-3], value.shape[-3]
    if q_heads == k_heads == v_heads:
        return key, value
    if q_heads % k_heads or q_heads % v_heads:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return (repeat_interleave(key, q_heads // k_heads, -3), repeat_interleave(value, q_heads // v_heads, -3))


def math_attention(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, dropout_p: float,
                   is_causal: bool, scale: float | None, enable_gqa: bool) -> Tensor:
    """PyTorch's _scaled_dot_product_attention_math, step for step (its graph is PyTorch's)."""
    from .misc import aten_dropout

    negative = scale is not None and scale < 0
    factor = math.sqrt(_default_scale(query.shape[-1], abs(scale) if negative else scale))
    # query and key are each scaled by sqrt(scale) before the product, for range (PyTorch's comment)
    scaled_query = mul_scalar(query, 0.0 - factor if negative else factor)
    if is_causal:
        if mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        causal = ones(query.shape[-2], key.shape[-2], dtype=bool_).tril()
        mask = _additive_mask(causal, query.dtype)
    key, value = _repeat_groups(query, key, value, enable_gqa)
    attn = matmul(scaled_query, mul_scalar(transpose(key, -2, -1), factor))
    if mask is not None:
        attn = attn.add_(mask)
    attn = safe_softmax(attn, -1)
    if dropout_p > 0.0:
        # (ATen's dropout, whose refusal of a bad p is a RuntimeError, not nn.functional's ValueError)
        attn = aten_dropout(attn, dropout_p, True, feature=False, alpha=False, inplace=False)
    return matmul(attn, value)


# ---- the public function -------------------------------------------------------------------------------------


def _validate(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None) -> None:
    dtypes = [t._data.dtype for t in (query, key, value)]
    if not dtypes[0] == dtypes[1] == dtypes[2]:
        q, k, v = (cpp_type_name(d) for d in dtypes)
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: {q} "
                           f"key.dtype: {k} and value.dtype: {v} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if mask is not None and mask._data.dtype not in (np.bool_, dtypes[0]):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {cpp_type_name(mask._data.dtype)} and  query.dtype: "
                           f"{cpp_type_name(dtypes[0])} instead.")


def _empty_attention(query: Tensor, key: Tensor, value: Tensor, shape: tuple) -> Tensor:
    """PyTorch's answer where the output or the values are empty: zeros, joined to every input's graph by
    ``(query.sum() + key.sum() + value.sum()) * 0`` (an AddBackward0 over MulBackward1, zero gradients)."""
    link = mul_scalar(query.sum() + key.sum() + value.sum(), 0)
    return zeros(shape, dtype=query.dtype) + link


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value, with PyTorch's CPU back-end choice (see the module)."""
    if STATE.profiler is not None:
        return STATE.profiler.composite(
            "aten::scaled_dot_product_attention", (query, key, value),
            lambda *qkv: _attention(*qkv, attn_mask, dropout_p, is_causal, scale, enable_gqa))
    return _attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa) -> Tensor:
    _validate(query, key, value, attn_mask)
    shape = (*query.shape[:-1], value.shape[-1])
    if math.prod(shape) == 0 or value._data.size == 0:
        return _empty_attention(query, key, value, shape)
    mask = attn_mask
    if mask is not None and mask._data.dtype == np.bool_:
        mask = _additive_mask(mask, query.dtype)
    refusal = fused_kernel_refusal(query, key, value, mask, dropout_p, enable_gqa)
    if refusal is None and key.ndim >= 2 and value.ndim >= 2 and key.shape[-2] != value.shape[-2]:
        # PyTorch's fused kernel reads as many value rows as there are keys and says nothing; the math path's
        # matrix product refuses the mismatch in PyTorch's words, so that is the answer given here
        refusal = ""
    flash, math_path = ENABLED_BACKENDS["flash_attention"], ENABLED_BACKENDS["math"]
    if flash and refusal is None:
        return flash_attention(query, key, value, dropout_p, is_causal, attn_mask=mask, scale=scale)[0]
    if math_path:
        return math_attention(query, key, value, mask, dropout_p, is_causal, scale, enable_gqa)
    if flash:  # only the fused kernel is allowed, and it cannot run: say why, as PyTorch does
        warn_at_caller("Flash attention kernel not used because:", UserWarning)  # (TORCH_WARNs, at the caller)
        if refusal:
            warn_at_caller(refusal, UserWarning)
        raise RuntimeError("No available kernel.  Aborting execution.")
    raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to turning "
                       "off both the math kernel and the fused kernels.")
