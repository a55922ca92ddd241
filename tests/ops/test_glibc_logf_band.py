"""glibc's logf (``glibc_float_math.log_float``) runs its multiply-adds unfused and redoes them fused only for
results within ``_LOGF_BAND`` of a midpoint between floats. Checked here against the fused steps on every input
(the band made wide enough to take all), for a million random floats, the neighbourhood of 1 (where the table's
c is 1 and the result is small), powers of two, subnormals and special values; an offline run compared all 2**31
non-negative float32 bit patterns and found none that differ. And against torch, whose float32 xlogy calls logf."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tracegrad.ops.nn_ops import glibc_float_math


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(7)
    near_one = np.arange(0x3F700000, 0x3F900000, 7, dtype=np.uint32).view(np.float32)
    powers = np.float32(2.0) ** np.arange(-149, 128, dtype=np.float32)
    specials = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, 1.17549435e-38], np.float32)
    random_bits = rng.integers(0, 0x7F800000, 1_000_000, dtype=np.uint32).view(np.float32)
    return np.concatenate([near_one, powers, specials, random_bits])


def test_unfused_first_gives_the_fused_bits(monkeypatch):
    x = _inputs()
    ours = glibc_float_math.log_float(x)
    monkeypatch.setattr(glibc_float_math, "_LOGF_BAND", 1 << 28)  # (every result through the fused steps)
    fused = glibc_float_math.log_float(x)
    same = (ours.view(np.uint32) == fused.view(np.uint32)) | (np.isnan(ours) & np.isnan(fused))
    assert same.all(), x[~same][:5]


@pytest.mark.skipif(not glibc_float_math.cpu_has_fma(), reason="glibc's FMA build")
def test_matches_torchs_logf():
    y = np.random.default_rng(8).uniform(1e-30, 1e30, 100_000).astype(np.float32)
    theirs = torch.xlogy(torch.ones(y.shape), torch.from_numpy(y)).numpy()
    assert np.array_equal(glibc_float_math.log_float(y).view(np.uint32), theirs.view(np.uint32))
