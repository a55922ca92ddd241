"""NumPy scalars in the data of ``torch.tensor`` (in a list, or alone), read into a dtype given or inferred, as torch
reads them: through CPython's number protocols, not NumPy's casts. Into an integer dtype a NumPy float, complex or
bool is refused ("'numpy.float32' object cannot be interpreted as an integer"; np.float64 is a Python float, read
as one), a NumPy integer beyond int64 gives "Overflow when unpacking long long" and one beyond the dtype "value
cannot be converted to type uint8 without overflow"; into a float dtype a NumPy complex warns (NumPy's
ComplexWarning, once per item) and gives its real part; a float of 2**63 is int64's smallest in an int64 tensor."""

from __future__ import annotations

import warnings

import pytest
from _lib import np, tg, torch, value_or_error

TARGETS = ["int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool", "float16", "float32",
           "float64", "complex64", None]

DATA = {
    "float32 1.5 and an int": [np.float32(1.5), 2], "float32 nan": [np.float32("nan")], "float16 300": [np.float16(300)],
    "float32 300.5": [np.float32(300.5)], "float64 2.7": [np.float64(2.7)], "float64 -0.5": [np.float64(-0.5)],
    "float64 nan": [np.float64("nan")], "float64 inf": [np.float64("inf")], "float64 1e20": [np.float64(1e20)],
    "float64 2**63": [np.float64(2.0**63)], "float64 -2**63": [np.float64(-(2.0**63))],
    "python float 2**63": [2.0**63, 1], "longdouble 2.5": [np.longdouble(2.5)],
    "int64 2**40": [np.int64(2**40)], "int64 2**40 and a float": [np.int64(2**40), 1.5], "int64 -1": [np.int64(-1)],
    "int8 -1": [np.int8(-1)], "int16 -300": [np.int16(-300)], "int32 300": [np.int32(300)], "uint8 255": [np.uint8(255)],
    "uint32 2**32-1": [np.uint32(2**32 - 1)], "uint64 2**63": [np.uint64(2**63)], "uint64 2**64-1": [np.uint64(2**64 - 1)],
    "uint64 5": [np.uint64(5)], "bool_ and an int": [np.bool_(True), 2], "bools_": [np.bool_(True), np.bool_(False)],
    "complex64 1+2j": [np.complex64(1 + 2j)], "complex64 1+0j": [np.complex64(1)], "complex128 1+2j": [np.complex128(1 + 2j)],
    "complex128 0j": [np.complex128(0)], "nested": [[np.float32(1.5)], [np.int64(3)]],
    "float32 alone": np.float32(1.5), "int64 2**40 alone": np.int64(2**40), "complex64 alone": np.complex64(1 + 2j),
}


def _outcome(lib, data, target):
    """The tensor (or error) and the warnings given, as (category, text) pairs."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = value_or_error(lambda lib: lib.tensor(data, dtype=target and getattr(lib, target)), lib)
    return result, [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_numpy_scalars_read_into_dtype_as_torch(target):
    mismatches = [f"{name}: tracegrad {ours}, torch {theirs}" for name, data in DATA.items()
                  if (ours := _outcome(tg, data, target)) != (theirs := _outcome(torch, data, target))]
    assert not mismatches


# ---- review of f7eddbe: 0-d arrays as items, items read in order, complex128 ends the inference ---------------

# A 0-d NumPy array first at its depth is refused by torch's size pass ("len() of unsized object"); later, it is
# read as an item through the array's own __index__/__float__; a Python int beyond the dtype is refused where torch
# meets it, before a NumPy item behind it; torch's inference stops at complex128, so nothing behind it is promoted
ITEMS = {
    "0-d float array": [1, np.array(2.5)], "0-d float32 array": [1, np.array(2.5, dtype=np.float32)],
    "0-d bool array": [1, np.array(True)], "0-d complex array": [1.0, np.array(1 + 1j)],
    "0-d int array -1": [1, np.array(-1)], "0-d int array -300": [1, np.array(-300)],
    "0-d int array 2**40": [1, np.array(2**40)], "0-d uint64 array 2**63": [1, np.array(2**63, dtype=np.uint64)],
    "0-d uint8 array": [1, np.array(3, dtype=np.uint8)], "0-d float array first": [np.array(2.5), 1],
    "2**62 then a bool_": [2**62, np.bool_(True)], "300 then a float32": [300, np.float32(1)],
    "-300 then a uint64": [-300, np.uint64(2**63 + 5)], "-1 then a float16": [-1, np.float16(1.5)],
    "complex128 then uint16": [np.complex128(0.5j), np.uint16(60000)],
    "complex128 then uint64": [[np.complex128(0.5j)], [np.uint64(7)]],
    "complex128 then longdouble": [np.complex128(0.5j), np.longdouble(2.5)],
}


def _outcome_of_items(lib, data, target):
    """``_outcome`` less the once-per-process warning of arrays in a list (torch's adds where it was raised)."""
    result, caught = _outcome(lib, data, target)
    return result, [w for w in caught if not w[1].startswith("Creating a tensor from a list of numpy.ndarrays")]


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_numpy_items_read_in_order_as_torch(target):
    mismatches = [f"{name}: tracegrad {ours}, torch {theirs}" for name, data in ITEMS.items()
                  if (ours := _outcome_of_items(tg, data, target)) != (theirs := _outcome_of_items(torch, data, target))]
    assert not mismatches
