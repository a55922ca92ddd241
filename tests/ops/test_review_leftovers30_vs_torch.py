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


# ---- Tensor.__rdiv__ and other aliases under __torch_function__ routing ------------------------------------


def _funcs_seen_by_mode(L, program):
    seen = []

    class Recorder(L.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__qualname__)
            return func(*args, **(kwargs or {}))

    x = L.tensor([1.0, 2.0])
    with Recorder():
        program(x)
    return seen


def _funcs_seen_by_subclass(L, program):
    seen = []

    class Recorded(L.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__qualname__)
            return super().__torch_function__(func, types, args, kwargs)

    program(L.tensor([1.0, 2.0]).as_subclass(Recorded))
    return seen


def _in_place_div(x):
    y = x.clone()
    y.__idiv__(2)
    y.__itruediv__(2)


RDIV_PROGRAMS = {"__rdiv__": lambda x: x.__rdiv__(2), "__rtruediv__": lambda x: x.__rtruediv__(2),
                 "2 / x": lambda x: 2 / x, "__idiv__, __itruediv__": _in_place_div}


@pytest.mark.parametrize("seen_by", [_funcs_seen_by_mode, _funcs_seen_by_subclass])
@pytest.mark.parametrize("program", list(RDIV_PROGRAMS))
def test_division_aliases_reach_handlers_as_torch(seen_by, program):
    assert seen_by(tracegrad, RDIV_PROGRAMS[program]) == seen_by(torch, RDIV_PROGRAMS[program])


def _aliases_are_one(L):
    T = L.Tensor
    return T.__idiv__ is T.__itruediv__, T.__rdiv__ is T.__rtruediv__


def test_division_aliases_stay_one_object_while_routing_and_after():
    def program(L):
        class Mode(L.overrides.TorchFunctionMode):
            pass

        with Mode():
            during = _aliases_are_one(L)
        return during, _aliases_are_one(L), L.Tensor.__rdiv__.__qualname__

    assert program(tracegrad) == program(torch)
