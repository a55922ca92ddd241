"""One real matrix's LU takes a loop of fewer NumPy calls per column than a batch's (``lu._factor_one``): it must
factor every matrix to the same bits, pivots and info as the batch loop, which the linear algebra tests compare
with torch (singular, zero-column, NaN, inf, subnormal and tied-pivot matrices included)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_close, tg, torch

from tracegrad.ops import lu as lu_module


def _matrices(dtype) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    found = []
    for m, n in [(1, 1), (2, 2), (3, 3), (6, 6), (13, 13), (3, 5), (5, 3), (1, 4), (4, 1), (0, 0), (0, 3)]:
        a = rng.standard_normal((m, n)) * 10.0 ** rng.integers(-3, 3)
        found.append(a)
        if min(m, n) > 1:
            repeated, zero_column, with_nan, with_inf = a.copy(), a.copy(), a.copy(), a.copy()
            repeated[1] = repeated[0]
            zero_column[:, 0] = 0
            with_nan[0, 0] = np.nan
            with_inf[1, 1] = np.inf
            subnormal = a * (1e-39 if dtype == np.float32 else 1e-310 if dtype == np.float64 else 1e-6)
            found += [repeated, zero_column, with_nan, with_inf, subnormal, np.round(a * 2)]
    return [a.astype(dtype) for a in found]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_one_matrix_factors_as_a_batch_of_one(dtype):
    for a in _matrices(dtype):
        one, one_pivots = a.copy(), np.empty(min(a.shape), np.int32)
        batch, batch_pivots, batch_info = a[None].copy(), np.empty((1, min(a.shape)), np.int32), np.zeros(1, np.int32)
        with np.errstate(all="ignore"):
            info = lu_module._factor_one(one, one_pivots)
            lu_module._factor_batch(batch, batch_pivots, batch_info)
        assert one.tobytes() == batch[0].tobytes(), (a.dtype, a.shape)
        assert one_pivots.tolist() == batch_pivots[0].tolist() and info == batch_info[0]


def test_pivots_and_values_as_torch():
    """(tracegrad's unblocked factorisation matches MKL's to the last bits on small matrices only: values are
    compared within rounding, the pivots and info exactly)"""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((9, 9))
    singular = a.copy()
    singular[2] = singular[5]
    for matrix in (a, singular, np.round(a)):
        ours, theirs = (lib.linalg.lu_factor_ex(lib.tensor(matrix)) for lib in (tg, torch))
        assert ours.pivots.tolist() == theirs.pivots.tolist() and ours.info.item() == theirs.info.item()
        assert_close(ours.LU, theirs.LU, rtol=1e-12, atol=1e-12)
        assert_close(tg.linalg.det(tg.tensor(matrix)), torch.linalg.det(torch.tensor(matrix)), rtol=1e-12, atol=1e-12)
