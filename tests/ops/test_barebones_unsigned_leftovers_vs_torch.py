"""The barebones unsigned dtypes (uint16, uint32, uint64) at the edges of their support in torch 2.13: isin's two
kernels, reductions into an ``out=`` of one, fill overflow messages, randint's int64 bounds, floats read by
``torch.tensor`` and ``Tensor.type``'s type strings. Each program is run on both libraries; the result (dtype,
shape, values) or the error (type, message) must be the same. Random draws compare dtype and shape only."""

from __future__ import annotations

import numpy as np
import pytest

from tests._lib import tg, torch, value_or_error

UNSIGNED = ("uint16", "uint32", "uint64")


def _x(L, dtype: str, n: int = 3):
    return L.arange(1, n + 1).to(getattr(L, dtype))


ISIN = {
    "few test elements": lambda L, d: L.isin(_x(L, d), _x(L, d, 1)),
    "no test elements": lambda L, d: L.isin(_x(L, d), _x(L, d, 0)),
    "nine of three": lambda L, d: L.isin(_x(L, d), _x(L, d, 9)),
    "ten of three": lambda L, d: L.isin(_x(L, d), _x(L, d, 10)),
    "eleven of three (sorted)": lambda L, d: L.isin(_x(L, d), _x(L, d, 11)),
    "19 of 100": lambda L, d: L.isin(_x(L, d, 100), _x(L, d, 19)),
    "20 of 100 (sorted)": lambda L, d: L.isin(_x(L, d, 100), _x(L, d, 20)),
    "invert": lambda L, d: L.isin(_x(L, d), _x(L, d, 2), invert=True),
    "number test element": lambda L, d: L.isin(_x(L, d), 2),
    "number element": lambda L, d: L.isin(2, _x(L, d)),
    "number element, sorted": lambda L, d: L.isin(2, _x(L, d, 20)),
    "empty elements": lambda L, d: L.isin(_x(L, d, 0), L.tensor([2])),
    "int64 test elements": lambda L, d: L.isin(_x(L, d), L.tensor([2])),
    "int64 test elements, sorted": lambda L, d: L.isin(_x(L, d), L.arange(20)),
    "int64 elements": lambda L, d: L.isin(L.tensor([2]), _x(L, d)),
    "float test elements": lambda L, d: L.isin(_x(L, d), L.tensor([2.0])),
}

OUT_REDUCTIONS = {
    "cumsum": lambda L, d: L.cumsum(_x(L, d), 0, out=L.empty(3, dtype=getattr(L, d))),
    "cumsum of int64": lambda L, d: L.cumsum(L.arange(3), 0, out=L.empty(3, dtype=getattr(L, d))),
    "cumsum into int64": lambda L, d: L.cumsum(_x(L, d), 0, out=L.empty(3, dtype=L.int64)),
    "cumsum into float": lambda L, d: L.cumsum(_x(L, d), 0, out=L.empty(3)),
    "cumsum dtype=": lambda L, d: L.cumsum(_x(L, d), 0, dtype=L.int64, out=L.empty(3, dtype=getattr(L, d))),
    "cumsum bad dim": lambda L, d: L.cumsum(_x(L, d), 5, out=L.empty(3, dtype=getattr(L, d))),
    "cumsum empty": lambda L, d: L.cumsum(_x(L, d, 0), 0, out=L.empty(0, dtype=getattr(L, d))),
    "cumprod": lambda L, d: L.cumprod(_x(L, d), 0, out=L.empty(3, dtype=getattr(L, d))),
    "sum": lambda L, d: L.sum(L.ones(2, 2, dtype=L.int64), 0, out=L.empty(2, dtype=getattr(L, d))),
    "prod": lambda L, d: L.prod(_x(L, d).reshape(3, 1), 0, out=L.empty(1, dtype=getattr(L, d))),
}

