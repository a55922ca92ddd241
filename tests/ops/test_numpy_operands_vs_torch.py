"""NumPy numbers beside a tensor in Python's operators, as with torch.

A NumPy scalar on the left (``np.float64(2) * x``, ``np.pi * x``, ``np.sqrt(d) * x``) used to run NumPy's operator,
which read the tensor as an array: the result was a float64 array, and the graph was lost without a word. A tensor
now asks NumPy to defer (``__array_priority__``, as torch's), so the tensor's reflected operator runs: a tensor of
torch's dtype, recorded. An array on the left is refused, as torch refuses it.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

SCALARS = {"float64": np.float64(2.5), "float32": np.float32(2.0), "float16": np.float16(2.0), "int64": np.int64(3),
           "int32": np.int32(3)}
OPERATORS = {"*": lambda a, b: a * b, "+": lambda a, b: a + b, "-": lambda a, b: a - b, "/": lambda a, b: a / b,
             "**": lambda a, b: a ** b, "//": lambda a, b: a // b, "%": lambda a, b: a % b, "<": lambda a, b: a < b,
             "==": lambda a, b: a == b}
TENSORS = {"float": lambda L: L.tensor([1.0, 2.0], requires_grad=True), "int": lambda L: L.tensor([1, 2])}


def _outcome(program):
    try:
        value = program()
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    return (type(value).__name__, str(value.dtype).replace("tracegrad", "torch"), value.requires_grad,
            value.grad_fn is not None, repr(value.detach().tolist()))


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("tensor", list(TENSORS))
@pytest.mark.parametrize("op", list(OPERATORS))
@pytest.mark.parametrize("scalar", list(SCALARS))
def test_numpy_scalar_operand_as_in_torch(scalar, op, tensor, side):
    def program(lib):
        t, s, f = TENSORS[tensor](lib), SCALARS[scalar], OPERATORS[op]
        return lambda: f(s, t) if side == "left" else f(t, s)

    assert _outcome(program(tg)) == _outcome(program(torch))


@pytest.mark.parametrize("op", ["*", "-", "**", "//", "%"])
def test_numpy_array_on_the_left_is_refused_as_in_torch(op):
    def program(lib):
        return lambda: OPERATORS[op](np.array([2.0, 3.0]), lib.tensor([1.0, 2.0], requires_grad=True))

    expected = _outcome(program(torch))
    assert expected[0] == "TypeError"
    assert _outcome(program(tg)) == expected


def test_numpy_scalar_keeps_the_graph():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    (np.pi * x).sum().backward()
    assert x.grad.tolist() == pytest.approx([np.pi, np.pi])


@pytest.mark.parametrize("method", ["sum", "mean", "amax", "std", "var", "logsumexp", "nansum", "any", "count_nonzero",
                                    "squeeze", "flip"])
@pytest.mark.parametrize("dim", [np.int64(0), np.int32(-1)])
def test_numpy_integer_dim_as_in_torch(method, dim):
    """A NumPy integer is an int to torch's parser, a dim too (``x.sum(np.int64(0))`` tried to iterate it)."""
    results = []
    for lib in (torch, tg):
        x = lib.tensor([[0.5, 1.5, 2.5]]) if method == "squeeze" else lib.arange(6.0).reshape(2, 3)
        results.append(getattr(x, method)(dim).reshape(-1).tolist())
    assert results[1] == pytest.approx(results[0])


@pytest.mark.parametrize("make", [lambda: np.arange(3.0)[::-1], lambda: np.zeros((2, 3))[:, ::-1],
                                  lambda: np.arange(4.0).reshape(2, 2)[::-1], lambda: np.zeros(0)[::-1],
                                  lambda: np.zeros((2, 0))[::-1], lambda: np.arange(3.0)[::2]],
                         ids=["reversed", "reversed columns", "reversed rows", "empty", "empty rows", "stepped"])
def test_from_numpy_of_negative_strides_as_in_torch(make):
    outcomes = []
    for lib in (torch, tg):
        try:
            outcomes.append(("ok", tuple(lib.from_numpy(make()).shape)))
        except ValueError as exc:
            outcomes.append(("ValueError", str(exc)))
    assert outcomes[1] == outcomes[0]
