"""Review of the faster convolution routes (``tracegrad.ops.nn_ops.conv``): a batch's forward whose products are
matrix-vector ones (one output channel per group, as a depthwise convolution's, or one output position) keeps the
bits of the batch's single channel-major product, the route it had before the per-sample and batch-last routes:
per-sample (or batch-last) products hand BLAS the same columns at other places in the matrix, and BLAS's
matrix-vector kernels order a column's sum by its place (about a third of such forwards changed bits). The
results stay torch's at the convolution tests' tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

from tracegrad.ops.nn_ops import conv

TOL = {"float32": dict(rtol=1e-4, atol=1e-3), "float64": dict(rtol=1e-7, atol=1e-9)}

# (input shape, weight shape, keyword arguments): N > 1 with Og == 1 or a single output position
CASES = [
    ((2, 4, 20, 20), (2, 2, 4, 1), dict(groups=2, stride=(2, 1), dilation=(1, 2), padding=2)),
    ((3, 2, 2, 13), (2, 1, 2, 5), dict(groups=2, stride=(1, 2), dilation=(1, 3))),
    ((2, 6, 5), (2, 3, 5), dict(groups=2, stride=3, padding=2)),
    ((2, 2, 1, 3, 3), (2, 1, 1, 2, 3), dict(groups=2, dilation=(2, 2, 1), padding=(1, 1, 0))),
    ((64, 8, 12, 12), (8, 1, 3, 3), dict(groups=8)),  # (depthwise, a batch the batch-last route would take)
    ((5, 3, 16, 16), (1, 3, 3, 3), dict(padding=1)),
    ((2, 1, 7), (2, 1, 4), dict(stride=3, dilation=2)),  # (one output position)
    ((3, 6, 4, 4), (9, 2, 4, 4), dict(groups=3)),
]


def _channel_major_reference(x: np.ndarray, w: np.ndarray, stride, padding, dilation, groups) -> np.ndarray:
    """The forward as one channel-major product per group (the route before the per-sample and batch-last ones)."""
    rows, out_sizes = conv.im2col(x, w.shape[2:], stride, padding, dilation, groups, conv.CHANNEL_MAJOR)
    y = np.matmul(w.reshape(groups, w.shape[0] // groups, -1), rows)
    n, o = x.shape[0], w.shape[0]
    return np.ascontiguousarray(y.reshape(o, n, math.prod(out_sizes)).swapaxes(0, 1)).reshape((n, o) + out_sizes)


def _params(nd: int, kwargs) -> tuple:
    def tup(v, default):
        v = kwargs.get(v, default)
        return (v,) * nd if isinstance(v, int) else tuple(v)
    return tup("stride", 1), tup("padding", 0), tup("dilation", 1), kwargs.get("groups", 1)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matrix_vector_forwards_keep_the_batch_products_bits(case, dtype):
    x_shape, w_shape, kwargs = case
    rng = np.random.default_rng(sum(x_shape) * 7 + len(w_shape))
    x, w = rng.standard_normal(x_shape).astype(dtype), rng.standard_normal(w_shape).astype(dtype)
    fn = {3: "conv1d", 4: "conv2d", 5: "conv3d"}[len(x_shape)]
    ours = getattr(tg.nn.functional, fn)(tg.from_numpy(x.copy()), tg.from_numpy(w.copy()), **kwargs)
    assert_same_bits(ours.numpy(), _channel_major_reference(x, w, *_params(len(x_shape) - 2, kwargs)))
    theirs = getattr(torch.nn.functional, fn)(torch.from_numpy(x.copy()), torch.from_numpy(w.copy()), **kwargs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transposed_convolutions_input_gradient_keeps_its_bits(dtype):
    """A transposed convolution's input gradient is a forward convolution with Og = in_channels / groups (1 here)."""
    rng = np.random.default_rng(11)
    x, w = rng.standard_normal((2, 2, 20, 6)).astype(dtype), rng.standard_normal((2, 1, 2, 5)).astype(dtype)
    g = rng.standard_normal((2, 2, 42, 8)).astype(dtype)
    kwargs = dict(stride=(2, 1), dilation=(3, 1), padding=(0, 1), groups=2)
    grads = []
    for lib in (tg, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        y = lib.nn.functional.conv_transpose2d(xt, lib.from_numpy(w.copy()), **kwargs)
        assert tuple(y.shape) == g.shape
        y.backward(lib.from_numpy(g.copy()))
        grads.append(xt.grad.numpy())
    assert_same_bits(grads[0], _channel_major_reference(g, w, (2, 1), (0, 1), (3, 1), 2))
    np.testing.assert_allclose(grads[0], grads[1], **TOL[dtype])


def _col2im_reference(g: np.ndarray, w: np.ndarray, x_shape, padding, dilation, groups) -> np.ndarray:
    """The input gradient by one channel-major product and ``col2im`` (the route before the flat one)."""
    rows = np.matmul(conv._weight_matrix(w, groups).swapaxes(1, 2), conv._channel_major(g, groups))
    v = rows.reshape((x_shape[1],) + tuple(w.shape[2:]) + (x_shape[0],) + tuple(g.shape[2:]))
    return conv.col2im(v, tuple(x_shape), (1,) * (len(x_shape) - 2), padding, dilation)


@pytest.mark.parametrize("case", [
    ((1, 6, 9, 9), (4, 3, 5, 5), dict(groups=2, dilation=2)),
    ((1, 4, 7, 4), (4, 2, 3, 2), dict(groups=2, dilation=3)),
    ((1, 3, 3, 4, 2), (5, 3, 3, 4, 2), dict(padding=(1, 0, 1), dilation=(2, 1, 3))),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_single_output_position_keeps_col2ims_bits(case, dtype):
    """One sample and one output position: col2im's product is a matrix-vector one, and the flat route (a matrix
    product over the widened grid) summed the terms in another order; the input gradient keeps col2im's bits."""
    x_shape, w_shape, kwargs = case
    nd = len(x_shape) - 2
    rng = np.random.default_rng(sum(x_shape) + 3 * len(w_shape))
    x, w = rng.standard_normal(x_shape).astype(dtype), rng.standard_normal(w_shape).astype(dtype)
    fn = {4: "conv2d", 5: "conv3d"}[len(x_shape)]
    g = rng.standard_normal(x_shape[:1] + w_shape[:1] + (1,) * nd).astype(dtype)
    grads = []
    for lib in (tg, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        y = getattr(lib.nn.functional, fn)(xt, lib.from_numpy(w.copy()), **kwargs)
        assert tuple(y.shape) == g.shape
        y.backward(lib.from_numpy(g.copy()))
        grads.append(xt.grad.numpy())
    stride, padding, dilation, groups = _params(nd, kwargs)
    assert_same_bits(grads[0], _col2im_reference(g, w, x_shape, padding, dilation, groups))
    np.testing.assert_allclose(grads[0], grads[1], **TOL[dtype])
