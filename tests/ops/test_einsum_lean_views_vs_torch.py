"""einsum's permutes, unsqueezes and views go by the views' lean path (``views.call_plain``): the graph it records
is still torch's, node by node, with the same saved arguments; values and gradients (first and second order) agree
(within float32 rounding: the products are BLAS's, not torch's)."""

from __future__ import annotations

import numpy as np
import pytest

from tests._lib import tg, torch

EQUATIONS = [("ij,jk->ki", [(3, 4), (4, 5)]), ("i,j->ij", [(3,), (4,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
             ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("ii->i", [(4, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)])]


def _graph(t) -> list:
    """Every node reachable from ``t``'s, depth first: its class name and its saved non-tensor arguments."""
    out, stack, seen = [], [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        saved = {k: getattr(node, k) for k in dir(node) if k.startswith("_saved_")}
        out.append((type(node).__name__, {k: v for k, v in saved.items() if not hasattr(v, "shape")}))
        stack.extend(f for f, _ in node.next_functions)
    return out


def _run(lib, equation: str, shapes: list):
    rng = np.random.default_rng(0)
    ops = [lib.tensor(rng.standard_normal(s), dtype=lib.float32).requires_grad_() for s in shapes]
    y = lib.einsum(equation, *ops)
    graph = _graph(y)
    grads = lib.autograd.grad(y, ops, lib.ones_like(y), create_graph=True)
    total = sum((g * g).sum() for g in grads)
    second = lib.autograd.grad(total, ops, allow_unused=True) if total.requires_grad else ()
    return y, grads, second, graph


@pytest.mark.parametrize("equation,shapes", EQUATIONS)
def test_graph_and_gradients_match_torch(equation, shapes):
    ours, theirs = _run(tg, equation, shapes), _run(torch, equation, shapes)
    assert ours[0].stride() == theirs[0].stride()
    for a, b in zip((ours[0],) + ours[1] + ours[2], (theirs[0],) + theirs[1] + theirs[2]):
        assert (a is None) == (b is None)
        if a is not None:
            assert str(a.dtype) == str(b.dtype) and a.stride() == b.stride()
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert ours[3] == theirs[3]


@pytest.mark.parametrize("equation,shapes", EQUATIONS + [("ij->ji", [(3, 4)]), ("b...,b...->b", [(2, 3, 1), (2, 1, 4)])])
def test_unrecorded_einsum_matches_torch(equation, shapes):
    """Without grad, einsum's aligning views are made as arrays: the result is still torch's (a view of the product
    where torch's is, strides, dtype) and the operands' versions are untouched."""
    results = []
    for lib in (tg, torch):
        rng = np.random.default_rng(1)
        ops = [lib.tensor(rng.standard_normal(s), dtype=lib.float64) for s in shapes]
        y = lib.einsum(equation, *ops)
        results.append((y, y._is_view(), y.stride(), str(y.dtype), [t._version for t in ops]))
    (y, *facts), (y_torch, *facts_torch) = results
    assert facts == facts_torch
    np.testing.assert_allclose(y.numpy(), y_torch.numpy(), rtol=1e-12, atol=1e-12)
