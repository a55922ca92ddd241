"""float64 softmax / log_softmax (forward and backward, any dim) and cross_entropy, bit for bit as PyTorch's CPU
kernels compute them with one thread: Sleef's double exp and log (sleef_double), ATen's lane sums (8 doubles under
AVX-512, 4 under AVX2), glibc's exp in the scalar columns. Bitwise where tracegrad picked the same vector width as
torch."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

from tracegrad.ops.aten_vec import aten_float_lanes

_LANES = {"AVX512": 16, "AVX2": 8, "DEFAULT": 0}
EXACT = _LANES.get(torch.backends.cpu.get_cpu_capability()) == aten_float_lanes() > 0
pytestmark = [pytest.mark.usefixtures("one_thread"),
              pytest.mark.skipif(not EXACT, reason="tracegrad and torch pick different vector widths here")]


def _assert_bits(ours, theirs, what: str) -> None:
    a = np.ascontiguousarray(ours.detach().numpy())
    b = np.ascontiguousarray(theirs.detach().numpy())
    assert a.shape == b.shape and a.dtype == b.dtype == np.float64, what
    bad = (a.view(np.uint64) != b.view(np.uint64)) & ~(np.isnan(a) & np.isnan(b))
    assert not bad.any(), f"{what}: {int(bad.sum())} of {bad.size} differ"


def _check(x: np.ndarray, what: str, seed: int = 0) -> None:
    """softmax and log_softmax along every dim, forward and backward."""
    g = np.random.default_rng(seed).standard_normal(x.shape)
    for dim in range(x.ndim):
        for name in ("softmax", "log_softmax"):
            ours = tg.from_numpy(x.copy()).requires_grad_()
            theirs = torch.from_numpy(x.copy()).requires_grad_()
            y_ours, y_theirs = getattr(tg, name)(ours, dim), getattr(torch, name)(theirs, dim)
            label = f"{name} {what} {x.shape} dim={dim}"
            _assert_bits(y_ours, y_theirs, label + " forward")
            y_ours.backward(tg.from_numpy(g.copy()))
            y_theirs.backward(torch.from_numpy(g.copy()))
            _assert_bits(ours.grad, theirs.grad, label + " backward")


@pytest.mark.parametrize("shape", ((1, 1), (3, 5), (16, 10), (64, 37), (7, 1000), (4, 5, 6), (2, 3, 17, 9),
                                   (33, 9), (5, 7, 1), (2, 300, 7), (3, 20, 130)))
def test_softmax_float64(shape: tuple) -> None:
    x = np.random.default_rng(sum(shape)).standard_normal(shape) * 4
    _check(x, "normal", seed=len(shape))


def test_softmax_float64_many_blocks() -> None:
    """A non-last dim whose inner size spans several of the kernel's column blocks (16384 bytes / 8 per row)."""
    x = np.random.default_rng(5).standard_normal((2, 40, 500)) * 3
    _check(x, "blocks")


@pytest.mark.parametrize("scale", (1e-3, 1e3, 1e300))
def test_softmax_float64_magnitudes(scale: float) -> None:
    x = np.random.default_rng(7).standard_normal((20, 37)) * scale
    _check(x, f"scale {scale}")


def test_softmax_float64_special_values() -> None:
    x = np.random.default_rng(11).standard_normal((12, 19)) * 3
    x[0, 3] = x[4, :5] = x[:, 7] = -np.inf
    x[9, :] = -np.inf  # (a whole row: NaN, as in PyTorch)
    x[2, 11] = np.nan
    _check(x, "inf/nan")


@pytest.mark.parametrize("reduction", ("mean", "sum", "none"))
@pytest.mark.parametrize("smoothing", (0.0, 0.1))
@pytest.mark.parametrize("shape", ((16, 10), (64, 37), (7, 1000), (1, 1)))
def test_cross_entropy_float64(reduction: str, smoothing: float, shape: tuple) -> None:
    rng = np.random.default_rng(shape[1])
    x = rng.standard_normal(shape) * 4
    target = rng.integers(0, shape[1], shape[0])
    ours, theirs = tg.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()
    loss_ours = tg.nn.functional.cross_entropy(ours, tg.from_numpy(target.copy()), reduction=reduction,
                                               label_smoothing=smoothing)
    loss_theirs = torch.nn.functional.cross_entropy(theirs, torch.from_numpy(target.copy()), reduction=reduction,
                                                    label_smoothing=smoothing)
    what = f"cross_entropy {shape} {reduction} smoothing={smoothing}"
    _assert_bits(loss_ours, loss_theirs, what)
    grad = rng.standard_normal(loss_theirs.shape)
    loss_ours.backward(tg.from_numpy(grad.copy()))
    loss_theirs.backward(torch.from_numpy(grad.copy()))
    _assert_bits(ours.grad, theirs.grad, what + " gradient")


def test_sleef_exp_and_log_special_values() -> None:
    """The ends of Sleef's ranges: exp overflows above ln(DBL_MAX) and is +0 below -1000; log's special cases."""
    from tracegrad.ops.nn_ops.sleef_double import sleef_exp, sleef_log

    e = sleef_exp(np.array([-np.inf, -1001.0, 0.0, 709.8, np.inf, np.nan]))
    assert e[0] == 0 and e[1] == 0 and e[2] == 1 and np.isposinf(e[3]) and np.isposinf(e[4]) and np.isnan(e[5])
    r = sleef_log(np.array([0.0, -1.0, np.inf, np.nan, 1.0, np.e]))
    assert np.isneginf(r[0]) and np.isnan(r[1]) and np.isposinf(r[2]) and np.isnan(r[3]) and r[4] == 0
    assert abs(r[5] - 1) <= 2.3e-16


def test_sleef_double_fast_paths_follow_the_references() -> None:
    """The reordered exp and log against Sleef's steps transcribed one by one (aten_vec.fma)."""
    from tracegrad.ops.nn_ops.sleef_double import sleef_exp, sleef_exp_reference, sleef_log, sleef_log_reference

    rng = np.random.default_rng(13)
    x = np.concatenate([rng.standard_normal(60_000) * 4, rng.uniform(-1010, 715, 20_000),
                        [-np.inf, np.inf, np.nan, -1000.0, 709.78, -0.0]])
    assert sleef_exp(x).tobytes() == sleef_exp_reference(x).tobytes()
    y = np.concatenate([1 + rng.random(40_000) * 1000, np.exp(rng.uniform(-740, 709, 40_000)),
                        [0.0, -1.0, np.inf, 1.0, 1.5, 0.75, 5e-324]])
    ours, reference = sleef_log(y), sleef_log_reference(y)
    assert ((ours.view(np.uint64) == reference.view(np.uint64)) | (np.isnan(ours) & np.isnan(reference))).all()
