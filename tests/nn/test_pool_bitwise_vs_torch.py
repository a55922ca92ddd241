"""Pooling, padding by reflection or replication and nearest upsampling give torch's numbers bit for bit, not just within a tolerance: the same maximum and index where a
window holds NaNs, signed zeros or ties, and the same sums in the same order (average pooling adds a window
row by row in float, even for half inputs; a backward adds each window's share in the windows' order, and max
pooling's backward adds the gradients of one input in the outputs' order)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

DTYPES = ("float16", "float32", "float64")


def _special_values(rng: np.random.Generator, shape: tuple, dtype: str) -> np.ndarray:
    """Small integers (many ties), with NaNs and signed zeros sprinkled in."""
    x = rng.integers(-2, 3, shape).astype(dtype)
    x[rng.random(shape) < 0.05] = np.nan
    x[rng.random(shape) < 0.1] = -0.0
    return x


def _inputs(x: np.ndarray, channels_last: bool):
    tensors = []
    for lib in (tg, torch):
        t = lib.tensor(x, requires_grad=True)
        if channels_last:
            t = t.detach().to(memory_format=lib.channels_last if x.ndim == 4 else lib.channels_last_3d)
            t.requires_grad_()
        tensors.append(t)
    return tensors


MAX_CASES = [  # (function, input shape, keyword arguments)
    ("max_pool1d", (2, 3, 11), dict(kernel_size=3, stride=1, padding=1)),
    ("max_pool1d", (2, 3, 11), dict(kernel_size=2, stride=2, ceil_mode=True)),
    ("max_pool2d", (2, 3, 9, 10), dict(kernel_size=2)),
    ("max_pool2d", (2, 3, 9, 10), dict(kernel_size=3, stride=1, padding=1)),
    ("max_pool2d", (2, 3, 9, 10), dict(kernel_size=(2, 3), stride=(1, 2), dilation=2)),
    ("max_pool2d", (3, 9, 10), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool3d", (1, 2, 5, 6, 7), dict(kernel_size=2, stride=1)),
    ("max_pool3d", (1, 2, 5, 6, 7), dict(kernel_size=3, stride=2, padding=1)),
]


def _layouts(cases: list) -> list:
    """Each case contiguous, and channels-last too where the input is batched 2-d or 3-d."""
    return [case + (last,) for case in cases for last in (False, True) if not last or len(case[1]) >= 4]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,shape,kwargs,channels_last", _layouts(MAX_CASES))
def test_max_pool_values_indices_and_gradients(name, shape, kwargs, channels_last, dtype):
    rng = np.random.default_rng(len(shape) * 100 + len(kwargs))
    x = _special_values(rng, shape, dtype)
    results = []
    for lib, t in zip((tg, torch), _inputs(x, channels_last)):
        out, indices = getattr(lib.nn.functional, name)(t, return_indices=True, **kwargs)
        grad_out = lib.tensor(np.random.default_rng(7).standard_normal(tuple(out.shape)).astype(dtype))
        (grad,) = lib.autograd.grad(out, t, grad_out)
        results.append((out, indices, grad))
    for ours, theirs in zip(*results):
        assert_same_bits(ours, theirs)


AVG_CASES = [  # (function, input shape, keyword arguments, dtypes: torch 2.13 has no half avg_pool3d on the CPU)
    ("avg_pool2d", (2, 3, 9, 11), dict(kernel_size=3), DTYPES),
    ("avg_pool2d", (2, 3, 9, 11), dict(kernel_size=(2, 3), stride=1, padding=1, count_include_pad=False), DTYPES),
    ("avg_pool2d", (2, 3, 9, 11), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), DTYPES),
    ("avg_pool2d", (2, 3, 9, 11), dict(kernel_size=4, stride=1, padding=2, divisor_override=5), DTYPES),
    ("avg_pool3d", (1, 2, 5, 6, 7), dict(kernel_size=2, stride=1), DTYPES[1:]),
    ("avg_pool3d", (1, 2, 5, 6, 7), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False), DTYPES[1:]),
]


@pytest.mark.parametrize("name,shape,kwargs,dtype,channels_last",
                         [(name, shape, kwargs, dtype, last) for name, shape, kwargs, dtypes, last in
                          _layouts(AVG_CASES) for dtype in dtypes])
def test_avg_pool_values_and_gradients(name, shape, kwargs, dtype, channels_last):
    rng = np.random.default_rng(len(shape) * 10 + len(kwargs))
    x = rng.standard_normal(shape).astype(dtype)
    results = []
    for lib, t in zip((tg, torch), _inputs(x, channels_last)):
        out = getattr(lib.nn.functional, name)(t, **kwargs)
        grad_out = lib.tensor(np.random.default_rng(3).standard_normal(tuple(out.shape)).astype(dtype))
        (grad,) = lib.autograd.grad(out, t, grad_out)
        results.append((out, grad))
    for ours, theirs in zip(*results):
        assert_same_bits(ours, theirs)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_adaptive_max_pool_gradient_adds_in_the_outputs_order(dtype):
    """Overlapping adaptive windows share their maxima: one input gets several gradients."""
    x = np.random.default_rng(5).integers(0, 2, (2, 3, 7, 9)).astype(dtype)
    grads = []
    for lib in (tg, torch):
        t = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.adaptive_max_pool2d(t, (5, 6))
        grad_out = lib.tensor(np.random.default_rng(9).standard_normal(tuple(out.shape)).astype(dtype))
        grads.append(lib.autograd.grad(out, t, grad_out)[0])
    assert_same_bits(*grads)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("call", ["reflect", "replicate", "nearest", "nearest-exact"])
def test_padding_and_nearest_upsampling_gradients_add_in_the_outputs_order(call, dtype):
    """Their backward adds every output's gradient into the input position it copied, one after the other."""
    x = np.random.default_rng(11).standard_normal((2, 3, 7, 6)).astype(dtype)
    grads = []
    for lib in (tg, torch):
        t = lib.tensor(x, requires_grad=True)
        F = lib.nn.functional
        out = F.pad(t, (3, 2, 3, 1), mode=call) if call in ("reflect", "replicate") else \
            F.interpolate(t, scale_factor=2.6, mode=call)
        grad_out = lib.tensor(np.random.default_rng(13).standard_normal(tuple(out.shape)).astype(dtype))
        grads.append(lib.autograd.grad(out, t, grad_out)[0])
    assert_same_bits(*grads)


@pytest.mark.parametrize("seed", range(40))
def test_adaptive_max_pool_choices_and_layouts(seed):
    """Adaptive windows of every size (few large windows, reduced one at a time, or many small ones, reduced
    slab by slab), with NaNs, signed zeros and ties, channels-last too: values, indices, gradients, strides."""
    rng = np.random.default_rng(seed)
    n = 3 if seed % 3 == 0 else 2
    shape = tuple(int(v) for v in rng.integers(1, 4, 2)) + tuple(int(v) for v in rng.integers(1, 12, n))
    x = _special_values(rng, shape, "float32" if seed % 2 else "float64")
    output_size = tuple(int(v) for v in rng.integers(1, 14, n))
    results = []
    for lib, t in zip((tg, torch), _inputs(x, channels_last=seed % 4 == 1)):
        out, indices = getattr(lib.nn.functional, f"adaptive_max_pool{n}d")(t, output_size, return_indices=True)
        (grad,) = lib.autograd.grad(out, t, lib.ones_like(out))
        results.append((out, indices, grad, out.stride()))
    for ours, theirs in zip(results[0][:3], results[1][:3]):
        assert_same_bits(ours, theirs)
    assert results[0][3] == results[1][3]
