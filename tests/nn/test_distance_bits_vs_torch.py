"""``pdist`` and ``cdist`` (its direct kernel: up to 25 rows, or ``donot_use_mm_for_euclid_dist``) give PyTorch's
CPU bits for p = 0, 1, 2 and inf, forward and backward, in float32 and float64.

The two kernels add differently: pdist's ``vec::map2_reduce_all`` sums vector lanes and folds them; cdist's
scalar loop adds column after column, its squares of whole 128-bit groups (four floats, two doubles) rounded
before the sum and the rest fused into it (what GCC made of the loop). pdist's vector maximum keeps a NaN,
cdist's ``std::max`` passes over it. Before, NumPy's pairwise sums matched 24-41% of the distances over 103
columns.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")

DTYPES = [np.float32, np.float64]
ORDS = [0, 1, 2, math.inf]
COLUMNS = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 103]


def _rows(rows: int, columns: int, dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, columns)) * 10.0 ** rng.uniform(-2, 2, (rows, columns))).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", ORDS)
def test_pdist(dtype, p):
    for m in COLUMNS:
        x = _rows(12, m, dtype, seed=m)
        x[4] = x[7]  # (a zero distance)
        assert_same_bits(tg.nn.functional.pdist(tg.from_numpy(x), p), torch.nn.functional.pdist(torch.from_numpy(x), p))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", ORDS)
def test_cdist_direct_kernel(dtype, p):
    for m in COLUMNS:
        a, b = _rows(9, m, dtype, seed=m), _rows(11, m, dtype, seed=100 + m)
        assert_same_bits(tg.cdist(tg.from_numpy(a), tg.from_numpy(b), p), torch.cdist(torch.from_numpy(a),
                                                                                    torch.from_numpy(b), p))


def test_cdist_without_matrix_products_batched_and_broadcast():
    a, b = _rows(2 * 30, 19, np.float32, 1).reshape(2, 30, 19), _rows(40, 19, np.float32, 2)
    for p in ORDS:
        ours = tg.cdist(tg.from_numpy(a), tg.from_numpy(b), p, compute_mode="donot_use_mm_for_euclid_dist")
        theirs = torch.cdist(torch.from_numpy(a), torch.from_numpy(b), p, compute_mode="donot_use_mm_for_euclid_dist")
        assert_same_bits(ours, theirs)


def test_nan_in_a_row():
    x = _rows(6, 10, np.float32, 3)
    x[2, 4] = np.nan
    for p in ORDS:
        assert_same_bits(tg.nn.functional.pdist(tg.from_numpy(x), p),
                         torch.nn.functional.pdist(torch.from_numpy(x), p))
        assert_same_bits(tg.cdist(tg.from_numpy(x), tg.from_numpy(x[::-1].copy()), p),
                         torch.cdist(torch.from_numpy(x), torch.from_numpy(x[::-1].copy()), p))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [1, 2, math.inf])
@pytest.mark.parametrize("m", [1, 2, 9, 33])
def test_gradients(dtype, p, m):
    a, b = _rows(10, m, dtype, seed=m), _rows(7, m, dtype, seed=50 + m)
    weights = (np.arange(70, dtype=dtype).reshape(10, 7) / 7).astype(dtype)
    grads = []
    for lib in (tg, torch):
        x1, x2, x = (lib.tensor(v, requires_grad=True) for v in (a, b, a))
        (lib.cdist(x1, x2, p) * lib.tensor(weights)).sum().backward()
        lib.nn.functional.pdist(x, p).sum().backward()
        grads.append((x1.grad, x2.grad, x.grad))
    for ours, theirs in zip(*grads):
        assert_same_bits(ours, theirs)


def test_a_zero_gradient_is_positive():
    """The backward adds each row's term into a zero, so a sum of no terms is +0."""
    x1, x2 = np.array([[0.0, 0.0]], np.float32), np.array([[-5.0, 1.0], [-6.0, 2.0], [-7.0, 3.0]], np.float32)
    grads = []
    for lib in (tg, torch):
        leaf = lib.tensor(x1, requires_grad=True)
        lib.cdist(leaf, lib.tensor(x2), math.inf).sum().backward()
        grads.append(leaf.grad)
    assert_same_bits(*grads)
