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
