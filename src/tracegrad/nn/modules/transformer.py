"""Transformer, its encoder and decoder stacks and their layers, as PyTorch builds them.

Each layer is self-attention (and, in the decoder, attention over the encoder's output) plus a two-layer
feed-forward block, with residual connections and LayerNorm after (``norm_first=False``) or before each block.

PyTorch has inference shortcuts (a fused encoder layer, nested tensors for padded batches) taken only in
evaluation without autograd. The fused layer computes what the general path computes, so it is not repeated
here; the nested-tensor one is visible, because padded positions come out as zeros before the final norm, and
:class:`TransformerEncoder` reproduces that result (see ``_nested_shortcut_applies``).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

from ..._factories import arange, full
from ..._state import STATE
from ..._tensor import Tensor
from ..._warnings import warn_once_at_caller
from .. import functional as F
from .. import init
from .._multihead_attention import canonical_mask, dtype_or_none
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _square_subsequent_mask(size: int, device=None, dtype=None) -> Tensor:
    """-inf above the diagonal, 0 elsewhere: position i may attend to positions up to i."""
    from ...ops.linalg import triu

    return triu(full((size, size), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _sequence_length(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _is_causal_mask(mask: Tensor | None, is_causal: bool | None, size: int | None) -> bool:
    """The ``is_causal`` hint: as given, or (when None) whether ``mask`` is exactly the square subsequent mask."""
    if is_causal is not None or mask is None:
        return is_causal is True
    causal = _square_subsequent_mask(size if size is not None else mask.size(-2), mask.device, mask.dtype)
    return mask.size() == causal.size() and bool((mask == causal).all())


def _activation_named(name: str) -> Callable[[Tensor], Tensor]:
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {name}")


def _clones(module: Module, count: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(count)])


def _add_feed_forward_and_norms(layer: Module, blocks: int, d_model: int, dim_feedforward: int, dropout: float,
                                eps: float, norm_first: bool, bias: bool, factory: dict) -> None:
    """A layer's feed-forward block, then one LayerNorm and one Dropout per block (2 in an encoder layer, 3 in a
    decoder layer), registered in PyTorch's order, which is the order of parameters() and the state dict."""
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
    layer.norm_first = norm_first
    for i in range(1, blocks + 1):
        setattr(layer, f"norm{i}", LayerNorm(d_model, eps=eps, bias=bias, **factory))
    for i in range(1, blocks + 1):
        setattr(layer, f"dropout{i}", Dropout(dropout))


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with dropout, a residual connection and LayerNorm."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None,
                 dtype=None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        _add_feed_forward_and_norms(self, 2, d_model, dim_feedforward, dropout, layer_norm_eps, norm_first, bias,
                                    factory)
        if isinstance(activation, str):
            activation = _activation_named(activation)
        # PyTorch's fused inference kernel knows these two activations (1 relu, 2 gelu, 0 neither)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        src_key_padding_mask = canonical_mask(src_key_padding_mask, "src_key_padding_mask", dtype_or_none(src_mask),
                                              "src_mask", src.dtype)
        src_mask = canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                  is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's output (``memory``) and a feed-forward block."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None,
                 dtype=None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, **factory)
        _add_feed_forward_and_norms(self, 3, d_model, dim_feedforward, dropout, layer_norm_eps, norm_first, bias,
                                    factory)
        self.activation = _activation_named(activation) if isinstance(activation, str) else activation

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                  is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, memory: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                   is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


_NESTED_TENSOR_PROTOTYPE = (
    "The PyTorch API of nested tensors is in prototype stage and will change in the near future. We recommend "
    "specifying layout=torch.jagged when constructing a nested tensor, as this layout receives active development, "
    "has better operator coverage, and works with torch.compile.")


def _why_no_nested_tensor(layer: Module) -> str:
    """Why PyTorch's encoder cannot use nested tensors with this layer ('' when it can), in its words."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    reasons = (
        (layer.norm_first, f"{name}.norm_first was True"),
        (not attn.batch_first, f"{name}.self_attn.batch_first was not True(use batch_first for better inference "
                               "performance)"),
        (not attn._qkv_same_embed_dim, f"{name}.self_attn._qkv_same_embed_dim was not True"),
        (attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not True"),
        (layer.norm1.eps != layer.norm2.eps, f"{name}.norm1.eps was not equal to {name}.norm2.eps"),
        (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"),
    )
    return next((why for failed, why in reasons if failed), "")


def _left_aligned(padding: Tensor) -> bool:
    """Every row keeps a prefix and pads the rest (True marks padding)."""
    keep = padding.logical_not()
    prefix = arange(keep.size(-1)).unsqueeze(0) < keep.sum(-1, keepdim=True)
    return bool((prefix == keep).all())


class TransformerEncoder(Module):
    """``num_layers`` copies of an encoder layer, then an optional final norm."""

    __constants__ = ["norm"]

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        src_key_padding_mask = canonical_mask(src_key_padding_mask, "src_key_padding_mask", dtype_or_none(mask),
                                              "mask", src.dtype)
        mask = canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        padded_rows = self._nested_shortcut_applies(src, mask, src_key_padding_mask)
        if padded_rows is not None:  # (PyTorch's nested tensor constructor warns, once a process)
            warn_once_at_caller("nested tensor prototype", _NESTED_TENSOR_PROTOTYPE)
        batch_first = self.layers[0].self_attn.batch_first
        is_causal = _is_causal_mask(mask, is_causal, _sequence_length(src, batch_first))
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if padded_rows is not None:
            output = output.masked_fill(padded_rows.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_shortcut_applies(self, src: Tensor, mask: Tensor | None, padding: Tensor | None) -> Tensor | None:
        """The padded positions (True) when PyTorch would run this call on nested tensors, else None.

        PyTorch drops padded positions in evaluation without autograd (batch-first, a left-aligned padding mask
        and no attention mask) and pads the result back with zeros; the other positions equal the general path's.
        """
        first = self.layers[0]
        if not self.use_nested_tensor or first.training or src.dim() != 3 or padding is None or mask is not None:
            return None
        rows = padding != 0  # the float mask holds -inf where padded
        if self.mask_check and not _left_aligned(rows):
            return None
        attn = first.self_attn
        arguments = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
                     first.norm1.weight, first.norm1.bias, first.norm2.weight, first.norm2.bias,
                     first.linear1.weight, first.linear1.bias, first.linear2.weight, first.linear2.bias)
        if STATE.grad_enabled and any(t is not None and t.requires_grad for t in arguments):
            return None
        return rows


class TransformerDecoder(Module):
    """``num_layers`` copies of a decoder layer, then an optional final norm."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        length = _sequence_length(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _is_causal_mask(tgt_mask, tgt_is_causal, length)
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                           memory_is_causal=memory_is_causal)
        return self.norm(output) if self.norm is not None else output


class Transformer(Module):
    """An encoder-decoder Transformer (Vaswani et al., 2017), with PyTorch's defaults and initialisation."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, custom_encoder: Any | None = None,
                 custom_decoder: Any | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **factory), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **factory), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A causal mask for a sequence of ``sz``: -inf above the diagonal, 0 on and below it."""
        return _square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
