"""Corners of torch.special's incomplete gamma and Hurwitz zeta against torch, bit for bit.

- ``gammainc``/``gammaincc`` (``igamma``/``igammac``) gave NaN at corners where PyTorch's calc_igamma answers
  before computing and a NaN argument fails the tests before the deciding one: ``gammainc(nan, 0)`` is 0,
  ``gammainc(inf, nan)`` 0, ``gammainc(nan, inf)`` 1 (and ``gammaincc`` the complements).
- ``zeta``/``polygamma(n >= 2)``, now summed a chunk of Cephes' steps at a time over all elements: the same bits
  on wide random arguments and the corner grid.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _lib import tg, torch

_CORNERS = [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 0.5, 1e300]
_EDGE_VALUES = {np.nan, np.inf, -np.inf, 0.0, -1.0}  # (-0.0 == 0.0)


def _corner_pairs(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of the grid with an edge value in it (pairs of ordinary numbers are computed values)."""
    pairs = [p for p in itertools.product(_CORNERS, _CORNERS)
             if any(v in _EDGE_VALUES or np.isnan(v) for v in p)]
    with np.errstate(over="ignore"):
        return tuple(np.array(column, dtype=dtype) for column in zip(*pairs))


def _same_values(ours: np.ndarray, theirs: np.ndarray) -> None:
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)  # (NaN where NaN)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["special.gammainc", "special.gammaincc", "igamma", "igammac"])
def test_incomplete_gamma_corners(name, dtype):
    a, x = _corner_pairs(dtype)

    def call(lib):
        function = lib.special if name.startswith("special.") else lib
        return getattr(function, name.split(".")[-1])(lib.from_numpy(a), lib.from_numpy(x)).numpy()

    _same_values(call(tg), call(torch))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zeta_wide_random_and_corners(dtype):
    rng = np.random.default_rng(11)
    grid = np.array(_CORNERS + [1.0, 1.5, 2.0, 400.0, -2.5])
    s = np.concatenate([rng.uniform(1, 30, 3000), np.exp(rng.uniform(0, 5, 3000)), rng.integers(1, 12, 2000),
                        np.repeat(grid, grid.size)])
    q = np.concatenate([rng.uniform(-20, 50, 3000), np.exp(rng.uniform(-8, 5, 3000)) * rng.choice([-1, 1], 3000),
                        rng.uniform(-5, 5, 2000), np.tile(grid, grid.size)])
    with np.errstate(over="ignore"):
        s, q = s.astype(dtype), q.astype(dtype)
    _same_values(tg.special.zeta(tg.from_numpy(s), tg.from_numpy(q)).numpy(),
                 torch.special.zeta(torch.from_numpy(s), torch.from_numpy(q)).numpy())
