"""``linalg_core.matrix_product``, the kernel of mm, ``a @ b`` on matrices and the fused linear layer: np.dot where
both matrices are in C or Fortran order, np.matmul otherwise. It must give np.matmul's values and layout."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tracegrad.ops.linalg_core import matrix_product


def _matrix(rng, shape: tuple, dtype) -> np.ndarray:
    values = rng.standard_normal(shape) * 8
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape) * 8
    return values.astype(dtype)


def _layouts(rng, m: int, k: int, n: int, dtype) -> list[tuple[np.ndarray, np.ndarray]]:
    a = _matrix(rng, (m, k), dtype)
    b = _matrix(rng, (k, n), dtype)
    strided = _matrix(rng, (m, 2 * k), dtype)[:, ::2]  # (neither order: matmul's own loop)
    return [(a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b)), (a.T.copy().T, b.T.copy().T), (strided, b)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.complex64, np.complex128])
def test_matrix_product_is_matmul(dtype):
    rng = np.random.default_rng(0)
    # (k = 1: complex outer products round differently in np.dot)
    for m, k, n in itertools.product((1, 2, 7, 16, 33), (1, 5, 16, 31), (1, 3, 9, 17)):
        for a, b in _layouts(rng, m, k, n, dtype):
            ours, reference = matrix_product(a, b), np.matmul(a, b)
            assert ours.dtype == reference.dtype and ours.strides == reference.strides
            assert np.array_equal(ours, reference), (m, k, n, a.strides, b.strides)


def test_matrix_product_of_empty_matrices():
    assert np.array_equal(matrix_product(np.ones((3, 0), np.float32), np.ones((0, 4), np.float32)),
                          np.zeros((3, 4), np.float32))
    assert matrix_product(np.ones((0, 3), np.float32), np.ones((3, 4), np.float32)).shape == (0, 4)
