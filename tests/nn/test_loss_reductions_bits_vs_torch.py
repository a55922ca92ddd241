"""Mean and sum losses give PyTorch's bits (one thread): the unreduced loss is summed in ATen's order
(``loss.mean()``, ``loss.sum()``), not NumPy's pairwise one, which printed another last digit for most losses.
(The losses built on ``exp`` as an operator, soft margin's, go through MKL's exp in PyTorch and stay an ulp
away before the reduction.)"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

LOSSES = {
    "mse_loss": lambda F, x, t, p: F.mse_loss(x, t, reduction=p),
    "l1_loss": lambda F, x, t, p: F.l1_loss(x, t, reduction=p),
    "smooth_l1_loss": lambda F, x, t, p: F.smooth_l1_loss(x, t, reduction=p, beta=0.5),
    "huber_loss": lambda F, x, t, p: F.huber_loss(x, t, reduction=p, delta=0.7),
    "binary_cross_entropy": lambda F, x, t, p: F.binary_cross_entropy(x.sigmoid(), (t > 0).to(x.dtype), reduction=p),
    "bce_with_logits": lambda F, x, t, p: F.binary_cross_entropy_with_logits(x, (t > 0).to(x.dtype), reduction=p),
}


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("shape", [(7,), (128,), (33, 65), (4, 3, 40, 41)])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_reduced_loss_is_torchs(name: str, shape: tuple, reduction: str) -> None:
    rng = np.random.default_rng(len(shape) * 100 + shape[-1])
    x, t = (rng.standard_normal(shape).astype(np.float32) * 3 for _ in range(2))
    got = [LOSSES[name](lib.nn.functional, lib.from_numpy(x.copy()), lib.from_numpy(t.copy()), reduction)
           for lib in (tg, torch)]
    assert_same_bits(*got)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_xlogy_takes_the_c_librarys_logf(dtype) -> None:
    """PyTorch's xlogy is a scalar loop over the C library's logf (glibc's table-driven routine, emulated in
    ``glibc_float_math.log_float``); half rounds the log to half before the product. NumPy's float32 log
    agreed for five elements in six."""
    rng = np.random.default_rng(6)
    x, y = (rng.standard_normal(5000) * 3).astype(dtype), np.abs(rng.standard_normal(5000) * 3).astype(dtype)
    x[:8], y[:8] = [0, 0, 1, -1, 0, 2, 3, 1e-3], [np.nan, 0, 0, np.inf, 1, -1, 1e-40, 1e30]
    results = []
    for lib in (tg, torch):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        out = lib.xlogy(a, b)
        out.backward(lib.ones_like(out))
        results.append((out, a.grad, b.grad))
    for ours, theirs in zip(*results):
        assert_same_bits(ours, theirs)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")  # (both libraries warn about 'mean')
@pytest.mark.parametrize("reduction", ["batchmean", "sum", "mean", "none"])
def test_kl_div_is_torchs(reduction: str) -> None:
    """kl_div of probabilities (xlogy(t, t) - t * input, then the reduction). With ``log_target=True`` it is
    ``exp(t) * (t - input)``, whose exp is MKL's in PyTorch: an ulp away for some elements, not compared here."""
    rng = np.random.default_rng(7)
    logits, p = rng.standard_normal((29, 139)).astype(np.float32), rng.uniform(0.01, 0.99, (29, 139)).astype(np.float32)
    results = []
    for lib in (tg, torch):
        a, t = lib.tensor(logits, requires_grad=True), lib.tensor(p, requires_grad=True)
        with np.errstate(all="ignore"):
            out = lib.nn.functional.kl_div(lib.nn.functional.log_softmax(a, 1), t, reduction=reduction)
        out.backward(lib.ones_like(out))
        results.append((out, a.grad, t.grad))
    for ours, theirs in zip(*results):
        assert_same_bits(ours, theirs)
