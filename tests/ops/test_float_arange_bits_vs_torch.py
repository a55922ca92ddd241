"""``arange`` of float32 and float64 with PyTorch's bits. ATen's kernel fills two vectors (8 floats, 4 doubles) at a
time from a base ``start + step * k`` rounded to the dtype, lane i at ``base + i * step`` (a fused multiply-add), and
the elements past the last pair of vectors one at a time: ``arange(0, 1, 0.1)`` and the like differed from torch's
in some last bits.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch


def _cases():
    rng = np.random.default_rng(11)
    cases = []
    for k in range(160):
        dtype = ("float32", "float64")[k % 2]
        start = float(rng.choice([rng.integers(-100, 100), rng.uniform(-100, 100), round(rng.uniform(-10, 10), 3)]))
        step = float(rng.choice([rng.uniform(0.001, 5), round(rng.uniform(0.01, 3), 2), -rng.uniform(0.01, 3), 0.1]))
        count = int(rng.integers(0, 70))
        cases.append((dtype, start, start + step * count + rng.uniform(0, 1) * step, step))
    cases += [("float32", 0.0, 1.0, 0.1), ("float64", 0.0, 1.0, 0.1), ("float32", 2.0**24 + 1, 2.0**24 + 40, 1.0),
              ("float32", -3.0, 70.0, 2.0), ("float64", 0.5, 33.5, 1.0)]
    return cases


@pytest.mark.parametrize(("dtype", "start", "end", "step"), _cases())
def test_arange_bits_as_in_torch(dtype, start, end, step):
    assert_same_bits(tg.arange(start, end, step, dtype=getattr(tg, dtype)),
                     torch.arange(start, end, step, dtype=getattr(torch, dtype)))


def test_default_dtype_arange_as_in_torch():
    assert_same_bits(tg.arange(0, 3, 0.3), torch.arange(0, 3, 0.3))
