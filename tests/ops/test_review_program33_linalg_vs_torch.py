"""Review of the program-set-33 linear algebra findings: cases next to the ones fixed there, compared with torch.

- ``linalg.eigh``/``eigvalsh`` of an empty matrix return empty results of any dtype (torch returns before its
  kernel's dtype dispatch: Long, Bool, Half too);
- ``torch.ormqr`` refuses a bfloat16 operand beside a float32 one in its dtype check (as householder_product);
- ``linalg.vecdot(out=)`` refuses an out of another dtype, before any shape check;
- ``linalg.slogdet``: the sign alone of a real matrix gives no gradient (was 0, NaN at a singular matrix).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch, value_or_error

_EMPTY_EIGH = {
    "eigh_int64": lambda L: L.linalg.eigh(L.ones(0, 0, dtype=L.int64)).eigenvalues,
    "eigh_int32_vectors": lambda L: L.linalg.eigh(L.ones(2, 0, 0, dtype=L.int32)).eigenvectors,
    "eigh_batch_of_none": lambda L: L.linalg.eigh(L.ones(0, 2, 2, dtype=L.int64)).eigenvectors,
    "eigvalsh_bool": lambda L: L.linalg.eigvalsh(L.ones(0, 0, dtype=L.bool)),
    "eigvalsh_half": lambda L: L.linalg.eigvalsh(L.ones(0, 0, dtype=L.float16)),
    "eigvalsh_bfloat16": lambda L: L.linalg.eigvalsh(L.ones(3, 0, 0, dtype=L.bfloat16)),
    "eigh_complex": lambda L: L.linalg.eigh(L.ones(0, 0, dtype=L.complex64)).eigenvalues,
    "eigh_int_empty_bad_uplo": lambda L: L.linalg.eigh(L.ones(0, 0, dtype=L.int64), UPLO="x").eigenvalues,
    "eigh_int_not_square": lambda L: L.linalg.eigh(L.ones(0, 2, 3, dtype=L.int64)).eigenvalues,
}


@pytest.mark.parametrize("program", _EMPTY_EIGH.values(), ids=_EMPTY_EIGH.keys())
def test_eigh_of_empty_matrices_as_torch(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)


def _ormqr(L, a_dtype, tau_dtype, c_dtype):
    return L.ormqr(L.ones(3, 2, dtype=getattr(L, a_dtype)), L.ones(2, dtype=getattr(L, tau_dtype)),
                   L.ones(3, 2, dtype=getattr(L, c_dtype)))


@pytest.mark.parametrize("dtypes", [("bfloat16", "float32", "bfloat16"), ("bfloat16", "bfloat16", "float32"),
                                    ("float32", "bfloat16", "float32"), ("float32", "float32", "bfloat16"),
                                    ("bfloat16", "bfloat16", "bfloat16")])
def test_ormqr_sees_bfloat16_beside_float32(dtypes):
    assert value_or_error(lambda L: _ormqr(L, *dtypes), tg) == value_or_error(lambda L: _ormqr(L, *dtypes), torch)


_VECDOT_OUT = {
    "vectors": lambda L: L.linalg.vecdot(L.ones(3), L.ones(3), out=L.empty(0, dtype=L.float64)),
    "matrices": lambda L: L.linalg.vecdot(L.ones(2, 3), L.ones(2, 3), out=L.empty(0, dtype=L.float64)),
    "before_lengths": lambda L: L.linalg.vecdot(L.ones(3), L.ones(4), out=L.empty(0, dtype=L.float64)),
    "before_broadcast": lambda L: L.linalg.vecdot(L.ones(2, 3), L.ones(4, 3), out=L.empty(0, dtype=L.float64)),
    "complex_into_real": lambda L: L.linalg.vecdot(L.ones(3, dtype=L.complex64), L.ones(3, dtype=L.complex64),
                                                   out=L.empty(0)),
    "bfloat16_into_float": lambda L: L.linalg.vecdot(L.ones(3, dtype=L.bfloat16), L.ones(3, dtype=L.bfloat16),
                                                     out=L.empty(0)),
    "after_mixed_inputs": lambda L: L.linalg.vecdot(L.ones(3), L.ones(3, dtype=L.float64),
                                                    out=L.empty(0, dtype=L.float64)),
    "same_dtype": lambda L: L.linalg.vecdot(L.ones(2, 3), L.ones(3), out=L.empty(0)),
}


@pytest.mark.parametrize("program", _VECDOT_OUT.values(), ids=_VECDOT_OUT.keys())
def test_vecdot_out_dtype_as_torch(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("matrix", [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]], ids=["singular", "regular"])
def test_slogdet_sign_alone_gives_no_gradient(matrix):
    def grads(L):
        A = L.tensor(matrix, dtype=L.float64, requires_grad=True)
        sign, logabsdet = L.linalg.slogdet(A)
        alone = L.autograd.grad(sign.sum(), A, allow_unused=True, retain_graph=True)[0]
        both = L.autograd.grad(sign.sum() + logabsdet.sum() * 0 + A.sum() * 0, A)[0]
        return alone, both.numpy()

    (ours_alone, ours_both), (theirs_alone, theirs_both) = grads(tg), grads(torch)
    assert ours_alone is None and theirs_alone is None
    np.testing.assert_array_equal(np.isnan(ours_both), np.isnan(theirs_both))
