"""Max pooling of windows where nothing beats the padding (compared with torch).

PyTorch's CPU kernel scans only a window's in-bounds elements, starting from the lowest value at the first
in-bounds position, and moves only for a larger value (or a NaN). Where every in-bounds element is -inf (or an
integer type's minimum), it keeps that first position. tracegrad scanned the padded window and picked the padding
itself: a negative or wrong index, and the gradient sent to the wrong element (or out of the plane).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import run_both

NEG_INF = float("-inf")


def _pool(lib, values: np.ndarray, dims: int, **kwargs):
    x = lib.from_numpy(values.copy())
    if x.dtype.is_floating_point:
        x.requires_grad_()
    pool = getattr(lib.nn.functional, f"max_pool{dims}d")
    out, indices = pool(x, return_indices=True, **kwargs)
    grad = None
    if x.requires_grad:
        weights = lib.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
        (grad,) = lib.autograd.grad(out, x, weights)
        grad = grad.tolist()
    return out.tolist(), indices.tolist(), grad


CASES = {
    "2-d, all -inf, 3x3 stride 1 pad 1": ((1, 1, 3, 3), 2, {"kernel_size": 3, "stride": 1, "padding": 1}),
    "2-d, 2x2 stride 2 pad 1": ((1, 2, 4, 5), 2, {"kernel_size": 2, "stride": 2, "padding": 1}),
    "2-d, dilation 2": ((2, 1, 5, 5), 2, {"kernel_size": 3, "stride": 1, "padding": 1, "dilation": 2}),
    "2-d, ceil mode": ((1, 1, 5, 4), 2, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    "2-d, unbatched": ((3, 4, 4), 2, {"kernel_size": 3, "stride": 1, "padding": 1}),
    "1-d": ((1, 2, 6), 1, {"kernel_size": 3, "stride": 1, "padding": 1}),
    "1-d, dilation 2": ((1, 1, 7), 1, {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2}),
    "3-d": ((1, 1, 3, 3, 3), 3, {"kernel_size": 3, "stride": 1, "padding": 1}),
    "3-d, 2x2x2 stride 2 pad 1": ((1, 2, 2, 3, 4), 3, {"kernel_size": 2, "stride": 2, "padding": 1}),
}


@pytest.mark.parametrize("fill", ["all -inf", "some -inf"])
@pytest.mark.parametrize("case", CASES)
def test_windows_of_minus_infinity_keep_torchs_first_in_bounds_index(case, fill):
    shape, dims, kwargs = CASES[case]
    values = np.full(shape, NEG_INF, np.float32)
    if fill == "some -inf":  # (finite values in some windows: only the others keep the first position)
        rng = np.random.default_rng(len(shape) + dims)
        finite = rng.random(shape) < 0.3
        values[finite] = rng.standard_normal(int(finite.sum()))
    ours, theirs = run_both(lambda lib: _pool(lib, values, dims, **kwargs))
    assert ours == theirs


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_integer_windows_of_the_types_minimum(dtype):
    low = np.iinfo(dtype).min
    values = np.full((1, 1, 4, 4), low, dtype)
    values[0, 0, 3, 3] = low + 1
    ours, theirs = run_both(lambda lib: _pool(lib, values, 2, kernel_size=3, stride=1, padding=1))
    assert ours == theirs


def test_float64_channels_last():
    values = np.full((2, 3, 4, 4), NEG_INF)
    values[1, 2, 0, 0] = 0.5

    def program(lib):
        x = lib.from_numpy(values.copy()).to(memory_format=lib.channels_last).requires_grad_()
        out, indices = lib.nn.functional.max_pool2d(x, 3, 1, 1, return_indices=True)
        (grad,) = lib.autograd.grad(out.sum(), x)
        return indices.tolist(), grad.tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("kwargs", [{"kernel_size": 1}, {"kernel_size": 2, "stride": 1, "padding": 1},
                                    {"kernel_size": 3, "stride": 2, "padding": 1}])
def test_3d_channels_last_keeps_torchs_depthless_starting_index(dtype, kwargs):
    """torch's 3-d channels-last kernel starts a window's index from its height and width only: an unbeaten
    window (all -inf, or the integer minimum) returns that depthless index, and the gradient goes there."""
    low = -np.inf if dtype is np.float32 else np.iinfo(dtype).min
    rng = np.random.default_rng(7)
    values = np.where(rng.random((2, 3, 4, 3, 5)) < 0.8, low, 1).astype(dtype)

    def program(lib):
        x = lib.from_numpy(values.copy()).contiguous(memory_format=lib.channels_last_3d)
        if x.dtype.is_floating_point:
            x.requires_grad_()
        out, indices = lib.nn.functional.max_pool3d(x, return_indices=True, **kwargs)
        grad = lib.autograd.grad(out.sum(), x)[0].tolist() if x.requires_grad else None
        return out.tolist(), indices.tolist(), grad

    ours, theirs = run_both(program)
    assert ours == theirs
