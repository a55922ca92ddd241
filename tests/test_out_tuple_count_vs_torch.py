"""A tuple ``out=`` of the wrong length for an operator with several results: torch's argument parser refuses it
("expected tuple of N elements but got M", a TypeError) before anything runs, so the out tensors stay as they were
and no other check (dtypes, grad) speaks first. tracegrad ran the kernel and then raised a RuntimeError of its own,
or (``slogdet``) a namedtuple's TypeError. Also ``frexp``'s own checks of its outs' dtypes (a mantissa of self's
dtype, an int32 exponent), which it skipped, and ``diag_embed``, which has no out= overload in torch."""

from __future__ import annotations

import pytest

from tests._lib import raised, tg, torch

# (name, call with the outs given)
CALLS = {
    "sort": lambda L, x, outs: L.sort(x, out=outs),
    "max.dim": lambda L, x, outs: L.max(x, 0, out=outs),
    "min.dim": lambda L, x, outs: L.min(x, 1, out=outs),
    "topk": lambda L, x, outs: L.topk(x, 2, out=outs),
    "aminmax": lambda L, x, outs: L.aminmax(x, out=outs),
    "frexp": lambda L, x, outs: L.frexp(x, out=outs),
    "cummax": lambda L, x, outs: L.cummax(x, 0, out=outs),
    "linalg.eigh": lambda L, x, outs: L.linalg.eigh(x @ x.mT, out=outs),
    "linalg.slogdet": lambda L, x, outs: L.linalg.slogdet(x, out=outs),
    "slogdet": lambda L, x, outs: L.slogdet(x, out=outs),
    "linalg.lu_factor": lambda L, x, outs: L.linalg.lu_factor(x, out=outs),
    "linalg.lu": lambda L, x, outs: L.linalg.lu(x, out=outs),
    "linalg.qr": lambda L, x, outs: L.linalg.qr(x, out=outs),
}
COUNTS = [1, 3, 5]


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("name", CALLS)
def test_wrong_out_tuple_length_refused_first(name, count):
    def program(L):
        x = L.arange(9.0).reshape(3, 3).requires_grad_()  # (a grad check would speak second)
        outs = tuple(L.full((1,), 7, dtype=L.int8) for _ in range(count))  # (and a dtype check third)
        error = raised(L, lambda L: CALLS[name](L, x, outs))
        return error, [o.tolist() for o in outs]

    assert program(tg) == program(torch)


@pytest.mark.parametrize("name", ["sort", "linalg.slogdet"])
def test_out_list_of_wrong_length_refused_too(name):
    def program(L):
        x = L.eye(3)
        return raised(L, lambda L: CALLS[name](L, x, [L.empty(0)]))

    assert program(tg) == program(torch)


FREXP_OUTS = {  # (mantissa dtype, exponent dtype)
    "float exponent": ("float32", "float32"),
    "int64 exponent": ("float32", "int64"),
    "double mantissa": ("float64", "int32"),
    "both wrong": ("float64", "int64"),
    "right": ("float32", "int32"),
}


@pytest.mark.parametrize("source", ["float32", "float16"])
@pytest.mark.parametrize("outs", FREXP_OUTS)
def test_frexp_checks_its_outs_dtypes(outs, source):
    def program(L):
        x = L.tensor([0.75, -3.0, 1e-3], dtype=getattr(L, source))
        mantissa, exponent = (L.zeros(3, dtype=getattr(L, d)) for d in FREXP_OUTS[outs])
        error = raised(L, lambda L: L.frexp(x, out=(mantissa, exponent)))
        return error, mantissa.tolist(), exponent.tolist()

    assert program(tg) == program(torch)


def test_diag_embed_has_no_out():
    assert raised(tg, lambda L: L.diag_embed(L.ones(3), out=L.empty(3, 3))) == \
        raised(torch, lambda L: L.diag_embed(L.ones(3), out=L.empty(3, 3)))
