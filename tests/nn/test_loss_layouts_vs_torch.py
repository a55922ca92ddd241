"""Losses of transposed or permuted (channels-last) inputs, and of contiguous ones, give PyTorch's bits: the
unreduced loss's values and strides (its layout orders the additions of the mean and the sum), the mean and the
sum, and the input's gradient.

Left out, as they go through PyTorch's MKL exp, log or sqrt (a few elements an ulp away): soft margin's values
(its layout is checked), Poisson NLL, Gaussian NLL, kl_div with ``log_target``, cosine embedding.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_same_bits, run_both, tg, torch

ROWS, COLS = 40, 30  # (the input is a (ROWS, COLS) leaf seen transposed: COLS x ROWS)


def _data(dtype) -> dict:
    rng = np.random.default_rng(11)
    d = {
        "x": rng.standard_normal((ROWS, COLS)), "t": rng.standard_normal((COLS, ROWS)),
        "p": rng.uniform(0.01, 0.99, (ROWS, COLS)), "q": rng.uniform(0.01, 0.99, (COLS, ROWS)),
        "w": rng.uniform(0.1, 2, (COLS, ROWS)), "pw": rng.uniform(0.5, 3, (ROWS,)),
        "s": np.sign(rng.standard_normal((COLS, ROWS))), "cw": rng.uniform(0.1, 2, (COLS,)),
        "bin": (rng.random((ROWS, COLS)) < 0.5) * 1.0, "e2": rng.standard_normal((COLS, 16)),
        "e3": rng.standard_normal((COLS, 16)), "x4": rng.standard_normal((3, 5, 6, 4)),
    }
    d = {k: v.astype(dtype) for k, v in d.items()}
    d["p"][0, :3] = (0, 1, 0.5)  # (log(0), log1p(-1): clamped to -100)
    d["cls"] = rng.integers(0, COLS, ROWS)
    d["cls4"] = rng.integers(0, 4, (3, 5, 6))
    d["ml"] = rng.integers(-1, COLS, (ROWS, COLS))
    return d


def _pointwise(fn, key: str = "x"):
    """A loss of the differentiated input (COLS x ROWS) and the other tensors of ``_data``."""
    return key, fn


LOSSES = {
    "l1": _pointwise(lambda L, x, r, d: L.nn.functional.l1_loss(x, d("t"), reduction=r)),
    "mse": _pointwise(lambda L, x, r, d: L.nn.functional.mse_loss(x, d("t"), reduction=r)),
    "smooth_l1": _pointwise(lambda L, x, r, d: L.nn.functional.smooth_l1_loss(x, d("t"), reduction=r, beta=0.5)),
    "smooth_l1_beta_0.7": _pointwise(lambda L, x, r, d: 3 * L.nn.functional.smooth_l1_loss(x, d("t"), reduction=r,
                                                                                            beta=0.7)),
    "huber": _pointwise(lambda L, x, r, d: L.nn.functional.huber_loss(x, d("t"), reduction=r, delta=0.7)),
    "huber_times_3": _pointwise(lambda L, x, r, d: 3 * L.nn.functional.huber_loss(x, d("t"), reduction=r,
                                                                                  delta=0.7)),
    "bce": _pointwise(lambda L, x, r, d: L.nn.functional.binary_cross_entropy(x, d("q"), reduction=r), "p"),
    "bce_weight": _pointwise(lambda L, x, r, d: L.nn.functional.binary_cross_entropy(x, d("q"), d("w"),
                                                                                     reduction=r), "p"),
    "bce_logits": _pointwise(lambda L, x, r, d: L.nn.functional.binary_cross_entropy_with_logits(
        x, d("q"), reduction=r)),
    "bce_logits_weight": _pointwise(lambda L, x, r, d: L.nn.functional.binary_cross_entropy_with_logits(
        x, d("q"), weight=d("w"), reduction=r)),
    "bce_logits_pos_weight": _pointwise(lambda L, x, r, d: L.nn.functional.binary_cross_entropy_with_logits(
        x, d("q"), pos_weight=d("pw"), reduction=r)),
    "kl_div": _pointwise(lambda L, x, r, d: L.nn.functional.kl_div(x, d("q"), reduction=r)),
    "kl_div_batchmean": _pointwise(lambda L, x, r, d: L.nn.functional.kl_div(
        x, d("q"), reduction="batchmean" if r == "mean" else r)),
    "hinge_embedding": _pointwise(lambda L, x, r, d: L.nn.functional.hinge_embedding_loss(x, d("s"), reduction=r)),
    "margin_ranking": _pointwise(lambda L, x, r, d: L.nn.functional.margin_ranking_loss(x, d("t"), d("s"),
                                                                                        reduction=r)),
    "triplet_margin": _pointwise(lambda L, x, r, d: L.nn.functional.triplet_margin_loss(
        x[:, :16], d("e2"), d("e3"), reduction=r)),
    "multilabel_soft_margin": _pointwise(lambda L, x, r, d: L.nn.functional.multilabel_soft_margin_loss(
        x.t(), d("bin"), weight=d("cw"), reduction=r)),
    "multilabel_margin": _pointwise(lambda L, x, r, d: L.nn.functional.multilabel_margin_loss(
        x.t(), d("ml"), reduction=r)),
    "multi_margin": _pointwise(lambda L, x, r, d: L.nn.functional.multi_margin_loss(
        x.t(), d("cls"), p=2, weight=d("cw"), reduction=r)),
    "nll": _pointwise(lambda L, x, r, d: L.nn.functional.nll_loss(x.t(), d("cls"), reduction=r)),
    "cross_entropy": _pointwise(lambda L, x, r, d: L.nn.functional.cross_entropy(x.t(), d("cls"), d("cw"),
                                                                                 reduction=r)),
    "cross_entropy_smoothing": _pointwise(lambda L, x, r, d: L.nn.functional.cross_entropy(
        x.t(), d("cls"), label_smoothing=0.1, reduction=r)),
    "cross_entropy_4d": _pointwise(lambda L, x, r, d: L.nn.functional.cross_entropy(x, d("cls4"), reduction=r),
                                   "x4"),
    "cross_entropy_4d_smoothing": _pointwise(lambda L, x, r, d: L.nn.functional.cross_entropy(
        x, d("cls4"), label_smoothing=0.1, reduction=r), "x4"),
}
# the float64 results that go through no transcendental function of PyTorch's (Sleef's, MKL's double ones)
FLOAT64 = ("l1", "mse", "smooth_l1_beta_0.7", "huber_times_3", "bce", "bce_weight", "hinge_embedding",
           "margin_ranking", "multilabel_margin", "multi_margin", "nll")


def _input(lib, data: dict, key: str, transposed: bool):
    """(leaf, input): the input seen transposed (the 4-d one permuted channels last), or a contiguous leaf."""
    base = data[key]
    if key == "x4":  # (N, H, W, C) seen as (N, C, H, W)
        leaf = lib.tensor(base if transposed else np.ascontiguousarray(base.transpose(0, 3, 1, 2)),
                          requires_grad=True)
        return leaf, (leaf.permute(0, 3, 1, 2) if transposed else leaf)
    leaf = lib.tensor(base if transposed else np.ascontiguousarray(base.T), requires_grad=True)
    return leaf, (leaf.t() if transposed else leaf)


def _run(lib, name: str, reduction: str, transposed: bool, dtype) -> tuple:
    key, fn = LOSSES[name]
    data = _data(dtype)
    leaf, x = _input(lib, data, key, transposed)
    loss = fn(lib, x, reduction, lambda k: lib.tensor(data[k]))
    seed = np.random.default_rng(5).standard_normal(tuple(loss.shape)).astype(dtype)
    loss.backward(lib.tensor(seed) if reduction == "none" else None)
    return loss.detach(), tuple(loss.stride()), leaf.grad, tuple(leaf.grad.stride())


@pytest.mark.usefixtures("one_thread")
@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")  # (kl_div's)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("transposed", [True, False], ids=["transposed", "contiguous"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_and_gradient_bits_are_torchs(name: str, transposed: bool, reduction: str) -> None:
    ours, theirs = run_both(_run, name, reduction, transposed, np.float32)
    assert ours[1] == theirs[1] and ours[3] == theirs[3]  # (the loss's and the gradient's strides)
    assert_same_bits(ours[0], theirs[0])
    assert_same_bits(ours[2], theirs[2])


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name", FLOAT64)
def test_float64_loss_and_gradient_bits_are_torchs(name: str, reduction: str) -> None:
    ours, theirs = run_both(_run, name, reduction, True, np.float64)
    assert ours[1] == theirs[1]
    assert_same_bits(ours[0], theirs[0])
    assert_same_bits(ours[2], theirs[2])


@pytest.mark.parametrize("view", ["t", "rows", "t-sliced"])
def test_soft_margin_loss_is_laid_out_as_its_input(view: str) -> None:
    """PyTorch writes ``-input`` into the output before the rest of the loss: a transposed input gives a
    transposed loss (whose values pass through MKL's exp, so they are only compared closely)."""
    rng = np.random.default_rng(3)
    x, t = rng.standard_normal((40, 30)).astype(np.float32), np.sign(rng.standard_normal((40, 30)))
    pick = {"t": lambda a: a.t(), "rows": lambda a: a[::2], "t-sliced": lambda a: a.t()[::2, 1:]}[view]
    ours, theirs = run_both(lambda lib: lib.nn.functional.soft_margin_loss(
        pick(lib.tensor(x)), pick(lib.tensor(t, dtype=lib.float32)).contiguous(), reduction="none"))
    assert ours.stride() == theirs.stride()
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_nll_loss_of_a_channels_last_input_has_no_gradient_as_in_torch() -> None:
    """PyTorch's nll_loss2d backward writes into ``zeros_like(input)`` and requires it contiguous."""
    x = np.random.default_rng(0).standard_normal((2, 4, 5, 3)).astype(np.float32)
    for lib in (tg, torch):
        leaf = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.nll_loss(leaf.permute(0, 3, 1, 2), lib.zeros((2, 4, 5), dtype=lib.int64))
        with pytest.raises(RuntimeError, match="grad_input must be contiguous"):
            loss.backward()


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("loss", ["huber_loss", "smooth_l1_loss"])
def test_band_loss_gradients_at_the_edges_are_torchs(loss: str, dtype: str) -> None:
    """The backward kernels' vector code compares with beta / delta rounded to the dtype, their scalar code (the
    tail of each run, and every element of a strided run) with the double: differences at the band's edge."""
    seven = np.float32(0.7)
    x = np.random.default_rng(9).standard_normal(37).astype(np.float32)
    x[:12] = [0, seven, -seven, np.nextafter(seven, 1), np.inf, -np.inf, np.nan, 1e-30, 0.5, -0.5, 5, -5]

    def program(lib, transposed: bool):
        leaf = lib.tensor(np.tile(x, (3, 1)), dtype=getattr(lib, dtype), requires_grad=True)
        target = lib.zeros((37, 3), dtype=leaf.dtype).t() if transposed else lib.zeros(37, dtype=leaf.dtype)
        param = {"huber_loss": "delta", "smooth_l1_loss": "beta"}[loss]
        out = getattr(lib.nn.functional, loss)(leaf, target, reduction="mean", **{param: 0.7})
        (out * 1.7).backward()
        return leaf.grad

    for transposed in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the broadcast target's warning)
            assert_same_bits(*run_both(program, transposed))
