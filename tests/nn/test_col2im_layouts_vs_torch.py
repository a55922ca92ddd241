"""col2im (``F.fold`` and a convolution's input gradient) adds each kernel offset's window in turn; for a large
batch of narrow outputs it does so over a batch-last image (``conv._batch_last_pays``). Either route must give
ATen's col2im bits and the same layout."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

from tracegrad.ops.nn_ops import conv

# (batch, channels, size, kernel, stride, padding, dilation): the first ones take the batch-last route
CASES = [(64, 3, 12, 5, 1, 0, 1), (40, 2, 9, 3, 2, 1, 1), (33, 2, 7, 2, 1, 1, 2), (16, 2, 10, 3, 1, 1, 1),
         (2, 3, 12, 5, 1, 0, 1)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_fold_bits(case, dtype):
    n, c, size, k, stride, padding, dilation = case
    out = (size + 2 * padding - dilation * (k - 1) - 1) // stride + 1
    values = np.random.default_rng(0).standard_normal((n, c * k * k, out * out, 2)) * 100
    cols = (values[..., 0] + 1j * values[..., 1]) if dtype.startswith("complex") else values[..., 0]
    results = [lib.nn.functional.fold(lib.from_numpy(cols.astype(dtype)), (size, size), k, dilation, padding, stride)
               for lib in (tg, torch)]
    assert_same_bits(*results)
    assert results[0].stride() == results[1].stride()


def _old_route(v: np.ndarray, x_shape, stride, padding, dilation) -> np.ndarray:
    """The batch-first col2im, written out: the reference for the batch-last route."""
    nd = len(x_shape) - 2
    k_shape, out_sizes = v.shape[1:1 + nd], v.shape[2 + nd:]
    padded = tuple(s + 2 * p for s, p in zip(x_shape[2:], padding))
    image = np.zeros(x_shape[:2] + padded, v.dtype)
    for offs in itertools.product(*(range(k) for k in k_shape)):
        key = (slice(None), slice(None)) + tuple(
            slice(o * d, o * d + (m - 1) * s + 1, s) for o, d, m, s in zip(offs, dilation, out_sizes, stride))
        image.swapaxes(0, 1)[key] += v[(slice(None),) + offs]
    return image[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(padding, x_shape[2:]))]


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_batch_last_route_matches_batch_first(nd):
    rng = np.random.default_rng(nd)
    n, c, k, stride, padding, dilation = 48, 2, (3,) * nd, (1,) * nd, (1,) * nd, (1,) * nd
    size = (6,) * nd
    out = tuple(s + 2 * p - d * (kk - 1) for s, kk, p, d in zip(size, k, padding, dilation))
    assert conv._batch_last_pays(n, out)
    v = rng.standard_normal((c,) + k + (n,) + out).astype(np.float32)
    x_shape = (n, c) + size
    got, want = conv.col2im(v, x_shape, stride, padding, dilation), _old_route(v, x_shape, stride, padding, dilation)
    assert got.strides == want.strides
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_conv2d_input_gradient_of_a_large_batch():
    """LeNet's second convolution (batch 64, 8-wide outputs): the gradient of its input takes the batch-last route
    and agrees with torch's."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8, 12, 12)).astype(np.float32)
    w = rng.standard_normal((16, 8, 5, 5)).astype(np.float32)
    grads = []
    for lib in (tg, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        (lib.nn.functional.conv2d(xt, lib.from_numpy(w)) ** 2).sum().backward()
        grads.append(xt.grad)
    assert grads[0].stride() == grads[1].stride()
    np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy(), rtol=1e-4, atol=1e-3)
