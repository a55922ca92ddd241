"""The shortcuts a small training step takes, against torch, bit for bit on edge values.

* plain SGD's update of a small float32 parameter (``optim.sgd._plain_updates``): ``fma_into``'s arithmetic
  written out, without ``quietly`` (the step runs quietly as a whole);
* a linear layer's bias gradient of a small float matrix straight to ``aten_sum.column_sums``, and its branch for
  whole groups of four rows;
* the row index ``nll_loss`` picks its scores with, kept between calls (``loss.row_numbers``);
* softmax's rows of a C-contiguous matrix read as they are (``softmax_cpu._as_rows``).

Every case runs where the shortcut applies and next to where it does not (float64, a large parameter, a transposed
gradient, leftover rows), and the step is compared with torch's after several updates, version counters included.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

from tracegrad.ops import aten_sum
from tracegrad.ops.aten_vec import BLOCKED_MIN, aten_float_lanes
from tracegrad.ops.nn_ops import loss as loss_ops
from tracegrad.ops.nn_ops import softmax_cpu

pytestmark = pytest.mark.usefixtures("one_thread")

_LANES = {"AVX512": 16, "AVX2": 8, "DEFAULT": 0}
EXACT_SOFTMAX = _LANES.get(torch.backends.cpu.get_cpu_capability()) == aten_float_lanes() > 0

_F32_EDGES = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1.2e-38, -1.1e-38, 3.0e38,
                       -3.0e38, 1.0, -1.0, 0.5, 1e-7, 65504.0, 16777217.0], np.float32)


def _edgy(shape: tuple, seed: int, dtype=np.float32, share: float = 0.3) -> np.ndarray:
    """Normal values of mixed magnitudes with a share of the edge values (NaNs of both signs, infinities, signed
    zeros, subnormals, values near overflow)."""
    rng = np.random.default_rng(seed)
    a = np.asarray(rng.standard_normal(shape) * 10.0 ** rng.integers(-4, 5, shape)).astype(dtype)
    mask = np.asarray(rng.random(shape) < share)
    a[mask] = rng.choice(_F32_EDGES, int(mask.sum())).astype(dtype)
    return a


# ---- plain SGD ---------------------------------------------------------------------------------------------

# (name, parameter shape, gradient view, dtype): the first ones take the written-out update, the others fall back
PARAMS = (
    ("small weight", (32, 32), None, np.float32),
    ("small bias", (10,), None, np.float32),
    ("0-d", (), None, np.float32),
    ("transposed grad", (12, 12), "t", np.float32),
    ("float64", (7, 5), None, np.float64),
    ("large", (BLOCKED_MIN + 3,), None, np.float32),
)


def _sgd_run(lib, params: list, grads: list, lr, steps: int = 3) -> list:
    ps = [lib.nn.Parameter(lib.from_numpy(p.copy())) for p in params]
    opt = lib.optim.SGD(ps, lr=lr)
    for _ in range(steps):
        for p, g, (_, _, view, _) in zip(ps, grads, PARAMS, strict=True):
            grad = lib.from_numpy(g.copy())
            p.grad = grad.t() if view == "t" else grad
        opt.step()
    return ps


@pytest.mark.parametrize("lr", [0.01, 1e-3, 0.37, 3.0e38, 1e-45, 0.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_plain_sgd_steps_are_torchs(lr, seed):
    params = [_edgy(shape, seed + k, dtype) for k, (_, shape, _, dtype) in enumerate(PARAMS)]
    grads = [_edgy(shape, 100 + seed + k, dtype) for k, (_, shape, _, dtype) in enumerate(PARAMS)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the update overflows silently, as torch's)
        ours = _sgd_run(tg, params, grads, lr)
    theirs = _sgd_run(torch, params, grads, lr)
    for (name, *_), p, q in zip(PARAMS, ours, theirs, strict=True):
        assert p._version == q._version, name
        if lr == 0.0 and name == "float64":  # (float64's fused update gives +0.0 for -0.0 + -0.0 * g: not this path)
            continue
        assert_same_bits(p.detach(), q.detach())


def test_plain_sgd_update_is_a_single_rounding():
    """Random values where ``p - lr * g`` rounded twice (a float32 product, then the sum) differs from torch's fused
    update: the written-out update must round once."""
    rng = np.random.default_rng(5)
    p = rng.standard_normal((32, 32)).astype(np.float32)
    g = rng.standard_normal((32, 32)).astype(np.float32)
    twice = p - np.float32(0.37) * g
    assert (twice != torch.from_numpy(p).add(torch.from_numpy(g), alpha=-0.37).numpy()).any()  # (the test's premise)
    ours, theirs = _sgd_run(tg, [p] + [_edgy(s, 0, d) for _, s, _, d in PARAMS[1:]],
                            [g] + [_edgy(s, 9, d) for _, s, _, d in PARAMS[1:]], 0.37, steps=1)[0], None
    theirs = torch.from_numpy(p).add(torch.from_numpy(g), alpha=-0.37)
    assert_same_bits(ours.detach(), theirs)


# ---- the bias gradient -------------------------------------------------------------------------------------


@pytest.mark.parametrize("rows", [2, 3, 4, 8, 12, 16, 17, 20, 48, 60, 63, 64, 65])
@pytest.mark.parametrize("cols", [2, 3, 7, 10, 31, 32, 40])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_bias_gradient_is_torchs(rows, cols, dtype):
    x = _edgy((rows, 5), rows * 100 + cols, dtype, share=0.0)
    w = _edgy((cols, 5), cols, dtype, share=0.0)
    seed = _edgy((rows, cols), rows + cols, dtype)
    grads = []
    for lib in (tg, torch):
        lin = lib.nn.Linear(5, cols, dtype=getattr(lib, np.dtype(dtype).name))
        with lib.no_grad():
            lin.weight.copy_(lib.from_numpy(w.copy()))
        lin(lib.from_numpy(x.copy())).backward(lib.from_numpy(seed.copy()))
        grads.append(lin.bias.grad)
    assert_same_bits(*grads)


@pytest.mark.parametrize("rows", [4, 8, 12, 16, 32, 60])
@pytest.mark.parametrize("cols", [2, 10, 31])
def test_column_sums_keep_the_general_paths_nan_signs(rows, cols):
    """NaNs of both signs meeting in one column: the branch for whole groups of four rows gives the very NaN the
    general path gives (a reduction from +0.0 instead of an accumulation would flip some signs)."""
    a = _edgy((rows, cols), rows * cols, share=0.6)
    expected = aten_sum._short_row_sum(a) + np.float32(0)
    got = aten_sum.column_sums(a)
    assert got.dtype == expected.dtype
    assert (got.view(np.uint32) == expected.view(np.uint32)).all()


# ---- cross-entropy's pieces ----------------------------------------------------------------------------------


def test_row_numbers_are_read_only_and_bounded():
    rows = loss_ops.row_numbers(16)
    assert rows.tolist() == list(range(16)) and not rows.flags.writeable
    assert loss_ops.row_numbers(16) is rows
    for n in range(100):
        loss_ops.row_numbers(n)
    assert len(loss_ops._ROW_NUMBERS) <= loss_ops._ROW_NUMBERS_SIZES
    big = loss_ops.row_numbers(loss_ops._ROW_NUMBERS_KEPT + 1)
    assert big.flags.writeable and big.shape == (loss_ops._ROW_NUMBERS_KEPT + 1,)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "3-d"])
def test_cross_entropy_step_is_torchs(layout):
    """Scores with edge values (NaN, inf, -0.0, subnormals, huge), each batch size twice in a row (the kept row
    index), contiguous rows and rows that must be copied first."""
    for rows in (16, 16, 5, 5):
        x = _edgy((rows, 10), rows, share=0.1)
        x[0] = -0.0
        x[1, 3] = 1e30
        if layout == "transposed":
            x = np.ascontiguousarray(x.T).T
        t = np.random.default_rng(rows).integers(0, 10, rows)
        results = []
        for lib in (tg, torch):
            leaf = lib.from_numpy(x.copy() if layout != "transposed" else x).requires_grad_()
            scores = leaf.reshape(rows, 2, 5).reshape(rows, 10) if layout == "3-d" else leaf
            loss = lib.nn.functional.cross_entropy(scores, lib.from_numpy(t))
            loss.backward()
            results.append((loss, leaf.grad))
        if EXACT_SOFTMAX:
            assert_same_bits(results[0][0], results[1][0])
            assert_same_bits(results[0][1], results[1][1])


def test_as_rows_keeps_a_contiguous_matrix_and_copies_others():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert softmax_cpu._as_rows(a) is a
    rows = softmax_cpu._as_rows(a.T)
    assert rows.flags.c_contiguous and rows.tolist() == a.T.tolist()
    assert softmax_cpu._as_rows(a.reshape(3, 2, 2)).shape == (6, 2)
