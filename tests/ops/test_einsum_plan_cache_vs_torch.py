"""einsum's parsed equation is cached (keyed by the equation and the operands' dims), compared with torch:

- a repeated equation was parsed character by character on every call (torch's C++ parser, ported in b4e4b22),
  which made einsum slower than before it; the parse and the alignment plan are now a cached pure function of
  the equation and the operands' dims, so a repeated equation skips them;
- what depends on the operands' sizes (a repeated label's sizes, sizes that do not broadcast) is still checked
  on every call, in torch's order, and an equation refused is refused again, in the same words, on each call.
"""

from __future__ import annotations

import pytest
from _lib import recorded_graph, tg, torch


def _outcome(lib, equation, shapes: list, requires_grad: bool = False):
    """einsum's result (dtype, shape, strides, values, graph), or its error's type and message; the operands hold
    small integers, so that every sum is exact whatever order a product sums in."""
    gen = lib.Generator().manual_seed(0)
    operands = [lib.randint(-3, 4, shape, generator=gen).double().requires_grad_(requires_grad) for shape in shapes]
    try:
        result = lib.einsum(equation, *operands)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    return (str(result.dtype).replace("tracegrad", "torch"), tuple(result.shape), result.stride(),
            result.tolist(), recorded_graph([result]))


# Each program calls one equation several times: the cached plan of an earlier call must not change a later
# call's result or error (operands of other dims, sizes that no longer match, an equation refused again).
SEQUENCES = {
    "same equation, same dims": [("ij,jk->ki", [(3, 4), (4, 5)])] * 3,
    "ellipsis over other dims": [("...ij,...jk->...ik", s) for s in
                                 ([(3, 4), (4, 5)], [(2, 3, 4), (2, 4, 5)], [(3, 4), (2, 4, 5)],
                                  [(2, 1, 3, 4), (5, 4, 5)], [(3, 4), (4, 5)])],
    "implicit output over other dims": [("...i,...i", s) for s in ([(3,), (3,)], [(2, 3), (3,)], [(3,), (2, 3)])],
    "repeated label, then sizes that differ": [("ii->i", [(3, 3)]), ("ii->i", [(3, 4)]), ("ii->i", [(2, 2)])],
    "repeated label with a contraction": [("iij,jk->ik", [(2, 2, 3), (3, 4)]), ("iij,jk->ik", [(2, 3, 3), (3, 4)])],
    "sizes that do not broadcast after a valid call": [("ij,jk->ki", [(3, 4), (4, 5)]),
                                                       ("ij,jk->ki", [(3, 4), (5, 6)]),
                                                       ("ij,jk->ki", [(3, 1), (7, 6)])],
    "ellipsis that does not broadcast after a valid call": [("...i,...i->...", [(2, 3), (2, 3)]),
                                                            ("...i,...i->...", [(2, 3), (5, 3)])],
    "too many dims after a valid call": [("ij->ji", [(2, 3)]), ("ij->ji", [(2, 3, 4)]), ("ij->ji", [(2, 3)])],
    "output label refused each call": [("ij,jk->kq", [(2, 3), (3, 4)])] * 2,
    "stray dot refused each call": [("i.j->ij", [(2, 3)])] * 2,
    "bad subscript refused each call": [("i1->i", [(2, 3)])] * 2,
    "too few operands each call": [("ij,jk,kl->il", [(2, 3), (3, 4)])] * 2,
}


@pytest.mark.parametrize("sequence", SEQUENCES.values(), ids=SEQUENCES.keys())
@pytest.mark.parametrize("requires_grad", [False, True], ids=["plain", "requires_grad"])
def test_einsum_repeated_equation_as_torch(sequence, requires_grad):
    ours = [_outcome(tg, eq, shapes, requires_grad) for eq, shapes in sequence]
    theirs = [_outcome(torch, eq, shapes, requires_grad) for eq, shapes in sequence]
    assert ours == theirs


def test_einsum_repeated_equation_gradients_as_torch():
    def grads(lib):
        a = lib.arange(12.0, dtype=lib.float64).reshape(3, 4).requires_grad_()
        b = lib.arange(-10.0, 10.0, dtype=lib.float64).reshape(4, 5).requires_grad_()
        total = lib.einsum("ij,jk->ki", a, b).sum() + lib.einsum("ij,jk->ki", a * 2, b).square().sum()
        total.backward()
        return [(g.tolist(), g.stride()) for g in (a.grad, b.grad)]

    assert grads(tg) == grads(torch)


def _cleared_plan_cache():
    from tracegrad.ops.linalg import _einsum_plan

    _einsum_plan.cache_clear()
    return _einsum_plan


@pytest.mark.skipif(tg is torch, reason="tracegrad's own cache")
def test_einsum_parses_a_repeated_equation_once():
    plan = _cleared_plan_cache()
    a, b = tg.ones(3, 4), tg.ones(4, 5)
    for _ in range(3):
        tg.einsum("ij,jk->ki", a, b)
    tg.einsum(a, [0, 1], b, [1, 2], [2, 0])  # the sublist form: "AB,BC->CA", another equation
    tg.einsum("ij,jk->ki", tg.ones(3, 4, 1)[..., 0], b)  # same dims, other operands: the same plan
    info = plan.cache_info()
    assert (info.misses, info.hits) == (2, 3)


@pytest.mark.skipif(tg is torch, reason="tracegrad's own cache")
def test_einsum_refused_equation_is_not_cached():
    plan = _cleared_plan_cache()
    for _ in range(2):
        with pytest.raises(RuntimeError, match="output subscript q does not appear"):
            tg.einsum("ij,jk->kq", tg.ones(2, 3), tg.ones(3, 4))
    assert plan.cache_info().currsize == 0
