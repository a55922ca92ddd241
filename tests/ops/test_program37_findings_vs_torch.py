"""Differences that the programs of ``tests/test_user_programs37_vs_torch.py`` ran into, each reduced to the call
that caused it and compared with torch.

- ``scatter_reduce(reduce="mean")`` of an int32/int16/int8/uint8 tensor returned int64 (the count it divides by
  was int64); torch keeps the dtype and counts in it (an int8 count wraps as the int8 sum does); a bool one was
  computed where torch refuses it;
- ``index_reduce`` of a bool tensor was computed where torch refuses it (without include_self, and on one dim);
- ``bincount`` of a bool tensor counted where torch refuses it;
- ``nanmedian(dim)`` of an all-NaN row gave index 0 where torch gives whichever its ``std::nth_element`` leaves
  (2 of 4, 7 of 9);
- ``index_put_(accumulate=True)`` through a mask of the wrong length said "shape mismatch: value tensor ..."
  (RuntimeError) where torch refuses the mask's shape (IndexError), and a byte mask given to ``index_put``/
  ``index_put_`` was not warned of.
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


SCATTER_MEAN = {
    "int32": lambda L: L.zeros(3, dtype=L.int32).scatter_reduce(
        0, L.tensor([0, 0, 2]), L.tensor([-1, -2, 3], dtype=L.int32), "mean"),
    "int16 without self": lambda L: L.zeros(3, dtype=L.int16).scatter_reduce(
        0, L.tensor([0, 0, 2]), L.tensor([-1, -2, 3], dtype=L.int16), "mean", include_self=False),
    "int8 count wraps": lambda L: L.zeros(3, dtype=L.int8).scatter_reduce(
        0, L.tensor([0] * 200), L.ones(200, dtype=L.int8), "mean"),
    "uint8 count wraps to 0": lambda L: L.zeros(3, dtype=L.uint8).scatter_reduce(
        0, L.tensor([0] * 255), L.full((255,), 2, dtype=L.uint8), "mean"),
    "float16": lambda L: L.zeros(3, dtype=L.half).scatter_reduce(
        0, L.tensor([0, 0, 2]), L.tensor([1.0, 2.0, 3.0], dtype=L.half), "mean").float(),
    "bool": lambda L: L.zeros(3, dtype=L.bool).scatter_reduce(
        0, L.tensor([0, 0, 2]), L.tensor([True, False, True]), "mean", include_self=False),
    "bool, empty index": lambda L: L.zeros(3, dtype=L.bool).scatter_reduce(
        0, L.tensor([], dtype=L.long), L.tensor([], dtype=L.bool), "mean"),
    "bool amax": lambda L: L.zeros(3, dtype=L.bool).scatter_reduce(
        0, L.tensor([0, 0, 2]), L.tensor([True, False, True]), "amax"),
}


@pytest.mark.parametrize("case", SCATTER_MEAN)
def test_scatter_reduce_mean_dtype_as_torch(case):
    assert value_or_error(SCATTER_MEAN[case], tg) == value_or_error(SCATTER_MEAN[case], torch)


def _bool_index_reduce(reduce: str, include_self: bool, shape: tuple, index: list):
    def program(L):
        source = L.ones((len(index),) + shape[1:], dtype=L.bool)
        return L.zeros(shape, dtype=L.bool).index_reduce(0, L.tensor(index, dtype=L.long), source, reduce,
                                                         include_self=include_self)
    return program


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("shape", [(3,), (3, 2)])
@pytest.mark.parametrize("index", [[], [1, 1], [5]])
def test_bool_index_reduce_as_torch(reduce, include_self, shape, index):
    program = _bool_index_reduce(reduce, include_self, shape, index)
    assert _warnings_and_outcome(program, tg)[0] == _warnings_and_outcome(program, torch)[0]


BINCOUNT = {
    "bool": lambda L: L.bincount(L.tensor([True, False, True])),
    "bool with weights": lambda L: L.bincount(L.tensor([True, False]), weights=L.tensor([1.0, 2.0])),
    "uint8": lambda L: L.bincount(L.tensor([0, 3, 3], dtype=L.uint8)),
}


@pytest.mark.parametrize("case", BINCOUNT)
def test_bincount_dtypes_as_torch(case):
    assert value_or_error(BINCOUNT[case], tg) == value_or_error(BINCOUNT[case], torch)


def _all_nan_nanmedian(n: int, dim: int):
    def program(L):
        rows = L.full((n, 2), float("nan")) if dim == 0 else L.full((2, n), float("nan"))
        return L.nanmedian(rows, dim).indices
    return program


@pytest.mark.parametrize("n", [2, 3, 4, 9, 17, 40])
@pytest.mark.parametrize("dim", [0, 1])
def test_nanmedian_index_of_all_nan_slice_as_torch(n, dim):
    program = _all_nan_nanmedian(n, dim)
    assert value_or_error(program, tg) == value_or_error(program, torch)


def test_nanmedian_gradient_of_all_nan_row_goes_where_torchs_index_is():
    def program(L):
        x = L.full((2, 4), float("nan"), requires_grad=True)
        L.nanmedian(x, 1).values.sum().backward()
        return x.grad
    assert value_or_error(program, tg) == value_or_error(program, torch)


INDEX_PUT_MASKS = {
    "wrong length, accumulate": lambda L: L.zeros(3).index_put_(
        (L.tensor([True, False]),), L.tensor([1.0, 2.0]), accumulate=True),
    "wrong length, byte": lambda L: L.zeros(3).index_put_(
        (L.tensor([0, 0], dtype=L.uint8),), L.tensor([1.0, 2.0]), accumulate=True),
    "second index a wrong mask": lambda L: L.zeros(2, 3).index_put_(
        (L.tensor([0, 1]), L.tensor([True, False])), L.tensor([1.0, 2.0])),
    "byte mask, accumulate": lambda L: L.zeros(3).index_put_(
        (L.tensor([1, 0, 1], dtype=L.uint8),), L.tensor([1.0, 2.0]), accumulate=True),
    "byte mask, functional": lambda L: L.index_put(
        L.zeros(3), (L.tensor([1, 0, 1], dtype=L.uint8),), L.tensor([1.0, 2.0])),
    "byte mask, setitem": lambda L: L.zeros(3).__setitem__(L.tensor([1, 0, 1], dtype=L.uint8), L.tensor([1.0, 2.0]))
    or L.zeros(1),
    "2-d byte mask, setitem": lambda L: L.zeros(2, 2).__setitem__(
        L.tensor([[1, 0], [0, 1]], dtype=L.uint8), L.tensor([1.0, 2.0])) or L.zeros(1),
    "wrong byte mask, setitem": lambda L: L.zeros(3).__setitem__(
        L.tensor([1, 0], dtype=L.uint8), L.tensor([1.0, 2.0])) or L.zeros(1),
}


@pytest.mark.parametrize("case", INDEX_PUT_MASKS)
def test_index_put_masks_as_torch(case):
    assert _warnings_and_outcome(INDEX_PUT_MASKS[case], tg) == _warnings_and_outcome(INDEX_PUT_MASKS[case], torch)
