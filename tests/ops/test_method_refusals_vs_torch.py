"""Two Tensor methods' refusals, against torch.

``Tensor.set_`` given what is neither a tensor nor a storage (an int, a list, an array, None, a string), or a
storage offset without a size, is refused by torch's parser with its list of signatures; tracegrad raised an
AttributeError naming ``_data``, or went on.

A method without parameters given arguments (``t.abs(1)``) is refused in CPython's words, which name the class of
what was called: the method descriptor's (``TensorBase.abs()``) where the call looked the method up, the tensor's
own (``Tensor.abs()``, ``Parameter.abs()``) where it called a bound method (``getattr(t, "abs")(1)``, ``f = t.abs``).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, tg, torch
from torch import Tensor as TorchTensor  # (a class an import binds: Python 3.11-3.13 load its methods by LOAD_ATTR)

from tracegrad import Tensor as TgTensor

SET_CALLS = {
    "an int": lambda L: L.ones(2).set_(3),
    "a list": lambda L: L.ones(2).set_([1, 2]),
    "an array": lambda L: L.ones(2).set_(np.ones(2)),
    "a string": lambda L: L.ones(2).set_("a"),
    "None": lambda L: L.ones(2).set_(None),
    "an int by keyword": lambda L: L.ones(2).set_(source=3),
    "two ints": lambda L: L.ones(2).set_(3, 4),
    "a tensor and an offset": lambda L: L.ones(2).set_(L.ones(2), 0),
    "a tensor, a string offset": lambda L: L.ones(2).set_(L.ones(2), "a", (2,), (1,)),
    "a storage and a string stride": lambda L: L.ones(2).set_(L.ones(2).untyped_storage(), 0, 2, "x"),
    "a tensor and an unknown keyword": lambda L: L.ones(2).set_(L.ones(2), foo=1),
    "a storage offset without a size": lambda L: L.ones(2).set_(L.ones(2), storage_offset=0),
}


@pytest.mark.parametrize("case", list(SET_CALLS))
def test_set_refuses_what_is_no_source_as_torch(case):
    assert raised(tg, SET_CALLS[case]) == raised(torch, SET_CALLS[case])


def test_set_takes_its_sources_as_torch():
    def program(lib):
        x = lib.zeros(2)
        x.set_(lib.ones(4).untyped_storage(), 1, (2,), (1,))
        y = lib.zeros(1).set_()
        return x.tolist(), tuple(y.shape), lib.zeros(3).set_(lib.arange(2.0)).tolist()
    assert program(tg) == program(torch)


def _through_getattr(name: str, make=lambda L: L.ones(2), *args, **kwargs):
    return lambda L: getattr(make(L), name)(*args, **kwargs)


def _stored_under_another_name(L):
    class Holder:
        pass
    holder = Holder()
    holder.f = L.ones(2).abs
    return holder.f(1)


def _looked_up_on_an_imported_class(L):
    if L is tg:
        return TgTensor.abs(L.ones(2), 1)
    return TorchTensor.abs(L.ones(2), 1)


def _bound(L):
    method = L.ones(2).abs
    return method(1)


# methods without parameters given an argument, in each form of call
NO_PARAMETER_CALLS = {
    "looked up": lambda L: L.ones(2).abs(1),
    "looked up on the class": lambda L: L.Tensor.abs(L.ones(2), 1),
    "looked up, with a keyword": lambda L: L.ones(2).abs(x=1),
    "through getattr": _through_getattr("abs", lambda L: L.ones(2), 1),
    "through getattr, with a keyword": _through_getattr("neg", x=1),
    "bound first": _bound,
    "passed on": lambda L: list(map(L.ones(2).sin, [1])),
    "in-place, through getattr": _through_getattr("exp_", lambda L: L.ones(2), 1),
    "a parameter's, through getattr": _through_getattr("t", lambda L: L.nn.Parameter(L.ones(2)), 1),
    "a parameter's, looked up": lambda L: L.nn.Parameter(L.ones(2)).t(1),
    "CPython's own method, through getattr": _through_getattr("tolist", lambda L: L.ones(2), 1),
    "in a conditional argument": lambda L: L.ones(2).relu(1 if L else 2),
    "looked up on a class bound by an import": _looked_up_on_an_imported_class,
    "a bound method stored under another name": _stored_under_another_name,
    "a bound method's __call__": lambda L: L.ones(2).abs.__call__(1),
}


@pytest.mark.parametrize("case", list(NO_PARAMETER_CALLS))
def test_methods_without_parameters_refuse_arguments_as_torch(case):
    assert raised(tg, NO_PARAMETER_CALLS[case]) == raised(torch, NO_PARAMETER_CALLS[case])


def test_an_unreadable_caller_keeps_the_common_wording(monkeypatch):
    """Bytecode the reading does not know (a later Python's) never turns the refusal into another error."""
    import dis

    def unreadable(*args, **kwargs):
        raise ValueError("no such opcode")
    monkeypatch.setattr(dis, "get_instructions", unreadable)
    assert raised(tg, _through_getattr("abs", lambda L: L.ones(2), 1)) == (
        "TypeError", "TensorBase.abs() takes no arguments (1 given)")
