"""Adding rows at repeated indices (``ops/accumulate.py``): the same bits as ``np.add.at`` (every destination gets
its rows one after the other, in index order), and so torch's bits for index_add, index_put(accumulate=True)
and the embedding's gradient."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

from tracegrad.ops.accumulate import add_rows_at

DTYPES = ("float16", "float32", "float64", "int64", "complex64")


def _case(seed: int):
    rng = np.random.default_rng(seed)
    dtype = DTYPES[seed % len(DTYPES)]
    n = int(rng.integers(1, 30))
    m = int(rng.integers(0, 120))
    row = tuple(int(v) for v in rng.integers(1, 6, int(rng.integers(1, 3))))
    out = (rng.standard_normal((n,) + row) * 100).astype(dtype)
    if seed % 3 == 0:
        out = np.asfortranarray(out)
    index = rng.integers(-n, n, m)
    if seed % 7 == 0:
        index[: m // 2] = 0  # (one destination many times over: np.add.at's own loop)
    rows = (rng.standard_normal((m,) + row) * 10 ** rng.uniform(-3, 3, (m,) + row)).astype(dtype)
    return out, index, rows


@pytest.mark.parametrize("seed", range(60))
def test_same_bits_as_numpy_add_at(seed):
    out, index, rows = _case(seed)
    expected, got = out.copy(), out.copy()
    np.add.at(expected, index, rows)
    add_rows_at(got, index, rows)
    assert np.array_equal(expected, got)


def test_out_of_range_index_raises_index_error():
    with pytest.raises(IndexError):
        add_rows_at(np.zeros((3, 8)), np.array([0, 1, 3] * 6), np.ones((18, 8)))


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("seed", range(4))
def test_index_add_index_put_and_embedding_gradient_bitwise_as_torch(dtype, seed):
    rng = np.random.default_rng(seed)
    n, m, width = 20, 200, 24
    base = (rng.standard_normal((n, width)) * 100).astype(dtype)
    index = rng.integers(0, n, m)
    source = (rng.standard_normal((m, width)) * 10 ** rng.uniform(-3, 3, (m, width))).astype(dtype)
    results = []
    for lib in (tg, torch):
        t, i, s = lib.tensor(base), lib.tensor(index), lib.tensor(source)
        weight = lib.tensor(base, requires_grad=True)
        (gradient,) = lib.autograd.grad(lib.nn.functional.embedding(i, weight), weight, s)
        results.append([t.index_add(0, i, s), t.index_put((i,), s, accumulate=True), gradient])
    for ours, theirs in zip(*results):
        assert np.array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype, alpha", [("float16", 1), ("float16", 2.5), ("float16", -0.3), ("float32", 1),
                                          ("float64", 1)])
@pytest.mark.parametrize("dim", (0, 1))
def test_index_add_with_alpha_bitwise_as_torch(dtype, alpha, dim):
    """Half rows are added in float and rounded once (alpha 1), or scaled and added in half (another alpha).
    (float and double with another alpha: torch fuses the multiply-add, which NumPy cannot for double.)"""
    rng = np.random.default_rng(7)
    base = (rng.standard_normal((20, 24)) * 100).astype(dtype)
    index = rng.integers(0, 20, 200)
    source = (rng.standard_normal((200, 24)) * 10 ** rng.uniform(-3, 3, (200, 24))).astype(dtype)
    if dim == 1:
        base, source = base.T.copy(), source.T.copy()
    ours, theirs = (lib.tensor(base).index_add(dim, lib.tensor(index), lib.tensor(source), alpha=alpha)
                    for lib in (tg, torch))
    assert np.array_equal(ours.numpy(), theirs.numpy())
