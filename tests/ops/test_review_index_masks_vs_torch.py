"""Review of set 37's mask fixes: the order in which torch's indexing warns of byte masks and checks masks.

- ``expandTensors`` warns of each byte mask as it reads it, then checks that mask's shape: a refused mask is the
  last warned of (tracegrad warned of every byte mask, also those after it, and of none before a refused bool one
  but for byte masks that came later);
- ``index_put_`` of one value first looks for a lone mask to hand to ``masked_fill_``: it checks the first mask it
  meets, unwarned, before the indices' dtypes and before refusing a byte mask;
- a mask with more dims than the tensor has left is refused as ``self.size(dim)`` refuses a dim out of range;
- backward formulas that index through a byte mask (``grad.index(indices)``) warn of it as the forward does.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch, value_or_error


def _warnings_and_outcome(program, lib) -> tuple:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = value_or_error(program, lib)
    return outcome, [str(w.message).split(" (Triggered internally at")[0] for w in caught]


def _b(L, v):
    return L.tensor(v, dtype=L.bool)


def _u(L, v):
    return L.tensor(v, dtype=L.uint8)


def _set(indices, values, shape=(2, 3)):
    def program(L):
        x = L.zeros(*shape)
        x[indices(L)] = values(L)
        return x
    return program


def _get(indices, shape=(2, 3)):
    return lambda L: L.zeros(*shape)[indices(L)]


def _put(indices, values, accumulate=False, shape=(2, 3)):
    return lambda L: L.zeros(*shape).index_put_(indices(L), values(L), accumulate=accumulate)


def _two(L):
    return L.tensor([1.0, 2.0])


def _one(L):
    return L.tensor(5.0)


def _backward_through_byte_mask(accumulate: bool, setitem: bool = False):
    def program(L):
        x = L.ones(3, requires_grad=True)
        v = L.tensor([1.0, 2.0], requires_grad=True)
        if setitem:
            y = x * 1
            y[_u(L, [1, 0, 1])] = v
        else:
            y = x.index_put((_u(L, [1, 0, 1]),), v, accumulate=accumulate)
        (y * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        return L.cat([x.grad, v.grad])
    return program


CASES = {
    "setitem: bool mask refused, byte mask after": _set(lambda L: (_b(L, [1, 0, 1]), _u(L, [1, 0, 1])), _two),
    "setitem: byte mask refused, byte mask after": _set(lambda L: (_u(L, [1, 0, 1]), _u(L, [1, 0, 1])), _two),
    "setitem: bool mask refused, 2-d byte mask after": _set(
        lambda L: (_b(L, [1, 0, 1]), _u(L, [[1, 0, 1, 0], [0, 0, 0, 0]])), _two, (2, 3, 4)),
    "setitem: one value, first of two byte masks refused": _set(lambda L: (_u(L, [1, 0, 1]), _u(L, [1, 0, 1])),
                                                                _one),
    "setitem: one value, byte mask refused before a float index": _set(
        lambda L: (_u(L, [1, 0, 1]), L.tensor([0.5])), _one),
    "getitem: bool mask refused, byte mask after": _get(lambda L: (_b(L, [1, 0, 1]), _u(L, [1, 0, 1]))),
    "getitem: byte mask refused, byte mask after": _get(lambda L: (_u(L, [1, 0, 1]), _u(L, [1, 0, 1]))),
    "index_put_: one value, first of two byte masks refused": _put(
        lambda L: (_u(L, [1, 0, 1]), _u(L, [1, 0, 1])), _one),
    "index_put_: one value, lone 2-d byte mask refused": _put(lambda L: (_u(L, [[1, 0], [0, 1]]),), _one),
    "index_put_: one value, float index before a byte mask": _put(lambda L: (L.tensor([0.5]), _u(L, [1, 0, 1])),
                                                                  _one),
    "index_put_: float index after a refused byte mask": _put(lambda L: (_u(L, [1, 0, 1]), L.tensor([0.5])), _two),
    "index_put_: byte mask past the last dim": _put(lambda L: (_u(L, [[1], [0], [1]]),), _two, shape=(3,)),
    "index_put_: one value, byte mask past the last dim": _put(lambda L: (_u(L, [[1], [0], [1]]),), _one,
                                                               shape=(3,)),
    "index_put_: bool mask past the last dim, accumulate": _put(lambda L: (_b(L, [[1], [0], [1]]),), _two, True,
                                                                shape=(3,)),
    "index_put backward through a byte mask": _backward_through_byte_mask(False),
    "index_put backward through a byte mask, accumulate": _backward_through_byte_mask(True),
    "setitem backward through a byte mask": _backward_through_byte_mask(False, setitem=True),
}


@pytest.mark.parametrize("case", CASES)
def test_masks_warned_and_checked_as_torch(case):
    assert _warnings_and_outcome(CASES[case], tg) == _warnings_and_outcome(CASES[case], torch)
