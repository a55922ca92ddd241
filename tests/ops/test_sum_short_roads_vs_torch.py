"""Small and medium contiguous sums take short roads past ``aten_sum.cascade_sum``'s general set-up: rows shorter
than one vector (the kernel's scalar ``row_sum``), float16 (summed as float32), and single rows of up to 255 groups
of four vectors (one level of cascade runs). Each road must give the general road's bits, NaN signs included, and
PyTorch's, and the common cases (``x.sum()`` of a few elements, a loss's sum) must really take it.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

from tracegrad.ops import aten_sum

DTYPES = [np.float16, np.float32, np.float64]
# under one vector (8 floats, 4 doubles), around the four-vector groups, one run (16 groups) and 255 groups
SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 31, 33, 255, 513, 544, 545, 1023, 1024, 2049, 4095, 4096, 8191]


pytestmark = pytest.mark.usefixtures("one_thread")  # (conftest's: torch's scalar loops pinned as in its bits)


def _data(shape, dtype, seed: int) -> np.ndarray:
    """Magnitudes over eight decades (any other order of the additions rounds differently somewhere)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-4, 4 if dtype == np.float16 else 5, shape)
    return x.astype(dtype)


def _with_nans(shape, dtype, seed: int) -> np.ndarray:
    """NaNs of both signs among the terms: where two meet, which one a sum keeps depends on the NumPy loop."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    nans = rng.random(shape) < 0.1
    x[nans] = np.nan
    flip = nans & (rng.random(shape) < 0.5)
    x[flip] = -x[flip]
    return x


def _general_road(a: np.ndarray, dims) -> np.ndarray:
    return np.asarray(aten_sum.cascade_sum(a, dims))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_full_sum_matches_torch_and_the_general_road(dtype, n):
    x = _data((n,), dtype, n)
    ours = tg.tensor(x).sum()
    assert_same_bits(ours, torch.tensor(x).sum())
    assert ours.numpy().tobytes() == _general_road(x, None).tobytes()
    nans = _with_nans((n,), dtype, n)
    assert tg.tensor(nans).sum().numpy().tobytes() == _general_road(nans, None).tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 1), (5, 3), (17, 5), (3, 7), (2, 3, 6), (300, 2), (3, 33), (4, 513), (2, 1024)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sums_of_rows_match_torch_and_the_general_road(dtype, shape, keepdim):
    x = _data(shape, dtype, sum(shape))
    ours = tg.tensor(x).sum(-1, keepdim=keepdim)
    theirs = torch.tensor(x).sum(-1, keepdim=keepdim)
    assert_same_bits(ours, theirs)
    general = _general_road(x, (x.ndim - 1,))
    assert ours.numpy().tobytes() == general.reshape(theirs.shape).tobytes()
    nans = _with_nans(shape, dtype, sum(shape))
    if dtype == np.float16 or shape[-1] < 8 or shape[-1] > 544:  # (the roads that cascade_sum's NaNs hold for)
        got = tg.tensor(nans).sum(-1).numpy()
        assert got.tobytes() == _general_road(nans, (nans.ndim - 1,)).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [3, 6, 1024])
def test_mean_and_its_gradient_match_torch(dtype, n):
    x = _data((2, n), dtype, n)
    results = []
    for lib in (tg, torch):
        t = lib.tensor(x, requires_grad=True)
        out = t.mean()
        out.backward()
        results.append((out, t.grad, t.mean(1)))
    for ours, theirs in zip(*results):
        assert_same_bits(ours, theirs)


@pytest.mark.parametrize("case", ["x.sum() of 4", "x.sum() of 1024", "half x.sum()", "rows of 3", "loss"])
def test_common_sums_take_a_short_road(case, monkeypatch):
    """The small sums of everyday programs do not go through the general set-up (it cost several times the
    additions: ``x.sum()`` of four floats took 9 us)."""
    def general(*args, **kwargs):
        raise AssertionError("cascade_sum called")

    values = {"x.sum() of 4": lambda: tg.ones(4, requires_grad=True) * 2,
              "x.sum() of 1024": lambda: tg.rand(1024),
              "half x.sum()": lambda: tg.rand(37).half(),
              "rows of 3": lambda: tg.rand(5, 3),
              "loss": lambda: (tg.rand(4, 3, requires_grad=True) - 1) ** 2}[case]()
    monkeypatch.setattr(aten_sum, "cascade_sum", general)
    out = values.sum(-1) if case == "rows of 3" else values.sum()
    if out.requires_grad:
        out.backward()
