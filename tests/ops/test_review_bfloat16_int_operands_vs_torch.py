"""An integer or bool tensor beside a bfloat16 tensor in a TensorIterator operator: torch casts it to bfloat16 (their
common dtype) before computing, so 257 is taken as 256 (``lt(int64 [257], bfloat16 [256])`` is False in torch, and
``int64 [257] * bfloat16 [258]`` is 66048); tracegrad computed with the integer exact in float."""

from __future__ import annotations

import pytest
from _lib import tg, torch, value_or_error

INTS = [257, 255, 2049, 16777215, 16777217, 16777219, -16777217, 2**31 - 1, 0, 1]
FLOATS = [256.0, 258.0, 2048.0, 2050.0, 16777216.0, 16777218.0, float("nan"), float("inf"), 0.0, 1.0]
OPS = ("eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum", "fmod", "remainder", "mul", "sub", "div", "atan2")


@pytest.mark.parametrize("int_dtype", ["int16", "int32", "int64"])
@pytest.mark.parametrize("op", OPS)
def test_integer_tensor_beside_bfloat16_is_cast_first(op, int_dtype):
    def program(lib):
        ints = [v for v in INTS if int_dtype == "int64" or abs(v) < 2 ** (15 if int_dtype == "int16" else 31)]
        a = lib.tensor([i for i in ints for _ in FLOATS], dtype=getattr(lib, int_dtype))
        b = lib.tensor(FLOATS * len(ints), dtype=lib.bfloat16)
        pairs = ((a, b), (b, a), (a[:1], b))
        return [value_or_error(lambda lib, x=x, y=y: getattr(lib, op)(x, y).float(), lib) for x, y in pairs]

    assert str(program(tg)) == str(program(torch))


def test_where_and_clamp_with_integer_tensors_beside_bfloat16():
    def program(lib):
        b = lib.tensor([258.0, 256.0, 2050.0], dtype=lib.bfloat16)
        i = lib.tensor([257, 257, 2049])
        return (lib.where(i > 256, i, b).float().tolist(), lib.clamp(b, min=i).float().tolist(),
                lib.clamp(b, max=i).float().tolist(), b.clone().add_(i).float().tolist())

    assert program(tg) == program(torch)
