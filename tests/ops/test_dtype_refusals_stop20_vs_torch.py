"""Dtype edge cases a sweep over reductions, set operations and factories found, each the same program on
tracegrad and torch with the same outcome: value, dtype and shape, or error type and message.

- Complex inputs that PyTorch's CPU kernels refuse (``nansum``/``nanmean``, ``mode``, ``unique``, ``histc``),
  and where they are not refused because no kernel runs (an empty ``amax``, a 0-d ``mode``), in PyTorch's
  order of checks (a bad dim before the dtype).
- ``torch.tensor`` of negative Python ints into ``uint8``: down to -255 they wrap around as two's complement.
- Factories refuse the dtypes their kernels are not dispatched over (arange/range/linspace/logspace of bool,
  complex arange, randperm, randint, random_, tril_indices), and a complex number read into a real dtype.
- In-place division with a rounding mode (``div_``, ``floor_divide_``, ``//=``): the rounding mode checked first,
  then the cast into self (a complex divisor into a real tensor), then the kernel's dtype.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch


def _outcome(program, lib):
    try:
        result = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc).replace("tracegrad", "torch")
    result = result[0] if isinstance(result, tuple) else result
    return str(result.dtype).replace("tracegrad", "torch"), tuple(result.shape), repr(result.tolist())  # (NaN == NaN)


def _c(lib, *shape):
    return lib.ones(*shape, dtype=lib.complex64)


PROGRAMS = {
    "nansum": lambda L: _c(L, 2, 3).nansum(),
    "nansum dim": lambda L: _c(L, 2, 3).nansum(1),
    "nansum bad dim": lambda L: _c(L, 2, 3).nansum(5),
    "nansum empty": lambda L: _c(L, 2, 0).nansum(),
    "nansum complex128": lambda L: L.ones(3, dtype=L.complex128).nansum(),
    "nansum into a complex dtype": lambda L: L.ones(2, 3).nansum(dtype=L.complex64),
    "nanmean": lambda L: _c(L, 2, 3).nanmean(),
    "nanmean bad dim": lambda L: _c(L, 2, 3).nanmean(5),
    "amax of an empty result": lambda L: _c(L, 2, 0).amax(0),
    "amin of an empty result": lambda L: _c(L, 2, 0).amin(0),
    "amax": lambda L: _c(L, 2, 3).amax(),
    "amax empty dim": lambda L: _c(L, 2, 0).amax(1),
    "aminmax": lambda L: _c(L, 2, 3).aminmax(),
    "aminmax dim": lambda L: _c(L, 2, 3).aminmax(dim=1),
    "aminmax bad dim": lambda L: _c(L, 2, 3).aminmax(dim=4),
    "aminmax 0-d": lambda L: L.tensor(1 + 1j, dtype=L.complex64).aminmax(dim=0),
    "aminmax empty": lambda L: _c(L, 2, 0).aminmax(),
    "aminmax empty dim": lambda L: _c(L, 2, 0).aminmax(dim=1),
    "aminmax empty result": lambda L: _c(L, 2, 0).aminmax(dim=0),
    "mode": lambda L: _c(L, 2, 3).mode(),
    "mode 0-d": lambda L: L.tensor(1 + 1j, dtype=L.complex64).mode(),
    "mode empty result": lambda L: _c(L, 2, 0).mode(0),
    "mode empty dim": lambda L: _c(L, 2, 0).mode(1),
    "mode bad dim": lambda L: _c(L, 3).mode(7),
    "unique": lambda L: L.unique(_c(L, 3)),
    "unique inverse": lambda L: L.unique(_c(L, 3), return_inverse=True),
    "unique dim": lambda L: L.unique(_c(L, 3), dim=0),
    "unique empty": lambda L: L.unique(_c(L, 0)),
    "unique_consecutive": lambda L: L.unique_consecutive(_c(L, 3)),
    "unique_consecutive dim": lambda L: L.unique_consecutive(_c(L, 3), dim=0),
    "histc": lambda L: _c(L, 3).histc(),
    "histc with a range": lambda L: _c(L, 3).histc(min=0, max=1),
    "histc empty": lambda L: _c(L, 0).histc(),
    "unique bool": lambda L: L.unique(L.tensor([True, False, True])),
    "uint8 from -1": lambda L: L.tensor([-1, 3], dtype=L.uint8),
    "uint8 from a 0-d -1": lambda L: L.tensor(-1, dtype=L.uint8),
    "uint8 from -255": lambda L: L.tensor([-255], dtype=L.uint8),
    "uint8 from -256": lambda L: L.tensor([-256], dtype=L.uint8),
    "uint8 from 256": lambda L: L.tensor([256], dtype=L.uint8),
    "uint8 from -1.0": lambda L: L.tensor([-1.0], dtype=L.uint8),
    "uint8 nested": lambda L: L.tensor([[-1, 2], (3, -4)], dtype=L.uint8),
    "uint8 as_tensor": lambda L: L.as_tensor([-3], dtype=L.uint8),
    "int8 from -129": lambda L: L.tensor([-129], dtype=L.int8),
    "uint8 sums to int64": lambda L: L.tensor([[-1, 1, 0], [2, 2, 255]], dtype=L.uint8).sum(0),
    "floor_divide_ by a complex number": lambda L: L.ones(2).floor_divide_(1j),
    "//= a complex tensor": lambda L: L.ones(2, dtype=L.int64).__ifloordiv__(_c(L, 2)),
    "div_ floor by complex": lambda L: L.ones(2).div_(1j, rounding_mode="floor"),
    "div_ trunc by complex": lambda L: L.ones(2, dtype=L.int32).div_(_c(L, 2), rounding_mode="trunc"),
    "div_ bad mode before the cast": lambda L: L.ones(2, dtype=L.int64).div_(2.5, rounding_mode="bad"),
    "div_ floor of complex self": lambda L: _c(L, 2).div_(2, rounding_mode="floor"),
    "div_ floor by float into int": lambda L: L.ones(2, dtype=L.int64).div_(2.5, rounding_mode="floor"),
    "div_ floor shapes": lambda L: L.ones(2, dtype=L.int64).div_(L.ones(3), rounding_mode="floor"),
    "div_ floor by zero": lambda L: L.ones(2, dtype=L.int64).div_(0, rounding_mode="floor"),
    "div_ none into int": lambda L: L.ones(2, dtype=L.int64).div_(2, rounding_mode=None),
    "div_ floor recorded": lambda L: (L.ones(2, requires_grad=True) * 3).div_(2, rounding_mode="floor"),
    # integers sum (no nansum kernel), and an empty input runs none: a complex dtype is taken
    "nansum of ints into complex": lambda L: L.nansum(L.arange(6), dtype=L.complex128),
    "nansum of bools into complex": lambda L: L.nansum(L.tensor([True, False]), dtype=L.complex64),
    "nansum of an empty float into complex": lambda L: L.nansum(L.zeros(2, 0), 1, dtype=L.complex64),
    "nanmean of an empty float into complex": lambda L: L.nanmean(L.zeros(0), dtype=L.complex64),
    "nansum of floats into complex": lambda L: L.nansum(L.ones(2, 3), 1, dtype=L.complex128),
    "nanmean of floats into complex": lambda L: L.nanmean(L.ones(2, 3), dtype=L.complex64),
    # only Python numbers wrap into uint8; other items are refused as before
    "uint8 -1 and a 0-d tensor": lambda L: L.tensor([-1, L.tensor(300)], dtype=L.uint8),
    "uint8 -1 and a NumPy int": lambda L: L.tensor([-1, np.int64(-300)], dtype=L.uint8),
    "uint8 -1 and a NumPy NaN": lambda L: L.tensor([-1, np.float64("nan")], dtype=L.uint8),
    "uint8 -1 and NaN": lambda L: L.tensor([-1, float("nan")], dtype=L.uint8),
    "uint8 -1 and a bool": lambda L: L.tensor([-1, True], dtype=L.uint8),
    "uint8 -1 and a float": lambda L: L.tensor([-1, 2.5], dtype=L.uint8),
    "uint8 -1 and 256": lambda L: L.tensor([-1, 256], dtype=L.uint8),
    "uint8 from a range": lambda L: L.tensor(range(-3, 2), dtype=L.uint8),
    "uint8 from nested ranges": lambda L: L.tensor([range(-2, 1)], dtype=L.uint8),
    # complex results no kernel refused: autograd refuses them
    "amax of an empty complex result requiring grad": lambda L: L.amax(_c(L, 0, 2).requires_grad_(), -1),
    "amin of an empty complex result requiring grad": lambda L: L.amin(_c(L, 0, 2).requires_grad_(), -1),
    "mode of an empty complex result requiring grad": lambda L: _c(L, 2, 0).requires_grad_().mode(0),
    "unique_consecutive dim -1 of a vector": lambda L: L.unique_consecutive(_c(L, 3), dim=-1),
    "unique_consecutive dim of a matrix": lambda L: L.unique_consecutive(_c(L, 2, 3), dim=1),
    "unique_consecutive bad dim": lambda L: L.unique_consecutive(_c(L, 2, 3), dim=7),
    # factories: the dtypes their kernels are dispatched over, in PyTorch's order of checks
    "arange bool": lambda L: L.arange(2, dtype=L.bool),
    "arange bool to inf": lambda L: L.arange(0, float("inf"), dtype=L.bool),
    "arange complex": lambda L: L.arange(3, dtype=L.complex64),
    "arange int32 by a half step": lambda L: L.arange(0, 2, 0.5, dtype=L.int32),
    "arange uint8 by a half step": lambda L: L.arange(1, 2.5, 0.5, dtype=L.uint8),
    "arange int64 by a half step": lambda L: L.arange(0, 2, 0.5, dtype=L.int64),
    "arange int64 by 2.7": lambda L: L.arange(0, 5, 2.7, dtype=L.int64),
    "arange int64 by 1.5": lambda L: L.arange(0, 3, 1.5, dtype=L.int64),
    "arange int64 bounds before the step": lambda L: L.arange(4, 1.94, 0.87, dtype=L.int64),
    "range bool": lambda L: L.range(0, 2, dtype=L.bool),
    "range complex with bad bounds": lambda L: L.range(2, 0, dtype=L.complex64),
    "linspace bool": lambda L: L.linspace(0, 1, 3, dtype=L.bool),
    "linspace bool of no steps": lambda L: L.linspace(0, 1, 0, dtype=L.bool),
    "logspace bool": lambda L: L.logspace(0, 1, 2, dtype=L.bool),
    "randperm bool": lambda L: L.randperm(3, dtype=L.bool),
    "randperm bool of 0": lambda L: L.randperm(0, dtype=L.bool),
    "randperm complex": lambda L: L.randperm(3, dtype=L.complex64),
    "randint complex": lambda L: L.randint(0, 5, (2,), dtype=L.complex64),
    "randint complex with bad bounds": lambda L: L.randint(5, 0, (2,), dtype=L.complex64),
    "random_ complex from to": lambda L: _c(L, 2).random_(0, 5),
    "random_ complex to": lambda L: _c(L, 2).random_(5),
    "random_ complex": lambda L: _c(L, 2).random_(),
    "random_ bool to 5": lambda L: L.empty(2, dtype=L.bool).random_(0, 5),
    "tril_indices int16": lambda L: L.tril_indices(2, 2, dtype=L.int16),
    "tril_indices float": lambda L: L.tril_indices(2, 2, dtype=L.float32),
    "triu_indices int8": lambda L: L.triu_indices(2, 2, dtype=L.int8),
    "tril_indices int32": lambda L: L.tril_indices(2, 2, dtype=L.int32),
    "normal into int64": lambda L: L.normal(0.0, 1.0, (2,), dtype=L.int64),
    "normal into int64 of nothing": lambda L: L.normal(0.0, 1.0, (0,), dtype=L.int64),
    "normal into int64 with a negative std": lambda L: L.normal(0.0, -1.0, (2,), dtype=L.int64),
    "bernoulli of complex probabilities": lambda L: L.bernoulli(L.full((2,), 0.5, dtype=L.complex64)),
    "tensor of a complex into float": lambda L: L.tensor([1 + 1j], dtype=L.float32),
    "tensor of a complex into int": lambda L: L.tensor([1 + 1j], dtype=L.int64),
    "tensor of a complex into bool": lambda L: L.tensor([1 + 1j], dtype=L.bool),
    "tensor of a 0-d complex into double": lambda L: L.tensor(1 + 0j, dtype=L.float64),
    "tensor of nested complexes into float": lambda L: L.tensor([[1, 2j]], dtype=L.float32),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_outcome_as_in_torch(name):
    assert _outcome(PROGRAMS[name], tg) == _outcome(PROGRAMS[name], torch)
