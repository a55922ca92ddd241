"""``torch.conv_tbc``: a 1-d convolution over (time, batch, channel) input, as PyTorch's CPU kernel runs it.

The output starts as the bias and, for each kernel tap ``k``, gains one matrix product of a time-shifted slice
of the input with ``weight[k]``. PyTorch's backward is a function of ordinary operators (zeros, narrowed views
updated in place by ``addmm_``, a copy for the bias), so under create_graph its graph is made of CopySlices and
view nodes; the rule below runs the same operators in the same order.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ...autograd.forward_ad import not_implemented_jvp
from ...memory_format import contiguous_format
from ..creation import zeros_like
from ..registry import defop
from ..views import VIEW_REFUSED, viewed_as
from ._common import type_name


def _taps(ilen: int, kw: int, pad: int) -> Iterator[tuple[int, int, int, int]]:
    """(k, input shift, output shift, length) of each kernel tap that overlaps the output."""
    olen = ilen - kw + 1 + pad * 2
    real_pad = int((olen - ilen + kw - 1) / 2)  # (C++ division: truncated towards zero)
    for k in range(kw):
        i_shift, o_shift = max(0, k - real_pad), max(0, real_pad - k)
        length = min(ilen + real_pad - k, olen) - o_shift
        if length > 0:
            yield k, i_shift, o_shift, length


def _conv_tbc_kernel(x, w, b, pad):
    if x.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if w.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if b.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    ilen, batch, planes = x.shape
    if planes != w.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if w.shape[2] != b.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    olen = ilen - w.shape[0] + 1 + pad * 2
    shape = (olen, batch, w.shape[2])
    if olen < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {olen}: [{', '.join(map(str, shape))}]")
    if x.dtype != w.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {type_name(x.dtype)} and "
                           f"{type_name(w.dtype)}")
    out = np.empty(shape, dtype=x.dtype)
    out[...] = b
    for k, i_shift, o_shift, length in _taps(ilen, w.shape[0], pad):
        rows = _as_rows(x[i_shift:i_shift + length], length * batch, planes)
        out[o_shift:o_shift + length] += (rows @ w[k]).reshape(length, batch, -1)
    return out


def _as_rows(a: np.ndarray, rows: int, planes: int) -> np.ndarray:
    """PyTorch's ``input.narrow(...).view(rows, planes)``: refused, in its words, when it would need a copy."""
    flat = viewed_as(a, (rows, planes))
    if flat is None:
        raise RuntimeError(VIEW_REFUSED)
    return flat


def _conv_tbc_vjp(ctx, g):
    """PyTorch's conv_tbc_backward, operator for operator."""
    x, w, b = ctx.saved_tensors
    (pad,) = ctx.attrs
    ilen, batch, in_planes = x.shape
    out_planes = w.shape[2]
    taps = list(_taps(ilen, w.shape[0], pad))
    d_input = zeros_like(x, memory_format=contiguous_format)  # (PyTorch's LEGACY_CONTIGUOUS_MEMORY_FORMAT: all 3)
    for k, i_shift, o_shift, length in taps:
        rows = length * batch
        d_input.narrow(0, i_shift, length).view(rows, in_planes).addmm_(
            g.narrow(0, o_shift, length).view(rows, out_planes), w[k].t())
    d_weight = zeros_like(w, memory_format=contiguous_format)
    for k, i_shift, o_shift, length in taps:
        rows = length * batch
        d_weight[k].addmm_(x.narrow(0, i_shift, length).view(rows, in_planes).t(),
                           g.narrow(0, o_shift, length).view(rows, out_planes))
    d_bias = zeros_like(b, memory_format=contiguous_format)
    d_bias.copy_(g.sum(0, False).sum(0))
    return d_input, d_weight, d_bias


conv_tbc = defop("conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor", _conv_tbc_kernel,
                 vjp=_conv_tbc_vjp, jvp=not_implemented_jvp("conv_tbc"), saves=("self", "weight", "bias"),
                 attrs=("pad",), node_name="ConvTbcBackward0", complex_grad=False)  # (real-only derivative)
