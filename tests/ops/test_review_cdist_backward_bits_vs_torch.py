"""Review of c8cdd68 (cdist/pdist with p < 1): the gradient of cdist/pdist for a general p, bit for bit against
torch in float32 (ATen's Vec arithmetic: Sleef's powf, its operand order, ``p - 1`` taken in float32), including
coordinates two points share with p < 1. Before: NumPy's pow in a different order, off in the last bit."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

_RNG = np.random.default_rng(0)
_X = _RNG.standard_normal((6, 5)).round(1)
_Y = _RNG.standard_normal((4, 5)).round(1)
_X[1, 2] = _Y[0, 2]  # (a shared coordinate: 0 gradient for p < 1)


def _grads(L, p: float, pairwise: bool) -> list:
    x = L.tensor(_X, dtype=L.float32, requires_grad=True)
    y = L.tensor(_Y, dtype=L.float32, requires_grad=True)
    d = L.pdist(x, p=p) if pairwise else L.cdist(x, y, p=p)
    w = L.arange(d.numel(), dtype=L.float32).reshape(d.shape) + 1
    inputs = [x] if pairwise else [x, y]
    return [g.tolist() for g in L.autograd.grad((d * w).sum(), inputs)]


@pytest.mark.parametrize("pairwise", [False, True])
@pytest.mark.parametrize("p", [0.3, 0.8, 1.5, 2.5, 3.0])
def test_float32_gradient_bits(p, pairwise):
    assert _grads(tg, p, pairwise) == _grads(torch, p, pairwise)
