"""Differences that the programs of ``tests/test_user_programs15_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``linalg.eig`` of a matrix holding an infinity or a NaN leaked NumPy's ``LinAlgError: Array must not contain infs
  or NaNs`` where torch refuses it in its own words (before it looks at the shape); ``linalg.eigvals``, which
  torch hands to LAPACK unchecked, leaked it too (torch: NaN eigenvalues); an ``out=`` of a real dtype was refused
  in the words of a cast, not torch's "Expected eigenvalues to be safely castable ...";
- ``linalg.lstsq`` read the right-hand side by its shape alone: torch allows ``other`` at most one dimension
  fewer than ``input`` (a 1-d ``b`` beside a batch of matrices is refused), words a vector's length mismatch as
  ``other.size(-1)``, broadcasts an ``other`` with one dimension fewer against the batch as if it were a batch of
  vectors even where it is read as a matrix (so ``lstsq(A_batch, B)`` with a matrix ``B`` is refused unless its
  rows match the batch), and gives ``rank`` and ``singular_values`` the batch shape of ``input`` alone;
- ``torch.testing.assert_close`` compared bfloat16 tensors exactly (torch's default tolerances for bfloat16 are
  rtol 0.016, atol 1e-5), and its report of an exception a comparison did not expect lacked torch's last
  sentences;
- ``trapezoid``/``trapz``/``cumulative_trapezoid`` of a 0-d tensor failed with ``tuple index out of range`` or
  NumPy's indexing words;
- ``searchsorted``/``bucketize`` with NaN among the boundaries (a lookup table with a gap) placed values as NumPy's
  NaN-last order does; torch's binary search, whose comparisons with NaN are false, goes right past them;
- ``linalg.matrix_exp`` of empty matrices (``(3, 0, 0)``) failed in NumPy's reshape.
"""

from __future__ import annotations

import pytest
from _lib import tg, torch, value_or_error

NAN, INF = float("nan"), float("inf")


def _outcome(program, lib) -> tuple:
    """``value_or_error`` of each tensor a program returns (a tuple of them, or one)."""
    try:
        result = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    results = result if isinstance(result, tuple) else (result,)
    return tuple(value_or_error(lambda _lib, r=r: r, lib) for r in results)


def _square(lib, corner: float, dtype=None):
    return lib.tensor([[1.0, 2.0, 0.5], [0.0, corner, 1.0], [3.0, 0.0, 1.0]], dtype=dtype or lib.float64)


_EIG = {
    "eig_nan": lambda lib: lib.linalg.eig(_square(lib, NAN)),
    "eig_inf_float32": lambda lib: lib.linalg.eig(_square(lib, INF, lib.float32)),
    "eig_nan_before_shape": lambda lib: lib.linalg.eig(lib.tensor([[1.0, NAN, 0.0]])),
    "eig_nan_requiring_grad": lambda lib: lib.linalg.eig(_square(lib, NAN).requires_grad_()),
    "eigvals_nan_requiring_grad": lambda lib: lib.linalg.eigvals(_square(lib, INF).requires_grad_()),
    "eigvals_inf": lambda lib: lib.linalg.eigvals(_square(lib, INF)),
    "eigvals_inf_float32": lambda lib: lib.linalg.eigvals(_square(lib, -INF, lib.float32)),
    "eigvals_out_real": lambda lib: lib.linalg.eigvals(_square(lib, 1.0), out=lib.empty(3, dtype=lib.float64)),
    "eig_out_real_values": lambda lib: lib.linalg.eig(
        _square(lib, 1.0, lib.float32), out=(lib.empty(3), lib.empty(3, 3, dtype=lib.complex64))),
    "eig_out_real_vectors": lambda lib: lib.linalg.eig(
        _square(lib, 1.0, lib.float32), out=(lib.empty(3, dtype=lib.complex64), lib.empty(3, 3))),
}


@pytest.mark.parametrize("program", _EIG.values(), ids=_EIG.keys())
def test_eig_of_non_finite_matrices_and_its_out_checks_as_torch(program):
    assert _outcome(program, tg) == _outcome(program, torch)


