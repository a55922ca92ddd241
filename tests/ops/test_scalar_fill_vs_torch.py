"""Numbers converted to a tensor's dtype as PyTorch's ``Scalar::to`` converts them, in ``full``, ``fill_``,
``full_like``, ``new_full``, ``masked_fill``, ``index_fill``, ``scatter`` and ``__setitem__``: a value the dtype cannot hold is refused ("value cannot be converted to type
float without overflow") where NumPy would wrap, saturate, drop an imaginary part or give NaN; the values it
can hold convert as in C (truncation toward zero, two's complement for negative integers in uint8, inf for half
precision)."""

from __future__ import annotations

import pytest

from tests._lib import tg, torch

CASES = [(2.5, "bool"), (float("nan"), "bool"), (-1, "uint8"), (-256, "uint8"), (256, "uint8"), (-0.5, "uint8"),
         (float("nan"), "int32"), (2**40, "int32"), (True, "int8"), (3.7, "int8"), (-3.7, "int16"), (1e10, "int64"),
         (2**63 - 1, "int64"), (5, "float32"), (1e300, "float32"), (float("inf"), "float32"),
         (float("-inf"), "float64"), (1e300, "float16"), (70000, "float16"), (1 + 0j, "float32"), (1 + 2j, "float64"),
         (1 + 2j, "complex64"), (1e39, "complex64"), (complex(1e300, 0), "complex64")]


def _outcomes(lib, value, dtype: str, n: int) -> list:
    d = getattr(lib, dtype)
    return _run_all((lambda: lib.full((n,), value, dtype=d), lambda: lib.zeros(n, dtype=d).fill_(value),
                     lambda: lib.full_like(lib.zeros(n, dtype=d), value),
                     lambda: lib.zeros(n, dtype=d).new_full((n,), value)))


def _run_all(calls) -> list:
    """Each call's values, or the words of its refusal."""
    seen = []
    for call in calls:
        try:
            seen.append(str(call().tolist()))
        except RuntimeError as exc:
            seen.append(str(exc))
    return seen


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("value, dtype", CASES, ids=[f"{v}-{d}" for v, d in CASES])
def test_fill_values_convert_or_refuse_as_torch(value, dtype, n):
    """(n = 1: a single half element converts unchecked, to inf)"""
    assert _outcomes(tg, value, dtype, n) == _outcomes(torch, value, dtype, n)


def _writes(lib, value, dtype: str) -> list:
    d = getattr(lib, dtype)
    mask, index = lib.tensor([True, False, True]), lib.tensor([1])

    def setitem(key):
        t = lib.zeros(3, dtype=d)
        t[key] = value
        return t

    return _run_all((lambda: lib.zeros(3, dtype=d).masked_fill(mask, value),
                     lambda: lib.zeros(1, dtype=d).masked_fill(lib.tensor([True]), value),
                     lambda: lib.zeros(3, dtype=d).index_fill(0, index, value),
                     lambda: lib.zeros(3, dtype=d).scatter(0, index, value), lambda: setitem(0),
                     lambda: setitem(slice(0, 2)), lambda: setitem(mask)))


@pytest.mark.parametrize("value, dtype", CASES, ids=[f"{v}-{d}" for v, d in CASES])
def test_written_values_convert_or_refuse_as_torch(value, dtype):
    """(masked_fill checks half values always; setitem's 0-d value tensor converts half unchecked)"""
    assert _writes(tg, value, dtype) == _writes(torch, value, dtype)


def _scalar_parameters(lib) -> dict:
    F = lib.nn.functional
    z, o, c = lib.zeros(2), lib.ones(2), lib.tensor([True, False])

    def half():
        return lib.zeros(2, dtype=lib.float16)

    return {
        "where other": lambda: lib.where(c, z, 1e300), "where self": lambda: lib.where(c, 1e300, z),
        "where half": lambda: lib.where(c, half(), 1e300), "where uint8 -1": lambda: lib.where(
            c, lib.zeros(2, dtype=lib.uint8), -1), "clamp": lambda: z.clamp(-1e300, 1e300),
        "clamp half": lambda: half().clamp(max=70000.0), "clamp_min": lambda: z.clamp_min(1e300),
        "hardtanh": lambda: F.hardtanh(z, -1e300, 1e300), "hardtanh half": lambda: F.hardtanh(half(), -7e4, 7e4),
        "threshold": lambda: F.threshold(z, 1e300, 0.0), "threshold value": lambda: F.threshold(z, 0.5, 1e300),
        "leaky_relu": lambda: F.leaky_relu(z, 1e300), "elu": lambda: F.elu(z, 1e300),
        "softplus": lambda: F.softplus(z, 1e300), "lerp": lambda: lib.lerp(z, o, 1e300),
        "lerp half": lambda: lib.lerp(half(), half(), 70000.0), "add alpha": lambda: lib.add(z, o, alpha=1e300),
        "add half alpha": lambda: lib.add(half(), half(), alpha=70000.0), "sub alpha": lambda: lib.sub(z, o, alpha=1e300),
        "addcmul": lambda: lib.addcmul(z, o, o, value=1e300), "addcdiv": lambda: lib.addcdiv(z, o, o, value=1e300),
        "addcmul half": lambda: lib.addcmul(half(), half(), half(), value=70000.0),
    }


@pytest.mark.parametrize("name", list(_scalar_parameters(tg)))
def test_scalar_parameters_convert_or_refuse_as_torch(name):
    """A Scalar argument a kernel converts to its dtype: refused where it does not fit (in the tensor's dtype,
    or in float for the kernels computing half in float, and not at all for where's half)."""
    assert _run_all((_scalar_parameters(tg)[name],)) == _run_all((_scalar_parameters(torch)[name],))
