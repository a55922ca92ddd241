"""The number a fill writes, converted to the tensor's dtype as torch converts it: ``fill_``, ``full``,
``full_like``, ``new_full``, ``masked_fill``, ``index_fill``, ``scatter`` and setitem with values out of the dtype's
range (300 into uint8, -1 into uint8, 2**40 into int32, 70000 into float16, NaN into an integer), bools into floats,
floats into bool, complex numbers into real dtypes, each given as a number or as a 0-d tensor.

torch reads a 0-d tensor value of ``masked_fill``/``index_fill`` as a number (``value.item()``), so its conversion
is checked ("value cannot be converted to type uint8_t without overflow") where ``fill_`` with a tensor wraps; for
uint16/uint32/uint64 the kernels' dtype dispatch refuses before any value is converted; setitem unpacks an integer
as a long long first."""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch, value_or_error

DTYPES = ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "bool", "float16", "float32",
          "complex64"]
VALUES = [300, -1, 128, -129, 65536, 2**32, -(2**31) - 1, 2**40, -(2**40), 2**63, 2**64, -(2**63) - 1, 255.5, -0.5,
          3.7, 70000.0, 1e20, 1e300, float("nan"), float("inf"), True, False, 1 + 2j, 1 + 0j]


def _mask(lib):
    return lib.tensor([True, False])


def _set(index):
    def program(lib, t, v):
        t[index(lib) if callable(index) else index] = v
        return t

    return program


# name -> program(lib, zeros of the dtype (2 elements), value)
FILLS = {
    "fill_": lambda lib, t, v: t.fill_(v),
    "full": lambda lib, t, v: lib.full((2,), v, dtype=t.dtype),
    "full_like": lambda lib, t, v: lib.full_like(t, v),
    "new_full": lambda lib, t, v: t.new_full((2,), v),
    "masked_fill_": lambda lib, t, v: t.masked_fill_(_mask(lib), v),
    "masked_fill": lambda lib, t, v: t.masked_fill(_mask(lib), v),
    "index_fill_": lambda lib, t, v: t.index_fill_(0, lib.tensor([0]), v),
    "index_fill": lambda lib, t, v: t.index_fill(0, lib.tensor([0]), v),
    "scatter_": lambda lib, t, v: t.scatter_(0, lib.tensor([0]), v),
    "scatter": lambda lib, t, v: t.scatter(0, lib.tensor([0]), v),
    "scatter_add_reduce": lambda lib, t, v: t.scatter_(0, lib.tensor([0]), v, reduce="add"),
    "setitem_int": _set(0),
    "setitem_slice": _set(slice(None)),
    "setitem_mask": _set(_mask),
}
# the ops that take a 0-d tensor as the value too
TENSOR_VALUED = ["fill_", "masked_fill_", "masked_fill", "index_fill_", "index_fill", "setitem_int", "setitem_mask"]


def _mismatches(fill, as_tensor: bool) -> list[str]:
    found = []
    for dtype in DTYPES:
        for value in VALUES:
            def program(lib, dtype=dtype, value=value):
                v = lib.tensor(value) if as_tensor else value
                return FILLS[fill](lib, lib.zeros(2, dtype=getattr(lib, dtype)), v)

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (the casts' warnings are another test's)
                ours, theirs = value_or_error(program, tg), value_or_error(program, torch)
            if ours != theirs:
                found.append(f"{dtype} {value!r}: tracegrad {ours}, torch {theirs}")
    return found


@pytest.mark.parametrize("fill", list(FILLS))
def test_number_written_by_a_fill_as_torch(fill):
    assert not _mismatches(fill, as_tensor=False)


@pytest.mark.parametrize("fill", TENSOR_VALUED)
def test_0d_tensor_written_by_a_fill_as_torch(fill):
    assert not _mismatches(fill, as_tensor=True)


