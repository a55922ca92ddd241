"""The faster ``F.interpolate(..., antialias=True)`` kernels keep PyTorch's CPU bits: the forward's outputs sorted
by window size (each tap adding into a prefix of them) and its width pass on a transposed copy, the backward's
contributions sorted by count and run a block of input rows at a time (or, for small gradients, all elements at
once, their products computed ahead), its float32 fused multiply-adds done in place with their float64 sums on a
float midpoint settled from the exact sum.

``small_blocks`` shrinks the blocks so that small inputs go through many blocks and plane groups;
``short_chains`` sends them all elements at once, a step's products at a time.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

from tracegrad.ops.nn_ops import interp_aa_cpu

MODES = ("bilinear", "bicubic", "lanczos")
LAYOUTS = ("contiguous", "channels_last", "strided")


@pytest.fixture
def small_blocks(monkeypatch):
    """The backward's blocks of a few rows and plane groups of one plane (never all elements at once), the
    forward's transpositions a few rows at a time."""
    monkeypatch.setattr(interp_aa_cpu, "_CHAIN_ELEMENTS", 0)
    monkeypatch.setattr(interp_aa_cpu, "_BLOCK_ELEMENTS", 40)
    monkeypatch.setattr(interp_aa_cpu, "_GATHER_ELEMENTS", 1)
    monkeypatch.setattr(interp_aa_cpu, "_TRANSPOSE_BLOCK", 1)


@pytest.fixture
def short_chains(monkeypatch):
    """The backward's float32 elements all at once, with one step's products computed ahead at a time."""
    monkeypatch.setattr(interp_aa_cpu, "_CHAIN_ELEMENTS", 1 << 30)
    monkeypatch.setattr(interp_aa_cpu, "_CHAIN_PRODUCTS", 1)


def _view(lib, x, layout: str):
    if layout == "channels_last":
        return x.contiguous(memory_format=lib.channels_last)
    if layout == "strided":
        return x.transpose(-1, -2)
    return x


def _run(lib, data: np.ndarray, upstream, mode: str, layout: str, align_corners: bool, kwargs: dict):
    x = lib.tensor(data, requires_grad=True)
    y = lib.nn.functional.interpolate(_view(lib, x, layout), mode=mode, antialias=True,
                                      align_corners=align_corners, **kwargs)
    (grad,) = lib.autograd.grad(y, x, lib.tensor(upstream(tuple(y.shape))))
    return y, y.stride(), grad


def _compare(data, mode, layout="contiguous", align_corners=False, upstream=None, **kwargs):
    if upstream is None:
        def upstream(shape):
            return np.random.default_rng(1).standard_normal(shape).astype(data.dtype)
    ours, theirs = (_run(lib, data, upstream, mode, layout, align_corners, kwargs) for lib in (tg, torch))
    assert_same_bits(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    assert_same_bits(ours[2], theirs[2])


def _few_bits(shape, dtype, seed):
    """Values of a few bits: sums that land exactly on a midpoint between two floats are common then."""
    return (np.round(np.random.default_rng(seed).standard_normal(shape) * 8) / 8).astype(dtype)


# (input shape, sizing): integer and fractional downscales (windows of two sizes), a dim kept, upscales (long
# chains of contributions per input element), a 1-wide output
SIZINGS = [
    ((2, 3, 23, 29), dict(size=(7, 9))),
    ((1, 2, 32, 24), dict(scale_factor=0.25)),
    ((2, 2, 19, 26), dict(scale_factor=(0.61, 0.37))),
    ((1, 3, 17, 21), dict(size=(17, 6))),
    ((1, 2, 14, 9), dict(size=(5, 9))),
    ((1, 2, 4, 5), dict(size=(23, 17))),
    ((2, 2, 11, 13), dict(size=(6, 1))),
]


@pytest.mark.parametrize("path", ["small_blocks", "short_chains"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, kwargs", SIZINGS)
@pytest.mark.parametrize("mode", MODES)
def test_sorted_windows_and_blocks_bits(mode, shape, kwargs, dtype, path, request):
    request.getfixturevalue(path)
    data = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    for align_corners in (False,) if mode == "lanczos" else (False, True):
        _compare(data, mode, align_corners=align_corners, **kwargs)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("mode", MODES)
def test_layouts_bits(mode, layout, small_blocks):
    data = np.random.default_rng(2).standard_normal((2, 4, 15, 18)).astype(np.float32)
    for kwargs in (dict(size=(6, 7)), dict(size=(15, 5)), dict(size=(4, 18)), dict(scale_factor=1.4)):
        _compare(data, mode, layout, **kwargs)


@pytest.mark.parametrize("path", ["small_blocks", "short_chains"])
@pytest.mark.parametrize("mode", MODES)
def test_midpoint_sums_bits(mode, path, request):
    """Values and gradients of few bits: many float64 sums fall on a float midpoint (exactly, mostly)."""
    request.getfixturevalue(path)
    data = _few_bits((2, 3, 24, 20), np.float32, 3)

    def upstream(shape):
        return _few_bits(shape, np.float32, 4)
    for kwargs in (dict(scale_factor=0.25), dict(size=(9, 7)), dict(size=(30, 5))):
        _compare(data, mode, upstream=upstream, **kwargs)


@pytest.mark.parametrize("path", ["small_blocks", "short_chains"])
def test_inexact_midpoint_sum_is_settled_from_the_exact_sum(path, request):
    """Input 0's gradient: fma(w1, -1.6861526, 0), then fma(w2, -2.9289765e-06, that): the float64 sum of the
    second lands on a float midpoint though the exact sum lies below it; a plain cast would round it up."""
    request.getfixturevalue(path)
    upstream = np.array([-1.6861526, -2.9289765e-06, 0.5], np.float32).reshape(1, 1, 1, 3)
    _compare(np.zeros((1, 1, 1, 7), np.float32), "bicubic", upstream=lambda shape: upstream, size=(1, 3))


@pytest.mark.parametrize("path", ["small_blocks", "short_chains"])
@pytest.mark.parametrize("mode", MODES)
def test_non_finite_values_bits(mode, path, request):
    request.getfixturevalue(path)
    data = np.random.default_rng(5).standard_normal((1, 2, 12, 14)).astype(np.float32)
    data[0, 0, 3, 4], data[0, 1, 7, 0] = np.inf, np.nan

    def upstream(shape):
        g = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
        g[0, 0, 1, 1], g[0, 1, 0, 2] = -np.inf, np.nan
        return g
    for kwargs in (dict(size=(5, 6)), dict(size=(12, 5)), dict(size=(20, 17))):
        _compare(data, mode, upstream=upstream, **kwargs)


@pytest.mark.parametrize("seed", range(6))
def test_random_cases_bits(seed):
    """Random shapes, sizes, modes, dtypes, layouts and align_corners."""
    r = np.random.default_rng(100 + seed)
    for _ in range(6):
        mode = str(r.choice(MODES))
        dtype = np.float64 if r.integers(0, 3) == 0 else np.float32
        shape = (int(r.integers(1, 3)), int(r.integers(1, 4)), int(r.integers(2, 30)), int(r.integers(2, 30)))
        size = (int(r.integers(1, 30)), int(r.integers(1, 30)))
        layout = str(r.choice(LAYOUTS))
        align_corners = mode != "lanczos" and bool(r.integers(0, 2))
        data = r.standard_normal(shape).astype(dtype)
        _compare(data, mode, layout, align_corners, size=size)
