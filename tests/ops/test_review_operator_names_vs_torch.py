"""Review of the Tensor operator names set 28 gave torch's: the renamed methods still pickle as torch's do, and a
direct ``t.__rmatmul__(u)`` call computes ``u @ t`` as torch's does."""

from __future__ import annotations

import functools
import pickle

import pytest
from _lib import tg, torch

# (torch's __neg__/__abs__ are its neg/abs; tracegrad's are functions of their own, found under their own names)
PICKLED = ("__neg__", "__abs__", "__add__", "__mul__", "__radd__", "__matmul__", "__invert__", "__getitem__")


@pytest.mark.parametrize("name", PICKLED)
def test_renamed_operator_methods_pickle(name):
    for lib in (tg, torch):
        method = getattr(lib.Tensor, name)
        assert pickle.loads(pickle.dumps(method)) is method
        partial = pickle.loads(pickle.dumps(functools.partial(method)))
        assert partial.func is method


@pytest.mark.parametrize("name", PICKLED)
def test_renamed_operator_methods_keep_torchs_name(name):
    assert getattr(tg.Tensor, name).__name__ == getattr(torch.Tensor, name).__name__


def test_negation_through_a_pickled_method_computes():
    ours = pickle.loads(pickle.dumps(tg.Tensor.__neg__))(tg.tensor([1.0, -2.0]))
    theirs = pickle.loads(pickle.dumps(torch.Tensor.__neg__))(torch.tensor([1.0, -2.0]))
    assert ours.tolist() == theirs.tolist()


def _rmatmul(lib):
    t = lib.arange(6.0).reshape(2, 3).requires_grad_()
    u = lib.arange(4.0).reshape(2, 2)
    out = t.__rmatmul__(u)
    out.sum().backward()
    return out.tolist(), type(out.grad_fn).__name__, t.grad.tolist()


def test_a_direct_rmatmul_call_is_matmul_of_its_operands_swapped():
    assert _rmatmul(tg) == _rmatmul(torch)


@pytest.mark.parametrize("other", [2, 2.5, None])
def test_a_direct_rmatmul_call_with_a_non_tensor(other):
    ours, theirs = tg.ones(2, 2).__rmatmul__(other), torch.ones(2, 2).__rmatmul__(other)
    assert ours is NotImplemented and theirs is NotImplemented
