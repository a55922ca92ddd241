"""``log10`` of float32 and half against torch's, bit for bit: NumPy's float32 ``log10`` is an ulp off about half
the time (``log10(1000.0)`` gave 3.0000002), which moved ``torch.utils.benchmark``'s unit choice at powers of ten."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_log10_of_powers_of_ten_and_random_magnitudes(dtype):
    span = 30 if dtype == "float32" else 4
    powers = np.float64(10.0) ** np.arange(-span, span + 1)
    magnitudes = np.random.RandomState(0).lognormal(0, 4 if dtype == "float32" else 2, 4000)
    values = np.concatenate([powers, magnitudes, [0.0, -1.0, np.inf, np.nan]]).astype(dtype)
    assert_same_bits(tg.from_numpy(values).log10(), torch.from_numpy(values).log10())
    assert_same_bits(tg.tensor(1e-6).log10(), torch.tensor(1e-6).log10())  # a 0-d tensor, as benchmark makes
