"""group_norm on channels-last inputs gives PyTorch's CPU bits for float and double: native_group_norm's y (in
channels-last strides), mean and rstd, F.group_norm's output, and every gradient through F.group_norm (whose
backward kernel takes the forward's saved statistics). Plane sizes take both of the forward's kernels (fewer
than 1024 positions or not) and both of the backward's (2048); channels per group leave tails past whole
vectors (8 floats, 4 doubles)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")

SPATIAL = [
    (7, 7),        # 49 positions: per (sample, group) sums
    (32, 32),      # 1024: the forward's buffered sums
    (33, 33),      # 1089
    (64, 64),      # 4096: the backward's many-positions kernel too
    (1, 1),        # (dense in both formats: PyTorch suggests contiguous)
    (3, 5, 6),     # 5-d, channels_last_3d
    (4, 16, 16),   # 5-d, 1024 positions
]

# (channels, groups): channels per group of 1, 2, 3, 5, 8, 12 and 40 (vector tails and whole vectors)
CHANNEL_GROUPS = [(3, 1), (3, 3), (6, 2), (12, 1), (12, 4), (24, 3), (24, 24), (40, 5), (40, 1)]


def _data(shape: tuple, dtype, affine: bool, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3 + 0.7).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    weight, bias = (rng.standard_normal(shape[1]).astype(dtype) if affine else None for _ in range(2))
    return x, dy, weight, bias


def _channels_last(module, a: np.ndarray, requires_grad: bool = False):
    fmt = module.channels_last if a.ndim == 4 else module.channels_last_3d
    t = module.tensor(a).contiguous(memory_format=fmt)
    return t.requires_grad_() if requires_grad else t


def _param(module, a: np.ndarray | None, requires_grad: bool = False):
    return None if a is None else module.tensor(a, requires_grad=requires_grad)


def _shape(c: int, spatial: tuple) -> tuple:
    return (2 if np.prod(spatial) >= 1024 else 3, c) + spatial


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("spatial", SPATIAL)
@pytest.mark.parametrize(("channels", "groups"), CHANNEL_GROUPS)
@pytest.mark.parametrize("affine", [True, False])
def test_native_group_norm_channels_last_is_torchs(dtype, spatial, channels, groups, affine):
    shape = _shape(channels, spatial)
    x, _, weight, bias = _data(shape, dtype, affine, seed=channels + groups + len(spatial))
    n, hxw = shape[0], int(np.prod(spatial))
    results = []
    for lib in (tg, torch):
        args = (_channels_last(lib, x), _param(lib, weight), _param(lib, bias))
        results.append(lib.native_group_norm(*args, n, channels, hxw, groups, 1e-5))
        results.append(lib.nn.functional.group_norm(*args[:1], groups, *args[1:]))
    ours, ours_f, theirs, theirs_f = results
    assert ours[0].stride() == theirs[0].stride()
    for o, t in zip(ours, theirs, strict=True):
        assert_same_bits(o, t)
    assert_same_bits(ours_f, theirs_f)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("spatial", SPATIAL)
@pytest.mark.parametrize(("channels", "groups"), [(3, 1), (6, 3), (12, 1), (12, 4), (24, 2), (24, 24), (40, 4)])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_channels_last_gradients_are_torchs(dtype, spatial, channels, groups, affine):
    """End to end: the forward's statistics, saved, feed the backward kernel."""
    shape = _shape(channels, spatial)
    x, dy, weight, bias = _data(shape, dtype, affine, seed=3 * channels + groups)
    grads = []
    for lib in (tg, torch):
        leaves = [_channels_last(lib, x, True), _param(lib, weight, True), _param(lib, bias, True)]
        y = lib.nn.functional.group_norm(leaves[0], groups, leaves[1], leaves[2])
        y.backward(lib.tensor(dy))
        grads.append([leaf.grad for leaf in leaves if leaf is not None])
    ours, theirs = grads
    assert ours[0].stride() == theirs[0].stride()
    for o, t in zip(ours, theirs, strict=True):
        assert_same_bits(o, t)


