"""var and std work in one float64 scratch array the size of the input, not three.

A float32 input is widened to float64 (PyTorch accumulates in double), centred and squared in place. Keeping a
single temporary matters beyond memory: with three alive at once, a (256, 1024) input's working set outgrew what
glibc's malloc keeps between calls, and each call faulted some 2,000 fresh pages in (12x slower). NumPy reports
its array buffers to tracemalloc, which measures the peak here.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from _lib import tg

SHAPE = (256, 1024)
WIDE_BYTES = SHAPE[0] * SHAPE[1] * 8  # (one float64 copy of the input)


@pytest.mark.parametrize("program", [
    lambda x: x.var(), lambda x: x.std(), lambda x: x.var(1), lambda x: x.std(0, keepdim=True),
    lambda x: tg.var_mean(x), lambda x: tg.std_mean(x, 1, correction=0),
], ids=["var", "std", "var dim", "std dim keepdim", "var_mean", "std_mean dim"])
def test_one_float64_temporary(program):
    x = tg.from_numpy(np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32))
    program(x)  # (warm: first-call caches are not the kernel's scratch)
    tracemalloc.start()
    try:
        program(x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert WIDE_BYTES <= peak < 1.25 * WIDE_BYTES, f"peak {peak / 2**20:.2f} MiB"
