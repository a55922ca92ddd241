"""float16 log_softmax along a dim that is not the last, bit for bit with torch (was: computed in half by NumPy,
the last bit off in most cases). PyTorch's reduced-precision kernel works on a float32 copy with the float
kernel's steps, its vectors holding twice the float lanes, and rounds once; shapes of 2 to 3 dims with sizes up
to 70 cover the vector widths' remainders.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch


def _shapes() -> list[tuple[int, ...]]:
    rng = np.random.default_rng(5)
    fixed = [(3, 1), (2, 70), (4, 33, 2), (2, 17, 48), (70, 5), (1, 64, 31)]
    return fixed + [tuple(int(v) for v in rng.integers(1, 71, rng.integers(2, 4))) for _ in range(24)]


def _log_softmax(lib, x: np.ndarray, dim: int, source: str) -> np.ndarray:
    kwargs = {"dtype": lib.float16} if source == "double_to_half" else {}
    return lib.nn.functional.log_softmax(lib.from_numpy(x), dim, **kwargs).numpy()


@pytest.mark.parametrize("source", ["half", "double_to_half"])
def test_log_softmax_half_other_dims(source):
    rng = np.random.default_rng(9)
    for shape in _shapes():
        x = rng.standard_normal(shape) * 4
        if source == "half":
            x = x.astype(np.float16)
        for dim in range(len(shape) - 1):
            ours, theirs = (_log_softmax(lib, x, dim, source) for lib in (tg, torch))
            assert ours.dtype == theirs.dtype == np.float16
            np.testing.assert_array_equal(ours, theirs, err_msg=f"{shape} dim {dim}")
