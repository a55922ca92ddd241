"""A leaf's ``.grad`` is laid out as torch lays it out (the gradient layout contract of AccumulateGrad).

Torch adopts an incoming gradient whose strides match the leaf's in every dim longer than 1, and otherwise
copies it into the leaf's own strides (contiguous where the leaf has gaps or overlaps). Each case below builds
a leaf of some layout, runs a backward that hands it a gradient of another, and compares ``.grad``'s strides,
values and, under create_graph, its node with torch's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests._lib import tg, torch


def _transposed(lib):
    return lib.ones(3, 4).t().detach().requires_grad_()


def _gapped(lib):
    return lib.ones(4, 6)[:, ::2].detach().requires_grad_()


def _permuted(lib):
    return lib.ones(2, 3, 4).permute(2, 0, 1).detach().requires_grad_()


def _column(lib):
    return lib.ones(4, 1, requires_grad=True)


def _row(lib):
    return lib.ones(1, 4, requires_grad=True)


def _plain(lib):
    return lib.ones(3, 4, requires_grad=True)


# (name, leaf maker, the loss of the leaf whose backward gives the gradient)
CASES = [
    ("transposed leaf, contiguous gradient", _transposed, lambda lib, v: (v * 2).sum()),
    ("leaf with gaps", _gapped, lambda lib, v: (v * 2).sum()),
    ("permuted leaf", _permuted, lambda lib, v: (v * 2).sum()),
    ("gradient through a transpose", _plain, lambda lib, v: (v.t() * 2).sum()),
    ("size-1 leaf through a transpose", _column, lambda lib, v: (v.t() * 2).sum()),
    ("size-1 leaf through expand", _row, lambda lib, v: (v.expand(3, 4) * 2).sum()),
    ("matmul's folded gradient", _plain, lambda lib, v: lib.matmul(v, lib.ones(2, 4, 5)).sum()),
    ("a gradient the caller holds", _transposed, lambda lib, v: (v * lib.ones(4, 3)).sum()),
]


def _observed(lib, make, loss, create_graph: bool, twice: bool) -> dict:
    v = make(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (backward with create_graph warns of the cycle it makes)
        loss(lib, v).backward(create_graph=create_graph)
        if twice:  # the second gradient is added into the first one's buffer
            loss(lib, v).backward(create_graph=create_graph)
    g = v.grad
    return {"strides": g.stride(), "values": np.array(g.detach().tolist()),
            "node": None if g.grad_fn is None else g.grad_fn.name()}


def _params() -> list:
    # (under create_graph the second gradient is added out of place, and the sum takes the layout of torch's
    # pointwise rule: the first operand's where the operands' layouts differ)
    return [pytest.param(name, make, loss, create_graph, twice,
                         id=f"{name}-{'create_graph' if create_graph else 'backward'}-{'twice' if twice else 'once'}")
            for name, make, loss in CASES for create_graph in (False, True) for twice in (False, True)]


@pytest.mark.parametrize("name,make,loss,create_graph,twice", _params())
def test_leaf_grad_laid_out_as_in_torch(name, make, loss, create_graph, twice):
    ours, theirs = (_observed(lib, make, loss, create_graph, twice) for lib in (tg, torch))
    assert ours["strides"] == theirs["strides"], name
    assert ours["node"] == theirs["node"], name
    np.testing.assert_array_equal(ours["values"], theirs["values"])


def test_given_gradient_is_copied_into_the_leafs_layout():
    """``v.backward(g)`` on a transposed leaf: torch cannot adopt ``g`` (the caller holds it), so ``.grad`` is a
    copy with the leaf's strides, not ``g`` itself."""
    for lib in (tg, torch):
        v = _transposed(lib)
        g = lib.full((4, 3), 5.0)
        v.backward(g)
        assert v.grad.stride() == (1, 4) and v.grad.data_ptr() != g.data_ptr()
