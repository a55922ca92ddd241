"""Review leftovers (thirtieth round), against torch: the aten ``torch.binary_cross_entropy_with_logits`` broadcasts
the input into the target's shape (F.'s "Target size ... must be the same" check is nn.functional's own), with its
backward's in-place refusals and its mean over the input's own element count."""

from __future__ import annotations

import pytest
import torch
from _lib import bits_or_error

import tracegrad

X2, X32 = [0.5, -1.0], [[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]]
T2, T32, T3 = [1.0, 0.0], [[1.0, 0.0], [0.2, 0.3], [0.0, 1.0]], [1.0, 0.0, 0.5]
PW, W = [1.5, 0.5], [2.0, 3.0]

BCE_CASES = {
    "input broadcast into target": (X2, T32, {}),
    "target smaller than input": (X32, T2, {}),
    "shapes do not broadcast": (X2, T3, {}),
    "pos_weight, input broadcast": (X2, T32, {"pos_weight": PW}),
    "weight, target smaller": (X32, T2, {"weight": W}),
    "weight larger than both": (X2, T2, {"weight": X32}),
    "one-element input": ([0.3], T3, {}),
}


def _bce(L, case, reduction):
    x, t, kw = BCE_CASES[case]
    kw = {k: L.tensor(v) for k, v in kw.items()}
    return L.binary_cross_entropy_with_logits(L.tensor(x), L.tensor(t), reduction=reduction, **kw)


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("case", list(BCE_CASES))
def test_aten_bce_with_logits_broadcasts_as_torch(case, reduction):
    def program(L):
        return _bce(L, case, reduction)

    assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


def test_functional_bce_with_logits_keeps_its_size_check():
    def program(L):
        return L.nn.functional.binary_cross_entropy_with_logits(L.tensor(X2), L.tensor(T32))

    assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


def _bce_grads(L, kw_name, reduction, create_graph, target_grad=True):
    x, t = L.tensor(X2, requires_grad=True), L.tensor(T32, requires_grad=target_grad)
    kw = {kw_name: L.tensor(PW if kw_name == "pos_weight" else W)} if kw_name else {}
    L.binary_cross_entropy_with_logits(x, t, reduction=reduction, **kw).sum().backward(create_graph=create_graph)
    return x.grad, t.grad


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("kw_name", [None, "pos_weight", "weight"])
@pytest.mark.parametrize("reduction", [0, 1])
def test_backward_of_broadcast_input_as_torch(reduction, kw_name, create_graph):
    def program(L):
        return _bce_grads(L, kw_name, reduction, create_graph)

    assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_mean_gradient_of_broadcast_input_divides_by_input_numel():
    def program(L):
        return _bce_grads(L, None, 1, True, target_grad=False)

    assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)
