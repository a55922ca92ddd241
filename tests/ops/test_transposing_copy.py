"""Copies of transposed arrays into C order go by cache lines (``_transposing_copy``): the same elements, dtype and
strides as NumPy's plain copy, for every layout, dtype and size, and ``contiguous()`` / ``reshape`` of a transposed
tensor give torch's values and strides. ``reshape`` finds out that it cannot view without copying first."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, run_both

from tracegrad import _transposing_copy
from tracegrad._transposing_copy import copy_into

SHAPES = [(256, 1024), (1000, 1000), (4096, 100), (100, 4096), (17, 4096), (300, 1030), (512, 784), (3, 5)]
DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.uint8, np.bool_, np.complex64]


def _sources(shape: tuple, dtype) -> dict:
    rng = np.random.default_rng(0)
    base = (rng.standard_normal((shape[0] + 3, 2 * shape[1] + 5)) * 100).astype(dtype)
    return {
        "transposed": np.ascontiguousarray(base[: shape[0], : shape[1]]).T,
        "transposed window": base[1 : shape[0] + 1, 3 : shape[1] + 3].T,
        "transposed, every other column": base[: shape[0], : 2 * shape[1] : 2].T,
        "plain": np.ascontiguousarray(base[: shape[1], : shape[0]]),
    }


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_same_bits_as_numpys_copy(shape, dtype):
    for name, src in _sources(shape, dtype).items():
        ours = np.empty(src.shape, dtype)
        copy_into(ours, src)
        plain = np.empty(src.shape, dtype)
        np.copyto(plain, src)
        assert np.array_equal(ours.view(np.uint8), plain.view(np.uint8)), name


def test_the_line_copy_runs_where_the_plain_copy_thrashes():
    src = np.zeros((1024, 256), np.float32).T  # (rows 4 KiB apart: one cache set)
    assert _transposing_copy._thrashes(np.empty(src.shape, np.float32), src)
    friendly = np.zeros((512, 784), np.float32).T  # (rows 3136 bytes apart: spread over every set)
    assert not _transposing_copy._thrashes(np.empty(friendly.shape, np.float32), friendly)
    cast = np.empty(src.shape, np.float64)  # (a casting copy stays NumPy's)
    assert not _transposing_copy._thrashes(cast, src)


@pytest.mark.parametrize("program", [
    lambda L, x: x.t().contiguous(), lambda L, x: x.t().reshape(-1), lambda L, x: x.mT.reshape(64, -1),
    lambda L, x: x.t().clone(memory_format=L.contiguous_format), lambda L, x: x.t().flatten(),
    lambda L, x: x[:, 1:1000].t().contiguous(),
], ids=["contiguous", "reshape", "mT reshape", "clone contiguous_format", "flatten", "window contiguous"])
def test_transposed_tensors_copy_as_torch(program):
    values = np.random.default_rng(1).standard_normal((256, 1024)).astype(np.float32)
    ours, theirs = run_both(lambda L: program(L, L.tensor(values)))
    assert_same_bits(ours, theirs)
    assert ours.stride() == theirs.stride()


def test_reshape_that_must_copy_does_not_copy_twice():
    """Whether a view can have the new shape is found without a copy (NumPy's shape assignment copies the whole
    array first, then refuses), so reshape's only copy is its clone."""
    import tracemalloc

    from tracegrad.ops.views import _view_strides

    transposed = np.zeros((512, 1024), np.float32).T
    tracemalloc.start()
    try:
        assert _view_strides(transposed, (-1,)) is None
        assert _view_strides(transposed, (2, 512, 512)) == (512, 1, 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < transposed.nbytes // 100
