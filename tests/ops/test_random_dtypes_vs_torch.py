"""Random binary (and a few ternary) operations on operands of mixed dtypes, by tracegrad and by torch: the same
result dtype, shape and values, or the same error.

Operands are tensors of every dtype (bool, uint8, int8/16/32/64, float16/32/64) with 3 or 0 dims, Python ints,
floats and bools: type promotion (0-d tensors and numbers promote only across categories), integer wrap-around
(uint8 with negative numbers), in-place results that cannot take the promoted dtype or the broadcast shape, and
argument checks (``logical_and`` and ``addcmul`` take tensors only).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

N_CASES = 800
_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
_OPS = ("add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow", "maximum", "minimum",
        "eq", "lt", "ge", "logical_and", "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor", "atan2", "hypot",
        "copysign", "fmax", "fmin", "xlogy", "logaddexp", "where", "clamp", "lerp", "addcmul", "addcdiv", "add_",
        "mul_", "sub_", "div_", "floor_divide_", "remainder_", "pow_", "bitwise_and_")


def _operand(rng) -> tuple:
    kind = str(rng.choice(["tensor", "tensor0", "int", "float", "bool"], p=[0.45, 0.2, 0.15, 0.15, 0.05]))
    dtype, values = str(rng.choice(_DTYPES)), [int(v) for v in rng.integers(-3, 4, 3)]
    return {"tensor": ("tensor", dtype, values), "tensor0": ("tensor", dtype, values[0]), "int": ("int", values[0]),
            "float": ("float", values[0] + 0.5), "bool": ("bool", values[0] > 0)}[kind]


def _case(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    op = str(rng.choice(_OPS))
    first = ("tensor", str(rng.choice(_DTYPES)), [int(v) for v in rng.integers(-3, 4, 3)])
    return op, first, _operand(rng), _operand(rng)


def _make(lib, operand):
    if operand[0] != "tensor":
        return operand[1]
    dtype, values = operand[1], operand[2]
    if dtype == "bool":
        values = [v > 0 for v in values] if isinstance(values, list) else values > 0
    elif dtype == "uint8":
        values = [abs(v) for v in values] if isinstance(values, list) else abs(values)
    return lib.tensor(values, dtype=getattr(lib, dtype))


def _run(lib, case: tuple) -> tuple:
    op, *operands = case
    with np.errstate(all="ignore"):
        try:
            a, b, c = (_make(lib, o) for o in operands)
            if op == "where":
                result = lib.where(a > 0 if a.dtype != lib.bool else a, b, c)
            elif op == "clamp":
                result = lib.clamp(a, None if isinstance(b, bool) else b, None)
            elif op in ("lerp", "addcmul", "addcdiv"):
                result = getattr(lib, op)(a, b, c)
            elif op.endswith("_"):
                result = getattr(a, op)(b)
            else:
                result = getattr(lib, op)(a, b)
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            return "error", type(exc).__name__, str(exc).split("\n")[0]
    return ("ok", str(result.dtype).split(".")[-1], tuple(result.shape),
            np.asarray(result.tolist(), dtype=float if result.dtype != lib.bool else bool))


@pytest.mark.parametrize("seed", range(N_CASES))
def test_mixed_dtype_operation_as_in_torch(seed):
    case = _case(seed)
    ours, theirs = _run(tg, case), _run(torch, case)
    assert ours[:3] == theirs[:3]
    if ours[0] == "ok":
        rtol = 1e-3 if ours[1] == "float16" else 1e-6
        np.testing.assert_allclose(ours[3], theirs[3], rtol=rtol, atol=1e-6, equal_nan=True)


def test_cases_cover_every_operation_and_dtype():
    cases = [_case(seed) for seed in range(N_CASES)]
    assert {c[0] for c in cases} == set(_OPS)
    assert {o[1] for c in cases for o in c[1:] if o[0] == "tensor"} == set(_DTYPES)
