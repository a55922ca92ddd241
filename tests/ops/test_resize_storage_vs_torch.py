"""``resize_`` / ``resize_as_`` as torch's: the new shape is laid out contiguously (or in the memory format asked
for) from the tensor's storage offset over the same storage, so other tensors over that memory see its writes, and
the storage grows only where it is too small; a NumPy array's memory (``from_numpy``, ``as_tensor``) cannot grow.
(Where torch's storage grows, tensors that shared the old one see the larger one too: NumPy cannot grow memory in
place, so those programs are not compared here.)"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch


def _outcome(program, lib):
    try:
        return program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)


def _layout(t) -> list:
    return [t.tolist(), tuple(t.shape), t.stride(), t.storage_offset(), t.untyped_storage().nbytes(), t._version]


def _shrunk_and_shared(lib) -> list:
    t = lib.arange(6.0)
    view = t.view(2, 3)
    t.resize_(2)
    t[0] = 100
    return [_layout(t), view.tolist(), t.data_ptr() == view.data_ptr()]


def _grown(lib) -> list:
    t = lib.arange(6.0)
    t.resize_(8)
    t[7] = 7
    return [_layout(t)[1:], t.tolist()[:6], t[7].item()]


def _numpy_memory(factory: str, grow: bool):
    def program(lib) -> list:
        array = np.arange(6.0)
        t = getattr(lib, factory)(array)
        t.resize_(8 if grow else 2)
        t[0] = 7
        return [_layout(t), array.tolist()]

    return program


def _numpy_view_memory(lib) -> list:
    array = np.arange(8.0)
    t = lib.from_numpy(array[2:6])
    t.resize_(3)
    t[0] = -1
    # (torch sets the new sizes before its storage refuses to grow, leaving a tensor reading past its storage:
    # only the error is compared)
    return [_layout(t), array.tolist(), _outcome(lambda _: t.resize_(5), lib)]


def _at_an_offset(grow: bool):
    def program(lib) -> list:
        t = lib.arange(6.0)[2:]
        t.resize_(5 if grow else 2)
        return [t.tolist()[:4], t.shape, t.stride(), t.storage_offset(), t.untyped_storage().nbytes()]

    return program


def _versions(lib) -> list:
    """torch counts a write only where the sizes change."""
    changes = [lambda t: t.resize_(6), lambda t: t.resize_(2, 3), lambda t: t.resize_(3), lambda t: t.resize_(8),
               lambda t: t.resize_(6, memory_format=lib.contiguous_format),
               lambda t: t.view(1, 2, 3, 1).resize_(1, 2, 3, 1, memory_format=lib.channels_last),
               lambda t: t.resize_as_(lib.empty(6)), lambda t: t.resize_as_(lib.empty(3))]
    found = []
    for change in changes:
        t = lib.arange(6.0)
        change(t)
        found.append(t._version)
    return found


def _strided(lib) -> list:
    same = lib.arange(6.0)[::2]
    same.resize_(3)  # (the same shape: nothing changes, not even the strides)
    other = lib.arange(6.0)[::2]
    other.resize_(2)  # (a new shape reads the storage contiguously from the offset)
    return [_layout(same), _layout(other)]


def _in_a_memory_format(lib) -> list:
    t = lib.arange(24.0)
    t.resize_(1, 2, 3, 4, memory_format=lib.channels_last)
    same = lib.arange(24.0).view(1, 2, 3, 4)
    same.resize_(1, 2, 3, 4, memory_format=lib.channels_last)
    return [_layout(t), _layout(same), t.is_contiguous(memory_format=lib.channels_last)]


def _resize_as(lib) -> list:
    t = lib.arange(6.0)
    view = t[:]
    t.resize_as_(lib.empty(2, 2))
    t.fill_(1)
    return [_layout(t), view.tolist()]


def _to_empty(lib) -> list:
    t = lib.arange(6.0)[4:]
    t.resize_(0)
    u = lib.from_numpy(np.arange(3.0))
    u.resize_(0, 5)  # (no elements: no storage needed, whatever the array)
    return [_layout(t), _layout(u)]


PROGRAMS = {
    "shrinking keeps the storage shared": _shrunk_and_shared,
    "growing copies the storage into a larger one": _grown,
    "shrinking a from_numpy tensor writes the array": _numpy_memory("from_numpy", grow=False),
    "growing a from_numpy tensor": _numpy_memory("from_numpy", grow=True),
    "growing an as_tensor tensor": _numpy_memory("as_tensor", grow=True),
    "a tensor over a view of an array": _numpy_view_memory,
    "shrinking at a storage offset": _at_an_offset(grow=False),
    "growing at a storage offset": _at_an_offset(grow=True),
    "a strided tensor": _strided,
    "versions": _versions,
    "in a memory format": _in_a_memory_format,
    "resize_as_": _resize_as,
    "to no elements": _to_empty,
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_resize_as_torch(name: str):
    program = PROGRAMS[name]
    assert _outcome(program, tg) == _outcome(program, torch)
