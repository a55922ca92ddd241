"""A number (or a 0-dim tensor of another dtype) beside a bfloat16 tensor, as torch 2.13's CPU kernels take it.

TensorIterator casts such an operand to the common dtype, bfloat16, before the kernel computes in float: so
``x + 0.1``, ``x == 0.1``, ``x % c``, ``x ** c``, ``atan2(x, t0)`` see the number rounded to bfloat16, while
``mul``/``div``/``lerp`` and the parameters of activations keep it in float (their "opmath" scalar).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad as tg


def _numbers(lib):
    return {"0.1003": 0.1003, "257": 257, "1.7": 1.7, "0d f64": lib.tensor(0.1003, dtype=lib.float64),
            "0d int": lib.tensor(301), "0d f32": lib.tensor(0.3, dtype=lib.float32)}


PROGRAMS = {
    "add": lambda lib, x, y, c: x + c, "radd": lambda lib, x, y, c: c + x, "sub": lambda lib, x, y, c: x - c,
    "rsub": lambda lib, x, y, c: c - x, "mul": lambda lib, x, y, c: x * c, "div": lambda lib, x, y, c: x / c,
    "remainder": lambda lib, x, y, c: x % c, "pow": lambda lib, x, y, c: y ** c,
    "eq": lambda lib, x, y, c: x == c, "gt": lambda lib, x, y, c: x > c, "le": lambda lib, x, y, c: c <= x,
    "fmod": lambda lib, x, y, c: lib.fmod(x, c), "atan2": lambda lib, x, y, c: lib.atan2(x, lib.as_tensor(c)),
    "hypot": lambda lib, x, y, c: lib.hypot(x, lib.as_tensor(c, dtype=lib.float64)),
    "maximum": lambda lib, x, y, c: lib.maximum(x, lib.as_tensor(c)),
    "fmax": lambda lib, x, y, c: lib.fmax(x, lib.as_tensor(c)), "copysign": lambda lib, x, y, c: lib.copysign(x, c),
    "add_": lambda lib, x, y, c: x.clone().add_(c), "sub_": lambda lib, x, y, c: x.clone().sub_(c),
    "lerp": lambda lib, x, y, c: lib.lerp(x, y, 0.3),
    "leaky_relu": lambda lib, x, y, c: lib.nn.functional.leaky_relu(x, 0.1003),
    "threshold": lambda lib, x, y, c: lib.nn.functional.threshold(x, 0.1003, 0.3003),
    "0-dim float32 add_": lambda lib, x, y, c: lib.tensor(0.5).add_(x[0]),
}


def _outcome(lib, program: str, number: str):
    x = lib.tensor(np.linspace(-3, 3, 257, dtype=np.float32)).to(lib.bfloat16)
    y = lib.tensor(np.linspace(0.5, 2, 257, dtype=np.float32)).to(lib.bfloat16)
    try:
        result = PROGRAMS[program](lib, x, y, _numbers(lib)[number])
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    values = result.numpy() if result.dtype == lib.bool else result.float().numpy().view(np.uint32)
    return str(result.dtype).split(".")[-1], values.tolist()


@pytest.mark.parametrize("number", list(_numbers(torch)))
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_number_beside_bfloat16_as_torch(program, number):
    assert _outcome(tg, program, number) == _outcome(torch, program, number)


def test_a_bfloat16_value_equals_the_number_it_was_made_from():
    for lib in (torch, tg):
        x = lib.tensor([0.1], dtype=lib.bfloat16)
        assert (x == 0.1).item() and not (x != 0.1).item()
        assert (x - 0.1).item() == 0.0


@pytest.mark.parametrize("call", ["numpy", "numpy(force=True)", "np.asarray", "requires grad"])
def test_numpy_of_bfloat16_refused_as_torch(call):
    def outcome(lib):
        x = lib.ones(2, dtype=lib.bfloat16)
        calls = {"numpy": lambda: x.numpy(), "numpy(force=True)": lambda: x.numpy(force=True),
                 "np.asarray": lambda: np.asarray(x), "requires grad": lambda: x.requires_grad_().numpy()}
        try:
            calls[call]()
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            return type(exc).__name__, str(exc)
        return "no error"

    assert outcome(tg) == outcome(torch)
