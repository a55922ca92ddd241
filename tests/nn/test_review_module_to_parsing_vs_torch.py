"""Review of set 41: ``Module.to`` parses its arguments as torch's ``_parse_to`` (Tensor.to's signatures).

The set's fix refused ``copy`` by counting positional bools, and the arguments were otherwise picked by type: a
call Tensor.to refuses (three bools, ``copy=None``, a bool before ``dtype=``, an int flag, an unknown keyword) was
accepted or refused with the wrong error, and Python's number types, ``tensor=`` and a number given for the tensor
were ignored (the module kept float32)."""

from __future__ import annotations

import pytest
from _lib import tg, torch

CALLS = {
    "three bools": lambda L, m: m.to(L.float16, False, False, False),
    "copy None": lambda L, m: m.to(L.float16, copy=None),
    "non_blocking twice": lambda L, m: m.to(L.float16, True, non_blocking=True),
    "a bool before dtype=": lambda L, m: m.to(False, dtype=L.float16),
    "an int flag": lambda L, m: m.to(L.float16, 1),
    "an unknown keyword": lambda L, m: m.to(L.float16, foo=1),
    "copy=False": lambda L, m: m.to(L.float16, copy=False),
    "a positional copy": lambda L, m: m.to(L.float16, False, True),
    "a tensor's copy": lambda L, m: m.to(L.ones(1, dtype=L.float64), False, True),
    "float": lambda L, m: m.to(float),
    "int": lambda L, m: m.to(int),
    "tensor=": lambda L, m: m.to(tensor=L.ones(1, dtype=L.float64)),
    "a number for the tensor": lambda L, m: m.to(1.5),
    "a tensor and non_blocking": lambda L, m: m.to(L.ones(1, dtype=L.float64), True),
    "device and dtype": lambda L, m: m.to("cpu", L.float64),
    "dtype= and non_blocking=": lambda L, m: m.to(dtype=L.float64, non_blocking=True),
}


def _outcome(lib, call):
    module = lib.nn.Linear(2, 2)
    try:
        call(lib, module)
    except (TypeError, RuntimeError) as exc:
        return type(exc).__name__, str(exc)
    return str(module.weight.dtype).replace("tracegrad", "torch")


@pytest.mark.parametrize("name", sorted(CALLS))
def test_module_to_parses_as_torch(name):
    assert _outcome(tg, CALLS[name]) == _outcome(torch, CALLS[name])
