"""Review of the cholesky rework (legacy torch.cholesky as an operator of its own, cholesky_ex's partial factors):
the legacy operator's own checks, its out= and warning, and the out= dtypes linalg's cholesky refuses."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tracegrad as tg

LIBS = (torch, tg)


def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = fn()
        except Exception as e:  # noqa: BLE001 - the error is the answer compared
            return type(e).__name__, str(e)
    results = result if isinstance(result, tuple) else (result,)
    return [(tuple(r.shape), str(r.dtype).split(".")[-1], r.stride(), r.grad_fn and r.grad_fn.name()) for r in results]


@pytest.mark.parametrize("make", [
    lambda L: L.zeros(0, 2, 3, requires_grad=True),  # empty: returned as it is shaped, square or not
    lambda L: L.zeros(2, 0, 0, requires_grad=True),
    lambda L: L.zeros(0),
    lambda L: L.zeros(0, 2, 3, dtype=L.int64),  # (any dtype, when empty)
    lambda L: L.eye(2, dtype=L.int64),  # the kernel's dispatch refuses, not linalg's check
    lambda L: L.ones(2, 2, dtype=L.bool),
    lambda L: L.zeros(2, 3, dtype=L.int64),  # the square check comes first
])
def test_legacy_cholesky_checks_as_torch(make):
    assert _outcome(lambda: tg.cholesky(make(tg))) == _outcome(lambda: torch.cholesky(make(torch)))


@pytest.mark.parametrize("out", [
    lambda L: L.zeros(3, 3, dtype=L.float64),  # resized: row-major, as resize_output makes it
    lambda L: L.empty(0, dtype=L.float64),
    lambda L: L.zeros(2, 2, dtype=L.float64).t(),  # not resized: its strides kept
    lambda L: L.empty(0, dtype=L.float32),  # a dtype the result casts to safely
    lambda L: L.empty(0, dtype=L.int64),  # refused in checkLinalgCompatibleDtype's words
])
def test_legacy_cholesky_out_as_torch(out):
    a = np.array([[4.0, 1.0], [1.0, 3.0]])

    def run(L):
        o = out(L)
        res = _outcome(lambda: L.cholesky(L.tensor(a), out=o))
        return res, o.stride(), o.tolist()

    assert run(tg) == run(torch)


@pytest.mark.parametrize("call", [
    lambda L, a, o: L.linalg.cholesky_ex(a, out=(L.empty(0, dtype=o[0]), L.empty(0, dtype=o[1]))),
    lambda L, a, o: L.linalg.cholesky(a, out=L.empty(0, dtype=o[0])),
])
@pytest.mark.parametrize("dtypes", [("float32", "int32"), ("float64", "int64"), ("complex128", "int32"),
                                    ("float64", "float32"), ("float64", "int32")])
def test_linalg_cholesky_out_dtypes_as_torch(call, dtypes):
    a = np.array([[4.0, 1.0], [1.0, 3.0]])

    def run(L):
        return _outcome(lambda: call(L, L.tensor(a), tuple(getattr(L, d) for d in dtypes)))

    assert run(tg) == run(torch)


@pytest.mark.parametrize("check_errors", [False, True])
@pytest.mark.parametrize("make", [lambda L: L.zeros(2, 3), lambda L: L.eye(2, dtype=L.int64), lambda L: L.ones(3)])
def test_cholesky_ex_checks_named_as_linalg_cholesky(make, check_errors):
    """check_errors=True names only the failed factorisation after linalg.cholesky_ex; the input checks are
    linalg.cholesky's."""
    assert _outcome(lambda: tg.linalg.cholesky_ex(make(tg), check_errors=check_errors)) == \
        _outcome(lambda: torch.linalg.cholesky_ex(make(torch), check_errors=check_errors))


def test_legacy_cholesky_warns_once_at_the_users_line():
    def run(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.cholesky(L.eye(2))
            L.cholesky(L.eye(2))
            L.cholesky(L.eye(2), out=L.empty(0))
        return [(w.category, w.filename, str(w.message).splitlines()[0]) for w in caught]

    import tracegrad._warnings as tg_warnings

    tg_warnings._SEEN.discard("cholesky")
    tg_warnings._SEEN.discard("cholesky_out")
    got = run(tg)
    # (torch's once a process is spent after its first call anywhere: the count compared is the first run's)
    assert [w[0] for w in got] == [UserWarning, UserWarning]
    assert {w[1] for w in got} == {__file__}
