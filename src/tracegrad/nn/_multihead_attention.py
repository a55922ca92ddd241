"""``nn.functional.multi_head_attention_forward``: the computation behind ``nn.MultiheadAttention``.

PyTorch writes it in Python from ordinary operators; this follows the same steps with the same operators, so
the autograd graph, the saved tensors and the checks (with their exception types and words) are PyTorch's:
project (one packed linear for self-attention, split weights otherwise), add bias_k/bias_v and a zero key,
fold the key padding mask into the attention mask, then either the explicit ``baddbmm``/softmax/``bmm`` path
that also returns the attention weights (``need_weights=True``), or ``scaled_dot_product_attention``.

Sequence-first layout throughout: query (L, N, E), key and value (S, N, E), or unbatched (L, E) and (S, E).
"""

from __future__ import annotations

import math
import warnings

from .._factories import zeros
from .._tensor import Tensor
from ..ops.nn_ops.attention import scaled_dot_product_attention


def _check_shapes(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                  attn_mask: Tensor | None, num_heads: int) -> bool:
    """Whether the call is batched, after PyTorch's shape checks (AssertionError, as PyTorch raises)."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                                 f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def canonical_mask(mask: Tensor | None, mask_name: str, other_type, other_name: str, target_type,
                   check_other: bool = True) -> Tensor | None:
    """A boolean mask (True = masked out) as an additive float mask of ``target_type``; float masks pass."""
    if mask is None:
        return None
    if mask.dtype.name != "bool" and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=2)
    if mask.is_floating_point():
        return mask
    from ..ops.creation import zeros_like

    return zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))


def dtype_or_none(mask: Tensor | None):
    return None if mask is None else mask.dtype


def _packed_projection(query: Tensor, key: Tensor, value: Tensor, weight: Tensor,
                       bias: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """q, k and v from one (3E, E) weight: a single linear when query, key and value are one tensor, two when
    key and value are (encoder-decoder attention), three otherwise."""
    from .functional import linear

    embed = query.size(-1)
    if key is value and query is key:
        packed = linear(query, weight, bias)
        # (3, E) rather than (E, 3), so that the three projections come out as chunk() would cut them
        packed = packed.unflatten(-1, (3, embed)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return packed[0], packed[1], packed[2]
    if key is value:
        w_q, w_kv = weight.split([embed, embed * 2])
        b_q, b_kv = (None, None) if bias is None else bias.split([embed, embed * 2])
        projected_kv = linear(key, w_kv, b_kv)
        projected_kv = projected_kv.unflatten(-1, (2, embed)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return linear(query, w_q, b_q), projected_kv[0], projected_kv[1]
    w_q, w_k, w_v = weight.chunk(3)
    b_q, b_k, b_v = (None, None, None) if bias is None else bias.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _separate_projection(query: Tensor, key: Tensor, value: Tensor, weights: tuple[Tensor, Tensor, Tensor],
                         bias: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    from .functional import linear

    e_q, e_k, e_v = query.size(-1), key.size(-1), value.size(-1)
    for name, w, want in zip(("query", "key", "value"), weights, ((e_q, e_q), (e_q, e_k), (e_q, e_v)), strict=True):
        if tuple(w.shape) != want:
            raise AssertionError(f"expecting {name} weights shape of {want}, but got {w.shape}")
    biases = (None, None, None) if bias is None else bias.chunk(3)
    for name, b in zip(("query", "key", "value"), biases, strict=True):
        if b is not None and tuple(b.shape) != (e_q,):
            raise AssertionError(f"expecting {name} bias shape of {(e_q,)}, but got {b.shape}")
    return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases, strict=True))


def _checked_attn_mask(attn_mask: Tensor, tgt_len: int, src_len: int, batch_heads: int) -> Tensor:
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (batch_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(batch_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _static(given: Tensor, batch_heads: int, head_dim: int, name: str) -> Tensor:
    if given.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {given.size(0)}")
    if given.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {given.size(2)}")
    return given


def _pad_key_axis(mask: Tensor | None) -> Tensor | None:
    """One more (unmasked) key column, for an appended bias_k or zero key."""
    from .functional import pad

    return None if mask is None else pad(mask, (0, 1))


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
    add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
    training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
    static_v: Tensor | None = None, average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention of sequence-first inputs; returns (output, weights or None)."""
    from .. import baddbmm, bmm, cat
    from .functional import dropout, linear, softmax

    is_batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", dtype_or_none(attn_mask), "attn_mask",
                                      query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention builds the causal mask itself
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer just causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        for name, w in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        q, k, v = _separate_projection(query, key, value, (q_proj_weight, k_proj_weight, v_proj_weight),
                                       in_proj_bias)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _packed_projection(query, key, value, in_proj_weight, in_proj_bias)
    batch_heads = bsz * num_heads
    if attn_mask is not None:
        attn_mask = _checked_attn_mask(attn_mask, tgt_len, key.shape[0], batch_heads)

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_key_axis(attn_mask), _pad_key_axis(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads become part of the batch: (N * heads, length, head_dim)
    q = q.view(tgt_len, batch_heads, head_dim).transpose(0, 1)
    k = (k.view(k.shape[0], batch_heads, head_dim).transpose(0, 1) if static_k is None
         else _static(static_k, batch_heads, head_dim, "static_k"))
    v = (v.view(v.shape[0], batch_heads, head_dim).transpose(0, 1) if static_v is None
         else _static(static_v, batch_heads, head_dim, "static_v"))
    if add_zero_attn:
        k = cat([k, zeros((batch_heads, 1, head_dim), dtype=k.dtype, device=k.device)], dim=1)
        v = cat([v, zeros((batch_heads, 1, head_dim), dtype=v.dtype, device=v.device)], dim=1)
        attn_mask, key_padding_mask = _pad_key_axis(attn_mask), _pad_key_axis(key_padding_mask)
    src_len = k.size(1)

    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(batch_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        scaled_q = q * math.sqrt(1.0 / float(q.shape[-1]))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = baddbmm(attn_mask, scaled_q, k.transpose(-2, -1))
        else:
            weights = bmm(scaled_q, k.transpose(-2, -1))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        output = bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        output = linear(output, out_proj_weight, out_proj_bias)
        output = output.view(tgt_len, bsz, output.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            output, weights = output.squeeze(1), weights.squeeze(0)
        return output, weights

    if attn_mask is not None:  # (1, L, S) broadcasts over batch and heads; otherwise one per batch and head
        attn_mask = (attn_mask.unsqueeze(0) if attn_mask.size(0) == 1 and attn_mask.dim() == 3
                     else attn_mask.view(bsz, num_heads, -1, src_len))
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    output = output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    output = linear(output, out_proj_weight, out_proj_bias)
    output = output.view(tgt_len, bsz, output.size(1))
    if not is_batched:
        output = output.squeeze(1)
    return output, None
