"""Every Python operator on tensors of float, integer and bool dtype, with tensors and numbers on either side
and in place: the same result dtype and values as torch, or the same error type and message."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
from _lib import tg, torch

BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and_", "or_", "xor",
          "matmul", "lt", "le", "eq", "ne", "gt", "ge"]
IN_PLACE = ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "ilshift", "irshift", "iand", "ior",
            "ixor", "imatmul"]
UNARY = ["neg", "pos", "abs", "invert"]
OTHERS = ["f", "i", "b", 2, 2.5, True]  # tensors of each kind, then Python numbers


def _tensor(lib, kind: str):
    return {"f": lib.tensor([[1.5, -2.0], [3.0, 0.5]]),
            "i": lib.tensor([[3, -2], [7, 1]]),
            "b": lib.tensor([[True, False], [True, True]])}[kind]


def _outcome(fn):
    """(dtype, values) of the result, or (error type name, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn()
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return type(exc).__name__, str(exc)
    return str(result.dtype), np.asarray(result.tolist(), dtype=float)


def _same(ours, theirs) -> bool:
    if isinstance(ours[1], np.ndarray) and isinstance(theirs[1], np.ndarray):
        return ours[0] == theirs[0] and np.array_equal(ours[1], theirs[1], equal_nan=True)
    return ours == theirs


def _operands(lib, kind: str, other, reflected: bool) -> tuple:
    a, b = _tensor(lib, kind), _tensor(lib, other) if isinstance(other, str) else other
    return (b, a) if reflected else (a, b)


@pytest.mark.parametrize("other", OTHERS, ids=str)
@pytest.mark.parametrize("name", BINARY + IN_PLACE)
@pytest.mark.parametrize("kind", ["f", "i", "b"])
def test_operator_matches_torch(name, kind, other):
    fn = getattr(operator, name)
    # the reflected form (number op tensor) too, where Python has one
    for reflected in (False, True) if not isinstance(other, str) and not name.startswith("i") else (False,):
        ours = _outcome(lambda: fn(*_operands(tg, kind, other, reflected)))  # noqa: B023 - called at once
        theirs = _outcome(lambda: fn(*_operands(torch, kind, other, reflected)))  # noqa: B023
        assert _same(ours, theirs), (reflected, ours, theirs)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("kind", ["f", "i", "b"])
def test_unary_operator_matches_torch(name, kind):
    fn = getattr(operator, name)
    ours, theirs = _outcome(lambda: fn(_tensor(tg, kind))), _outcome(lambda: fn(_tensor(torch, kind)))
    assert _same(ours, theirs)
