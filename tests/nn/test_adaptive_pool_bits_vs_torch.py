"""2-d adaptive average pooling gives PyTorch's CPU bits, forward and backward (one thread): each window summed
row after row from +0 and divided by its height then its width (channels-last: its vector channels once, by the
area), the backward adding each window's share window after window. The separable matrix product it replaced
matched a third of the outputs."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

CASES = [((4, 3, 17, 19), (5, 4)), ((2, 8, 14, 14), (7, 7)), ((2, 19, 13, 11), (3, 5)), ((3, 13, 11), (4, 3)),
         ((2, 8, 9, 9), (9, 9)), ((1, 2, 5, 5), (8, 8)), ((2, 3, 7, 5), (11, 13)), ((1, 17, 6, 6), (1, 3))]


def _pooled(lib, x: np.ndarray, output_size: tuple, channels_last: bool):
    t = lib.tensor(x)
    if channels_last:
        t = t.contiguous(memory_format=lib.channels_last)
    t.requires_grad_(True)
    y = lib.nn.functional.adaptive_avg_pool2d(t, output_size)
    g = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(x.dtype))
    if channels_last:
        g = g.contiguous(memory_format=lib.channels_last)
    y.backward(g)
    return y, t.grad


# (channels-last is a 4-d layout)
LAYOUTS = [(shape, size, last) for shape, size in CASES for last in ((False, True) if len(shape) == 4 else (False,))]


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize(("shape", "output_size", "channels_last"), LAYOUTS)
def test_values_gradients_and_layouts_are_torchs(shape, output_size, dtype, channels_last: bool) -> None:
    x = (np.random.default_rng(sum(shape)).standard_normal(shape) * 3).astype(dtype)
    x.reshape(-1)[:4] = -0.0  # (a window of -0s sums to +0 in PyTorch's kernel)
    (y, gx), (ty, tgx) = _pooled(tg, x, output_size, channels_last), _pooled(torch, x, output_size, channels_last)
    assert_same_bits(y, ty)
    assert_same_bits(gx, tgx)
    assert (y.stride(), gx.stride()) == (ty.stride(), tgx.stride())
