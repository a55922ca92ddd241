"""Review of set 41: batch norm's backward of a float16 input, bit for bit against torch.

torch's CPU kernels for float16 (``batch_norm_cpu_backward_{contiguous,channels_last}_internal``) add ``dy`` and
``(x - mean) * dy`` in float in their own order (channels-first: 8-lane vectors over 16-element runs of each plane,
the leftovers in one float; channels-last: row after row), fused multiply-adds, and keep the parameters' gradients
float32 when the parameters are (a mixed call). tracegrad ran float32's kernel on float copies (mixed) or float16
NumPy sums: weight and bias gradients an ulp or more off, the input's gradient a float16 ulp off here and there."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

SHAPES = [(4, 3, 5), (2, 3, 40), (5, 4, 33), (3, 2, 17, 3), (8, 3), (64, 19), (2, 20, 3, 3), (3, 40, 2, 2)]


def _arrays(shape, seed=1):
    rng = np.random.default_rng(seed)
    channels = shape[1]
    return (rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32),
            rng.standard_normal(channels).astype(np.float32), rng.standard_normal(channels).astype(np.float32),
            (rng.random(channels) + 0.5).astype(np.float32))


def _backward(lib, shape, param_dtype, train, channels_last, stats):
    """native_batch_norm_backward's three gradients (values and dtypes), fed torch's forward statistics (so that
    only the backward is compared)."""
    x, g, w, rm, rv = _arrays(shape)
    pd = getattr(lib, param_dtype)
    x, g = lib.tensor(x).half(), lib.tensor(g).half()
    if channels_last:
        x, g = (t.contiguous(memory_format=lib.channels_last) for t in (x, g))
    w, rm, rv = (lib.tensor(t).to(pd) for t in (w, rm, rv))
    mean, invstd = (lib.tensor(s.float().numpy()).to(pd) for s in stats)
    grads = lib.ops.aten.native_batch_norm_backward(g, x, w, rm, rv, mean, invstd, train, 1e-5, [True] * 3)
    return [(str(t.dtype).split(".")[1], t.stride(), t.detach().float().numpy().tobytes()) for t in grads]


# (channels-last only where it exists: 4 dims)
LAYOUTS = [(shape, False) for shape in SHAPES] + [(shape, True) for shape in SHAPES if len(shape) == 4]


@pytest.mark.parametrize(("shape", "channels_last"), LAYOUTS)
@pytest.mark.parametrize("param_dtype", ["float32", "float16"])
@pytest.mark.parametrize("train", [True, False])
def test_half_batch_norm_backward_as_torch(shape, param_dtype, train, channels_last):
    x, _, w, rm, rv = _arrays(shape)
    pd = getattr(torch, param_dtype)
    tx = torch.tensor(x).half()
    if channels_last:
        tx = tx.contiguous(memory_format=torch.channels_last)
    _, mean, invstd = torch.native_batch_norm(tx, torch.tensor(w).to(pd), None, torch.tensor(rm).to(pd),
                                              torch.tensor(rv).to(pd), train, 0.1, 1e-5)
    stats = (mean, invstd) if train else (torch.zeros(0), torch.zeros(0))
    assert _backward(tg, shape, param_dtype, train, channels_last, stats) == \
        _backward(torch, shape, param_dtype, train, channels_last, stats)


@pytest.mark.parametrize("train", [True, False])
def test_float_batch_norm_on_half_batch_gradients_as_torch(train):
    """A float32 BatchNorm1d under a float16 batch (a model kept in float32 beside a .half() input), end to end."""
    def run(lib):
        x, g, w, b, _ = _arrays((4, 3, 5), seed=0)
        bn = lib.nn.BatchNorm1d(3)
        with lib.no_grad():
            bn.weight.copy_(lib.tensor(w))
            bn.bias.copy_(lib.tensor(b))
        bn.train(train)
        inp = lib.tensor(x).half().requires_grad_()
        bn(inp).backward(lib.tensor(g).half())
        return [(str(t.dtype).split(".")[1], t.numpy().tobytes()) for t in (inp.grad, bn.weight.grad, bn.bias.grad)]

    assert run(tg) == run(torch)
