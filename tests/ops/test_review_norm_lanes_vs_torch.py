"""p = 2 norms over contiguous runs against torch, bit for bit, where the per-lane sums over many vectors run
through einsum rather than add.reduce (from 33 vectors in all: a 64x64 matrix's row norms, its whole norm, as
Adafactor's step takes them); einsum adds each lane's vectors in order as add.reduce does."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, dim", [((64, 64), -1), ((64, 64), None), ((4, 8, 8), -1), ((5, 33), -1), ((3, 100), -1),
                                        ((1, 4096), -1), ((33, 8), -1), ((2, 3, 48), (-1,))])
def test_norm_over_rows_of_many_vectors(shape, dim, dtype):
    # (values spread over many binades, so that another order of the sums would round otherwise)
    rng = np.random.default_rng(0)
    values = (rng.standard_normal(shape) * np.exp2(rng.integers(-12, 12, shape))).astype(dtype)
    ours, theirs = tg.tensor(values), torch.tensor(values)
    if dim is None:
        assert_same_bits(ours.norm(2), theirs.norm(2))
    else:
        assert_same_bits(tg.norm(ours, dim=dim, keepdim=True), torch.norm(theirs, dim=dim, keepdim=True))
        assert_same_bits(tg.linalg.vector_norm(ours, dim=dim), torch.linalg.vector_norm(theirs, dim=dim))
