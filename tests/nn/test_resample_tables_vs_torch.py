"""Interpolating upsampling computed from per-plan tables (every output's terms, every input's backward
contributions) with the fused multiply-adds of a whole chain checked at once: torch's bits forward, backward and
double backward, on the inputs that stress the new paths (float midpoints of exact sums, inexact midpoints,
non-finite values, empty batches, many contributions per input element, edge elements with more contributions
than the rest), and the chain itself against the step-by-step fused multiply-add it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from tests._lib import assert_same_bits, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")

CASES = [  # (mode, input shape, interpolate's keywords)
    ("bilinear", (1, 2, 8, 8), {"scale_factor": 2}),
    ("bilinear", (1, 9, 5, 4), {"scale_factor": 2}),  # (channels-last kernel: 8 vector lanes and a scalar tail)
    ("bilinear", (2, 3, 3, 3), {"size": (40, 37)}),  # (many contributions per input element)
    ("bilinear", (1, 2, 6, 7), {"size": (5, 11), "align_corners": True}),
    ("bilinear", (1, 2, 20, 70), {"scale_factor": 2}),  # (generic kernel: height + width > 128)
    ("bicubic", (1, 2, 6, 6), {"scale_factor": 2}),
    ("bicubic", (2, 1, 9, 7), {"scale_factor": 0.6}),
    ("linear", (2, 3, 9), {"scale_factor": 3}),
    ("trilinear", (1, 2, 3, 4, 4), {"scale_factor": 2}),
    ("trilinear", (1, 9, 2, 3, 2), {"size": (3, 5, 4)}),
]
DATA = ["normal", "integer grid", "wide magnitudes", "non-finite"]


def _data(kind: str, shape: tuple, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "normal":
        return rng.standard_normal(shape)
    # (exact sums that land on float midpoints: most sums of a 2x upsampling of integers)
    grid = rng.integers(-2**24, 2**24, shape).astype(np.float64)
    if kind == "wide magnitudes":  # (sums far from exact, some on midpoints)
        grid[..., ::3] *= 2.0**-30
    if kind == "non-finite":
        flat = grid.reshape(-1)
        flat[rng.choice(flat.size, size=min(flat.size, 3), replace=False)] = [np.inf, -np.inf, np.nan][: flat.size]
    return grid


def _run(lib, mode: str, shape: tuple, options: dict, data: str, dtype: str, channels_last: bool):
    x = lib.tensor(_data(data, shape, 0), dtype=getattr(lib, dtype))
    if channels_last:
        x = x.contiguous(memory_format=lib.channels_last if x.dim() == 4 else lib.channels_last_3d)
    x.requires_grad_()
    y = lib.nn.functional.interpolate(x, mode=mode, **options)
    g = lib.tensor(_data(data, tuple(y.shape), 1), dtype=y.dtype).requires_grad_()
    (gx,) = lib.autograd.grad(y, x, g, create_graph=True)
    (gg,) = lib.autograd.grad(gx, g, lib.tensor(_data("normal", tuple(gx.shape), 2), dtype=gx.dtype))
    return y, gx, gg, type(gx.grad_fn).__name__


@pytest.mark.parametrize("mode,shape,options", CASES)
@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_gradients_and_double_backward_match_torch(mode, shape, options, data, dtype):
    for channels_last in (False, True) if len(shape) > 3 else (False,):
        ours = _run(tg, mode, shape, options, data, dtype, channels_last)
        theirs = _run(torch, mode, shape, options, data, dtype, channels_last)
        for a, b in zip(ours[:3], theirs[:3]):
            assert_same_bits(a, b)
            assert a.stride() == b.stride()
        assert ours[3] == theirs[3]


@pytest.mark.parametrize("mode,shape", [("bilinear", (0, 3, 4, 5)), ("bicubic", (0, 2, 4, 4)),
                                        ("linear", (0, 3, 7)), ("trilinear", (0, 2, 3, 3, 4))])
def test_empty_batch_matches_torch(mode, shape):
    ours, theirs = (_run(lib, mode, shape, {"scale_factor": 2}, "normal", "float32", False) for lib in (tg, torch))
    for a, b in zip(ours[:3], theirs[:3]):
        assert tuple(a.shape) == tuple(b.shape)


@pytest.mark.skipif(tg is torch, reason="tracegrad's own arithmetic")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_chain_is_the_step_by_step_fma(dtype):
    from tracegrad.ops.nn_ops.interp_cpu import fma, fused_chain

    rng = np.random.default_rng(3)
    steps, n = 6, 400
    first = (rng.standard_normal((steps, 1, n)) * 2.0 ** rng.integers(-40, 40, (steps, 1, n))).astype(dtype)
    second = rng.integers(-8, 8, (steps, 3, n)).astype(dtype) / 4
    start = rng.standard_normal((3, n)).astype(dtype)
    # an inexact sum on a float midpoint, where rounding the float64 sum to float32 goes the wrong way:
    # (1 + 2**-23) + (2**-24 - 2**-70) is 1 + 2**-23 + 2**-24 in float64, and 1 + 2**-23 fused
    first[0, 0, 0], second[0, 0, 0], start[0, 0] = 2.0**-24 * (1 + 2.0**-23), 1 - 2.0**-23, 1 + 2.0**-23
    second[1:, 0, 0] = 0  # (the later steps add zeros there)
    first[1, 0, 1], start[1, 1] = np.inf, np.nan  # (non-finite values: float64's other path)
    expected = start
    with np.errstate(invalid="ignore", over="ignore"):
        for k in range(steps):
            expected = fma(first[k], second[k], expected)
        chained = fused_chain(first, second, start)
    assert chained.dtype == expected.dtype == dtype
    assert np.array_equal(chained.view(f"u{chained.itemsize}"), expected.view(f"u{expected.itemsize}"))
    if dtype == np.float32:
        assert chained[0, 0] == np.float32(1 + 2.0**-23)


@pytest.mark.skipif(tg is torch, reason="tracegrad's own cache")
def test_a_plan_and_its_adjoint_share_their_tables():
    from tracegrad.ops.nn_ops.interp_cpu import shared_plan

    plan = shared_plan("linear", (4, 5), (8, 10), False, (2.0, 2.0))
    adjoint = plan.transposed()
    assert plan.transposed() is adjoint and adjoint.transposed() is plan
    table = adjoint.contributions(np.dtype(np.float32))
    assert table is plan.contributions(np.dtype(np.float32))
    assert not any(a.flags.writeable for a in (table.index, table.counts, table.restore, *table.weights))
