"""Nearest upsampling where a scale factor keeps an axis's size or exactly doubles it (``scale_factor=1.3`` of a
width 3, ``2.1`` of a width 5): PyTorch's 2-d nearest kernel and every nearest backward then map by index, its
1-d and 3-d forward kernels and nearest-exact by the scale. Values, gradients and double backward against torch."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

CASES = [(dims, scale, mode, channels_last)
         for dims in (1, 2, 3)
         for scale in (1.3, 2.1, 0.9, 1.7)
         for mode in ("nearest", "nearest-exact")
         for channels_last in ((False, True) if dims == 2 else (False,))]


def _run(lib, data: np.ndarray, scale: float, mode: str, channels_last: bool) -> tuple:
    """The upsampled values, the gradient for an upstream of 0, 1, 2, ..., and the double backward's."""
    x = lib.tensor(data, requires_grad=True)
    source = x.contiguous(memory_format=lib.channels_last) if channels_last else x
    y = lib.nn.functional.interpolate(source, scale_factor=scale, mode=mode)
    upstream = lib.arange(y.numel(), dtype=lib.float64).reshape(y.shape).requires_grad_(True)
    grad, = lib.autograd.grad(y, x, upstream, create_graph=True)
    weights = lib.arange(grad.numel(), dtype=lib.float64).reshape(grad.shape)
    second, = lib.autograd.grad((grad * weights).sum(), upstream)
    return y.detach().numpy(), grad.detach().numpy(), second.numpy()


@pytest.mark.parametrize("dims,scale,mode,channels_last", CASES)
def test_kept_and_doubled_sizes_as_torch(dims, scale, mode, channels_last):
    data = np.random.default_rng(dims).standard_normal((2, 3) + (3, 5, 4)[:dims])
    ours, theirs = _run(tg, data, scale, mode, channels_last), _run(torch, data, scale, mode, channels_last)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
