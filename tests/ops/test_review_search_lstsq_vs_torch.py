"""Review of searchsorted/bucketize, lstsq, eig and assert_close against torch.

- ``searchsorted``/``bucketize`` with unsorted boundaries (no NaN among them) went through NumPy's binary search,
  which starts each search of increasing values where the previous one ended and so answers otherwise than
  ATen's plain lower/upper bound; a one-long row holding NaN already went through ATen's.
- ``linalg.eigvals`` of a batch where one matrix holds an infinity gave NaN for every matrix of the batch (torch:
  NaN for that one, the others' eigenvalues as usual);
- ``linalg.eig``/``eigvals`` of a float16 or bfloat16 matrix with a real ``out=`` said the kernel has no Half
  (BFloat16) instance, where torch's out= dtype check comes first and names ComplexHalf (ComplexFloat);
- ``trapezoid``/``cumulative_trapezoid`` with ``x`` refused a bool ``x`` or ``y`` naming ``y`` alone (torch's
  overload with ``x`` says "`x` or `y`"), and ``cumulative_trapezoid`` with ``x`` checked the dtypes before
  wrapping the dim (torch wraps it first: a 0-d ``y`` with ``dim=1`` is out of range, a bool ``x`` beside a 0-d
  ``y`` is refused as bool).
"""

from __future__ import annotations

import itertools

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


def _square(lib, corner: float, dtype=None):
    return lib.tensor([[1.0, 2.0, 0.5], [0.0, corner, 1.0], [3.0, 0.0, 1.0]], dtype=dtype or lib.float64)


def _triangular(lib, dtype=None):
    """A matrix whose eigenvalues LAPACK finds exactly (NumPy's and torch's geev differ in the last bits elsewhere)."""
    return lib.tensor([[1.0, 2.0, 0.5], [0.0, 2.0, 1.0], [0.0, 0.0, 3.0]], dtype=dtype or lib.float64)


_EIG = {
    "eigvals_batch_one_inf": lambda lib: lib.linalg.eigvals(lib.stack([_square(lib, INF), _triangular(lib)])),
    "eigvals_batch_inf_last_float32": lambda lib: lib.linalg.eigvals(
        lib.stack([_triangular(lib, lib.float32), _square(lib, -INF, lib.float32)])),
    "eigvals_batch_one_inf_out": lambda lib: lib.linalg.eigvals(
        lib.stack([_triangular(lib), _square(lib, INF)]), out=lib.empty(2, 3, dtype=lib.complex128)),
    "eig_half_out_real": lambda lib: lib.linalg.eig(_square(lib, 1.0, lib.float16), out=(lib.empty(3), lib.empty(3, 3))),
    "eig_half_out_real_vectors": lambda lib: lib.linalg.eig(
        _square(lib, 1.0, lib.float16), out=(lib.empty(3, dtype=lib.complex64), lib.empty(3, 3))),
    "eigvals_half_out_real": lambda lib: lib.linalg.eigvals(_square(lib, 1.0, lib.float16), out=lib.empty(3)),
    "eig_bfloat16_out_real": lambda lib: lib.linalg.eig(
        _square(lib, 1.0, lib.bfloat16), out=(lib.empty(3), lib.empty(3, 3))),
    "eigvals_bfloat16_out_real": lambda lib: lib.linalg.eigvals(_square(lib, 1.0, lib.bfloat16), out=lib.empty(3)),
    "eigvals_half_out_complex": lambda lib: lib.linalg.eigvals(
        _square(lib, 1.0, lib.float16), out=lib.empty(3, dtype=lib.complex64)),
}


@pytest.mark.parametrize("program", _EIG.values(), ids=_EIG.keys())
def test_eigvals_of_batches_with_infinities_and_out_checks_of_half_as_torch(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)


_Y = {"y_0d": lambda lib: lib.tensor(2.0), "y_1d": lambda lib: lib.ones(3), "y_bool": lambda lib: lib.ones(3).bool(),
      "y_0d_bool": lambda lib: lib.tensor(True)}
_X = {"x_0d": lambda lib: lib.tensor(1.0), "x_1d": lambda lib: lib.arange(3.0), "x_2d": lambda lib: lib.ones(3, 3),
      "x_bool": lambda lib: lib.ones(3).bool(), "x_0d_bool": lambda lib: lib.tensor(True)}


@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
@pytest.mark.parametrize(("y", "x", "dim"), [(y, x, dim) for y, x, dim in itertools.product(_Y, _X, (-1, 0, 1))])
def test_trapezoid_with_x_checks_dim_and_bool_in_torch_order(name, y, x, dim):
    def program(lib):
        return getattr(lib, name)(_Y[y](lib), _X[x](lib), dim=dim)

    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("name", ["trapezoid", "cumulative_trapezoid"])
@pytest.mark.parametrize(("y", "dim"), list(itertools.product(_Y, (-1, 0, 1, 5))))
def test_trapezoid_with_dx_as_torch(name, y, dim):
    def program(lib):
        return getattr(lib, name)(_Y[y](lib), dx=0.5, dim=dim)

    assert value_or_error(program, tg) == value_or_error(program, torch)
