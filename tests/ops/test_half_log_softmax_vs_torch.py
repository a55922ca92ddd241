"""float16 log_softmax's backward kernel and the underscore softmax operators, against torch 2.13 on CPU.

The reduced-type backward (SoftMaxKernel.cpp) keeps ``sum(grad)`` a float, takes Sleef's exp of every output
along the last dim (``vec::map2`` loads the tail as a partial vector), counts vectors of 32 halves along another
dim (glibc's ``expf`` in the leftover columns), fuses ``grad - exp * sum`` and rounds once. ``torch._softmax`` and
``torch._log_softmax`` refuse ``half_to_float`` on CPU; the backward operators check sizes (softmax only), the
dim, then the kernel's dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import bits_or_error, tg, torch, value_or_error

# shapes where the old float16 NumPy formula was an ulp off somewhere (long rows, vector tails, many columns)
SHAPES_AND_DIMS = [((300, 64), 1), ((3, 31), 1), ((2, 3, 65), 2), ((40, 3, 70), 1), ((100, 30, 24), 1),
                   ((200, 50, 20), 1), ((9, 8), 1), ((5, 1), 1)]


def _halves(lib, shape: tuple, seed: int):
    values = np.random.default_rng(seed).standard_normal(shape) * 3
    return lib.tensor(values.astype(np.float32)).to(lib.float16)


def _log_softmax_gradient(lib, shape: tuple, dim: int, dtype: str = "float16"):
    """The backward kernel on torch's forward output (the same halves for both libraries)."""
    y = torch.log_softmax(_halves(torch, shape, seed=shape[-1]).to(getattr(torch, dtype)), dim)
    output = lib.tensor(y.double().numpy()).to(getattr(lib, dtype))
    grad = _halves(lib, shape, seed=7).to(getattr(lib, dtype))
    return lib.ops.aten._log_softmax_backward_data(grad, output, dim, getattr(lib, dtype))


@pytest.mark.parametrize(("shape", "dim"), SHAPES_AND_DIMS)
def test_half_log_softmax_backward_bits(shape, dim):
    def program(L):
        return _log_softmax_gradient(L, shape, dim)

    assert bits_or_error(program, tg) == bits_or_error(program, torch)


@pytest.mark.parametrize(("shape", "dim"), [((300, 64), 1), ((100, 30, 24), 1), ((3, 31), 0)])
def test_bfloat16_log_softmax_backward_runs_the_same_kernel(shape, dim):
    def program(L):
        return _log_softmax_gradient(L, shape, dim, "bfloat16")

    assert bits_or_error(program, tg) == bits_or_error(program, torch)


def test_half_log_softmax_autograd():
    def program(L):
        x = _halves(L, (6, 40), seed=1).requires_grad_()
        y = L.log_softmax(x, 1)
        (y * _halves(L, (6, 40), seed=2)).sum().backward()
        return y, x.grad

    assert bits_or_error(program, tg) == bits_or_error(program, torch)


def test_underscore_forms_are_public():
    def program(L):
        x = _halves(L, (4, 33), seed=3)
        y, z = L._log_softmax(x, 1, False), L._softmax(input=x, dim=0, half_to_float=False)
        g = _halves(L, (4, 33), seed=4)
        return (y, z, L._log_softmax_backward_data(g, y, 1, L.float16),
                L._softmax_backward_data(grad_output=g, output=z, dim=0, input_dtype=L.float16))

    assert bits_or_error(program, tg) == bits_or_error(program, torch)


HALF_TO_FLOAT = {
    "half": lambda L, op: op(L.ones(3, 4).half(), 1, True),
    "float": lambda L, op: op(L.ones(3, 4), 1, True),
    "long": lambda L, op: op(L.ones(3, 4, dtype=L.int64), 1, True),
    "empty": lambda L, op: op(L.ones(0, 4).half(), 1, True),
    "0-d": lambda L, op: op(L.tensor(1.0).half(), 0, True),
    "bad dim first": lambda L, op: op(L.ones(3, 4).half(), 5, True),
    "no flag": lambda L, op: op(L.ones(3, 4)),
}


@pytest.mark.parametrize("name", ["_softmax", "_log_softmax"])
@pytest.mark.parametrize("case", HALF_TO_FLOAT)
def test_half_to_float_is_refused_on_cpu(name, case):
    for where in ("module", "aten"):
        def program(L, where=where):
            op = getattr(L, name) if where == "module" else getattr(L.ops.aten, name)
            return HALF_TO_FLOAT[case](L, op)

        if case == "no flag" and where == "aten":
            continue  # (torch.ops words a missing argument its own way)
        assert value_or_error(program, tg) == value_or_error(program, torch)


BACKWARD_DATA = {
    "float grad of a half input": lambda L, op: op(L.ones(3, 4), L.ones(3, 4), 1, L.float16),
    "along dim 0": lambda L, op: op(L.ones(3, 4), L.ones(3, 4), 0, L.float16),
    "empty, half result": lambda L, op: op(L.ones(0, 4), L.ones(0, 4), 1, L.float16),
    "half grad, float input": lambda L, op: op(L.ones(3, 4).half(), L.ones(3, 4).half(), 1, L.float32),
    "double output": lambda L, op: op(L.ones(3, 4), L.ones(3, 4).double(), 0, L.float32),
    "float output of a double grad": lambda L, op: op(L.ones(3, 4).double(), L.ones(3, 4), 1, L.float64),
    "long": lambda L, op: op(L.ones(3, 4, dtype=L.int64), L.ones(3, 4, dtype=L.int64), 1, L.int64),
    "long along dim 0": lambda L, op: op(L.ones(3, 4, dtype=L.int64), L.ones(3, 4, dtype=L.int64), 0, L.int64),
    "sizes": lambda L, op: op(L.ones(3, 4), L.ones(3, 5), 1, L.float32),
    "bad dim": lambda L, op: op(L.ones(3, 4), L.ones(3, 4), 7, L.float32),
    "0-d": lambda L, op: op(L.ones(()), L.ones(()), 0, L.float32),
}


@pytest.mark.parametrize("name", ["_softmax_backward_data", "_log_softmax_backward_data"])
@pytest.mark.parametrize("case", BACKWARD_DATA)
def test_backward_data_checks(name, case):
    if case == "sizes" and name == "_log_softmax_backward_data":
        pytest.skip("torch's log_softmax backward checks no sizes: it reads past the smaller tensor")

    def program(L):
        return BACKWARD_DATA[case](L, getattr(L.ops.aten, name))

    ours, theirs = value_or_error(program, tg), value_or_error(program, torch)
    assert ours == theirs
