"""Which of several equal elements sort, topk, kthvalue and mode report: PyTorch's, bit for bit.

PyTorch's CPU kernels run libstdc++'s introsort, introselect and heap selection, and its own quickselect; none of
them is stable, so among ties the indices are theirs, not the first ones. tracegrad replays those algorithms
(``ops/stl_order.py``). These tests compare values and indices with torch on inputs full of ties."""

from __future__ import annotations

import operator

import numpy as np
import pytest
import torch

import tracegrad as tg
from tracegrad.ops import stl_order

DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.uint8]


def _tied(seed: int, shape: tuple, dtype, distinct: int = 4, nan_share: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, distinct, size=shape).astype(dtype)
    if nan_share and np.dtype(dtype).kind == "f":
        a[rng.random(shape) < nan_share] = np.nan
    return a


def _same(theirs, ours) -> None:
    for t, o in zip(theirs, ours, strict=True):
        t_np, o_np = t.numpy(), o.numpy()
        assert t_np.shape == o_np.shape
        assert np.array_equal(t_np, o_np, equal_nan=t_np.dtype.kind == "f"), (t_np, o_np)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [5, 16, 17, 40, 257, 3000])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_breaks_ties_as_torch(dtype, n, descending):
    a = _tied(n, (3, n), dtype, nan_share=0.1)
    t, o = torch.tensor(a), tg.tensor(a)
    _same(torch.sort(t, dim=1, descending=descending), tg.sort(o, dim=1, descending=descending))
    _same(torch.sort(t, dim=1, descending=descending, stable=False),
          tg.sort(o, dim=1, descending=descending, stable=False))
    _same(torch.sort(t, dim=1, descending=descending, stable=True),
          tg.sort(o, dim=1, descending=descending, stable=True))
    _same([torch.argsort(t, dim=1, descending=descending)], [tg.argsort(o, dim=1, descending=descending)])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_sort_along_any_dim_and_layout(dim):
    a = _tied(7, (40, 30), np.float32)
    t, o = torch.tensor(a), tg.tensor(a)
    _same(torch.sort(t, dim=dim), tg.sort(o, dim=dim))
    _same(torch.sort(t.t(), dim=dim), tg.sort(o.t(), dim=dim))
    _same(torch.sort(t[::2, 1::3], dim=dim), tg.sort(o[::2, 1::3], dim=dim))
    _same([torch.msort(t)], [tg.msort(o)])


def test_sort_of_an_expanded_dim_keeps_indices_in_order():
    t = torch.tensor([[1.0], [2.0], [1.0]]).expand(3, 40)
    o = tg.tensor([[1.0], [2.0], [1.0]]).expand(3, 40)
    _same(torch.sort(t, dim=1), tg.sort(o, dim=1))
    _same(torch.sort(t, dim=0), tg.sort(o, dim=0))


def test_sort_without_ties_is_the_plain_order():
    a = np.random.default_rng(3).standard_normal((4, 1000)).astype(np.float32)
    _same(torch.sort(torch.tensor(a)), tg.sort(tg.tensor(a)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.uint8])
@pytest.mark.parametrize(("n", "k"), [(10, 3), (64, 1), (128, 2), (200, 3), (200, 4), (200, 50), (200, 200),
                                      (1000, 15), (1000, 16), (1000, 17), (5000, 7)])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("sorted", [True, False])
def test_topk_picks_torchs_ties(dtype, n, k, largest, sorted):
    a = _tied(n * k, (3, n), dtype, distinct=5, nan_share=0.05)
    _same(torch.topk(torch.tensor(a), k, dim=1, largest=largest, sorted=sorted),
          tg.topk(tg.tensor(a), k, dim=1, largest=largest, sorted=sorted))


def test_unsorted_topk_keeps_the_selection_order_without_ties():
    a = np.random.default_rng(4).standard_normal((5, 40)).astype(np.float32)
    _same(torch.topk(torch.tensor(a), 9, sorted=False), tg.topk(tg.tensor(a), 9, sorted=False))
    _same(torch.topk(torch.tensor(a).t(), 3, dim=0, sorted=False), tg.topk(tg.tensor(a).t(), 3, dim=0, sorted=False))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.uint8])
@pytest.mark.parametrize("n", [2, 3, 9, 100, 1001])
def test_kthvalue_picks_torchs_tie(dtype, n):
    a = _tied(n, (4, n), dtype, distinct=3, nan_share=0.05)
    t, o = torch.tensor(a), tg.tensor(a)
    for k in sorted({1, 2, n // 2 + 1, n} - {0}):
        if k <= n:
            _same(torch.kthvalue(t, k, dim=1), tg.kthvalue(o, k, dim=1))
    for k in range(1, 5):  # (along the short dim of 4)
        _same(torch.kthvalue(t, k, dim=0), tg.kthvalue(o, k, dim=0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("n", [1, 16, 17, 60, 700])
def test_mode_reports_torchs_index(dtype, n):
    a = _tied(n + 1, (5, n), dtype, distinct=3, nan_share=0.15)
    t, o = torch.tensor(a), tg.tensor(a)
    _same(torch.mode(t, dim=1), tg.mode(o, dim=1))
    _same(torch.mode(t, dim=0), tg.mode(o, dim=0))


def test_the_two_introsorts_agree():
    """The level-by-level NumPy introsort and the step-by-step one give the same permutation on keys."""
    rng = np.random.default_rng(9)
    for n in (17, 33, 100, 999):
        keys = rng.integers(0, 6, size=(2, n))
        fast = stl_order.introsort_order(keys)
        for r in range(2):
            assert stl_order.introsort_literal(keys[r].tolist(), operator.lt) == fast[r].tolist()


def test_order_keys_follow_torchs_comparators():
    values = np.array([np.nan, 1.0, -0.0, 0.0, -np.inf, np.nan, 1.0], dtype=np.float32)
    keys = stl_order.order_keys(values, descending=False)
    assert keys[2] == keys[3] and keys[0] == keys[5] and keys[1] == keys[6]
    assert keys[4] < keys[2] < keys[1] < keys[0]
    assert np.array_equal(stl_order.order_keys(values, descending=True), -keys)
