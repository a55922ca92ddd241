"""Autograd Functions behind some ``nn`` modules, as torch writes them in Python (torch/nn/modules/_functions.py).

``CrossMapLRN2d`` is Torch7's local response normalisation across channels, kept by torch for old models. Its
forward builds each channel's window sum by a running update from the previous channel, and its backward is a
hand-written formula rather than the forward's derivative; both are reproduced here step for step (the running
update drops the window's lower end one channel late, which torch's results show, so the same update is run).
"""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor, _wrap
from ...autograd.function import Function
from ...ops.aten_vec import quiet

__all__ = ["CrossMapLRN2d"]


class CrossMapLRN2d(Function):
    # (its own NumPy arithmetic, run quietly: torch's is silent about inf and NaN, and the backward runs under the
    # caller's NumPy error state, as the user's custom Functions' do)
    @staticmethod
    @quiet
    def forward(ctx, input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> Tensor:  # noqa: A002
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        x = input._data
        channels = x.shape[1]
        square = x * x
        pre_pad = int((size - 1) / 2 + 1)
        scale = np.empty_like(x)
        scale[:, 0] = 0
        for c in range(min(pre_pad, channels)):
            scale[:, 0] += square[:, c]
        for c in range(1, channels):
            scale[:, c] = scale[:, c - 1]
            if c < channels - pre_pad + 1:
                scale[:, c] += square[:, c + pre_pad - 1]
            if c > pre_pad:
                scale[:, c] -= square[:, c - pre_pad]
        scale *= alpha / size
        scale += k
        ctx.scale = scale
        output = _wrap(np.power(scale, -beta) * x)
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    @quiet
    def backward(ctx, grad_output: Tensor):
        input, output = ctx.saved_tensors  # noqa: A001
        x, out, scale, g = input._data, output._data, ctx.scale, grad_output._data
        size = ctx.size
        batch, channels = x.shape[:2]
        cache_ratio = 2 * ctx.alpha * ctx.beta / size
        inverse_pre_pad = int(size - (size - 1) / 2)
        if inverse_pre_pad + channels > channels + size - 1:  # torch's narrow of its padded buffer fails
            raise RuntimeError(f"start ({inverse_pre_pad}) + length ({channels}) exceeds dimension size "
                               f"({channels + size - 1}).")
        grad_input = np.power(scale, -ctx.beta) * g
        padded = np.zeros((batch, channels + size - 1, *x.shape[2:]), dtype=x.dtype)
        center = padded[:, inverse_pre_pad:inverse_pre_pad + channels]
        np.multiply(g, out, out=center)
        center /= scale
        accum = padded[:, 0].copy() if size - 1 >= 1 else np.zeros_like(padded[:, 0])
        for c in range(1, size - 1):
            accum += padded[:, c]
        for c in range(channels):
            accum += padded[:, c + size - 1]
            grad_input[:, c] += (-cache_ratio) * x[:, c] * accum
            accum -= padded[:, c]
        return _wrap(grad_input), None, None, None, None
