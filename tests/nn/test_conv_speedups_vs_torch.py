"""The convolution kernels' faster routes (``tracegrad.ops.nn_ops.conv``) give torch's results, at the tolerance the
other convolution tests use, and where they must, the bits of the route they replace:

* batch-last columns (``_batch_last_pays``: a large batch of narrow outputs) for the forward, input and weight
  gradients: LeNet's second convolution, strided, dilated, grouped, padded, 1-d, 3-d, channels-last, transposed;
* sample-major rows (one product per sample) for the other forwards: batch 1, an empty batch, groups, 1x1;
* the flat col2im of a unit-stride input gradient (``_flat_pays``), which must add ATen's terms in ATen's order
  (the same bits as ``col2im``), and which a weight holding inf or NaN must not take;
* max pooling's running maximum, whose NaN-free first pass falls back to a NaN-aware one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

from tracegrad.ops.nn_ops import conv

TOL = {"float32": dict(rtol=1e-4, atol=1e-3), "float64": dict(rtol=1e-7, atol=1e-9)}

# (input shape, weight shape, keyword arguments): the first ones take the batch-last route
CASES = [
    ((64, 8, 12, 12), (16, 8, 5, 5), {}),
    ((40, 4, 9, 9), (6, 4, 3, 3), dict(stride=2, padding=1)),
    ((33, 4, 10, 10), (6, 2, 3, 2), dict(dilation=2, padding=(1, 0), groups=2)),
    ((48, 3, 20), (5, 3, 5), dict(stride=3)),
    ((24, 2, 5, 6, 4), (3, 2, 2, 3, 2), dict(padding=1)),
    ((64, 1, 28, 28), (8, 1, 5, 5), {}),
    ((1, 3, 17, 15), (4, 3, 3, 3), dict(padding=1)),
    ((0, 3, 8, 8), (4, 3, 3, 3), dict(padding=1)),
    ((4, 6, 9, 7), (8, 3, 3, 3), dict(groups=2, dilation=(2, 1), padding=2)),
    ((8, 16, 6, 6), (12, 16, 1, 1), {}),
    ((3, 2, 5, 7, 6), (4, 2, 3, 3, 2), dict(padding=(1, 0, 1))),
]


def _conv(lib, x, w, kwargs):
    fn = {3: lib.nn.functional.conv1d, 4: lib.nn.functional.conv2d, 5: lib.nn.functional.conv3d}[x.ndim]
    return fn(x, w, **kwargs)


def _forward_and_grads(lib, x: np.ndarray, w: np.ndarray, kwargs, transposed=False, channels_last=False):
    xt, wt = lib.from_numpy(x.copy()), lib.from_numpy(w.copy())
    if channels_last:
        xt = xt.contiguous(memory_format=lib.channels_last)
    xt.requires_grad_()
    wt.requires_grad_()
    y = (lib.nn.functional.conv_transpose2d(xt, wt, **kwargs) if transposed else _conv(lib, xt, wt, kwargs))
    weights = lib.from_numpy(np.linspace(-1, 1, y.numel()).reshape(y.shape).astype(x.dtype))
    (y * weights).sum().backward()
    return y, xt.grad, wt.grad


def _compare(x, w, kwargs, dtype, **options):
    ours, theirs = (_forward_and_grads(lib, x, w, kwargs, **options) for lib in (tg, torch))
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        assert a.stride() == b.stride() or a.numel() == 0  # (torch gives an empty batch's input gradient 0 strides)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL[dtype])


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_convolution_and_gradients_as_in_torch(case, dtype):
    x_shape, w_shape, kwargs = case
    rng = np.random.default_rng(len(x_shape) * 100 + x_shape[0])
    _compare(rng.standard_normal(x_shape).astype(dtype), rng.standard_normal(w_shape).astype(dtype), kwargs, dtype)


def test_the_cases_take_each_route():
    n, out = 64, (8, 8)
    assert conv._batch_last_pays(n, out) and not conv._flat_pays((1, 1), n, out)
    assert conv._flat_pays((1, 1), 1, (15, 13)) and not conv._flat_pays((2, 1), 1, (15, 13))
    assert not conv._flat_pays((1,), 1, (15,))


@pytest.mark.parametrize("n", [64, 2])
def test_channels_last_input(n):
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal((n, 4, 10, 10)).astype("float32"), rng.standard_normal((6, 4, 3, 3)).astype("float32")
    _compare(x, w, dict(padding=1), "float32", channels_last=True)


@pytest.mark.parametrize("kwargs", [dict(stride=2, padding=1, output_padding=1), dict(dilation=2, output_padding=1),
                                    dict(padding=1, groups=2)])
@pytest.mark.parametrize("n", [48, 2])
def test_transposed_convolution(kwargs, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 4, 5, 6))
    w = rng.standard_normal((4, 3, 3, 3))
    _compare(x, w, kwargs, "float64", transposed=True)


def test_a_weight_with_inf_and_nan_keeps_the_positions_no_window_reaches():
    """A transposed convolution (stride 1, dilation 2, output padding 1) leaves its last row and column out of every
    window: they stay zero in torch, whatever the weight holds, where the flat route would put 0 * inf."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 6))
    w = rng.standard_normal((3, 2, 3, 3))
    w[0, 1, 1, 2], w[2, 0, 0, 0] = np.inf, np.nan
    results = [lib.nn.functional.conv_transpose2d(lib.from_numpy(x), lib.from_numpy(w), dilation=2, output_padding=1)
               for lib in (tg, torch)]
    ours, theirs = (r.numpy() for r in results)
    assert (ours[:, :, -1] == 0).all() and (ours[:, :, :, -1] == 0).all()
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_flat_col2im_gives_col2im_bits(nd, dtype):
    """The same columns through the flat route and through ``col2im``: the same bits, signs of zeros included."""
    rng = np.random.default_rng(nd)
    n, c, k, padding, dilation = 3, 2, (3, 2, 2)[:nd], (1, 0, 2)[:nd], (2, 1, 1)[:nd]
    x_shape = (n, c) + (7, 6, 5)[:nd]
    padded = tuple(s + 2 * p for s, p in zip(x_shape[2:], padding))
    out = tuple(q - d * (kk - 1) for q, d, kk in zip(padded, dilation, k))
    v = rng.integers(-3, 4, (c,) + k + (n,) + out).astype(dtype) * np.array(0.5, dtype)
    v[rng.random(v.shape) < 0.2] = -0.0
    assert conv._flat_pays((1,) * nd, n, out)
    flat = conv._flat_grid(v.reshape((c * math.prod(k), n) + out).swapaxes(0, 1), padded)  # (CK, N, *F)
    got = conv._col2im_flat(flat.reshape(c, math.prod(k), n, -1), x_shape, padding, dilation, k, out)
    want = conv.col2im(v, x_shape, (1,) * nd, padding, dilation)
    assert_same_bits(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool_with_nans_and_ties(dtype):
    """The first pass ignores NaNs; a NaN in the result sends it through the NaN-aware pass (the last NaN of a
    window wins, as does the first of tied maxima)."""
    rng = np.random.default_rng(1)
    x = rng.integers(-2, 3, (4, 3, 12, 10)).astype(dtype)
    x[0, 0, 0, 0] = np.nan  # (a window's first element)
    x[1, 1, 2:4, 2:4] = np.nan  # (a window of NaNs only)
    x[2, 2, 5, 5] = np.nan
    results = []
    for lib in (tg, torch):
        t = lib.from_numpy(x.copy()).requires_grad_()
        out, idx = lib.nn.functional.max_pool2d(t, 2, return_indices=True)
        out.backward(lib.ones_like(out))
        results.append((out, idx, t.grad))
    for ours, theirs in zip(*results):
        assert_same_bits(ours, theirs)
