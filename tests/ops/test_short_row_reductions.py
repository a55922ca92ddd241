"""Reductions of many short rows (a batch of class scores) take a transposed copy for speed: they must keep the
order of the additions, left to right, and the maxima."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad as tg
from tracegrad.ops.aten_vec import MANY_SHORT_ROWS, SHORT_ROW, map_reduce_sum, row_maxima


def _left_to_right(rows: np.ndarray) -> np.ndarray:
    out = np.empty(rows.shape[0], rows.dtype)
    for i, row in enumerate(rows):
        acc = row[0]
        for v in row[1:]:
            acc = rows.dtype.type(acc + v)
        out[i] = acc
    return out


@pytest.mark.parametrize("rows", [MANY_SHORT_ROWS, MANY_SHORT_ROWS + 1, 500])
@pytest.mark.parametrize("length", [1, 2, 7, 10, 15])
def test_short_rows_are_summed_left_to_right(rows, length):
    # (values of mixed magnitudes: any other order of the additions rounds differently somewhere)
    rng = np.random.default_rng(length)
    x = (rng.standard_normal((rows, length)) * 10.0 ** rng.integers(-4, 5, (rows, length))).astype(np.float32)
    assert np.array_equal(map_reduce_sum([x], lanes=16), _left_to_right(x))
    assert np.array_equal(map_reduce_sum([x[:, ::-1]], lanes=16), _left_to_right(x[:, ::-1]))  # (strided)
    zeros = np.where(rng.random((rows, length)) < 0.5, np.float32(-0.0), np.float32(0.0))
    zeros[0] = -0.0  # (a row of -0 sums to -0 from its first term; from +0 it would be +0)
    sums = map_reduce_sum([zeros], lanes=16)
    assert np.array_equal(np.signbit(sums), np.signbit(_left_to_right(zeros)))
    assert np.signbit(sums[0])


@pytest.mark.parametrize("rows", [MANY_SHORT_ROWS, MANY_SHORT_ROWS + 1, 300])
@pytest.mark.parametrize("length", [10, SHORT_ROW, SHORT_ROW + 1, 300])  # (short rows transposed, long ones not)
def test_row_maxima(rows, length):
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, length)).astype(np.float32)
    x[3, 4] = np.nan
    x[5] = -np.inf
    got = row_maxima(x)
    assert got.shape == (rows, 1)
    assert np.array_equal(got, np.max(x, axis=1, keepdims=True), equal_nan=True)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("rows", [10, MANY_SHORT_ROWS + 8])
def test_softmax_gradients_of_negative_zeros_keep_their_signs_as_torch(log, rows):
    x = np.random.default_rng(rows).standard_normal((rows, 5)).astype(np.float32)
    grads = []
    for lib in (tg, torch):
        t = lib.tensor(x, requires_grad=True)
        (lib.log_softmax if log else lib.softmax)(t, 1).backward(lib.full((rows, 5), -0.0))
        grads.append(t.grad.numpy())
    assert np.array_equal(grads[0].view(np.uint32), grads[1].view(np.uint32))
