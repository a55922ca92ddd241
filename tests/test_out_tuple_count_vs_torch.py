"""A tuple ``out=`` of the wrong length for an operator with several results: torch's argument parser refuses it
("expected tuple of N elements but got M", a TypeError) before anything runs, so the out tensors stay as they were
and no other check (dtypes, grad) speaks first. tracegrad ran the kernel and then raised a RuntimeError of its own,
or (``slogdet``) a namedtuple's TypeError."""

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
