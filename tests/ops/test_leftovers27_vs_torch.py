"""Leftovers against torch 2.13: ``linalg.inv_ex`` of a singular matrix (LAPACK's inf/NaN and ``info``, and the
``check_errors`` message in inv_ex's name), ``adaptive_avg_pool2d``/``3d`` with an output of ones taking the mean
before any check of the input's dims (and ``adaptive_avg_pool1d``'s own refusal), ``cross``/``linalg.cross`` of
operands with different numbers of dims (refused) and their other checks in torch's order, and ``conj_physical_``
of a real tensor seen by autograd as an in-place write. Each program runs on both libraries; the result (dtype,
shape, values, NaN and inf included) or the error (type, message) must be the same."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests._lib import assert_same_bits, tg, torch, value_or_error

# ---- linalg.inv_ex / inv of singular matrices -----------------------------------------------------------------------

SINGULAR = {  # (matrices whose LU factorisation has an exact zero pivot, where LAPACK's substitution is reproducible)
    "rank one 2x2": [[1.0, 2.0], [2.0, 4.0]],
    "zeros 3x3": [[0.0] * 3] * 3,
    "repeated row 3x3": [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],
    "zero 1x1": [[0.0]],
    "zero first column": [[0.0, 1.0], [0.0, 1.0]],
    "zero middle pivot": [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 2.0]],
    "two zero pivots": [[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 1.0], [0.0, 0.0, 0.0, 0.0]],
}
DTYPES = ("float32", "float64", "complex64", "complex128")


def _matrix(L, name: str, dtype: str):
    m = L.tensor(SINGULAR[name], dtype=getattr(L, dtype))
    return m * (1 + 0.5j) if m.is_complex() else m


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", SINGULAR)
def test_inv_ex_of_singular_matrix_is_lapacks(name, dtype):
    ours, theirs = tg.linalg.inv_ex(_matrix(tg, name, dtype)), torch.linalg.inv_ex(_matrix(torch, name, dtype))
    assert_same_bits(ours.inverse, theirs.inverse)
    assert_same_bits(ours.info, theirs.info)


def test_inv_ex_of_a_batch_with_singular_matrices():
    def program(L):
        mats = L.tensor([SINGULAR["rank one 2x2"], [[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
        return L.linalg.inv_ex(mats)

    ours, theirs = program(tg), program(torch)
    assert_same_bits(ours.inverse, theirs.inverse)
    assert_same_bits(ours.info, theirs.info)


INVERSE_ERRORS = {
    "inv_ex check_errors": lambda L: L.linalg.inv_ex(L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),
                                                     check_errors=True).inverse,
    "inv_ex check_errors batch": lambda L: L.linalg.inv_ex(
        L.stack([L.eye(2), L.tensor(SINGULAR["rank one 2x2"])]), check_errors=True).inverse,
    "inv": lambda L: L.linalg.inv(L.tensor(SINGULAR["zero middle pivot"])),
    "inv batch": lambda L: L.linalg.inv(L.stack([L.eye(2), L.tensor(SINGULAR["zero first column"])])),
    "inverse": lambda L: L.inverse(L.tensor(SINGULAR["rank one 2x2"])),
    "inv_ex invertible": lambda L: L.linalg.inv_ex(L.tensor([[2.0, 0.0], [0.0, 4.0]])).inverse,
}


@pytest.mark.parametrize("name", INVERSE_ERRORS)
def test_inverse_errors(name):
    assert value_or_error(INVERSE_ERRORS[name], tg) == value_or_error(INVERSE_ERRORS[name], torch)


def test_solve_triangular_divides_complex_by_zero_as_lapack():
    def program(L):
        U = L.tensor([[2.0, 1.0, 1.0], [0.0, 0.0, 3.0], [0.0, 0.0, 1.0]], dtype=L.complex128)
        return L.linalg.solve_triangular(U, L.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0]]).to(U.dtype), upper=True)

    assert_same_bits(program(tg), program(torch))


# ---- adaptive average pooling of inputs with too few dims ------------------------------------------------------------

POOLS = {
    "2d of 2-d, output 1": lambda L: L.nn.functional.adaptive_avg_pool2d(L.arange(12.0).reshape(3, 4), 1),
    "2d of 2-d, output (1, 1) list": lambda L: L.nn.functional.adaptive_avg_pool2d(L.arange(12.0).reshape(3, 4),
                                                                                   [1, 1]),
    "2d of 2-d, output 2": lambda L: L.nn.functional.adaptive_avg_pool2d(L.arange(12.0).reshape(3, 4), 2),
    "2d of 2-d, output (2, 2)": lambda L: L.nn.functional.adaptive_avg_pool2d(L.arange(12.0).reshape(3, 4), (2, 2)),
    "2d module of 2-d, output 1": lambda L: L.nn.AdaptiveAvgPool2d(1)(L.arange(12.0).reshape(3, 4)),
    "2d module of 2-d, output 2": lambda L: L.nn.AdaptiveAvgPool2d(2)(L.arange(12.0).reshape(3, 4)),
    "2d of 1-d, output 1": lambda L: L.nn.functional.adaptive_avg_pool2d(L.ones(4), 1),
    "2d of 0-d, output 1": lambda L: L.nn.functional.adaptive_avg_pool2d(L.tensor(2.0), 1),
    "2d of 2-d, negative output": lambda L: L.nn.functional.adaptive_avg_pool2d(L.ones(3, 4), -1),
    "3d of 3-d, output 1": lambda L: L.nn.functional.adaptive_avg_pool3d(L.arange(24.0).reshape(2, 3, 4), 1),
    "3d of 2-d, output 1": lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(3, 4), 1),
    "3d of 3-d, output 2": lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(2, 3, 4), 2),
    "1d of 1-d": lambda L: L.nn.functional.adaptive_avg_pool1d(L.ones(4), 1),
    "1d of 4-d": lambda L: L.nn.functional.adaptive_avg_pool1d(L.ones(1, 1, 1, 4), 2),
    "1d of 2-d, output 1": lambda L: L.nn.functional.adaptive_avg_pool1d(L.arange(8.0).reshape(2, 4), 1),
}


@pytest.mark.parametrize("name", POOLS)
def test_adaptive_avg_pool_of_few_dims(name):
    assert value_or_error(POOLS[name], tg) == value_or_error(POOLS[name], torch)


def test_adaptive_avg_pool2d_of_2d_input_records_the_mean():
    def program(L):
        x = L.arange(12.0).reshape(3, 4).requires_grad_()
        y = L.nn.functional.adaptive_avg_pool2d(x, 1)
        y.backward(L.tensor([[2.0]]))
        return y.grad_fn.name(), x.grad

    (our_name, our_grad), (their_name, their_grad) = program(tg), program(torch)
    assert our_name == their_name
    assert_same_bits(our_grad, their_grad)


# ---- cross / linalg.cross ------------------------------------------------------------------------------------------

CROSS = {
    "linalg 1-d with 2-d": lambda L: L.linalg.cross(L.tensor([1.0, 2.0, 3.0]), L.tensor([[4.0, 5.0, 6.0]] * 2)),
    "linalg 2-d with 1-d": lambda L: L.linalg.cross(L.tensor([[4.0, 5.0, 6.0]] * 2), L.tensor([1.0, 2.0, 3.0])),
    "linalg dims differ, dim out of range": lambda L: L.linalg.cross(L.ones(3), L.ones(2, 3), dim=5),
    "linalg 0-d with 1-d": lambda L: L.linalg.cross(L.tensor(1.0), L.ones(3)),
    "linalg 0-d with 0-d": lambda L: L.linalg.cross(L.tensor(1.0), L.tensor(1.0)),
    "linalg 0-d with 0-d, dim 0": lambda L: L.linalg.cross(L.tensor(1.0), L.tensor(1.0), dim=0),
    "linalg dims differ, dtypes differ": lambda L: L.linalg.cross(L.ones(3), L.ones(2, 3, dtype=L.float64)),
    "linalg length 1 broadcast along dim": lambda L: L.linalg.cross(L.ones(1, 3), L.ones(4, 3), dim=0),
    "linalg length 1 along last dim": lambda L: L.linalg.cross(L.ones(2, 1), L.ones(2, 3), dim=1),
    "linalg batch broadcast": lambda L: L.linalg.cross(L.tensor([[1.0, 2.0, 3.0]]), L.tensor([[4.0, 5.0, 6.0]] * 4)),
    "linalg batch mismatch": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(4, 3)),
    "linalg length and dtype": lambda L: L.linalg.cross(L.ones(4), L.ones(4, dtype=L.float64)),
    "linalg batch mismatch and dtype": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(4, 3, dtype=L.float64)),
    "linalg out of another dtype": lambda L: L.linalg.cross(L.ones(3), L.ones(3), out=L.empty(3, dtype=L.float64)),
    "linalg out, dims differ": lambda L: L.linalg.cross(L.ones(3), L.ones(2, 3), out=L.empty(2, 3)),
    "cross dim -1, dims differ": lambda L: L.cross(L.ones(3), L.ones(2, 3), dim=-1),
    "cross no dim, dims differ": lambda L: L.cross(L.ones(3), L.ones(2, 3)),
    "cross no dim, none of size 3": lambda L: L.cross(L.ones(2, 4), L.ones(2, 4)),
    "cross no dim, only other has size 3": lambda L: L.cross(L.ones(1, 4), L.ones(3, 4)),
    "cross no dim, input's first size 3": lambda L: L.cross(L.ones(3, 1), L.tensor([[1.0, 2.0, 3.0]] * 3)),
    "cross no dim, 0-d": lambda L: L.cross(L.tensor(1.0), L.ones(3)),
    "cross out, dims differ": lambda L: L.cross(L.ones(3), L.ones(2, 3), dim=0, out=L.empty(2, 3)),
    "method, dims differ": lambda L: L.ones(2, 3).cross(L.ones(3), dim=1),
}


@pytest.mark.parametrize("name", CROSS)
def test_cross_checks(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch.cross without dim is deprecated: warned by both)
        assert value_or_error(CROSS[name], tg) == value_or_error(CROSS[name], torch)


# ---- conj_physical_ of a real tensor -------------------------------------------------------------------------------


def _real_leaf(L):
    return L.tensor([1.0, 2.0], requires_grad=True)


CONJ_PHYSICAL = {
    "real leaf": lambda L: _real_leaf(L).conj_physical_(),
    "real leaf, torch.conj_physical_": lambda L: L.conj_physical_(_real_leaf(L)),
    "complex leaf": lambda L: L.tensor([1 + 1j, 2 - 1j], requires_grad=True).conj_physical_(),
    "view of a real leaf": lambda L: _real_leaf(L)[:1].conj_physical_(),
}


@pytest.mark.parametrize("name", CONJ_PHYSICAL)
def test_conj_physical_inplace_on_leaf_refused(name):
    assert value_or_error(CONJ_PHYSICAL[name], tg) == value_or_error(CONJ_PHYSICAL[name], torch)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_conj_physical_inplace_writes_a_version(dtype):
    def program(L):
        x = L.tensor([1, 0]).to(getattr(L, dtype))
        y = x.conj_physical_()
        return y is x, x._version, x.tolist()

    assert program(tg) == program(torch)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_conj_physical_inplace_records_its_node(dtype):
    def program(L):
        a = L.tensor([1.0, 2.0], dtype=getattr(L, dtype), requires_grad=True)
        b = a * 1
        b.conj_physical_()
        (b.real if b.is_complex() else b).sum().backward()
        return b.grad_fn.name(), b._version, a.grad

    (our_name, our_version, our_grad), (their_name, their_version, their_grad) = program(tg), program(torch)
    assert (our_name, our_version) == (their_name, their_version)
    assert_same_bits(our_grad, their_grad)


def test_conj_physical_inplace_on_a_view_of_a_real_non_leaf():
    def program(L):
        a = L.tensor([1.0, 2.0], requires_grad=True) * 1
        v = a[:1]
        v.conj_physical_()
        return a.grad_fn.name(), v.grad_fn.name(), a._version

    assert program(tg) == program(torch)


def test_singular_inverse_pattern_matches_for_rank_deficient_products():
    """Rank-deficient integer matrices whose LU has an exact zero pivot: where inf and NaN fall, and their signs,
    are torch's (finite entries are LAPACK's substitution, within rounding)."""
    rng = np.random.default_rng(0)
    for n, r in ((3, 1), (3, 2), (4, 2), (5, 3)):
        m = (rng.integers(-2, 3, (n, r)) @ rng.integers(-2, 3, (r, n))).astype(np.float64)
        ours, theirs = tg.linalg.inv_ex(tg.tensor(m)), torch.linalg.inv_ex(torch.tensor(m))
        if int(theirs.info) == 0 or int(ours.info) != int(theirs.info):
            continue  # (a rounding residue for a pivot: LU's own rounding, not this test's subject)
        a, b = ours.inverse.numpy(), theirs.inverse.numpy()
        assert np.array_equal(np.isnan(a), np.isnan(b))
        assert np.array_equal(np.where(np.isinf(a), a, 0), np.where(np.isinf(b), b, 0))
        finite = np.isfinite(b)
        np.testing.assert_allclose(a[finite], b[finite], rtol=1e-6)