def test_group_norm_module_channels_last_is_torchs():
    x, dy, _, _ = _data((4, 64, 28, 28), np.float32, False, seed=5)
    results = []
    for lib in (tg, torch):
        module = lib.nn.GroupNorm(8, 64)
        leaf = _channels_last(lib, x, True)
        y = module(leaf)
        y.backward(lib.tensor(dy))
        results.append([y, leaf.grad, module.weight.grad, module.bias.grad])
    for o, t in zip(*results, strict=True):
        assert_same_bits(o, t)


def test_single_position_in_channels_last_strides_is_torchs():
    """A 1x1 plane laid out with channels-last strides (which PyTorch suggests then) takes that kernel."""
    x, _, weight, bias = _data((3, 12, 1, 1), np.float32, True, seed=7)
    results = []
    for lib in (tg, torch):
        t = lib.empty_strided(x.shape, (12, 1, 12, 12))
        t.copy_(lib.tensor(x))
        results.append(lib.native_group_norm(t, lib.tensor(weight), lib.tensor(bias), 3, 12, 1, 3, 1e-5))
    for o, t in zip(*results, strict=True):
        assert_same_bits(o, t)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_buffered_sums_follow_the_threads_ranges(threads, dtype):
    """With 1024 positions or more each thread adds its range of rows into its own buffer; the groups then add
    the buffers in turn. (Three threads split the samples' rows mid-sample.)"""
    x, _, weight, bias = _data((3, 24, 33, 33), dtype, True, seed=threads)
    tg.set_num_threads(threads)
    torch.set_num_threads(threads)
    results = [lib.native_group_norm(_channels_last(lib, x), _param(lib, weight), _param(lib, bias), 3, 24,
                                     33 * 33, 4, 1e-5) for lib in (tg, torch)]
    for o, t in zip(*results, strict=True):
        assert_same_bits(o, t)


@pytest.mark.parametrize("spatial", [(7, 7), (33, 33), (3, 5, 6)])
@pytest.mark.parametrize(("channels", "groups"), [(6, 3), (24, 1), (40, 2), (34, 1)])
@pytest.mark.parametrize("affine", [True, False])
def test_half_forward_channels_last_is_torchs(spatial, channels, groups, affine):
    """Half computes in float: a vector of 16 channels adds its two float halves first; y, mean and rstd are
    rounded to half."""
    shape = _shape(channels, spatial)
    x, _, weight, bias = (None if a is None else a.astype(np.float16)
                          for a in _data(shape, np.float32, affine, seed=channels))
    n, hxw = shape[0], int(np.prod(spatial))
    results = [lib.native_group_norm(_channels_last(lib, x), _param(lib, weight), _param(lib, bias), n, channels,
                                     hxw, groups, 1e-5) for lib in (tg, torch)]
    assert results[0][0].stride() == results[1][0].stride()
    for o, t in zip(*results, strict=True):
        assert_same_bits(o, t)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("spatial", [(5, 5), (32, 33)])
@pytest.mark.parametrize("fill", ["zeros", "constant", "a zero group"])
def test_flat_groups_are_torchs(dtype, spatial, fill):
    """Groups without spread: the variance's rounding below zero is clamped, and zeros keep their signs."""
    shape = _shape(12, spatial)
    x, _, weight, bias = _data(shape, dtype, True, seed=1)
    if fill == "zeros":
        x[:] = 0
    elif fill == "constant":
        x[:] = dtype(0.1)
    else:
        x[:, :4] = 0
    results = []
    for lib in (tg, torch):
        args = (_channels_last(lib, x), _param(lib, weight), _param(lib, bias))
        results.append(lib.native_group_norm(*args, shape[0], 12, int(np.prod(spatial)), 3, 1e-5))
        results.append(lib.native_group_norm(args[0], None, None, shape[0], 12, int(np.prod(spatial)), 3, 1e-5))
    for o, t in zip(results[0] + results[1], results[2] + results[3], strict=True):
        assert_same_bits(o, t)
