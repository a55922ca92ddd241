"""A list read as a tuple of indices (``x[[a, b]]`` holding a list, tensor, slice, None or ``...``) reads its NumPy
items as a tuple's: a 0-d array is an integer (torch selects), not an index array of one value (tracegrad kept a
dim for it, as the list's NumPy items were not read as the tuple's are)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch


def _keys():
    return [
        lambda lib: [np.array(0), 1],
        lambda lib: [np.array(1), slice(None)],
        lambda lib: [np.array(1.7), [0, 2]],
        lambda lib: [0, np.array(2)],
        lambda lib: [np.array(0), np.array(1)],
        lambda lib: [np.array(1, dtype=np.uint8), [0]],
        lambda lib: [np.array([True, False, True]), [0]],
        lambda lib: [np.bool_(True), [0]],
    ]


def _read_and_write(lib, key):
    def outcome(fn):
        try:
            return fn()
        except Exception as error:  # noqa: BLE001 - the error is the result compared
            return type(error).__name__, str(error)

    x = lib.arange(12.0).reshape(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the deprecation warning is compared in test_program5_findings_vs_torch)
        read = outcome(lambda: (tuple(x[key(lib)].shape), x[key(lib)].flatten().tolist()))

        def write():
            y = x.clone()
            y[key(lib)] = -1.0
            return y.flatten().tolist()

        written = outcome(write)
    return read, written


@pytest.mark.parametrize("key", _keys())
def test_numpy_items_of_a_list_read_as_a_tuple(key):
    assert _read_and_write(tg, key) == _read_and_write(torch, key)
