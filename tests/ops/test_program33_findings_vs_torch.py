"""Differences that the programs of ``tests/test_user_programs33_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``torch.qr`` (and ``Tensor.qr``) did not warn that it is deprecated in favour of ``torch.linalg.qr``; torch
  warns once a process for ``qr`` and once for ``qr_out`` (every call under ``set_warn_always``);
- ``linalg.eigh``/``eigvalsh`` of an integer or bool matrix raised RuntimeError "Expected a floating point or
  complex tensor" where torch's CPU kernel refuses it: NotImplementedError ``"linalg_eigh_cpu" not implemented
  for 'Int'``; a lower-case ``UPLO`` ('l', 'u') was refused where torch takes it;
- the gradient of ``eigvalsh`` (or of eigh's eigenvalues alone) at a repeated eigenvalue was NaN: the unused
  eigenvectors' zero gradient was divided by the zero gaps; torch takes V diag(gL) V^H;
- ``linalg.solve``/``solve_ex``/``solve_triangular``/``lu_solve`` with batches that do not broadcast named A's
  batch as "tensor a" (and ``lu_solve`` a wrong dimension); torch broadcasts B's batch with A's;
- ``linalg.vecdot`` of two vectors of different lengths spoke of broadcasting, and its node was ``SumBackward1``;
  torch calls ``vdot`` there (its "inconsistent tensor size" refusal, ``VdotBackward0``);
- ``linalg.householder_product``/``orgqr`` of integer or bool matrices computed a result (torch: ``"orgqr_cpu"
  not implemented for 'Long'``), and a bfloat16 input beside a float32 tau passed its dtype check.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch, value_or_error


def _qr_warnings(lib, calls) -> list:
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    always = lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for call in calls:
                call(lib, a)
    finally:
        lib.set_warn_always(always)
    return [(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught]


def test_legacy_qr_warns_that_it_is_deprecated():
    calls = [lambda L, a: L.qr(a), lambda L, a: a.qr(some=False),
             lambda L, a: L.qr(a, out=(L.empty(0), L.empty(0)))]
    ours, theirs = _qr_warnings(tg, calls), _qr_warnings(torch, calls)
    assert len(theirs) == 3
    assert ours == theirs


_EIGH = {
    "eigh_int32": lambda L: L.linalg.eigh(L.ones(2, 2, dtype=L.int32))[0],
    "eigvalsh_int64": lambda L: L.linalg.eigvalsh(L.ones(2, 2, dtype=L.int64)),
    "eigvalsh_bool": lambda L: L.linalg.eigvalsh(L.ones(3, 3, dtype=L.bool)),
    "eigh_int_not_square": lambda L: L.linalg.eigh(L.ones(2, 3, dtype=L.int32))[0],
    "eigvalsh_lower_case_u": lambda L: L.linalg.eigvalsh(L.tensor([[2.0, 6.0], [1.0, 2.0]], dtype=L.float64), UPLO="u"),
    "eigvalsh_lower_case_l": lambda L: L.linalg.eigvalsh(L.tensor([[2.0, 6.0], [1.0, 2.0]], dtype=L.float64), UPLO="l"),
    "eigh_lower_case_bad": lambda L: L.linalg.eigh(L.eye(2), UPLO="x")[0],
    "eigh_word": lambda L: L.linalg.eigh(L.eye(2), UPLO="upper")[0],
}


@pytest.mark.parametrize("program", _EIGH.values(), ids=_EIGH.keys())
def test_eigh_dtype_refusal_and_uplo_as_torch(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)


def _eigenvalue_gradient(lib, matrix, loss) -> np.ndarray:
    A = lib.tensor(matrix, requires_grad=True)
    loss(lib, A).backward()
    return A.grad.numpy()


_REPEATED = np.diag([1.0, 1.0, 2.0])
_EIGENVALUE_LOSSES = {
    "eigvalsh_identity": (np.eye(3), lambda L, A: L.linalg.eigvalsh(A).sum()),
    "eigvalsh_repeated_squares": (_REPEATED, lambda L, A: L.linalg.eigvalsh(A).pow(2).sum()),
    "eigh_values_only": (_REPEATED, lambda L, A: L.linalg.eigh(A, UPLO="U").eigenvalues[-1]),
    "eigvalsh_batch": (np.stack([np.eye(2), np.diag([1.0, 3.0])]), lambda L, A: L.linalg.eigvalsh(A).sum()),
    "eigvalsh_complex": (np.eye(2) * (1 + 0j), lambda L, A: L.linalg.eigvalsh(A).sum()),
}


@pytest.mark.parametrize(("matrix", "loss"), _EIGENVALUE_LOSSES.values(), ids=_EIGENVALUE_LOSSES.keys())
def test_eigenvalue_gradients_stay_finite_at_repeated_eigenvalues(matrix, loss):
    ours, theirs = _eigenvalue_gradient(tg, matrix, loss), _eigenvalue_gradient(torch, matrix, loss)
    assert np.isfinite(ours).all()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_eigenvector_gradients_still_divide_by_the_gaps():
    """A loss of the eigenvectors at a repeated eigenvalue is NaN in both (the gaps are zero)."""
    def loss(L, A):
        return L.linalg.eigh(A).eigenvectors.sum()

    assert np.isnan(_eigenvalue_gradient(tg, np.eye(3), loss)).all()
    assert np.isnan(_eigenvalue_gradient(torch, np.eye(3), loss)).all()


def _batches(lib):
    A = lib.eye(3, dtype=lib.float64).expand(2, 3, 3).contiguous()
    return A, lib.ones(4, 3, 1, dtype=lib.float64)


_SOLVES = {
    "solve": lambda L: L.linalg.solve(*_batches(L)),
    "solve_right": lambda L: L.linalg.solve(_batches(L)[0], _batches(L)[1].mT, left=False),
    "solve_ex": lambda L: L.linalg.solve_ex(*_batches(L)).result,
    "solve_triangular": lambda L: L.linalg.solve_triangular(*_batches(L), upper=True),
    "solve_triangular_int": lambda L: L.linalg.solve_triangular(*(t.long() for t in _batches(L)), upper=True),
    "lu_solve": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(_batches(L)[0]), _batches(L)[1]),
    "lu_solve_deeper_b": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(_batches(L)[0]),
                                                     L.ones(3, 2, 3, 1, dtype=L.float64)),
    "solve_deeper_a": lambda L: L.linalg.solve(L.eye(3, dtype=L.float64).expand(5, 2, 3, 3), _batches(L)[1]),
}


@pytest.mark.parametrize("program", _SOLVES.values(), ids=_SOLVES.keys())
def test_solves_refuse_unbroadcastable_batches_as_torch(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)


_VECDOTS = {
    "lengths": lambda L: L.linalg.vecdot(L.ones(3), L.ones(4)),
    "lengths_dim0": lambda L: L.linalg.vecdot(L.ones(3), L.ones(4), dim=0),
    "dim_ignored_for_vectors": lambda L: L.linalg.vecdot(L.arange(3.0), L.ones(3), dim=5),
    "complex_vectors": lambda L: L.linalg.vecdot(L.tensor([1 + 2j, 3 - 1j]), L.tensor([2 - 1j, 1j])),
}


@pytest.mark.parametrize("program", _VECDOTS.values(), ids=_VECDOTS.keys())
def test_vecdot_of_two_vectors_is_vdot(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
def test_vecdot_of_two_vectors_records_vdot(dtype):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.linalg.vecdot(x, lib.ones(3, dtype=getattr(lib, dtype)))
        y.real.backward() if y.is_complex() else y.backward()
        return y.grad_fn.name(), x.grad.tolist()

    assert run(tg) == run(torch)


_HOUSEHOLDER = {
    "int64": lambda L: L.linalg.householder_product(L.ones(3, 2, dtype=L.int64), L.ones(2, dtype=L.int64)),
    "bool": lambda L: L.linalg.householder_product(L.ones(3, 2, dtype=L.bool), L.ones(2, dtype=L.bool)),
    "orgqr_int32": lambda L: L.orgqr(L.ones(3, 2, dtype=L.int32), L.ones(2, dtype=L.int32)),
    "int_tau_too_long": lambda L: L.linalg.householder_product(L.ones(3, 2, dtype=L.int64), L.ones(3, dtype=L.int64)),
    "bfloat16_beside_float": lambda L: L.linalg.householder_product(L.ones(3, 2, dtype=L.bfloat16), L.ones(2)),
    "float_beside_bfloat16": lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(2, dtype=L.bfloat16)),
}


@pytest.mark.parametrize("program", _HOUSEHOLDER.values(), ids=_HOUSEHOLDER.keys())
def test_householder_product_refuses_as_torch(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)
