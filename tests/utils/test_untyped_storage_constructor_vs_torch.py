"""``torch.UntypedStorage(...)`` against torch's constructor: a size (its bytes, uninitialised in torch, compared
by count), a sequence of ints (bytes modulo 256), the ``device=`` keyword, the storage made (resizable, fillable,
its repr), and torch's refusals (argument parser, sequence checks, allocator and device errors) by type and message."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch


def made(program, lib):
    """What ``program(lib)`` gives (a storage by its size, device and bytes where they are defined), or the error's
    type and message."""
    try:
        result = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    if isinstance(result, lib.UntypedStorage):
        return "storage", result.nbytes(), str(result.device), type(result).__name__
    return result


def assert_same(program) -> None:
    assert made(program, tg) == made(program, torch)


SIZES = {
    "nothing": lambda lib: lib.UntypedStorage(),
    "size 8": lambda lib: lib.UntypedStorage(8),
    "size 0": lambda lib: lib.UntypedStorage(0),
    "size keyword": lambda lib: lib.UntypedStorage(size=3),
    "numpy int size": lambda lib: lib.UntypedStorage(np.int64(5)),
    "0-d int tensor size": lambda lib: lib.UntypedStorage(lib.tensor(5)),
    "0-d uint8 tensor size": lambda lib: lib.UntypedStorage(lib.tensor(4, dtype=lib.uint8)),
    "cpu device": lambda lib: lib.UntypedStorage(4, device="cpu"),
    "cpu:1 device": lambda lib: lib.UntypedStorage(4, device="cpu:1"),
    "device object": lambda lib: lib.UntypedStorage(4, device=lib.device("cpu")),
    "device only": lambda lib: lib.UntypedStorage(device="cpu"),
    "device None": lambda lib: lib.UntypedStorage(3, device=None),
    "allocator None": lambda lib: lib.UntypedStorage(3, allocator=None),
    "size and device keywords": lambda lib: lib.UntypedStorage(size=3, device="cpu"),
}


@pytest.mark.parametrize("case", list(SIZES))
def test_storage_of_a_size(case):
    assert_same(SIZES[case])


SEQUENCES = {
    "list": [1, 2, 255],
    "tuple": (1, 2),
    "empty list": [],
    "wrapped modulo 256": [256, -1, 300, 2 ** 63 - 1, -(2 ** 63)],
    "bools": [True, False],
    "range": range(3),
    "bytes": b"abc",
    "bytearray": bytearray(b"ab"),
}


@pytest.mark.parametrize("case", list(SEQUENCES))
def test_storage_of_a_sequence_holds_its_bytes(case):
    assert_same(lambda lib: lib.UntypedStorage(SEQUENCES[case]).tolist())
    assert_same(lambda lib: lib.UntypedStorage(sequence=SEQUENCES[case], device="cpu").tolist())


def test_storage_of_a_storage_copies_its_bytes():
    assert_same(lambda lib: (lambda s: (lib.UntypedStorage(s).tolist(), lib.UntypedStorage(s).data_ptr()
                                        != s.data_ptr()))(lib.UntypedStorage([7, 8, 9])))


def test_made_storage_is_usable():
    def program(lib):
        s = lib.UntypedStorage(3)
        s.fill_(7)
        t = lib.UntypedStorage([1, 2])
        t.resize_(4)
        return (s.tolist(), s.resizable(), t.nbytes(), t.tolist()[:2], repr(lib.UntypedStorage([1, 2])),
                repr(lib.UntypedStorage()), lib.UntypedStorage(0).data_ptr(), isinstance(s, lib.UntypedStorage),
                lib.UntypedStorage([5, 6])[1], lib.UntypedStorage([5, 6, 7])[1:].tolist())
    assert_same(program)


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_empty_typed_storage_repr():
    assert_same(lambda lib: repr(lib.FloatStorage()))


REFUSED = {
    "negative size": lambda lib: lib.UntypedStorage(-1),
    "size past int64": lambda lib: lib.UntypedStorage(2 ** 70),
    "size too large to allocate": lambda lib: lib.UntypedStorage(2 ** 62),
    "float": lambda lib: lib.UntypedStorage(2.0),
    "bool": lambda lib: lib.UntypedStorage(True),
    "bool with device": lambda lib: lib.UntypedStorage(True, device="cpu"),
    "None": lambda lib: lib.UntypedStorage(None),
    "None with device": lambda lib: lib.UntypedStorage(None, device="cpu"),
    "str": lambda lib: lib.UntypedStorage("abc"),
    "dict": lambda lib: lib.UntypedStorage({1: 2}),
    "iterator": lambda lib: lib.UntypedStorage(iter([1, 2])),
    "tensor": lambda lib: lib.UntypedStorage(lib.tensor([1, 2])),
    "0-d float tensor": lambda lib: lib.UntypedStorage(lib.tensor(5.0)),
    "numpy array": lambda lib: lib.UntypedStorage(np.array([1, 2])),
    "0-d numpy array": lambda lib: lib.UntypedStorage(np.array(3)),
    "float item": lambda lib: lib.UntypedStorage([1, 1.5]),
    "str item": lambda lib: lib.UntypedStorage(["a"]),
    "list item": lambda lib: lib.UntypedStorage([[1, 2]]),
    "numpy int item": lambda lib: lib.UntypedStorage([np.int64(5)]),
    "tensor item": lambda lib: lib.UntypedStorage([lib.tensor(5)]),
    "item past int64": lambda lib: lib.UntypedStorage([2 ** 70]),
    "two sizes": lambda lib: lib.UntypedStorage(2, 3),
    "three arguments": lambda lib: lib.UntypedStorage(1, 2, 3),
    "device positional": lambda lib: lib.UntypedStorage(3, "cpu"),
    "unknown keyword": lambda lib: lib.UntypedStorage(foo=3),
    "dtype keyword": lambda lib: lib.UntypedStorage(3, dtype=lib.float32),
    "float allocator": lambda lib: lib.UntypedStorage(3, allocator=1.5),
    "float device": lambda lib: lib.UntypedStorage(3, device=1.0),
    "unknown device": lambda lib: lib.UntypedStorage(4, device="xyz"),
    "device index": lambda lib: lib.UntypedStorage(4, device=0),
    "mps device": lambda lib: lib.UntypedStorage(3, device="mps"),
    "xla device": lambda lib: lib.UntypedStorage(3, device="xla"),
    "ipu device before a bad sequence": lambda lib: lib.UntypedStorage([1.5], device="ipu"),
    "xpu device": lambda lib: lib.UntypedStorage(3, device="xpu"),
    "hpu device": lambda lib: lib.UntypedStorage(3, device="hpu"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_as_torch_refuses(case):
    assert_same(REFUSED[case])


@pytest.mark.skipif(tg.cuda.is_available(), reason="the oracle is torch's CPU build")
@pytest.mark.parametrize("args", [(4,), ([1],), (-1,), ("a",)])
def test_cuda_device_refused_without_cuda(args):
    assert_same(lambda lib: lib.UntypedStorage(*args, device="cuda"))


@pytest.mark.skipif(tg is torch, reason="tracegrad's refusals: torch has meta storages and C++ allocators")
def test_meta_device_and_allocators_refused_in_words():
    with pytest.raises(NotImplementedError, match="tracegrad has no 'meta' device"):
        tg.UntypedStorage(4, device="meta")
    with pytest.raises(NotImplementedError, match="tracegrad has no C.. allocators"):
        tg.UntypedStorage(4, allocator=1)
