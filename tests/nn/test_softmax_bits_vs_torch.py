"""float32 softmax / log_softmax (forward and backward, any dim), logsumexp, cross_entropy and nll_loss, bit for bit
as PyTorch's CPU kernels compute them with one thread: Sleef's exp and log, ATen's lane sums, glibc's expf in
the scalar columns, nll_loss's cascade sum. Bitwise where tracegrad picked the same vector width as torch."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

from tracegrad.ops.aten_vec import aten_float_lanes

_LANES = {"AVX512": 16, "AVX2": 8, "DEFAULT": 0}
EXACT = _LANES.get(torch.backends.cpu.get_cpu_capability()) == aten_float_lanes() > 0
pytestmark = [pytest.mark.usefixtures("one_thread"),
              pytest.mark.skipif(not EXACT, reason="tracegrad and torch pick different vector widths here")]

SIZES = (1, 7, 8, 9, 16, 17, 100, 1000)




def _bits(value) -> np.ndarray:
    return np.ascontiguousarray(value.detach().numpy()).view(np.uint32)


def _assert_bits(ours, theirs, what: str, exact: bool = True) -> None:
    if not exact:  # (an op outside these kernels decides the last bits: see the callers)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=3e-6, atol=1e-7,
                                   err_msg=what)
        return
    a, b = _bits(ours), _bits(theirs)
    assert a.shape == b.shape, what
    nan = np.isnan(a.view(np.float32)) & np.isnan(b.view(np.float32))
    bad = (a != b) & ~nan
    assert not bad.any(), f"{what}: {int(bad.sum())} of {bad.size} differ"


def _inputs(shape: tuple, seed: int, scale: float = 4.0) -> tuple:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(np.float32), rng.standard_normal(shape).astype(np.float32)


class _Pair:
    """The same leaf in both libraries, and the view of it that the op gets (``perm`` permutes a contiguous
    base: a strided input)."""

    def __init__(self, base: np.ndarray, perm: tuple | None = None):
        self.ours = tg.from_numpy(base.copy()).requires_grad_()
        self.theirs = torch.from_numpy(base.copy()).requires_grad_()
        self.perm = perm

    def views(self) -> tuple:
        if self.perm is None:
            return self.ours, self.theirs
        return self.ours.permute(self.perm), self.theirs.permute(self.perm)


def _check_softmax(base: np.ndarray, g: np.ndarray, dim: int, what: str, perm: tuple | None = None) -> None:
    for name in ("softmax", "log_softmax"):
        pair = _Pair(base, perm)
        x_ours, x_theirs = pair.views()
        y_ours, y_theirs = getattr(tg, name)(x_ours, dim), getattr(torch, name)(x_theirs, dim)
        _assert_bits(y_ours, y_theirs, f"{name} {what} forward")
        grad = g.reshape(y_theirs.shape)
        y_ours.backward(tg.from_numpy(grad.copy()))
        y_theirs.backward(torch.from_numpy(grad.copy()))
        _assert_bits(pair.ours.grad, pair.theirs.grad, f"{name} {what} backward")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dim", (0, 1, -1))
def test_softmax_2d(n: int, dim: int) -> None:
    x, g = _inputs((33, n), n)
    _check_softmax(x, g, dim, f"(33, {n}) dim={dim}")
    _check_softmax(x, g, dim, f"(33, {n}).T dim={dim}", perm=(1, 0))


@pytest.mark.parametrize("shape", ((3, 17, 9), (2, 9, 100), (4, 8, 16), (2, 1000, 7), (5, 7, 1)))
@pytest.mark.parametrize("dim", (0, 1, -1))
def test_softmax_3d(shape: tuple, dim: int) -> None:
    x, g = _inputs(shape, sum(shape))
    _check_softmax(x, g, dim, f"{shape} dim={dim}")
    _check_softmax(x, g, dim, f"{shape} dim={dim} permuted", perm=(2, 0, 1))


def test_softmax_many_blocks() -> None:
    """A non-last dim whose inner size spans several of the kernel's column blocks."""
    x, g = _inputs((2, 40, 3001), 5)
    _check_softmax(x, g, 1, "(2, 40, 3001) dim=1")


@pytest.mark.parametrize("scale", (1e-3, 30.0, 1e4))
def test_softmax_magnitudes(scale: float) -> None:
    x, g = _inputs((20, 37), 7, scale=scale)
    x[3, 5] += 1e6
    _check_softmax(x, g, 1, f"scale {scale}")
    _check_softmax(x, g, 0, f"scale {scale}")


def test_softmax_minus_infinity() -> None:
    x, g = _inputs((12, 19), 11)
    x[0, 3] = x[4, :5] = x[:, 7] = -np.inf
    x[9, :] = -np.inf  # (a whole row: NaN, as in PyTorch)
    _check_softmax(x, g, 1, "-inf")
    _check_softmax(x, g, 0, "-inf")


@pytest.mark.parametrize("shape, dims", (((40, 1000), (1,)), ((64, 17), (0,)), ((3, 9, 33), (1, 2)),
                                         ((5, 100), (0, 1))))
def test_logsumexp(shape: tuple, dims: tuple) -> None:
    """The forward matches here (PyTorch's exp and log are MKL's: the correctly rounded values stand in, which
    the sum mostly hides); the backward's ``exp`` is the pointwise operator's, within an ulp."""
    x, _ = _inputs(shape, 3)
    x.reshape(-1)[0] = -np.inf
    pair = _Pair(x)
    y_ours, y_theirs = tg.logsumexp(pair.ours, dims), torch.logsumexp(pair.theirs, dims)
    _assert_bits(y_ours, y_theirs, "logsumexp")
    y_ours.sum().backward()
    y_theirs.sum().backward()
    _assert_bits(pair.ours.grad, pair.theirs.grad, "logsumexp backward", exact=False)


