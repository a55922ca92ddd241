"""Differences that the programs of ``tests/test_user_programs30_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch (values with the sign of each zero, gradients, the nodes of a
double-backward graph, errors).

- the backward of a selection along a dim (max/min/median/nanmedian/mode/kthvalue/sort/topk/msort, quantile's
  sort) built its gradient by ``index_put``: a double-backward graph showed IndexPutBackward0 where torch's
  ``zeros.scatter_(dim, indices, grad)`` shows ScatterBackward0;
- the backward of a whole-tensor max/min/median/nanmedian was ``mask * (grad / count)`` (MulBackward0), torch's
  CPU formula ``zeros.masked_fill_(mask, grad / count)`` (MaskedFillBackward1 over the division);
- maximum/minimum and fmax/fmin wrote their gradients with ``where`` (WhereBackward0) where torch's formulas end
  in ``masked_fill`` (MaskedFillBackward0);
- cdist and pdist with p < 1 gave a NaN gradient where a coordinate does not differ (0 * inf), torch 0;
- ``dist(x, y, 0)`` with ``y`` requiring grad raised a TypeError from ``neg`` in backward; torch's RuntimeError
  "Expected a proper Tensor but got None ...".
"""

from __future__ import annotations

import math

import pytest
from _lib import tg, torch


def _exact(t) -> list:
    """Values to 5 decimals (p-norm distances round differently in the last bit) with the sign of each zero,
    NaN as text (so that equal lists compare equal)."""
    values = t.detach().clone().reshape(-1).tolist()
    return [str(v) if not math.isfinite(v) or (v == 0 and math.copysign(1.0, v) < 0) else round(v, 5)
            for v in values]


def _node_names(L, f, points) -> tuple:
    """The first gradient of ``f(x).pow(2).sum()`` and the names of its node and the node's inputs."""
    x = L.tensor(points, requires_grad=True)
    g, = L.autograd.grad(f(L, x).pow(2).sum(), x, create_graph=True)
    second, = L.autograd.grad(g.sum(), x)
    return (_exact(g), g.grad_fn.name(), [n.name() if n else None for n, _ in g.grad_fn.next_functions],
            _exact(second), g.stride())


ROWS = [[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 0.0, 1.0]]
SELECTIONS = {
    "max_dim": lambda L, x: x.max(1).values,
    "min_dim_keepdim": lambda L, x: x.min(0, keepdim=True).values,
    "median_dim": lambda L, x: x.median(1).values,
    "nanmedian_dim": lambda L, x: x.nanmedian(1).values,
    "mode": lambda L, x: x.mode(1).values,
    "kthvalue": lambda L, x: x.kthvalue(2, 1).values,
    "sort": lambda L, x: x.sort(1).values,
    "sort_dim0_stable": lambda L, x: x.sort(dim=0, descending=True, stable=True).values,
    "msort": lambda L, x: x.msort(),
    "topk": lambda L, x: x.topk(2, 1).values,
    "quantile": lambda L, x: x.quantile(0.5, 1),
    "max_full": lambda L, x: x.max(),
    "min_full": lambda L, x: x.min(),
    "median_full": lambda L, x: x.median(),
    "nanmedian_full": lambda L, x: x.nanmedian(),
    "maximum": lambda L, x: L.maximum(x, x.flip(0)),
    "minimum_broadcast": lambda L, x: L.minimum(x, x[0]),
    "fmax": lambda L, x: L.fmax(x, x.flip(1)),
    "fmin_broadcast": lambda L, x: L.fmin(x[:1], x),
}


@pytest.mark.parametrize("name", SELECTIONS)
def test_selection_double_backward_graph(name):
    f = SELECTIONS[name]
    assert _node_names(tg, f, ROWS) == _node_names(torch, f, ROWS)


@pytest.mark.parametrize("points", [[float("nan"), 1.0, float("nan")], [2.0, 2.0, 2.0], [5.0]])
@pytest.mark.parametrize("reduction", ["max", "min", "median", "nanmedian"])
def test_full_extreme_gradient_with_nan_and_ties(points, reduction):
    def grads(L):
        x = L.tensor(points, requires_grad=True)
        g, = L.autograd.grad(getattr(x, reduction)() ** 2, x, create_graph=True)
        return _exact(g), g.grad_fn.name(), g.is_contiguous()

    assert grads(tg) == grads(torch)


def _distances_grads(L, op, p):
    a = L.tensor([[0.0, 1.0], [2.0, 2.0], [0.0, -1.0]], requires_grad=True)
    b = L.tensor([[0.0, 3.0], [1.0, 1.0]], requires_grad=True)
    if op == "cdist":
        out = L.cdist(a, b, p)
        return [_exact(out), *(_exact(g) for g in L.autograd.grad(out.sum(), (a, b)))]
    out = L.nn.functional.pdist(a, p)
    return [_exact(out), _exact(L.autograd.grad(out.sum(), a)[0])]


@pytest.mark.parametrize("p", [0.25, 0.5, 0.9, 1.5])
@pytest.mark.parametrize("op", ["cdist", "pdist"])
def test_distance_gradient_below_one_where_a_coordinate_agrees(op, p):
    assert _distances_grads(tg, op, p) == _distances_grads(torch, op, p)


def _dist_zero_norm(L, other_requires_grad):
    x = L.tensor([0.0, 1.0], requires_grad=True)
    y = L.tensor([0.0, 0.0], requires_grad=other_requires_grad)
    try:
        grads = L.autograd.grad(L.dist(x, y, 0), (x, y) if other_requires_grad else (x,))
        return [_exact(g) for g in grads]
    except RuntimeError as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("other_requires_grad", [False, True])
def test_dist_p0_backward(other_requires_grad):
    assert _dist_zero_norm(tg, other_requires_grad) == _dist_zero_norm(torch, other_requires_grad)
