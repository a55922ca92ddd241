"""Differences that the programs of ``tests/test_user_programs12_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``F.grid_sample``'s 2-d bilinear mode (ROI crops, optical-flow warping) was a few ulp off torch, forward and
  backward: torch's vectorised CPU kernel has its compiler fuse the sums of products into multiply-adds (the
  corner sum, the unnormalisation ``(x + 1) * size / 2 - 0.5``, each channel's step of the grid gradient), and
  adds the input gradient in float, vector of grid points by vector, corner by corner (row by row where the
  grid's points are not contiguous).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

_SHAPES = {
    "odd_sizes_two_batches": ((2, 3, 5, 7), (2, 13, 11)),
    "many_points_per_pixel": ((3, 1, 4, 4), (3, 9, 9)),
    "few_points": ((1, 2, 16, 16), (1, 4, 3)),
}
_GRIDS = {
    "contiguous": lambda g: g,
    # (a conv net's [N, 2, H, W] output seen as a grid: each coordinate's plane contiguous)
    "channels_first_permuted": lambda g: g.permute(0, 3, 1, 2).contiguous().permute(0, 2, 3, 1),
    # (rows of points that do not follow one another: PyTorch's kernel takes its vectors row by row)
    "every_other_column": lambda g: g.repeat(1, 1, 2, 1)[:, :, ::2],
    # (one row of points repeated: a stride-0 H; its points are not contiguous, so vectors run row by row)
    "expanded_rows": lambda g: g[:, :1].expand(-1, g.shape[1], -1, -1),
}


def _sampled(lib, image: np.ndarray, grid: np.ndarray, weight: np.ndarray, layout, **options) -> list:
    """The sample and both gradients of ``(grid_sample(...) * weight).sum()``, as arrays."""
    x = lib.tensor(image, requires_grad=True)
    g0 = lib.tensor(grid, requires_grad=True)
    out = lib.nn.functional.grid_sample(x, layout(g0), mode="bilinear", **options)
    gx, gg = lib.autograd.grad((out * lib.tensor(weight)).sum(), (x, g0))
    return [out.detach().numpy(), gx.numpy(), gg.numpy()]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", sorted(_GRIDS))
@pytest.mark.parametrize("shape", sorted(_SHAPES))
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_bilinear_grid_sample_is_bit_for_bit(padding_mode, align_corners, shape, layout, dtype):
    (in_shape, (n, h, w)) = _SHAPES[shape]
    rng = np.random.default_rng(12)
    image = rng.standard_normal(in_shape).astype(dtype)
    grid = (rng.random((n, h, w, 2)) * 3 - 1.5).astype(dtype)
    weight = rng.standard_normal(in_shape[:2] + (h, w)).astype(dtype)
    options = dict(padding_mode=padding_mode, align_corners=align_corners)
    ours = _sampled(tg, image, grid, weight, _GRIDS[layout], **options)
    theirs = _sampled(torch, image, grid, weight, _GRIDS[layout], **options)
    for a, b in zip(ours, theirs):  # (output, input grad, grid grad; signs of zeros too)
        assert_same_bits(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [True, False])
def test_bilinear_grid_sample_of_special_grid_points(align_corners, dtype):
    """NaN, infinite, huge and tiny coordinates and the corners themselves (zeros padding: torch's border and
    reflection modes read out of bounds at NaN), with the input or the grid alone requiring grad."""
    rng = np.random.default_rng(5)
    image = rng.standard_normal((2, 3, 5, 6)).astype(dtype)
    grid = (rng.random((2, 3, 8, 2)) * 3 - 1.5).astype(dtype)
    grid[0, 0, :7] = [[np.nan, 0.1], [0.2, np.inf], [-np.inf, 0], [1e30, -1e30], [-1, 1], [1, -1], [-0.0, 1e-40]]
    grid[1, 1, :5] = [[5e9, 0.3], [-1.0000001, 1.0000001], [0.9999999, -0.9999999], [np.nan, np.nan], [17.3, -9.1]]
    weight = rng.standard_normal((2, 3, 3, 8)).astype(dtype)
    for wants in ((True, False), (False, True)):
        results = []
        for lib in (tg, torch):
            x, g = lib.tensor(image, requires_grad=wants[0]), lib.tensor(grid, requires_grad=wants[1])
            out = lib.nn.functional.grid_sample(x, g, mode="bilinear", align_corners=align_corners)
            (grad,) = lib.autograd.grad((out * lib.tensor(weight)).sum(), x if wants[0] else g)
            results.append((out, grad))
        for a, b in zip(*results):
            assert_same_bits(a, b)