def _check_loss(fn: str, x: np.ndarray, target: np.ndarray, weight: np.ndarray | None = None, exact: bool = True,
                **kwargs) -> None:
    pair = _Pair(x)
    x_ours, x_theirs = pair.views()
    if fn == "nll_loss":
        x_ours, x_theirs = tg.log_softmax(x_ours, 1), torch.log_softmax(x_theirs, 1)
    loss_ours = getattr(tg.nn.functional, fn)(x_ours, tg.from_numpy(target.copy()), **kwargs,
                                             weight=None if weight is None else tg.from_numpy(weight.copy()))
    loss_theirs = getattr(torch.nn.functional, fn)(x_theirs, torch.from_numpy(target.copy()), **kwargs,
                                                   weight=None if weight is None else torch.from_numpy(weight.copy()))
    what = f"{fn} {x.shape} weighted={weight is not None} {kwargs}"
    _assert_bits(loss_ours, loss_theirs, what, exact)
    grad = np.random.default_rng(1).standard_normal(loss_theirs.shape).astype(np.float32)
    loss_ours.backward(tg.from_numpy(grad.copy()))
    loss_theirs.backward(torch.from_numpy(grad.copy()))
    _assert_bits(pair.ours.grad, pair.theirs.grad, what + " gradient", exact)


@pytest.mark.parametrize("fn", ("cross_entropy", "nll_loss"))
@pytest.mark.parametrize("reduction", ("mean", "sum", "none"))
@pytest.mark.parametrize("shape", ((64, 1000), (16, 10), (1, 5), (300, 17), (257, 3)))
def test_cross_entropy_and_nll(fn: str, reduction: str, shape: tuple) -> None:
    rng = np.random.default_rng(shape[0])
    x, _ = _inputs(shape, shape[1])
    target = rng.integers(0, shape[1], shape[0])
    weight = rng.random(shape[1]).astype(np.float32)
    _check_loss(fn, x, target, reduction=reduction)
    _check_loss(fn, x, target, weight, reduction=reduction)
    target[::3] = 1 % shape[1]  # (every third target ignored, the row index 0 among them)
    _check_loss(fn, x, target, reduction=reduction, ignore_index=1 % shape[1])
    _check_loss(fn, x, target, weight, reduction=reduction, ignore_index=1 % shape[1])


def test_nll_loss_spatial() -> None:
    x, _ = _inputs((4, 5, 6, 7), 2)
    target = np.random.default_rng(2).integers(0, 5, (4, 6, 7))
    for reduction in ("mean", "sum", "none"):
        _check_loss("cross_entropy", x, target, reduction=reduction)
        _check_loss("cross_entropy", x, target, np.linspace(0.5, 2, 5).astype(np.float32), reduction=reduction,
                    ignore_index=2)


# Label smoothing and probability targets add their terms with the ``sum`` operator (PyTorch composes them so):
# bitwise as long as tracegrad's sum adds as ATen's does (aten_sum); the nll part and log_softmax are these
# kernels. Set to False to check these within rounding only.
_SUM_EXACT = True


@pytest.mark.parametrize("reduction", ("mean", "sum", "none"))
def test_cross_entropy_label_smoothing(reduction: str) -> None:
    x, _ = _inputs((32, 10), 4)
    target = np.random.default_rng(4).integers(0, 10, 32)
    weight = np.linspace(0.5, 2, 10).astype(np.float32)
    _check_loss("cross_entropy", x, target, reduction=reduction, label_smoothing=0.1, exact=_SUM_EXACT)
    _check_loss("cross_entropy", x, target, weight, reduction=reduction, label_smoothing=0.2, exact=_SUM_EXACT)
    target[::4] = 3
    _check_loss("cross_entropy", x, target, reduction=reduction, label_smoothing=0.1, ignore_index=3,
                exact=_SUM_EXACT)


@pytest.mark.parametrize("reduction", ("mean", "sum", "none"))
def test_cross_entropy_probabilities(reduction: str) -> None:
    x, _ = _inputs((32, 10), 6)
    probs = np.random.default_rng(6).random((32, 10)).astype(np.float32)
    probs /= probs.sum(1, keepdims=True)
    _check_loss("cross_entropy", x, probs, reduction=reduction, exact=_SUM_EXACT)
    _check_loss("cross_entropy", x, probs, reduction=reduction, label_smoothing=0.1, exact=_SUM_EXACT)
    _check_loss("cross_entropy", x, probs, np.linspace(0.5, 2, 10).astype(np.float32), reduction=reduction,
                exact=_SUM_EXACT)


def test_sleef_logf_follows_the_reference() -> None:
    """The fast logf (float64 for Sleef's double-float part) against the step-by-step emulation."""
    from tracegrad.ops.nn_ops.sleef_float import sleef_logf, sleef_logf_exact

    rng = np.random.default_rng(12)
    x = np.concatenate([rng.random(50_000) * 1000 + 1, np.exp(rng.uniform(-100, 88, 50_000)),
                        rng.random(1000) * 1e-39, [0.0, -0.0, -1.0, np.inf, np.nan, 1.0]]).astype(np.float32)
    np.testing.assert_array_equal(sleef_logf(x), sleef_logf_exact(x))  # (NaN equals NaN here)
