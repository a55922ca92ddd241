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
from _lib import tg, torch

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
    for name, a, b in zip(("output", "input grad", "grid grad"), ours, theirs):
        np.testing.assert_array_equal(a, b, err_msg=name)
