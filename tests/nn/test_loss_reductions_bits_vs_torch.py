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