# (input shape, other shape, driver): the shapes of every result, or the refusal
_LSTSQ_SHAPES = [
    ((2, 3, 3), (3,), None), ((2, 4, 3), (4,), None), ((3, 3), (1, 3, 3), None), ((4, 3), (2, 4, 2), "gelsd"),
    ((4, 3), (3,), None), ((2, 3, 3), (3, 1), None), ((3, 4, 3), (4, 2), "gelsd"),
    ((1, 4, 3), (4, 2), "gelsd"), ((1, 4, 3), (2, 4, 2), "gelsd"), ((1, 4, 3), (5, 4, 2), None),
    ((2, 1, 4, 3), (1, 3, 4, 2), "gelss"), ((2, 1, 4, 3), (3, 4, 2), None), ((1, 1, 4, 3), (3, 4, 2), None),
    ((2, 5, 4, 3), (1, 4, 2), None), ((0, 4, 3), (4,), None),
]


def _lstsq_shapes(a_shape, b_shape, driver, lib):
    gen = lib.Generator().manual_seed(0)
    A = lib.randn(a_shape, generator=gen, dtype=lib.float64)
    B = lib.randn(b_shape, generator=gen, dtype=lib.float64)
    try:
        result = lib.linalg.lstsq(A, B, driver=driver)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    return tuple(tuple(r.shape) for r in result), result.rank.tolist()


@pytest.mark.parametrize(("a_shape", "b_shape", "driver"), _LSTSQ_SHAPES, ids=str)
def test_lstsq_reads_and_broadcasts_other_as_torch(a_shape, b_shape, driver):
    assert _lstsq_shapes(a_shape, b_shape, driver, tg) == _lstsq_shapes(a_shape, b_shape, driver, torch)


def test_lstsq_of_a_shared_matrix_solves_every_right_hand_side():
    """One design matrix (batch of 1) against a batch of right-hand sides: torch's values, its rank of one."""
    def fit(lib):
        gen = lib.Generator().manual_seed(1)
        A = lib.randn(1, 6, 3, generator=gen, dtype=lib.float64)
        B = lib.randn(4, 6, 2, generator=gen, dtype=lib.float64)
        return lib.linalg.lstsq(A, B, driver="gelsd")

    ours, theirs = fit(tg), fit(torch)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape and a.dtype.is_floating_point == b.dtype.is_floating_point
        assert torch.allclose(torch.from_numpy(a.numpy()), b, rtol=1e-10, atol=1e-12)


