"""Differences that the programs of ``tests/test_user_programs29_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch (the outcome and the warnings shown).

- ``cross_entropy`` with class-probability targets and a ``weight`` that requires grad (learnable class weights)
  refused the weight as nll_loss does; torch's probability path is a composite of products, through which the
  weight gets its gradient (class-index targets still refuse it);
- ``binary_cross_entropy_with_logits`` with a ``pos_weight`` (or a ``weight``) that broadcasts beyond the input's
  shape computed a loss; torch multiplies them into the loss in place and refuses ("output with shape [2, 3]
  doesn't match the broadcast shape [2, 2, 3]").
"""

from __future__ import annotations

import pytest
from _lib import tg, torch
from _mistakes_lib import outcome, same


def _grads(L, loss, *tensors):
    return [loss, *L.autograd.grad(loss, tensors)]


def _ce_probs_learnable_weight(L, **kwargs):
    L.manual_seed(0)
    x = L.randn(4, 3, requires_grad=True)
    w = L.tensor([1.0, 2.0, 0.5], requires_grad=True)
    return _grads(L, L.nn.functional.cross_entropy(x, L.randn(4, 3).softmax(1), weight=w, **kwargs), x, w)


def _bce(L, **kwargs):
    x = L.linspace(-2, 2, 6).view(2, 3)
    t = L.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    return L.nn.functional.binary_cross_entropy_with_logits(x, t, **kwargs)


PROGRAMS = {
    "ce_probs_weight_grad": lambda L: _ce_probs_learnable_weight(L),
    "ce_probs_weight_grad_smoothing_sum": lambda L: _ce_probs_learnable_weight(L, label_smoothing=0.2,
                                                                               reduction="sum"),
    "ce_probs_weight_grad_none": lambda L: _ce_probs_learnable_weight(L, reduction="none").__getitem__(0).sum(),
    "ce_index_weight_grad_refused": lambda L: L.nn.functional.cross_entropy(
        L.zeros(2, 3), L.tensor([0, 1]), weight=L.ones(3, requires_grad=True)),
    "ce_index_smoothing_weight_grad_refused": lambda L: L.nn.functional.cross_entropy(
        L.zeros(2, 3), L.tensor([0, 1]), weight=L.ones(3, requires_grad=True), label_smoothing=0.1),
    "bce_pos_weight_wider": lambda L: _bce(L, pos_weight=L.ones(2, 1, 3)),
    "bce_pos_weight_wider_5d": lambda L: _bce(L, pos_weight=L.ones(4, 1, 1, 3)),
    "bce_weight_wider": lambda L: _bce(L, weight=L.ones(2, 2, 1)),
    "bce_both_wider": lambda L: _bce(L, weight=L.ones(3, 1, 1), pos_weight=L.ones(2, 2, 3)),
    "bce_pos_weight_broadcast_in": lambda L: _bce(L, pos_weight=L.tensor([[2.0], [0.5]]), weight=L.ones(1, 3)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_program29_finding(name):
    ours, theirs = outcome(tg, PROGRAMS[name]), outcome(torch, PROGRAMS[name])
    assert same(ours, theirs), (ours, theirs)
