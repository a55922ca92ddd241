"""How a number argument is read, each the same program on tracegrad and torch with the same outcome: values,
dtype and shape, or error type and message.

- A NumPy scalar is read as torch's argument parser reads it: an integer as a Python int, float64 and
  complex128 as the Python float and complex they are, any other as a double: ``np.True_`` is 1.0 (an integer
  tensor plus ``np.True_`` is float32; tracegrad kept the integer dtype, or refused a bool in ``sub``) and
  ``np.complex64(1j)`` is its real part, with NumPy's ComplexWarning (tracegrad made the result complex).
- A Python int that fits neither int64 nor uint64 is refused by torch's parser with CPython's OverflowError
  (tracegrad computed with it as a float, or raised NumPy's words); a ``float`` parameter reads it as a double.
- softshrink's lambda is checked against the dtype's range (inf and NaN refused), CELU's zero alpha and
  addcmul of bools are refused, in torch's words.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from _lib import tg, torch, value_or_error


def _outcome(program, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the ComplexWarning is compared on its own below)
        return value_or_error(program, lib)


def _same(program) -> None:
    assert _outcome(program, tg) == _outcome(program, torch)


def _x(L, dtype: str):
    if dtype == "bool":
        return L.tensor([True, False, True, False])
    return L.tensor([0.0, 1.0, -2.0, 3.0]).to(getattr(L, dtype))


OPERATIONS = {
    "add": lambda L, t, v: t.add(v),
    "add_": lambda L, t, v: t.clone().add_(v),
    "add out=": lambda L, t, v: L.add(t, v, out=L.empty_like(t)),
    "sub": lambda L, t, v: t.sub(v),
    "rsub": lambda L, t, v: L.rsub(t, v),
    "t - v": lambda L, t, v: t - v,
    "mul": lambda L, t, v: t.mul(v),
    "t * v": lambda L, t, v: t * v,
    "div": lambda L, t, v: t.div(v),
    "pow": lambda L, t, v: t.pow(v),
    "eq": lambda L, t, v: t.eq(v),
    "clamp": lambda L, t, v: t.clamp(max=v),
    "fill_": lambda L, t, v: t.clone().fill_(v),
    "masked_fill": lambda L, t, v: t.masked_fill(L.tensor([True, False, True, False]), v),
    "where": lambda L, t, v: L.where(L.tensor([True, False, True, False]), t, v),
    "sub alpha": lambda L, t, v: t.sub(t, alpha=v),
    "full_like": lambda L, t, v: L.full_like(t, v),
}
NUMPY_NUMBERS = [np.True_, np.False_, np.complex64(1j), np.complex64(2 + 0j), np.float32(2.5), np.float16(1.5),
                 np.int64(3), np.int8(-2), np.uint8(200), np.float64(0.25), np.complex128(1j)]
BIG_INTS = [2**63 - 1, 2**64, 2**70, -(2**63), -(2**63) - 1, -(2**70)]
DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8", "bool", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("number", NUMPY_NUMBERS, ids=repr)
@pytest.mark.parametrize("name", list(OPERATIONS))
def test_numpy_scalars_read_as_torch_reads_them(name, number, dtype):
    if dtype == "float16" and isinstance(number, complex) and name not in ("clamp", "fill_", "masked_fill", "eq"):
        pytest.skip("half with a complex number is torch's complex32, a dtype tracegrad lacks (NumPy has none)")
    if name == "pow" and dtype == "complex64":
        pytest.skip("complex powers: the sign of a zero imaginary part differs (listed in the notes)")
    _same(lambda L: OPERATIONS[name](L, _x(L, dtype), number))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("number", BIG_INTS)
@pytest.mark.parametrize("name", [n for n in OPERATIONS if n not in ("rsub", "sub", "t - v")] + ["v * t", "full"])
def test_ints_beyond_int64_and_uint64(name, number, dtype):
    extra = {"v * t": lambda L, t, v: v * t, "full": lambda L, t, v: L.full((2,), v)}
    program = extra.get(name) or OPERATIONS[name]
    if (dtype == "bool" and name == "add" and 2**63 <= number < 2**64) or (name == "sub alpha" and number == 2**63 - 1):
        pytest.skip("a uint64 Scalar: torch refuses its promotion or wraps it (not emulated)")
    if name == "sub alpha" and dtype == "bool":
        pytest.skip("tracegrad's sub refuses a bool tensor before reading alpha (torch's parser reads it first)")
    if name == "sub alpha" and number == -(2**63):
        pytest.skip("torch negates alpha as an int64, which overflows to itself (not emulated)")
    _same(lambda L: program(L, _x(L, dtype), number))


def test_a_float_parameter_reads_any_int():
    _same(lambda L: L.ones(3).logit(2**70))


def test_complex64_scalar_warns_as_in_torch():
    for lib in (tg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = lib.ones(2) * np.complex64(1j)
        assert result.tolist() == [0.0, 0.0]
        assert [(w.category.__name__, w.filename) for w in caught] == [("ComplexWarning", __file__)]


@pytest.mark.parametrize(("lambd", "dtype"), itertools.product(
    [0.5, 0.0, -1, -0.5, float("inf"), float("nan"), 1e10, 1e300, 65504.0, 70000.0],
    ["float32", "float64", "float16"]))
def test_softshrink_lambda_range(lambd, dtype):
    _same(lambda L: L.nn.functional.softshrink(L.tensor([-2.0, 0.25, 3.0]).to(getattr(L, dtype)), lambd))


@pytest.mark.parametrize("program", [
    lambda L: L.nn.functional.celu(L.ones(2), 0.0),
    lambda L: L.celu(L.ones(2), 0),
    lambda L: L.tensor([True, False]).addcmul(L.tensor([True, True]), L.tensor([False, True])),
    lambda L: L.tensor([True, False]).addcmul(L.tensor([True, True]), L.tensor([False, True]), value=2),
], ids=["celu alpha 0.0", "celu alpha 0", "addcmul bool", "addcmul bool value 2"])
def test_refusals_in_torch_words(program):
    _same(program)
