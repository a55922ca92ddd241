"""The storage of a tensor made from a NumPy array that views another one: torch's begins at the array's first
element and spans only the memory the array reaches (``from_numpy(a[1:]).storage_offset()`` is 0), whatever the
array it views; writes still reach the user's array, and a read-only one warns and is written alike."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch


def _views() -> dict:
    a = np.arange(24.0).reshape(4, 6)
    return {
        "rows from the second": a[1:],
        "columns from the second": a[:, 1:],
        "every other row and column": a[1::2, 1::2],
        "a transposed view": a[1:].T,
        "one element at the end": np.arange(6.0)[5:],
        "an empty view with strides": a[2:3, 2:2],
        "a float32 reinterpretation": a[1:].view(np.float32),
        "an owner": a.copy(),
    }


VIEWS = list(_views())


def _storage_facts(lib, name: str, make) -> list:
    array = _views()[name]
    t = make(lib, array)
    storage = t.untyped_storage()
    facts = [t.storage_offset(), storage.nbytes(), t.stride(), t.is_contiguous()]
    if t.numel():
        facts.append(bytes(storage.tolist()) == np.ascontiguousarray(t.numpy()).tobytes()
                     if t.is_contiguous() else len(storage.tolist()))
        first = (0,) * t.dim()
        t[first] = -1  # (the write reaches the user's array)
        facts += [np.shares_memory(array, t.numpy()), float(array[first])]
    return facts


FACTORIES = {"from_numpy": lambda lib, a: lib.from_numpy(a), "as_tensor": lambda lib, a: lib.as_tensor(a)}


@pytest.mark.parametrize("factory", list(FACTORIES))
@pytest.mark.parametrize("name", VIEWS)
def test_storage_of_an_array_view_as_torch(name: str, factory: str):
    make = FACTORIES[factory]
    assert _storage_facts(tg, name, make) == _storage_facts(torch, name, make)


def _read_only_view_facts(lib) -> list:
    owner = np.arange(6.0)
    owner.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the not-writable warning: once a process in both)
        t = lib.from_numpy(owner[2:])
    t[0] = 7.0  # (torch writes into the read-only array's memory anyway)
    return [t.storage_offset(), t.untyped_storage().nbytes(), owner.tolist(), t.tolist()]


def test_a_read_only_view_is_written_at_its_own_storage_as_torch():
    assert _read_only_view_facts(tg) == _read_only_view_facts(torch)


def _set_from_storage_facts(lib) -> list:
    """Another tensor set to the view's storage reads the view's elements from offset 0, not the owner's."""
    a = np.arange(8.0)
    t = lib.from_numpy(a[3:])
    other = lib.empty(0, dtype=lib.float64)
    other.set_(t.untyped_storage(), 0, (2,))
    return [other.tolist(), other.storage_offset(), t.untyped_storage().nbytes()]


def test_set_to_the_storage_of_an_array_view_as_torch():
    assert _set_from_storage_facts(tg) == _set_from_storage_facts(torch)
