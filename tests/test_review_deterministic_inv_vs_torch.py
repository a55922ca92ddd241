"""Review findings against torch 2.13 (commits 2fe9c6a, d8d225d): ``linalg.inv``/``inv_ex`` of a matrix that is
exactly singular to PyTorch's LAPACK (a zero pivot) while NumPy's LAPACK, rounding otherwise, still inverts it
(the info, inf/NaN inverse and error), alone and in a batch NumPy inverts whole; under deterministic algorithms
``UninitializedParameter.materialize`` fills its memory as ``empty`` does, and ``resize_`` fills a grown storage
from the element its old bytes only partly held."""

from __future__ import annotations

import numpy as np
import pytest

from tests._lib import assert_same_bits, tg, torch, value_or_error

# (each exactly singular to PyTorch's LAPACK, with a zero pivot at info; NumPy's np.linalg.inv inverts each)
SINGULAR_TO_TORCH = {
    "float64 4x4": ("float64", [[-3.0, 6.0, 7.0, -6.0], [-9.0, 0.0, 5.0, 6.0], [21.0, -1.0, -5.0, 10.0],
                                [9.0, -6.0, -9.0, 6.0]]),
    "float64 5x5 sevenths": ("float64", (np.array([[0, 10, -8, -6, 4], [-2, -3, -1, -5, 11], [0, -6, 2, -2, 8],
                                                   [8, -6, 3, 0, 6], [2, -9, 5, 1, 5]]) / 7.0).tolist()),
    "float32 2x2": ("float32", [[2.0, -3.0], [-4 / 3, 2.0]]),
    "float32 3x3": ("float32", [[9.0, -3.0, 5.0], [3.0, -6.0, 5.0], [0.0, 3.0, -2.0]]),
    "float32 4x4 tenths": ("float32", [[-0.6, 0.0, 0.3, -0.1], [-0.3, -0.1, 0.3, -0.1], [-0.3, -0.5, -0.3, -1.5],
                                       [0.3, 0.1, -0.5, -0.1]]),
}


@pytest.mark.parametrize("case", SINGULAR_TO_TORCH)
def test_inv_ex_finds_the_zero_pivot_numpy_misses(case):
    dtype, rows = SINGULAR_TO_TORCH[case]
    ours, theirs = (lib.linalg.inv_ex(lib.tensor(rows, dtype=getattr(lib, dtype))) for lib in (tg, torch))
    assert int(ours.info) == int(theirs.info) != 0
    assert_same_bits(ours.inverse, theirs.inverse)


@pytest.mark.parametrize("case", SINGULAR_TO_TORCH)
def test_inv_refuses_it(case):
    dtype, rows = SINGULAR_TO_TORCH[case]

    def program(lib):
        return lib.linalg.inv(lib.tensor(rows, dtype=getattr(lib, dtype)))

    assert value_or_error(program, tg) == value_or_error(program, torch)


def test_inv_ex_of_a_batch_numpy_inverts_whole():
    dtype, rows = SINGULAR_TO_TORCH["float64 4x4"]
    batch = np.stack([2 * np.eye(4), np.array(rows), np.diag([1.0, 2.0, 4.0, 8.0])])
    ours, theirs = (lib.linalg.inv_ex(lib.tensor(batch.reshape(3, 1, 4, 4))) for lib in (tg, torch))
    assert ours.info.tolist() == theirs.info.tolist() == [[0], [4], [0]]
    assert_same_bits(ours.inverse, theirs.inverse)


def _materialized(lib):
    lib.use_deterministic_algorithms(True)
    try:
        parameter = lib.nn.parameter.UninitializedParameter()
        parameter.materialize((3,))
        return parameter.data
    finally:
        lib.use_deterministic_algorithms(False)


def test_materialize_fills_under_deterministic_algorithms():
    assert_same_bits(_materialized(tg), _materialized(torch))


def _grown_from_five_bytes(lib):
    lib.use_deterministic_algorithms(True)
    try:
        storage = lib.zeros(5, dtype=lib.uint8).untyped_storage()
        grown = lib.tensor([], dtype=lib.float32).set_(storage, 0, (1,)).resize_(3)
        return lib.tensor([], dtype=lib.uint8).set_(grown.untyped_storage(), 0, (12,))
    finally:
        lib.use_deterministic_algorithms(False)


def test_resize_fills_from_the_element_the_old_bytes_partly_held():
    assert_same_bits(_grown_from_five_bytes(tg), _grown_from_five_bytes(torch))
