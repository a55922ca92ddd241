"""out= of ``linalg.eigh``/``eigvalsh``/``svd``/``svdvals`` against torch: their structured kernels' meta functions
check that each out= already has its result's dtype before the kernel's dtype dispatch, in their own order (eigh:
the eigenvectors, then the eigenvalues; svd: U, Vh, then S), so an integer input's out= is refused first. tracegrad
cast silently into an out= of another dtype, and refused integer input before looking at out=."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest
from _lib import tg, torch

OUTS = {"eigh": 2, "eigvalsh": 1, "svd": 3, "svdvals": 1}


def _outcome(program, *args):
    try:
        return program(*args)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)


def _run(lib, name: str, dtype: str, out_dtypes: tuple):
    if dtype == "int64":
        a = lib.ones(3, 3, dtype=lib.int64)
    else:
        a = lib.tensor([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], dtype=getattr(lib, dtype))  # (distinct eigenvalues)
    outs = tuple(lib.empty(0, dtype=getattr(lib, d)) for d in out_dtypes)
    getattr(lib.linalg, name)(a, out=outs if len(outs) > 1 else outs[0])
    return [str(o.dtype) for o in outs], [tuple(o.shape) for o in outs], [o.tolist() for o in outs]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int64"])
@pytest.mark.parametrize("name", sorted(OUTS))
def test_out_dtypes_are_checked_in_torchs_order(name, dtype):
    for out_dtypes in product(("float32", "float64", "complex64"), repeat=OUTS[name]):
        got = _outcome(_run, tg, name, dtype, out_dtypes)
        want = _outcome(_run, torch, name, dtype, out_dtypes)
        if isinstance(want[0], list):  # computed: dtypes and shapes exact, values (up to signs) to a tolerance
            assert got[:2] == want[:2], (name, dtype, out_dtypes)
            for g, w in zip(got[2], want[2]):
                np.testing.assert_allclose(np.abs(np.array(g)), np.abs(np.array(w)), rtol=1e-5, atol=1e-6)
        else:
            assert got == want, (name, dtype, out_dtypes)


def _eigh_into_float64(lib, shape: tuple, uplo: str):
    return lib.linalg.eigh(lib.ones(*shape), UPLO=uplo, out=(lib.empty(0, dtype=lib.float64),) * 2)


def test_shape_and_uplo_are_checked_before_out():
    for shape, uplo in [((2, 3), "L"), ((3, 3), "X")]:
        assert _outcome(_eigh_into_float64, tg, shape, uplo) == _outcome(_eigh_into_float64, torch, shape, uplo)


def test_svd_driver_is_checked_after_out():
    def run(lib):
        return lib.linalg.svd(lib.randn(3, 3), driver="gesvd", out=(lib.empty(0, dtype=lib.float64),) * 3)

    assert _outcome(run, tg) == _outcome(run, torch)
