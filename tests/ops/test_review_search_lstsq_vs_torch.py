"""Review of searchsorted/bucketize, lstsq, eig and assert_close against torch.

- ``searchsorted``/``bucketize`` with unsorted boundaries (no NaN among them) went through NumPy's binary search,
  which starts each search of increasing values where the previous one ended and so answers otherwise than
  ATen's plain lower/upper bound; a one-long row holding NaN already went through ATen's.
"""

from __future__ import annotations

import pytest
from _lib import tg, torch, value_or_error

NAN, INF = float("nan"), float("inf")

_UNSORTED = {
    "inf_in_the_middle_right": lambda lib: lib.searchsorted(
        lib.tensor([-3.0, 0.0, INF, 2.0], dtype=lib.float64), lib.tensor([3.0, 4.0, 4.0], dtype=lib.float64),
        right=True),
    "descending_ints": lambda lib: lib.searchsorted(lib.tensor([5, 4, 3, 2, 1]), lib.tensor([0, 1, 2, 3, 6])),
    "unsorted_rows_side_right": lambda lib: lib.searchsorted(
        lib.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]]), lib.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, 6.0]]),
        side="right"),
    "bucketize_unsorted": lambda lib: lib.bucketize(lib.tensor([1, 2, 3, 4]), lib.tensor([4, 1, 3, 2])),
    "one_long_nan_rows": lambda lib: lib.searchsorted(lib.tensor([[NAN], [1.0]]), lib.tensor([[-3.0, 0.0]] * 2)),
}


@pytest.mark.parametrize("program", _UNSORTED.values(), ids=_UNSORTED.keys())
def test_searchsorted_of_unsorted_boundaries_walks_as_aten(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)