FILLS = {
    "full_like 2**40": lambda L, d: L.full_like(_x(L, d), 2**40),
    "full_like -2**63 - 1": lambda L, d: L.full_like(_x(L, d), -2**63 - 1),
    "full_like 1.5e10": lambda L, d: L.full_like(_x(L, d), 1.5e10),
    "full_like -1": lambda L, d: L.full_like(_x(L, d), -1),
    "fill_ 2**40": lambda L, d: _x(L, d).fill_(2**40),
    "fill_ tensor 2**40": lambda L, d: _x(L, d).fill_(L.tensor(2**40)),
    "full 2**40": lambda L, d: L.full((2,), 2**40, dtype=getattr(L, d)),
    "new_full 2**40": lambda L, d: _x(L, d).new_full((2,), 2**40),
}

RANDINT = {
    "0, 2**63": lambda L, d: L.randint(0, 2**63, (2,), dtype=getattr(L, d)),
    "high 2**63": lambda L, d: L.randint(2**63, (2,), dtype=getattr(L, d)),
    "low beyond int64": lambda L, d: L.randint(-2**63 - 1, 0, (2,), dtype=getattr(L, d)),
    "0, 2**64": lambda L, d: L.randint(0, 2**64, (2,), dtype=getattr(L, d)),
    "default dtype": lambda L, d: L.randint(0, 2**63, (2,)),
    "randint_like": lambda L, d: L.randint_like(_x(L, d), 2**63),
    "random_": lambda L, d: _x(L, d).random_(0, 2**63),
    "random_ to": lambda L, d: _x(L, d).random_(2**63),
    "in range": lambda L, d: L.randint(0, 2**16 - 1, (2,), dtype=getattr(L, d)),
    "to - 1 beyond": lambda L, d: L.randint(0, 2**63 - 1, (2,), dtype=getattr(L, d)),
}

FLOATS_READ = (1.7, -0.5, -1.0, 0.0, 65535.5, 255.5, 5e9, 2.0**64, float("nan"), float("inf"), 1 + 2j,
               np.float64(1.5), True, -1, 2**63)

TYPE_STRINGS = ("torch.UInt16Tensor", "torch.UInt32Tensor", "torch.UInt64Tensor", "torch.ComplexFloatTensor",
                "torch.ComplexDoubleTensor", "torch.UInt16Storage", "UInt16Tensor", "torch.uint16")


def _same(program) -> None:
    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("case", ISIN)
def test_isin_like_torch(case, dtype):
    _same(lambda L: ISIN[case](L, dtype))


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("case", OUT_REDUCTIONS)
def test_reduction_into_unsigned_out_like_torch(case, dtype):
    _same(lambda L: OUT_REDUCTIONS[case](L, dtype))


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("case", FILLS)
def test_fill_overflow_message_like_torch(case, dtype):
    _same(lambda L: FILLS[case](L, dtype))


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("case", RANDINT)
def test_randint_bounds_like_torch(case, dtype):
    def drawn(L):
        result = RANDINT[case](L, dtype)
        return result.new_zeros(result.shape)  # (the draws differ; their dtype and shape do not)

    _same(drawn)


@pytest.mark.parametrize("dtype", UNSIGNED + ("uint8", "int32", "int64"))
@pytest.mark.parametrize("value", FLOATS_READ, ids=repr)
def test_tensor_reads_a_number_like_torch(value, dtype):
    _same(lambda L: L.tensor([value], dtype=getattr(L, dtype)))
    _same(lambda L: L.tensor([[1, 2], [3, value]], dtype=getattr(L, dtype)))


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_tensor_reads_a_float_scalar_like_torch(dtype):
    _same(lambda L: L.tensor(1.7, dtype=getattr(L, dtype)))
    _same(lambda L: L.as_tensor([1.5], dtype=getattr(L, dtype)))
    _same(lambda L: L.tensor([1.5, "a"], dtype=getattr(L, dtype)))


@pytest.mark.parametrize("name", TYPE_STRINGS)
@pytest.mark.parametrize("source", ("int64", "float32", "uint32"))
def test_type_string_like_torch(name, source):
    def converted(L):
        result = L.tensor([1.5, 2.0]).to(getattr(L, source)).type(name)
        assert result.type() == name
        return result

    _same(converted)