# programs at the edges: empty tensors and indices, a value tensor of another dtype than self's
EDGES = {
    "uint16 masked_fill empty": lambda L: L.zeros(0, dtype=L.uint16).masked_fill(L.zeros(0, dtype=L.bool), 3),
    "uint16 index_fill empty": lambda L: L.zeros(0, dtype=L.uint16).index_fill(0, L.zeros(0, dtype=L.int64), 3),
    "uint16 masked_fill_ empty": lambda L: L.zeros(0, dtype=L.uint16).masked_fill_(L.zeros(0, dtype=L.bool), 3),
    "uint8 scatter empty index 300": lambda L: L.zeros(3, dtype=L.uint8).scatter(0, L.zeros(0, dtype=L.int64), 300),
    "float scatter empty index complex": lambda L: L.zeros(3).scatter(0, L.zeros(0, dtype=L.int64), 1 + 2j),
    "uint16 scatter empty index 1e20": lambda L: L.zeros(3, dtype=L.uint16).scatter(
        0, L.zeros(0, dtype=L.int64), 1e20),
    "uint16 scatter empty index bad reduce": lambda L: L.zeros(3, dtype=L.uint16).scatter(
        0, L.zeros(0, dtype=L.int64), 3, reduce="max"),
    "uint16 scatter_add empty index": lambda L: L.zeros(3, dtype=L.uint16).scatter_add(
        0, L.zeros(0, dtype=L.int64), L.zeros(0, dtype=L.uint16)),
    "int64 masked_fill uint64 value": lambda L: L.zeros(2, dtype=L.int64).masked_fill(
        L.tensor([True, False]), L.tensor(5, dtype=L.uint64)),
    "int64 masked_fill uint64 value beyond": lambda L: L.zeros(2, dtype=L.int64).masked_fill(
        L.tensor([True, False]), L.tensor(2**63, dtype=L.uint64)),
    "int64 index_fill uint32 value": lambda L: L.zeros(2, dtype=L.int64).index_fill(
        0, L.tensor([0]), L.tensor(5, dtype=L.uint32)),
    "float16 masked_fill float64 value 1e300": lambda L: L.zeros(2, dtype=L.float16).masked_fill(
        L.tensor([True, False]), L.tensor(1e300, dtype=L.float64)),
    "setitem numpy uint64 beyond int64": lambda L: _set(0)(L, L.zeros(2), __import__("numpy").uint64(2**63)),
    "setitem out of bounds index and value": lambda L: _set(100)(L, L.zeros(2), 2**63),
    "setitem float16 complex": lambda L: _set(0)(L, L.zeros(2, dtype=L.float16), 1 + 2j),
}


@pytest.mark.parametrize("name", list(EDGES))
def test_fill_edge_as_torch(name):
    assert value_or_error(EDGES[name], tg) == value_or_error(EDGES[name], torch)


# ---- a 0-d value that requires grad, written into an integer tensor (review of b216f2c) -----------------------


def _history_of_write(write: str, dtype: str):
    def program(lib):
        t = lib.tensor([1, 0, 1], dtype=getattr(lib, dtype))
        v = lib.tensor(1.0, requires_grad=True)
        {"copy_": lambda: t.copy_(v), "view copy_": lambda: t[1:].copy_(v), "setitem int": lambda: t.__setitem__(1, v),
         "setitem slice": lambda: t.__setitem__(slice(0, 2), v), "fill_": lambda: t.fill_(v),
         "masked_fill_": lambda: t.masked_fill_(lib.tensor([True, False, True]), v)}[write]()
        return t.requires_grad, type(t.grad_fn).__name__, t.tolist()

    return program


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "float32"])
@pytest.mark.parametrize("write", ["copy_", "view copy_", "setitem int", "setitem slice", "fill_", "masked_fill_"])
def test_integer_tensor_written_from_a_value_that_requires_grad_has_torchs_history(write, dtype):
    """PyTorch's hand-written copy_ records nothing into an integer tensor (``t[1] = v`` copies into a 0-d view);
    fill_ and masked_fill_ record whatever the dtype (``t[0:2] = v`` fills from a 0-d value)."""
    program = _history_of_write(write, dtype)
    assert program(tg) == program(torch)
