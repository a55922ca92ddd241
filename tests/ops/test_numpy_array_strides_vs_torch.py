"""The strides of a tensor made from a NumPy array, against torch:

- ``from_numpy``/``as_tensor`` read an array's strides as they are, and ``torch.tensor`` copies it as ``.to()``
  does (its strides where it is dense, an empty one always is; else dense in their order). NumPy gives its empty
  arrays zero strides, which torch keeps ((0,) for ``np.empty(0)``); a slice that is empty keeps the slice's;
- ``torch.tensor`` refuses an array with negative strides as ``from_numpy`` does;
- an empty tensor with zero strides keeps them through views and preserve-format copies, as ``empty_strided``'s;
  tracegrad's own empty results keep torch's contiguous strides."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch

ARRAYS = {
    "empty(0)": lambda: np.empty((0,)),
    "empty(0, 3)": lambda: np.empty((0, 3)),
    "empty(3, 0)": lambda: np.empty((3, 0)),
    "empty(2, 0, 4)": lambda: np.empty((2, 0, 4)),
    "empty(2, 0, 3) F": lambda: np.empty((2, 0, 3), order="F"),
    "zeros(0, 2) int64": lambda: np.zeros((0, 2), np.int64),
    "zeros(0, 2) bool": lambda: np.zeros((0, 2), bool),
    "empty(0, 3).T": lambda: np.empty((0, 3)).T,
    "empty column slice": lambda: np.arange(12.0).reshape(3, 4)[:, 4:],
    "empty row slice": lambda: np.arange(12.0).reshape(3, 4)[3:],
    "empty middle slice": lambda: np.arange(24.0).reshape(2, 3, 4)[:, 1:1],
    "empty stepped slice": lambda: np.arange(10.0)[::2][5:],
    "broadcast empty": lambda: np.broadcast_to(np.empty((0,)), (3, 0)),
    "broadcast": lambda: np.broadcast_to(np.ones(3), (2, 3)),
    "stepped": lambda: np.arange(10.0)[::2],
    "transposed": lambda: np.ones((3, 4)).T,
    "reversed": lambda: np.arange(4.0)[::-1],
    "0-d": lambda: np.array(1.0),
}

MAKERS = {
    "tensor": lambda lib, a: lib.tensor(a),
    "as_tensor": lambda lib, a: lib.as_tensor(a),
    "from_numpy": lambda lib, a: lib.from_numpy(a),
    "tensor float32": lambda lib, a: lib.tensor(a, dtype=lib.float32),
    "as_tensor float32": lambda lib, a: lib.as_tensor(a, dtype=lib.float32),
}


def _outcome(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a broadcast array is read-only: both warn)
        try:
            t = program()
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            return type(exc).__name__, str(exc)
    return tuple(t.shape), t.stride(), t.is_contiguous(), str(t.dtype)


@pytest.mark.parametrize("maker", list(MAKERS))
@pytest.mark.parametrize("array", list(ARRAYS))
def test_strides_of_a_tensor_from_an_array(array: str, maker: str) -> None:
    make = MAKERS[maker]
    assert _outcome(lambda: make(tg, ARRAYS[array]())) == _outcome(lambda: make(torch, ARRAYS[array]()))


VIEWS_AND_COPIES = {
    "t": lambda lib, x: x.t(),
    "reshape": lambda lib, x: x.reshape(3, 0),
    "reshape to itself": lambda lib, x: x.reshape(0, 3),
    "unsqueeze": lambda lib, x: x.unsqueeze(0),
    "unsqueeze last": lambda lib, x: x.unsqueeze(2),
    "expand": lambda lib, x: x.expand(2, 0, 3),
    "narrow": lambda lib, x: x.narrow(1, 0, 2),
    "select": lambda lib, x: x.select(1, 1),
    "slice": lambda lib, x: x[:, 1:],
    "contiguous": lambda lib, x: x.contiguous(),
    "clone": lambda lib, x: x.clone(),
    "to float32": lambda lib, x: x.float(),
    "copy_": lambda lib, x: x.clone().copy_(x),
    "empty_like": lambda lib, x: lib.empty_like(x),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "add": lambda lib, x: x + 1,
    "cat": lambda lib, x: lib.cat([x, x]),
    "sum(0)": lambda lib, x: x.sum(0),
    "resize_ of a copy": lambda lib, x: x.clone().resize_(2, 3),
}

SOURCES = {
    "from_numpy": lambda lib: lib.from_numpy(np.empty((0, 3))),
    "tensor": lambda lib: lib.tensor(np.empty((0, 3))),
    "empty_strided zero": lambda lib: lib.empty_strided((0, 3), (0, 0)),
    "empty": lambda lib: lib.empty(0, 3),
    "zeros(3)[3:] reshaped": lambda lib: lib.zeros(3)[3:].reshape(0, 3),
}


@pytest.mark.parametrize("op", list(VIEWS_AND_COPIES))
@pytest.mark.parametrize("source", list(SOURCES))
def test_an_empty_tensors_strides_through_views_and_copies(source: str, op: str) -> None:
    def program(lib):
        return lambda: VIEWS_AND_COPIES[op](lib, SOURCES[source](lib))
    assert _outcome(program(tg)) == _outcome(program(torch))


def test_an_empty_array_shared_by_from_numpy_is_not_resizable() -> None:
    assert _outcome(lambda: tg.from_numpy(np.empty((0, 3))).resize_(2, 3)) == _outcome(
        lambda: torch.from_numpy(np.empty((0, 3))).resize_(2, 3))