def _assert_close_report(lib, *args, **kwargs) -> str:
    try:
        lib.testing.assert_close(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the report is what is compared
        return f"{type(exc).__name__}: {exc}"
    return "equal"


_ASSERT_CLOSE = {
    "bfloat16_within_default_tolerance": lambda lib: _assert_close_report(
        lib, lib.tensor([1.0, 2.0, 3.0]).to(lib.bfloat16), lib.tensor([1.01, 2.02, 3.03]).to(lib.bfloat16)),
    "bfloat16_beyond_default_tolerance": lambda lib: _assert_close_report(
        lib, lib.tensor([1.0, 2.0]).to(lib.bfloat16), lib.tensor([1.1, 2.0]).to(lib.bfloat16)),
    "bfloat16_beside_float16": lambda lib: _assert_close_report(
        lib, lib.tensor([1.0]).to(lib.bfloat16), lib.tensor([1.01]).to(lib.float16), check_dtype=False),
    "unexpected_error_originating_a_pair": lambda lib: _assert_close_report(lib, True, 1),
    "unexpected_error_comparing": lambda lib: _assert_close_report(lib, lib.ones(1), lib.ones(1), rtol=-1.0, atol=0.0),
}


@pytest.mark.parametrize("program", _ASSERT_CLOSE.values(), ids=_ASSERT_CLOSE.keys())
def test_assert_close_reports_as_torch(program):
    assert program(tg) == program(torch)


_ZERO_DIM_INTEGRALS = {
    "trapezoid": lambda lib: lib.trapezoid(lib.tensor(2.0)),
    "trapezoid_dim0": lambda lib: lib.trapezoid(lib.tensor(2.0), dim=0),
    "trapezoid_dim1": lambda lib: lib.trapezoid(lib.tensor(2.0), dim=1),
    "trapezoid_dx": lambda lib: lib.trapezoid(lib.tensor(2.0), dx=0.5),
    "trapezoid_x": lambda lib: lib.trapezoid(lib.tensor(2.0), lib.tensor([1.0])),
    "trapezoid_scalar_x": lambda lib: lib.trapezoid(lib.tensor(2.0), lib.tensor(1.0)),
    "trapezoid_bool": lambda lib: lib.trapezoid(lib.tensor(True)),
    "trapz": lambda lib: lib.trapz(lib.tensor(2.0)),
    "cumulative_trapezoid": lambda lib: lib.cumulative_trapezoid(lib.tensor(2.0)),
    "cumulative_trapezoid_dim1": lambda lib: lib.cumulative_trapezoid(lib.tensor(2.0), dim=1),
    "cumulative_trapezoid_x": lambda lib: lib.cumulative_trapezoid(lib.tensor(2.0), lib.tensor([1.0])),
    "cumulative_trapezoid_scalar_x": lambda lib: lib.cumulative_trapezoid(lib.tensor(2.0), lib.tensor(1.0)),
}


@pytest.mark.parametrize("program", _ZERO_DIM_INTEGRALS.values(), ids=_ZERO_DIM_INTEGRALS.keys())
def test_integrals_of_a_zero_dim_tensor_refuse_as_torch(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)


_GAPPY = [NAN, 1.0, 2.0, NAN, 3.0, 4.0]
_NAN_BOUNDARIES = {
    "values_around_a_gap": lambda lib, right: lib.searchsorted(
        lib.tensor(_GAPPY), lib.tensor([NAN, 5.0, 0.5, 1.0, 2.0, 2.5, 3.0]), right=right),
    "float64_rows": lambda lib, right: lib.searchsorted(
        lib.tensor([[NAN, 1.0, 2.0], [0.0, 1.0, 2.0]], dtype=lib.float64),
        lib.tensor([[1.5, 0.0], [1.5, 2.0]], dtype=lib.float64), right=right),
    "half_scalar": lambda lib, right: lib.searchsorted(
        lib.tensor([1.0, NAN, 2.0], dtype=lib.float16), lib.tensor(2.5, dtype=lib.float16), right=right),
    "sorter": lambda lib, right: lib.searchsorted(
        lib.tensor([2.0, NAN, 1.0]), lib.tensor([1.5, 3.0]), sorter=lib.tensor([2, 0, 1]), right=right),
    "out_int32": lambda lib, right: lib.searchsorted(lib.tensor([1.0, NAN]), 1.5, right=right, out_int32=True),
    "all_nan": lambda lib, right: lib.searchsorted(lib.tensor([NAN] * 7), lib.tensor([1.0, NAN]), right=right),
    "bucketize": lambda lib, right: lib.bucketize(
        lib.tensor([[1.5, 0.0], [3.5, 2.0]]), lib.tensor([1.0, NAN, 2.0, 3.0]), right=right),
}


@pytest.mark.parametrize("right", [False, True], ids=["left", "right"])
@pytest.mark.parametrize("program", _NAN_BOUNDARIES.values(), ids=_NAN_BOUNDARIES.keys())
def test_search_among_nan_boundaries_as_torch(program, right):
    assert value_or_error(lambda lib: program(lib, right), tg) == value_or_error(lambda lib: program(lib, right), torch)


_EMPTY_EXPONENTIALS = {
    "batch_of_empty_matrices": lambda lib: lib.linalg.matrix_exp(lib.ones(3, 0, 0)),
    "empty_matrix": lambda lib: lib.linalg.matrix_exp(lib.ones(0, 0, dtype=lib.float64)),
    "empty_requiring_grad": lambda lib: lib.matrix_exp(lib.ones(2, 0, 0, requires_grad=True)).detach(),
}


@pytest.mark.parametrize("program", _EMPTY_EXPONENTIALS.values(), ids=_EMPTY_EXPONENTIALS.keys())
def test_matrix_exp_of_empty_matrices_as_torch(program):
    assert _outcome(program, tg) == _outcome(program, torch)


def test_matrix_exp_of_empty_matrices_records_its_node():
    names = [lib.matrix_exp(lib.ones(2, 0, 0, requires_grad=True)).grad_fn.name() for lib in (tg, torch)]
    assert names[0] == names[1]
